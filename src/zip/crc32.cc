// SPDX-License-Identifier: Apache-2.0
// CRC-32 (the ZIP/zlib polynomial 0xEDB88320, reflected), computed eight bytes at a time
// with eight tables ("slicing by 8"), so that the library needs no zlib.
#include <algorithm>
#include <array>
#include <vector>

#include "zip/zip_archive.h"

namespace stguard {
namespace {

using Tables = std::array<std::array<uint32_t, 256>, 8>;

constexpr Tables MakeTables() {
  Tables t{};
  for (uint32_t n = 0; n < 256; ++n) {
    uint32_t c = n;
    for (int k = 0; k < 8; ++k) c = (c & 1u) != 0 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    t[0][n] = c;
  }
  for (uint32_t n = 0; n < 256; ++n) {
    for (size_t k = 1; k < 8; ++k) t[k][n] = (t[k - 1][n] >> 8) ^ t[0][t[k - 1][n] & 0xFF];
  }
  return t;
}

constexpr Tables kTables = MakeTables();

uint32_t Byte(std::byte b) { return static_cast<uint32_t>(b); }

}  // namespace

uint32_t Crc32(uint32_t crc, std::span<const std::byte> bytes) {
  uint32_t c = ~crc;
  const std::byte* p = bytes.data();
  size_t n = bytes.size();
  while (n >= 8) {
    const uint32_t lo = c ^ (Byte(p[0]) | Byte(p[1]) << 8 | Byte(p[2]) << 16 | Byte(p[3]) << 24);
    const uint32_t hi = Byte(p[4]) | Byte(p[5]) << 8 | Byte(p[6]) << 16 | Byte(p[7]) << 24;
    c = kTables[7][lo & 0xFF] ^ kTables[6][(lo >> 8) & 0xFF] ^ kTables[5][(lo >> 16) & 0xFF] ^
        kTables[4][lo >> 24] ^ kTables[3][hi & 0xFF] ^ kTables[2][(hi >> 8) & 0xFF] ^
        kTables[1][(hi >> 16) & 0xFF] ^ kTables[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) c = kTables[0][(c ^ Byte(*p++)) & 0xFF] ^ (c >> 8);
  return ~c;
}

Result<uint32_t> Crc32OfRange(const ByteSource& source, uint64_t offset, uint64_t len) {
  constexpr uint64_t kChunkLen = uint64_t{1} << 20;
  std::vector<std::byte> chunk(static_cast<size_t>(std::min(len, kChunkLen)));
  uint32_t crc = 0;
  for (uint64_t done = 0; done < len;) {
    const size_t n = static_cast<size_t>(std::min(len - done, kChunkLen));
    if (Error error = source.ReadAt(offset + done, {chunk.data(), n}); !error.ok()) {
      return error;
    }
    crc = Crc32(crc, {chunk.data(), n});
    done += n;
  }
  return crc;
}

}  // namespace stguard
