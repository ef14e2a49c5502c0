// SPDX-License-Identifier: Apache-2.0
// Decoders of the block types with one half-precision scale per block (and, for the _1
// types, a half-precision min): q4_0, q4_1, q5_0, q5_1, q8_0 (32 elements), q1_0 (128)
// and q2_0 (64). Each value is the integer code converted to float times the scale, plus
// the min where there is one, in that order (see dequant_internal.h on contraction).
// The loops are written so that the compiler vectorises them (no branches, no gathers).
#include "gguf/dequant_internal.h"

namespace stguard::gguf::dequant {

namespace {

// MinForAdd is the m to add to code * d. When d is NaN every product is d's NaN, and
// ggml's compiled add keeps that one (its first operand) even when m is NaN too; but
// compilers may swap the operands of `+` (clang does when it vectorises). Adding d's
// NaN instead of m's gives the same bits whichever operand comes first.
inline float MinForAdd(float d, float m) { return d != d ? d : m; }

}  // namespace

// q4_0: scale (2 bytes), then 16 bytes of 4-bit codes: the low nibbles are elements 0-15,
// the high nibbles 16-31; value = (code - 8) * d.
STGUARD_DEQUANT_CLONES
static void DecodeQ4_0Body(const uint8_t* __restrict blocks, size_t n_blocks, float* __restrict out) {
  for (size_t b = 0; b < n_blocks; ++b, blocks += 18, out += 32) {
    const float d = LoadHalf(blocks);
    const uint8_t* qs = blocks + 2;
    for (int j = 0; j < 16; ++j) {
      out[j] = static_cast<float>((qs[j] & 0x0F) - 8) * d;
      out[j + 16] = static_cast<float>((qs[j] >> 4) - 8) * d;
    }
  }
}

// q4_1: scale d and min m (2 bytes each), then 16 bytes of codes as q4_0;
// value = code * d + m.
STGUARD_DEQUANT_CLONES
static void DecodeQ4_1Body(const uint8_t* __restrict blocks, size_t n_blocks, float* __restrict out) {
  for (size_t b = 0; b < n_blocks; ++b, blocks += 20, out += 32) {
    const float d = LoadHalf(blocks);
    const float m = MinForAdd(d, LoadHalf(blocks + 2));
    const uint8_t* qs = blocks + 4;
    for (int j = 0; j < 16; ++j) {
      out[j] = static_cast<float>(qs[j] & 0x0F) * d + m;
      out[j + 16] = static_cast<float>(qs[j] >> 4) * d + m;
    }
  }
}

// q5_0: scale, 4 bytes holding each element's fifth bit (bit j for element j), then 16
// bytes of low nibbles as q4_0; value = (code - 16) * d.
STGUARD_DEQUANT_CLONES
static void DecodeQ5_0Body(const uint8_t* __restrict blocks, size_t n_blocks, float* __restrict out) {
  for (size_t b = 0; b < n_blocks; ++b, blocks += 22, out += 32) {
    const float d = LoadHalf(blocks);
    const uint32_t high = LoadU32(blocks + 2);
    const uint8_t* qs = blocks + 6;
    for (int j = 0; j < 16; ++j) {
      const int low_code = (qs[j] & 0x0F) | static_cast<int>(((high >> j) & 1u) << 4);
      const int high_code = (qs[j] >> 4) | static_cast<int>(((high >> (j + 16)) & 1u) << 4);
      out[j] = static_cast<float>(low_code - 16) * d;
      out[j + 16] = static_cast<float>(high_code - 16) * d;
    }
  }
}

// q5_1: scale, min, fifth bits, low nibbles; value = code * d + m.
STGUARD_DEQUANT_CLONES
static void DecodeQ5_1Body(const uint8_t* __restrict blocks, size_t n_blocks, float* __restrict out) {
  for (size_t b = 0; b < n_blocks; ++b, blocks += 24, out += 32) {
    const float d = LoadHalf(blocks);
    const float m = MinForAdd(d, LoadHalf(blocks + 2));
    const uint32_t high = LoadU32(blocks + 4);
    const uint8_t* qs = blocks + 8;
    for (int j = 0; j < 16; ++j) {
      const int low_code = (qs[j] & 0x0F) | static_cast<int>(((high >> j) & 1u) << 4);
      const int high_code = (qs[j] >> 4) | static_cast<int>(((high >> (j + 16)) & 1u) << 4);
      out[j] = static_cast<float>(low_code) * d + m;
      out[j + 16] = static_cast<float>(high_code) * d + m;
    }
  }
}

// q8_0: scale, then 32 signed bytes; value = code * d.
STGUARD_DEQUANT_CLONES
static void DecodeQ8_0Body(const uint8_t* __restrict blocks, size_t n_blocks, float* __restrict out) {
  for (size_t b = 0; b < n_blocks; ++b, blocks += 34, out += 32) {
    const float d = LoadHalf(blocks);
    const uint8_t* qs = blocks + 2;
    for (int j = 0; j < 32; ++j) {
      out[j] = static_cast<float>(static_cast<int8_t>(qs[j])) * d;
    }
  }
}

// q1_0: scale, then 16 bytes of sign bits (bit j%8 of byte j/8): set gives d, clear -d.
// -d is a sign flip, not a multiply: ggml negates the scale once per block.
STGUARD_DEQUANT_CLONES
static void DecodeQ1_0Body(const uint8_t* __restrict blocks, size_t n_blocks, float* __restrict out) {
  for (size_t b = 0; b < n_blocks; ++b, blocks += 18, out += 128) {
    const float d = LoadHalf(blocks);
    const float neg_d = -d;
    const uint8_t* qs = blocks + 2;
    // Byte by byte, so that the 8 bits of one byte become one vector of 8 lanes.
    for (int i = 0; i < 16; ++i) {
      const uint32_t byte = qs[i];
      for (int k = 0; k < 8; ++k) out[8 * i + k] = ((byte >> k) & 1u) ? d : neg_d;
    }
  }
}

// q2_0: scale, then 16 bytes of 2-bit codes (bits 2*(j%4) of byte j/4);
// value = (code - 1) * d, so the codes stand for -1, 0, 1, 2.
STGUARD_DEQUANT_CLONES
static void DecodeQ2_0Body(const uint8_t* __restrict blocks, size_t n_blocks, float* __restrict out) {
  for (size_t b = 0; b < n_blocks; ++b, blocks += 18, out += 64) {
    const float d = LoadHalf(blocks);
    const uint8_t* qs = blocks + 2;
    // Two bytes at a time, so that their 8 codes become one vector of 8 lanes.
    for (int i = 0; i < 16; i += 2) {
      const uint32_t pair = static_cast<uint32_t>(qs[i]) | (static_cast<uint32_t>(qs[i + 1]) << 8);
      for (int k = 0; k < 8; ++k) {
        const int code = static_cast<int>((pair >> (2 * k)) & 3u);
        out[4 * i + k] = static_cast<float>(code - 1) * d;
      }
    }
  }
}

// The entry points the dispatch table names: plain hidden functions, so that the
// cloned bodies (ifuncs) stay local to this file and out of the shared library.
void DecodeQ4_0(const uint8_t* blocks, size_t n_blocks, float* out) {
  DecodeQ4_0Body(blocks, n_blocks, out);
}
void DecodeQ4_1(const uint8_t* blocks, size_t n_blocks, float* out) {
  DecodeQ4_1Body(blocks, n_blocks, out);
}
void DecodeQ5_0(const uint8_t* blocks, size_t n_blocks, float* out) {
  DecodeQ5_0Body(blocks, n_blocks, out);
}
void DecodeQ5_1(const uint8_t* blocks, size_t n_blocks, float* out) {
  DecodeQ5_1Body(blocks, n_blocks, out);
}
void DecodeQ8_0(const uint8_t* blocks, size_t n_blocks, float* out) {
  DecodeQ8_0Body(blocks, n_blocks, out);
}
void DecodeQ1_0(const uint8_t* blocks, size_t n_blocks, float* out) {
  DecodeQ1_0Body(blocks, n_blocks, out);
}
void DecodeQ2_0(const uint8_t* blocks, size_t n_blocks, float* out) {
  DecodeQ2_0Body(blocks, n_blocks, out);
}

}  // namespace stguard::gguf::dequant
