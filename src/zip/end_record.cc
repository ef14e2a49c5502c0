// SPDX-License-Identifier: Apache-2.0
// The end of central directory record: where it is, what it says (see end_record.h).
#include "zip/end_record.h"

#include <algorithm>

#include "base/little_endian.h"

namespace stguard {

uint64_t FindZipEnd(std::span<const std::byte> tail, uint64_t file_size, ZipEndRule rule) {
  if (tail.size() < kZipEndLen || tail.size() > file_size) return UINT64_MAX;
  const uint64_t tail_start = file_size - tail.size();
  const uint64_t reach = file_size > kZipEndSearchLen ? file_size - kZipEndSearchLen : 0;
  const uint64_t lowest = std::max(tail_start, reach);
  for (uint64_t at = file_size - kZipEndLen + 1; at-- > lowest;) {
    const std::byte* record = tail.data() + (at - tail_start);
    if (LoadLittleEndian<uint32_t>(record) != 0x06054b50) continue;
    if (rule == ZipEndRule::kLastSignature ||
        at + kZipEndLen + LoadLittleEndian<uint16_t>(record + 20) == file_size) {
      return at;
    }
  }
  return UINT64_MAX;
}

ZipEndFields ReadZipEndFields(const std::byte* record) {
  return ZipEndFields{LoadLittleEndian<uint16_t>(record + 4),
                      LoadLittleEndian<uint16_t>(record + 6),
                      LoadLittleEndian<uint16_t>(record + 8),
                      LoadLittleEndian<uint16_t>(record + 10),
                      LoadLittleEndian<uint32_t>(record + 12),
                      LoadLittleEndian<uint32_t>(record + 16),
                      LoadLittleEndian<uint16_t>(record + 20)};
}

}  // namespace stguard
