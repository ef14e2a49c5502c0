// SPDX-License-Identifier: Apache-2.0
// The legacy stream's magic-number pickle, in every form torch.save writes it (see
// legacy_magic.h).
#include "sniff/legacy_magic.h"

#include <cstring>
#include <string_view>

#include "base/little_endian.h"
#include "pickle/opcodes.h"

namespace stguard {
namespace {

// The magic number as LONG1's 10 little-endian bytes, then STOP.
constexpr std::string_view kLong1Magic("\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19\x2e",
                                       13);
// The same number in protocol 0's text LONG (protocols 0 and 1 have no LONG1), then STOP.
constexpr std::string_view kTextMagic("L119547037146038801333356L\n.");
constexpr size_t kFrameLen = 9;  // FRAME and its 8-byte length

bool StartsWith(std::span<const std::byte> bytes, std::string_view prefix) {
  return bytes.size() >= prefix.size() &&
         std::memcmp(bytes.data(), prefix.data(), prefix.size()) == 0;
}

}  // namespace

size_t LegacyMagicLen(std::span<const std::byte> bytes) {
  if (StartsWith(bytes, kTextMagic)) return kTextMagic.size();
  if (bytes.size() < 2 || static_cast<uint8_t>(bytes[0]) != op::kProto) return 0;
  const auto protocol = static_cast<uint8_t>(bytes[1]);
  if (protocol < 2 || protocol > 5) return 0;
  size_t at = 2;
  if (bytes.size() - at >= kFrameLen && static_cast<uint8_t>(bytes[at]) == op::kFrame) {
    if (LoadLittleEndian<uint64_t>(bytes.data() + at + 1) != kLong1Magic.size()) return 0;
    at += kFrameLen;
  }
  if (!StartsWith(bytes.subspan(at), kLong1Magic)) return 0;
  return at + kLong1Magic.size();
}

}  // namespace stguard
