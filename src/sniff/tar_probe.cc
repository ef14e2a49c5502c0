// SPDX-License-Identifier: Apache-2.0
// The tar-header test torch.load's first try applies (see tar_probe.h).
#include "sniff/tar_probe.h"

#include <algorithm>

namespace stguard {
namespace {

// The checksum field's place in the header block.
constexpr size_t kChecksumAt = 148;
constexpr size_t kChecksumLen = 8;

// IsPythonSpace says whether str.strip() removes the ASCII character `c`: C's whitespace
// plus the four information separators 0x1c-0x1f, which Python counts as whitespace.
bool IsPythonSpace(char c) {
  return c == ' ' || (c >= '\t' && c <= '\r') || (c >= '\x1c' && c <= '\x1f');
}

bool IsOctalDigit(char c) { return c >= '0' && c <= '7'; }

// ParseBase256 reads the GNU base-256 form: the bytes after the marker, big-endian, and
// negative (minus 256 to the power of their count) when the marker is 0xff.
std::optional<int64_t> ParseBase256(std::span<const std::byte> field) {
  // Fields here are at most 12 bytes (11 value bytes) but the checksum's 8 are what
  // matter; longer ones would overflow int64 and are reported as no number.
  if (field.size() > 8) return std::nullopt;
  uint64_t value = 0;
  for (size_t k = 1; k < field.size(); ++k) value = (value << 8) | static_cast<uint8_t>(field[k]);
  if (static_cast<uint8_t>(field[0]) == 0xff) {
    const uint64_t modulus = uint64_t{1} << (8 * (field.size() - 1));
    return static_cast<int64_t>(value) - static_cast<int64_t>(modulus);
  }
  return static_cast<int64_t>(value);
}

// ParseOctalLiteral reads `text` as Python's int(text, 8) does once the text is stripped:
// an optional sign, an optional "0o"/"0O" prefix that one underscore may follow, then
// octal digits, single underscores allowed between them.
std::optional<int64_t> ParseOctalLiteral(std::string_view text) {
  size_t at = 0;
  bool negative = false;
  if (at < text.size() && (text[at] == '+' || text[at] == '-')) negative = text[at++] == '-';
  if (text.size() - at >= 2 && text[at] == '0' && (text[at + 1] == 'o' || text[at + 1] == 'O')) {
    at += 2;
    if (at < text.size() && text[at] == '_') ++at;
  }
  if (at == text.size() || !IsOctalDigit(text[at])) return std::nullopt;
  int64_t value = 0;
  for (; at < text.size(); ++at) {
    if (text[at] == '_') {
      // Only between two digits (the next one checked by the next iteration).
      if (at + 1 == text.size() || text[at + 1] == '_') return std::nullopt;
      continue;
    }
    if (!IsOctalDigit(text[at])) return std::nullopt;
    value = value * 8 + (text[at] - '0');  // a field of at most 12 digits: no overflow
  }
  return negative ? -value : value;
}

}  // namespace

std::optional<int64_t> ParseTarNumber(std::span<const std::byte> field) {
  if (field.empty()) return std::nullopt;
  const auto marker = static_cast<uint8_t>(field[0]);
  if (marker == 0x80 || marker == 0xff) return ParseBase256(field);
  // tarfile.nts: the text ends at the first NUL, and must be ASCII.
  std::string_view text(reinterpret_cast<const char*>(field.data()), field.size());
  text = text.substr(0, text.find('\0'));
  if (std::any_of(text.begin(), text.end(), [](char c) { return (c & 0x80) != 0; })) {
    return std::nullopt;
  }
  while (!text.empty() && IsPythonSpace(text.front())) text.remove_prefix(1);
  while (!text.empty() && IsPythonSpace(text.back())) text.remove_suffix(1);
  if (text.empty()) return 0;
  return ParseOctalLiteral(text);
}

bool PassesTarHeaderTest(std::span<const std::byte> bytes) {
  if (bytes.size() < kTarBlockLen) return false;
  const std::span<const std::byte> block = bytes.first(kTarBlockLen);
  // All NULs: tarfile reads the end-of-archive marker and opens an empty archive.
  if (std::all_of(block.begin(), block.end(), [](std::byte b) { return b == std::byte{0}; })) {
    return true;
  }
  const std::optional<int64_t> stored = ParseTarNumber(block.subspan(kChecksumAt, kChecksumLen));
  if (!stored.has_value()) return false;
  // The sums count the checksum field as eight spaces (8 * 0x20 = 256).
  int64_t unsigned_sum = 256;
  int64_t signed_sum = 256;
  for (size_t k = 0; k < kTarBlockLen; ++k) {
    if (k >= kChecksumAt && k < kChecksumAt + kChecksumLen) continue;
    unsigned_sum += static_cast<uint8_t>(block[k]);
    signed_sum += static_cast<int8_t>(block[k]);
  }
  return *stored == unsigned_sum || *stored == signed_sum;
}

Error CheckNotTarShaped(std::span<const std::byte> bytes) {
  if (!PassesTarHeaderTest(bytes)) return {};
  return Error{ErrorCode::kTarAmbiguous, 0,
               "the file's first 512 bytes pass Python tarfile's header test: torch.load "
               "would read it as a tar archive (torch's oldest format) and unpickle its "
               "members with plain pickle"};
}

}  // namespace stguard
