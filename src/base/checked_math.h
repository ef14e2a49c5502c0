// SPDX-License-Identifier: Apache-2.0
// Overflow-checked unsigned arithmetic. Every size read from a file goes through these
// before it is used, so no product or sum can wrap.
#ifndef STGUARD_SRC_BASE_CHECKED_MATH_H_
#define STGUARD_SRC_BASE_CHECKED_MATH_H_

#include <cstdint>
#include <string_view>

namespace stguard {

// CheckedMul stores a * b in *out and returns true, or returns false if it would overflow.
inline bool CheckedMul(uint64_t a, uint64_t b, uint64_t* out) {
  return !__builtin_mul_overflow(a, b, out);
}

// CheckedAdd stores a + b in *out and returns true, or returns false if it would overflow.
inline bool CheckedAdd(uint64_t a, uint64_t b, uint64_t* out) {
  return !__builtin_add_overflow(a, b, out);
}

// ParseUint64 parses a non-empty run of ASCII digits (no sign, no leading zeros beyond
// "0" itself: the tokenizer already enforced the JSON grammar). Returns false if the text
// has any other character or the value does not fit in 64 bits.
inline bool ParseUint64(std::string_view digits, uint64_t* out) {
  if (digits.empty()) return false;
  uint64_t value = 0;
  for (char c : digits) {
    const auto digit = static_cast<uint64_t>(static_cast<unsigned char>(c) - '0');
    if (digit > 9) return false;
    // Checked before the arithmetic, as in BoringSSL's CBS: v * 10 + d <= UINT64_MAX.
    if (value > (UINT64_MAX - digit) / 10) return false;
    value = value * 10 + digit;
  }
  *out = value;
  return true;
}

}  // namespace stguard

#endif  // STGUARD_SRC_BASE_CHECKED_MATH_H_
