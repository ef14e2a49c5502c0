// SPDX-License-Identifier: Apache-2.0
// Reading and writing little-endian values at any alignment.
#ifndef STGUARD_SRC_BASE_LITTLE_ENDIAN_H_
#define STGUARD_SRC_BASE_LITTLE_ENDIAN_H_

#include <bit>
#include <cstddef>
#include <cstring>

namespace stguard {

// LoadLittleEndian reads a T stored little-endian at p. Through memcpy it needs no
// alignment, and on a little-endian host it compiles to a plain (vectorisable) load.
template <typename T>
inline T LoadLittleEndian(const std::byte* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  if constexpr (std::endian::native == std::endian::big) {
    T swapped = 0;
    for (size_t i = 0; i < sizeof(T); ++i) {
      swapped = static_cast<T>((swapped << 8) | ((value >> (8 * i)) & 0xFF));
    }
    value = swapped;
  }
  return value;
}

// StoreLittleEndian writes `value` little-endian at p.
template <typename T>
inline void StoreLittleEndian(std::byte* p, T value) {
  if constexpr (std::endian::native == std::endian::big) {
    for (size_t i = 0; i < sizeof(T); ++i) {
      p[i] = static_cast<std::byte>((value >> (8 * i)) & 0xFF);
    }
  } else {
    std::memcpy(p, &value, sizeof(T));
  }
}

}  // namespace stguard

#endif  // STGUARD_SRC_BASE_LITTLE_ENDIAN_H_
