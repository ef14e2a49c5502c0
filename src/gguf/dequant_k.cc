// SPDX-License-Identifier: Apache-2.0
// Decoders of the "K" super-block types: 256 elements in sub-blocks of 16 or 32, each
// sub-block with its own small integer scale (and min) multiplied by the super-block's
// half-precision scale. The order of the float operations is ggml's: the sub-block scale
// d * sc first, then code * that, then minus the sub-block min (see dequant_internal.h).
#include "gguf/dequant_internal.h"

namespace stguard::gguf::dequant {

namespace {

constexpr size_t kSuperBlock = 256;

// ScaleMin6 unpacks sub-block j's (0..7) 6-bit scale and min from the 12 bytes q4_K and
// q5_K store them in: the first four pairs are the low 6 bits of bytes j and j+4; the last
// four take their low 4 bits from byte j+4's nibbles and their top 2 bits from the spare
// top bits of bytes j-4 and j.
inline void ScaleMin6(int j, const uint8_t* s, int* scale, int* min) {
  if (j < 4) {
    *scale = s[j] & 63;
    *min = s[j + 4] & 63;
  } else {
    *scale = (s[j + 4] & 0x0F) | ((s[j - 4] >> 6) << 4);
    *min = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
  }
}

}  // namespace

// q2_K: 16 bytes of sub-block scales (low nibble scale, high nibble min), 64 bytes of
// 2-bit codes, then d and dmin. Codes run in 128-element halves: within a half, bit pair
// p of byte l (l < 32) is element 32*p + l.
STGUARD_DEQUANT_CLONES
static void DecodeQ2_KBody(const uint8_t* __restrict blocks, size_t n_blocks, float* __restrict out) {
  for (size_t b = 0; b < n_blocks; ++b, blocks += 84) {
    const uint8_t* scales = blocks;
    const uint8_t* q = blocks + 16;
    const float d = LoadHalf(blocks + 80);
    const float dmin = LoadHalf(blocks + 82);
    int sub = 0;
    for (int half = 0; half < 2; ++half, q += 32) {
      for (int shift = 0; shift < 8; shift += 2) {
        for (int part = 0; part < 2; ++part, ++sub) {
          const float dl = d * static_cast<float>(scales[sub] & 0x0F);
          const float ml = dmin * static_cast<float>(scales[sub] >> 4);
          const uint8_t* qp = q + 16 * part;
          for (int l = 0; l < 16; ++l) {
            out[l] = dl * static_cast<float>((qp[l] >> shift) & 3) - ml;
          }
          out += 16;
        }
      }
    }
  }
}

namespace {

// Q3Scale unpacks q3_K's sub-block scale j (0..15) from its 12 bytes: 4 low bits from a
// nibble of bytes 0..7, 2 high bits from bytes 8..11; stored biased by 32.
inline int Q3Scale(int j, const uint8_t* s) {
  const int group = j / 4;
  const int k = j % 4;
  const uint8_t low_byte = s[(group & 1) * 4 + k];
  const int low = (group < 2) ? (low_byte & 0x0F) : (low_byte >> 4);
  const int high = (s[8 + k] >> (2 * group)) & 3;
  return (low | (high << 4)) - 32;
}

}  // namespace

// q3_K: 32 bytes of high bits (a clear bit subtracts 4), 64 bytes of 2-bit codes laid out
// as q2_K's, 12 bytes of 6-bit scales, then d.
STGUARD_DEQUANT_CLONES
static void DecodeQ3_KBody(const uint8_t* __restrict blocks, size_t n_blocks, float* __restrict out) {
  for (size_t b = 0; b < n_blocks; ++b, blocks += 110) {
    const uint8_t* hmask = blocks;
    const uint8_t* scales = blocks + 96;
    const float d = LoadHalf(blocks + 108);
    // The 16 sub-block scales first, so the element loops hold nothing but vector work.
    float dl[16];
    for (int sub = 0; sub < 16; ++sub) dl[sub] = d * static_cast<float>(Q3Scale(sub, scales));
    // Group g (0..7) is bit pair g%4 of the codes of half g/4 and bit g of hmask.
    for (int g = 0; g < 8; ++g, out += 32) {
      const uint8_t* q = blocks + 32 + 32 * (g / 4);
      const int shift = 2 * (g % 4);
      for (int part = 0; part < 2; ++part) {
        const float scale = dl[2 * g + part];
        for (int l = 16 * part; l < 16 * part + 16; ++l) {
          // A clear high bit subtracts 4: written without a branch, so it vectorises.
          const int code = ((q[l] >> shift) & 3) - 4 + 4 * ((hmask[l] >> g) & 1);
          out[l] = scale * static_cast<float>(code);
        }
      }
    }
  }
}

// q4_K: d, dmin, 12 bytes of 6-bit scales and mins, 128 bytes of nibbles: each 64
// elements are 32 bytes, low nibbles first (scale 2i), then high nibbles (scale 2i+1).
STGUARD_DEQUANT_CLONES
static void DecodeQ4_KBody(const uint8_t* __restrict blocks, size_t n_blocks, float* __restrict out) {
  for (size_t b = 0; b < n_blocks; ++b, blocks += 144) {
    const float d = LoadHalf(blocks);
    const float dmin = LoadHalf(blocks + 2);
    const uint8_t* scales = blocks + 4;
    const uint8_t* q = blocks + 16;
    // The 8 sub-block scales and mins first, so the element loops are pure vector work.
    float dl[8];
    float ml[8];
    for (int sub = 0; sub < 8; ++sub) {
      int sc = 0;
      int m = 0;
      ScaleMin6(sub, scales, &sc, &m);
      dl[sub] = d * static_cast<float>(sc);
      ml[sub] = dmin * static_cast<float>(m);
    }
    for (int i = 0; i < 4; ++i, q += 32, out += 64) {
      const float d1 = dl[2 * i], m1 = ml[2 * i];
      const float d2 = dl[2 * i + 1], m2 = ml[2 * i + 1];
      for (int l = 0; l < 32; ++l) out[l] = d1 * static_cast<float>(q[l] & 0x0F) - m1;
      for (int l = 0; l < 32; ++l) out[l + 32] = d2 * static_cast<float>(q[l] >> 4) - m2;
    }
  }
}

// q5_K: as q4_K with 32 bytes of fifth bits before the nibbles: bit 2i of byte l adds 16
// to element 64i + l, bit 2i+1 to element 64i + 32 + l.
STGUARD_DEQUANT_CLONES
static void DecodeQ5_KBody(const uint8_t* __restrict blocks, size_t n_blocks, float* __restrict out) {
  for (size_t b = 0; b < n_blocks; ++b, blocks += 176) {
    const float d = LoadHalf(blocks);
    const float dmin = LoadHalf(blocks + 2);
    const uint8_t* scales = blocks + 4;
    const uint8_t* qh = blocks + 16;
    const uint8_t* q = blocks + 48;
    for (int i = 0; i < 4; ++i, q += 32, out += 64) {
      int sc = 0;
      int m = 0;
      ScaleMin6(2 * i, scales, &sc, &m);
      const float d1 = d * static_cast<float>(sc);
      const float m1 = dmin * static_cast<float>(m);
      ScaleMin6(2 * i + 1, scales, &sc, &m);
      const float d2 = d * static_cast<float>(sc);
      const float m2 = dmin * static_cast<float>(m);
      for (int l = 0; l < 32; ++l) {
        const int code = (q[l] & 0x0F) + (((qh[l] >> (2 * i)) & 1) << 4);
        out[l] = d1 * static_cast<float>(code) - m1;
      }
      for (int l = 0; l < 32; ++l) {
        const int code = (q[l] >> 4) + (((qh[l] >> (2 * i + 1)) & 1) << 4);
        out[l + 32] = d2 * static_cast<float>(code) - m2;
      }
    }
  }
}

// q6_K: 128 bytes of low nibbles, 64 bytes of 2-bit high parts, 16 signed 8-bit
// sub-block scales, then d. Per 128-element half, quarter k (32 elements, l = 0..31) takes
// nibble k/2 of ql[l + 32*(k%2)] and bits 2k of qh[l], its first 16 elements scale
// 2k, the next 16 scale 2k+1; value = (d * scale) * (code - 32), the product d * scale
// rounded first as in ggml, so it can be computed once per 16 elements.
STGUARD_DEQUANT_CLONES
static void DecodeQ6_KBody(const uint8_t* __restrict blocks, size_t n_blocks, float* __restrict out) {
  for (size_t b = 0; b < n_blocks; ++b, blocks += 210) {
    const int8_t* sc = reinterpret_cast<const int8_t*>(blocks + 192);
    const float d = LoadHalf(blocks + 208);
    for (int half = 0; half < 2; ++half) {
      const uint8_t* ql = blocks + 64 * half;
      const uint8_t* qh = blocks + 128 + 32 * half;
      for (int k = 0; k < 4; ++k) {
        const uint8_t* low = ql + 32 * (k % 2);
        const int nibble_shift = 4 * (k / 2);
        for (int part = 0; part < 2; ++part, out += 16) {
          const float scale = d * static_cast<float>(sc[8 * half + 2 * k + part]);
          for (int l = 16 * part; l < 16 * part + 16; ++l) {
            const int code = ((low[l] >> nibble_shift) & 0x0F) | (((qh[l] >> (2 * k)) & 3) << 4);
            out[l - 16 * part] = scale * static_cast<float>(code - 32);
          }
        }
      }
    }
  }
}

// q8_K: an F32 scale, 256 signed bytes, then 16 int16 group sums (not needed to decode).
STGUARD_DEQUANT_CLONES
static void DecodeQ8_KBody(const uint8_t* __restrict blocks, size_t n_blocks, float* __restrict out) {
  for (size_t b = 0; b < n_blocks; ++b, blocks += 292, out += kSuperBlock) {
    const float d = LoadF32(blocks);
    const uint8_t* qs = blocks + 4;
    for (size_t j = 0; j < kSuperBlock; ++j) {
      out[j] = d * static_cast<float>(static_cast<int8_t>(qs[j]));
    }
  }
}

// The entry points the dispatch table names: plain hidden functions, so that the
// cloned bodies (ifuncs) stay local to this file and out of the shared library.
void DecodeQ2_K(const uint8_t* blocks, size_t n_blocks, float* out) {
  DecodeQ2_KBody(blocks, n_blocks, out);
}
void DecodeQ3_K(const uint8_t* blocks, size_t n_blocks, float* out) {
  DecodeQ3_KBody(blocks, n_blocks, out);
}
void DecodeQ4_K(const uint8_t* blocks, size_t n_blocks, float* out) {
  DecodeQ4_KBody(blocks, n_blocks, out);
}
void DecodeQ5_K(const uint8_t* blocks, size_t n_blocks, float* out) {
  DecodeQ5_KBody(blocks, n_blocks, out);
}
void DecodeQ6_K(const uint8_t* blocks, size_t n_blocks, float* out) {
  DecodeQ6_KBody(blocks, n_blocks, out);
}
void DecodeQ8_K(const uint8_t* blocks, size_t n_blocks, float* out) {
  DecodeQ8_KBody(blocks, n_blocks, out);
}

}  // namespace stguard::gguf::dequant
