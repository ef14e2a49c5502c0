// SPDX-License-Identifier: Apache-2.0
// Finding the end of the plain part of a JSON string, 16 bytes at a time.
#ifndef STGUARD_SRC_JSON_STRING_SCAN_H_
#define STGUARD_SRC_JSON_STRING_SCAN_H_

#include <bit>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace stguard {

// FindStringSpecialByte returns the first byte in [p, end) that a string scanner must look
// at individually: '"', '\\', a control byte < 0x20, or a non-ASCII byte >= 0x80; or `end`
// when there is none. Never reads at or past `end`.
inline const char* FindStringSpecialByte(const char* p, const char* end) {
#if defined(__SSE2__)
  // Every x86-64 CPU has SSE2. Compared as signed bytes, 0x80..0xFF are negative, so one
  // "less than 0x20" test catches both control bytes and non-ASCII bytes.
  const __m128i quotes = _mm_set1_epi8('"');
  const __m128i backslashes = _mm_set1_epi8('\\');
  const __m128i spaces = _mm_set1_epi8(0x20);
  while (end - p >= 16) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i special =
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(bytes, quotes), _mm_cmpeq_epi8(bytes, backslashes)),
                     _mm_cmplt_epi8(bytes, spaces));
    const int mask = _mm_movemask_epi8(special);
    if (mask != 0) return p + std::countr_zero(static_cast<unsigned>(mask));
    p += 16;
  }
#endif
  // The portable path and the tail: 8 bytes at a time (SWAR: SIMD within a register).
  // For each byte b < 0x80, with no borrow coming in from the byte below:
  //   (b ^ '"') - 1 and (b ^ '\\') - 1 have the high bit set iff b is that character,
  //   b - 0x20 has it set iff b < 0x20,
  // and b has it set iff b >= 0x80. A borrow leaves a byte only when that byte is itself
  // flagged, so the lowest flagged byte is a true one; higher ones may be false alarms,
  // and the byte loop below settles them.
  constexpr uint64_t kOnes = 0x0101010101010101;
  constexpr uint64_t kHighBits = 0x8080808080808080;
  while (end - p >= 8) {
    uint64_t word;
    std::memcpy(&word, p, sizeof(word));
    const uint64_t flagged = (((word ^ (kOnes * '"')) - kOnes) | ((word ^ (kOnes * '\\')) - kOnes) |
                              (word - kOnes * 0x20) | word) &
                             kHighBits;
    if (flagged != 0) {
      if constexpr (std::endian::native == std::endian::little) {
        return p + std::countr_zero(flagged) / 8;  // byte i owns bit 8*i+7
      }
      break;
    }
    p += 8;
  }
  for (; p != end; ++p) {
    const auto c = static_cast<unsigned char>(*p);
    if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) return p;
  }
  return end;
}

}  // namespace stguard

#endif  // STGUARD_SRC_JSON_STRING_SCAN_H_
