// SPDX-License-Identifier: Apache-2.0
// Decoders of the "IQ" types. The grid types (iq1_*, iq2_*, iq3_*) store, per 8 or 4
// elements, an index into a lookup grid of small magnitudes (grids::k*Grid, one value per
// byte) plus sign bits; iq4_nl and iq4_xs store 4-bit indexes into 16 non-linear levels.
// Sub-block scales are small integers times the half-precision block scale, computed in
// ggml's order (scale first, then times the grid value). ggml then multiplies by -1 or 1
// for the sign; its compilers turn that into a flip of the sign bit, which also flips a
// NaN's sign (a real multiply by -1 would keep it). The flip is written out here as an
// integer operation, so every compiler at every optimisation level gives those bits.
#include <bit>

#include "gguf/dequant_grids.h"
#include "gguf/dequant_internal.h"

namespace stguard::gguf::dequant {

namespace {

using grids::kSignMask;
using grids::kSignPatterns;

inline float GridValue(uint64_t entry, int j) {
  return static_cast<float>(static_cast<uint8_t>(entry >> (8 * j)));
}
// WithSign flips the sign bit of `value` when bit j of `signs` is set.
inline float WithSign(float value, uint8_t signs, int j) {
  const uint32_t flip = (signs & kSignMask[j]) ? 0x80000000u : 0u;
  return std::bit_cast<float>(std::bit_cast<uint32_t>(value) ^ flip);
}

// Eight values: the grid entry's bytes, times dl, times the signs' bits.
inline void SignedGrid8(uint64_t entry, uint8_t signs, float dl, float* out) {
  for (int j = 0; j < 8; ++j) out[j] = WithSign(dl * GridValue(entry, j), signs, j);
}

// Four values from a 4-byte grid entry, with sign bits `first`.. of `signs`.
inline void SignedGrid4(uint32_t entry, uint8_t signs, int first, float dl, float* out) {
  for (int j = 0; j < 4; ++j) out[j] = WithSign(dl * GridValue(entry, j), signs, first + j);
}

// The 2-bit types' sub-block scale: d * (0.5 + s) / 4, as two multiplies.
inline float QuarterScale(float d, uint32_t s) {
  return d * (0.5f + static_cast<float>(s)) * 0.25f;
}

// GridEntry is where 8 values come from: a grid index and the byte of their sign bits.
struct GridEntry {
  int index;
  uint8_t signs;
};

// NibbleScaledGroup writes the 32 values of one iq2_xs or iq2_s group: four 8-value grid
// entries, entry(l) for l = 0..3, the first two scaled by the low nibble of `scales`, the
// last two by its high nibble.
template <typename Entry>
inline void NibbleScaledGroup(const uint64_t* grid, float d, uint8_t scales, Entry entry,
                              float* out) {
  const float db[2] = {QuarterScale(d, scales & 0x0Fu), QuarterScale(d, scales >> 4)};
  for (int l = 0; l < 4; ++l, out += 8) {
    const GridEntry e = entry(l);
    SignedGrid8(grid[e.index], e.signs, db[l / 2], out);
  }
}

}  // namespace

// iq2_xxs: d, then per 32 elements 8 bytes: four grid indexes, then a u32 whose top 4
// bits are the scale and whose four 7-bit fields code each 8 elements' signs.
STGUARD_DEQUANT_CLONES
static void DecodeIq2_xxsBody(const uint8_t* __restrict blocks, size_t n_blocks, float* __restrict out) {
  for (size_t b = 0; b < n_blocks; ++b, blocks += 66) {
    const float d = LoadHalf(blocks);
    for (int ib = 0; ib < 8; ++ib) {
      const uint8_t* group = blocks + 2 + 8 * ib;
      const uint32_t signs_scale = LoadU32(group + 4);
      const float db = QuarterScale(d, signs_scale >> 28);
      for (int l = 0; l < 4; ++l, out += 8) {
        SignedGrid8(grids::kIq2xxsGrid[group[l]],
                    kSignPatterns[(signs_scale >> (7 * l)) & 127], db, out);
      }
    }
  }
}

// iq2_xs: d, 32 u16 (9-bit grid index, 7-bit sign code), then 8 bytes of two 4-bit
// scales (low nibble for the first 16 elements of each 32, high for the next).
STGUARD_DEQUANT_CLONES
static void DecodeIq2_xsBody(const uint8_t* __restrict blocks, size_t n_blocks, float* __restrict out) {
  for (size_t b = 0; b < n_blocks; ++b, blocks += 74) {
    const float d = LoadHalf(blocks);
    const uint8_t* scales = blocks + 66;
    for (int ib = 0; ib < 8; ++ib, out += 32) {
      const uint8_t* qs = blocks + 2 + 8 * ib;
      NibbleScaledGroup(grids::kIq2xsGrid, d, scales[ib], [qs](int l) {
        const uint16_t q = LoadU16(qs + 2 * l);
        return GridEntry{q & 511, kSignPatterns[q >> 9]};
      }, out);
    }
  }
}

// iq2_s: d, 32 bytes of grid index low bits, 32 bytes of plain sign bytes, 8 bytes of
// index high bits (2 per 8 elements), 8 bytes of scales as iq2_xs.
STGUARD_DEQUANT_CLONES
static void DecodeIq2_sBody(const uint8_t* __restrict blocks, size_t n_blocks, float* __restrict out) {
  for (size_t b = 0; b < n_blocks; ++b, blocks += 82) {
    const float d = LoadHalf(blocks);
    const uint8_t* qs = blocks + 2;
    const uint8_t* signs = blocks + 34;
    const uint8_t* qh = blocks + 66;
    const uint8_t* scales = blocks + 74;
    for (int ib = 0; ib < 8; ++ib, qs += 4, signs += 4, out += 32) {
      const int high = qh[ib];
      NibbleScaledGroup(grids::kIq2sGrid, d, scales[ib], [=](int l) {
        return GridEntry{qs[l] | ((high << (8 - 2 * l)) & 0x300), signs[l]};
      }, out);
    }
  }
}

// iq3_xxs: d, 64 bytes of grid indexes (two 4-value entries per 8 elements), then per 32
// elements a u32 of scale (top 4 bits) and four 7-bit sign codes; scale d*(0.5+s)/2.
STGUARD_DEQUANT_CLONES
static void DecodeIq3_xxsBody(const uint8_t* __restrict blocks, size_t n_blocks, float* __restrict out) {
  for (size_t b = 0; b < n_blocks; ++b, blocks += 98) {
    const float d = LoadHalf(blocks);
    const uint8_t* qs = blocks + 2;
    for (int ib = 0; ib < 8; ++ib, qs += 8) {
      const uint32_t signs_scale = LoadU32(blocks + 66 + 4 * ib);
      const float db = d * (0.5f + static_cast<float>(signs_scale >> 28)) * 0.5f;
      for (int l = 0; l < 4; ++l, out += 8) {
        const uint8_t signs = kSignPatterns[(signs_scale >> (7 * l)) & 127];
        SignedGrid4(grids::kIq3xxsGrid[qs[2 * l]], signs, 0, db, out);
        SignedGrid4(grids::kIq3xxsGrid[qs[2 * l + 1]], signs, 4, db, out + 4);
      }
    }
  }
}

// iq3_s: d, 64 bytes of grid index low bits, 8 bytes of ninth bits, 32 sign bytes, 4
// bytes of two 4-bit scales (one per 32 elements); scale d * (1 + 2s).
STGUARD_DEQUANT_CLONES
static void DecodeIq3_sBody(const uint8_t* __restrict blocks, size_t n_blocks, float* __restrict out) {
  for (size_t b = 0; b < n_blocks; ++b, blocks += 110) {
    const float d = LoadHalf(blocks);
    const uint8_t* qs = blocks + 2;
    const uint8_t* qh = blocks + 66;
    const uint8_t* signs = blocks + 74;
    const uint8_t* scales = blocks + 106;
    for (int ib = 0; ib < 8; ++ib, qs += 8, signs += 4) {
      const int s = (ib % 2 == 0) ? (scales[ib / 2] & 0x0F) : (scales[ib / 2] >> 4);
      const float db = d * static_cast<float>(1 + 2 * s);
      for (int l = 0; l < 4; ++l, out += 8) {
        const int index1 = qs[2 * l] | ((qh[ib] << (8 - 2 * l)) & 256);
        const int index2 = qs[2 * l + 1] | ((qh[ib] << (7 - 2 * l)) & 256);
        SignedGrid4(grids::kIq3sGrid[index1], signs[l], 0, db, out);
        SignedGrid4(grids::kIq3sGrid[index2], signs[l], 4, db, out + 4);
      }
    }
  }
}

namespace {

// Eight values dl * (grid value + delta) from an iq1 grid entry of signed bytes.
inline void ShiftedGrid8(uint64_t entry, float delta, float dl, float* out) {
  for (int j = 0; j < 8; ++j) {
    const float value = static_cast<float>(static_cast<int8_t>(entry >> (8 * j)));
    out[j] = dl * (value + delta);
  }
}

}  // namespace

// iq1_s: d, 32 bytes of grid index low bits, 8 u16 (per 32 elements: four 3-bit index
// high parts, a 3-bit scale at bit 12, the delta's sign at bit 15).
STGUARD_DEQUANT_CLONES
static void DecodeIq1_sBody(const uint8_t* __restrict blocks, size_t n_blocks, float* __restrict out) {
  for (size_t b = 0; b < n_blocks; ++b, blocks += 50) {
    const float d = LoadHalf(blocks);
    const uint8_t* qs = blocks + 2;
    for (int ib = 0; ib < 8; ++ib, qs += 4) {
      const uint16_t qh = LoadU16(blocks + 34 + 2 * ib);
      const float dl = d * static_cast<float>(2 * ((qh >> 12) & 7) + 1);
      const float delta = (qh & 0x8000) ? -grids::kIq1Delta : grids::kIq1Delta;
      for (int l = 0; l < 4; ++l, out += 8) {
        ShiftedGrid8(grids::kIq1sGrid[qs[l] | (((qh >> (3 * l)) & 7) << 8)], delta, dl, out);
      }
    }
  }
}

// iq1_m: 32 bytes of grid index low bits, 16 bytes (per 8 elements a nibble: 3 high index
// bits and the delta's sign), 8 bytes = four u16 holding 3-bit scales (two per 32
// elements) and, in their top nibbles, the half-precision block scale.
STGUARD_DEQUANT_CLONES
static void DecodeIq1_mBody(const uint8_t* __restrict blocks, size_t n_blocks, float* __restrict out) {
  for (size_t b = 0; b < n_blocks; ++b, blocks += 56) {
    const uint8_t* qs = blocks;
    const uint8_t* qh = blocks + 32;
    uint16_t sc[4];
    for (int i = 0; i < 4; ++i) sc[i] = LoadU16(blocks + 48 + 2 * i);
    const uint16_t scale_bits = grids::Iq1mScaleBits(sc);
    const float d = HalfToFloat(scale_bits);
    for (int ib = 0; ib < 8; ++ib, qs += 4, qh += 2) {
      const int shift = 6 * (ib % 2);
      const float dl1 = d * static_cast<float>(2 * ((sc[ib / 2] >> shift) & 7) + 1);
      const float dl2 = d * static_cast<float>(2 * ((sc[ib / 2] >> (shift + 3)) & 7) + 1);
      for (int l = 0; l < 4; ++l, out += 8) {
        const uint8_t nibble = (l % 2 == 0) ? (qh[l / 2] & 0x0F) : (qh[l / 2] >> 4);
        const int index = qs[l] | ((nibble & 7) << 8);
        const float delta = (nibble & 8) ? -grids::kIq1Delta : grids::kIq1Delta;
        ShiftedGrid8(grids::kIq1sGrid[index], delta, l < 2 ? dl1 : dl2, out);
      }
    }
  }
}

// iq4_nl: d, then 16 bytes of level indexes (low nibbles first, as q4_0).
STGUARD_DEQUANT_CLONES
static void DecodeIq4_nlBody(const uint8_t* __restrict blocks, size_t n_blocks, float* __restrict out) {
  for (size_t b = 0; b < n_blocks; ++b, blocks += 18, out += 32) {
    const float d = LoadHalf(blocks);
    const uint8_t* qs = blocks + 2;
    for (int j = 0; j < 16; ++j) {
      out[j] = d * static_cast<float>(grids::kIq4nlLevels[qs[j] & 0x0F]);
      out[j + 16] = d * static_cast<float>(grids::kIq4nlLevels[qs[j] >> 4]);
    }
  }
}

// iq4_xs: d, a u16 of scale high bits (2 per 32 elements), 4 bytes of scale low nibbles,
// then 128 bytes of level indexes, 16 per 32 elements as iq4_nl; scale d * (s - 32).
STGUARD_DEQUANT_CLONES
static void DecodeIq4_xsBody(const uint8_t* __restrict blocks, size_t n_blocks, float* __restrict out) {
  for (size_t b = 0; b < n_blocks; ++b, blocks += 136) {
    const float d = LoadHalf(blocks);
    const uint16_t scales_high = LoadU16(blocks + 2);
    const uint8_t* scales_low = blocks + 4;
    const uint8_t* qs = blocks + 8;
    for (int ib = 0; ib < 8; ++ib, qs += 16, out += 32) {
      const int low = (scales_low[ib / 2] >> (4 * (ib % 2))) & 0x0F;
      const int high = (scales_high >> (2 * ib)) & 3;
      const float dl = d * static_cast<float>((low | (high << 4)) - 32);
      for (int j = 0; j < 16; ++j) {
        out[j] = dl * static_cast<float>(grids::kIq4nlLevels[qs[j] & 0x0F]);
        out[j + 16] = dl * static_cast<float>(grids::kIq4nlLevels[qs[j] >> 4]);
      }
    }
  }
}

// The entry points the dispatch table names: plain hidden functions, so that the
// cloned bodies (ifuncs) stay local to this file and out of the shared library.
void DecodeIq2_xxs(const uint8_t* blocks, size_t n_blocks, float* out) {
  DecodeIq2_xxsBody(blocks, n_blocks, out);
}
void DecodeIq2_xs(const uint8_t* blocks, size_t n_blocks, float* out) {
  DecodeIq2_xsBody(blocks, n_blocks, out);
}
void DecodeIq2_s(const uint8_t* blocks, size_t n_blocks, float* out) {
  DecodeIq2_sBody(blocks, n_blocks, out);
}
void DecodeIq3_xxs(const uint8_t* blocks, size_t n_blocks, float* out) {
  DecodeIq3_xxsBody(blocks, n_blocks, out);
}
void DecodeIq3_s(const uint8_t* blocks, size_t n_blocks, float* out) {
  DecodeIq3_sBody(blocks, n_blocks, out);
}
void DecodeIq1_s(const uint8_t* blocks, size_t n_blocks, float* out) {
  DecodeIq1_sBody(blocks, n_blocks, out);
}
void DecodeIq1_m(const uint8_t* blocks, size_t n_blocks, float* out) {
  DecodeIq1_mBody(blocks, n_blocks, out);
}
void DecodeIq4_nl(const uint8_t* blocks, size_t n_blocks, float* out) {
  DecodeIq4_nlBody(blocks, n_blocks, out);
}
void DecodeIq4_xs(const uint8_t* blocks, size_t n_blocks, float* out) {
  DecodeIq4_xsBody(blocks, n_blocks, out);
}

}  // namespace stguard::gguf::dequant
