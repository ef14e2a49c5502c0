// SPDX-License-Identifier: Apache-2.0
// Decoders of the ternary types (values -1, 0, 1 times one half-precision scale per 256
// elements): tq1_0 packs five trits per byte as a base-3 fixed-point fraction, tq2_0 four
// 2-bit codes per byte.
#include "gguf/dequant_internal.h"

namespace stguard::gguf::dequant {

namespace {

// Trit n (0..4) of a tq1_0 byte: multiplying by 3^n (mod 256) shifts the fraction left
// n trits; the top trit is then (byte * 3) >> 8.
inline float Trit(uint8_t byte, int n, float d) {
  static constexpr uint8_t kPow3[5] = {1, 3, 9, 27, 81};
  const uint8_t shifted = static_cast<uint8_t>(byte * kPow3[n]);
  const int trit = (shifted * 3) >> 8;
  return static_cast<float>(trit - 1) * d;
}

}  // namespace

// tq1_0: 48 bytes of five trits (the first 32 bytes give elements 0..159 as trit n of
// byte m at 32n + m; the next 16 give 160..239 the same way), 4 bytes of four trits
// (elements 240..255: trit n of byte j at 4n + j), then d.
STGUARD_DEQUANT_CLONES
static void DecodeTq1_0Body(const uint8_t* __restrict blocks, size_t n_blocks, float* __restrict out) {
  for (size_t b = 0; b < n_blocks; ++b, blocks += 54) {
    const uint8_t* qs = blocks;
    const uint8_t* qh = blocks + 48;
    const float d = LoadHalf(blocks + 52);
    for (int n = 0; n < 5; ++n, out += 32) {
      for (int m = 0; m < 32; ++m) out[m] = Trit(qs[m], n, d);
    }
    for (int n = 0; n < 5; ++n, out += 16) {
      for (int m = 0; m < 16; ++m) out[m] = Trit(qs[32 + m], n, d);
    }
    for (int n = 0; n < 4; ++n, out += 4) {
      for (int j = 0; j < 4; ++j) out[j] = Trit(qh[j], n, d);
    }
  }
}

// tq2_0: 64 bytes of 2-bit codes (per 32-byte half, bit pair l of byte m is element
// 32l + m), then d; value = (code - 1) * d.
STGUARD_DEQUANT_CLONES
static void DecodeTq2_0Body(const uint8_t* __restrict blocks, size_t n_blocks, float* __restrict out) {
  for (size_t b = 0; b < n_blocks; ++b, blocks += 66) {
    const float d = LoadHalf(blocks + 64);
    for (int half = 0; half < 2; ++half) {
      const uint8_t* qs = blocks + 32 * half;
      for (int l = 0; l < 4; ++l, out += 32) {
        for (int m = 0; m < 32; ++m) {
          out[m] = static_cast<float>(((qs[m] >> (2 * l)) & 3) - 1) * d;
        }
      }
    }
  }
}

// The entry points the dispatch table names: plain hidden functions, so that the
// cloned bodies (ifuncs) stay local to this file and out of the shared library.
void DecodeTq1_0(const uint8_t* blocks, size_t n_blocks, float* out) {
  DecodeTq1_0Body(blocks, n_blocks, out);
}
void DecodeTq2_0(const uint8_t* blocks, size_t n_blocks, float* out) {
  DecodeTq2_0Body(blocks, n_blocks, out);
}

}  // namespace stguard::gguf::dequant
