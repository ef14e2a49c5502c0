// SPDX-License-Identifier: Apache-2.0
// Sample data for dtype conversion tests: little-endian element bytes, and a checkpoint
// holding a tensor of each kind `convert --dtype` treats apart.
#ifndef STGUARD_TESTS_SUPPORT_CONVERT_SAMPLES_H_
#define STGUARD_TESTS_SUPPORT_CONVERT_SAMPLES_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <vector>

namespace stguard::testing {

// Bytes16 is `count` 16-bit values first, first + 1, ... as little-endian bytes.
std::vector<std::byte> Bytes16(uint32_t count, uint32_t first = 0);

// LittleEndian is `values` as little-endian bytes.
template <typename T>
std::vector<std::byte> LittleEndian(std::initializer_list<T> values) {
  std::vector<std::byte> out;
  for (T value : values) {
    using U = std::make_unsigned_t<T>;
    const U bits = static_cast<U>(value);
    for (size_t i = 0; i < sizeof(T); ++i) {
      out.push_back(static_cast<std::byte>((bits >> (8 * i)) & 0xFF));
    }
  }
  return out;
}

// LittleEndianDoubles is `values` as little-endian F64 bytes.
std::vector<std::byte> LittleEndianDoubles(std::initializer_list<double> values);

// MixedCheckpoint is a safetensors file with F32 (finite, NaN, infinite, tiny and
// overflowing-F16 values), BF16, F64, I32 and F8_E4M3 tensors and __metadata__.
std::string MixedCheckpoint();

}  // namespace stguard::testing

#endif  // STGUARD_TESTS_SUPPORT_CONVERT_SAMPLES_H_
