// SPDX-License-Identifier: Apache-2.0
// Decoders of the 4-bit float types. Each 4-bit code is an E2M1 value; ggml stores the
// E2M1 values doubled as small integers (grids::kFp4Levels) and halves the scale instead.
// mxfp4: 32 elements with one E8M0 (power of two) scale; nvfp4: 64 elements in four
// groups of 16, each with an unsigned E4M3 scale.
#include <array>
#include <bit>

#include "gguf/dequant_grids.h"
#include "gguf/dequant_internal.h"

namespace stguard::gguf::dequant {

namespace {

// E8M0HalfToFloat is 2^(e - 128), half the E8M0 scale 2^(e - 127). e = 0 and 1 are
// subnormal floats; e = 255 is 2^127, not NaN (ggml does not special-case it).
inline float E8M0HalfToFloat(uint8_t e) {
  const uint32_t bits = e < 2 ? (0x00200000u << e) : (static_cast<uint32_t>(e - 1) << 23);
  return std::bit_cast<float>(bits);
}

// Ue4m3HalfToFloat is half an unsigned E4M3 scale (4 exponent bits, bias 7, 3 mantissa
// bits) as ggml reads it: the top bit is ignored; 0x00 and 0x7F (E4M3's NaN) give 0; the
// largest, 0x7E and with the top bit 0xFF, give 448/2 and 480/2. Every value is exact.
constexpr float Ue4m3HalfToFloat(uint8_t x) {
  if (x == 0 || x == 0x7F) return 0.0f;
  const int exponent = (x >> 3) & 0x0F;
  const int mantissa = x & 0x07;
  float value = exponent == 0 ? static_cast<float>(mantissa) / 512.0f
                              : (1.0f + static_cast<float>(mantissa) / 8.0f);
  for (int e = 7; e < exponent; ++e) value *= 2.0f;
  for (int e = exponent; e < 7 && exponent != 0; ++e) value /= 2.0f;
  return value * 0.5f;
}

constexpr std::array<float, 256> MakeUe4m3Table() {
  std::array<float, 256> table{};
  for (int x = 0; x < 256; ++x) table[x] = Ue4m3HalfToFloat(static_cast<uint8_t>(x));
  return table;
}
constexpr std::array<float, 256> kUe4m3Half = MakeUe4m3Table();

// DecodeFp4Group writes 2n values: the low nibbles of qs[0..n) then the high nibbles.
inline void DecodeFp4Group(const uint8_t* qs, int n, float d, float* out) {
  for (int j = 0; j < n; ++j) {
    out[j] = static_cast<float>(grids::kFp4Levels[qs[j] & 0x0F]) * d;
    out[j + n] = static_cast<float>(grids::kFp4Levels[qs[j] >> 4]) * d;
  }
}

}  // namespace

// mxfp4: the E8M0 exponent byte, then 16 bytes of codes.
STGUARD_DEQUANT_CLONES
static void DecodeMxfp4Body(const uint8_t* __restrict blocks, size_t n_blocks, float* __restrict out) {
  for (size_t b = 0; b < n_blocks; ++b, blocks += 17, out += 32) {
    DecodeFp4Group(blocks + 1, 16, E8M0HalfToFloat(blocks[0]), out);
  }
}

// nvfp4: four E4M3 scale bytes, then four groups of 8 bytes of codes.
STGUARD_DEQUANT_CLONES
static void DecodeNvfp4Body(const uint8_t* __restrict blocks, size_t n_blocks, float* __restrict out) {
  for (size_t b = 0; b < n_blocks; ++b, blocks += 36) {
    for (int group = 0; group < 4; ++group, out += 16) {
      DecodeFp4Group(blocks + 4 + 8 * group, 8, kUe4m3Half[blocks[group]], out);
    }
  }
}

// The entry points the dispatch table names: plain hidden functions, so that the
// cloned bodies (ifuncs) stay local to this file and out of the shared library.
void DecodeMxfp4(const uint8_t* blocks, size_t n_blocks, float* out) {
  DecodeMxfp4Body(blocks, n_blocks, out);
}
void DecodeNvfp4(const uint8_t* blocks, size_t n_blocks, float* out) {
  DecodeNvfp4Body(blocks, n_blocks, out);
}

}  // namespace stguard::gguf::dequant
