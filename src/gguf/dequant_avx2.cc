// SPDX-License-Identifier: Apache-2.0
// AVX2 decoders of the block types whose portable loops the compiler does not turn into
// good vector code on its own (q4_0, q4_1, q8_0, q4_K, q5_K, q8_K, iq1_s, iq1_m): every
// byte of codes (or iq1 grid value) is widened to 8 lanes of int32 and converted in one
// instruction, the block scale is broadcast once. The float operations are the portable
// decoders' own, in the same order (convert, multiply, then add or subtract; iq1: add the
// delta, then multiply), one rounding each, so the bits are the same (q4_K and q5_K fuse
// a multiply that is exact with the subtraction: StoreKAffine16); the tests run these on
// any CPU that has AVX2. Built only for x86-64 with GCC or clang; the functions
// carry the avx2 target attribute, so the file is compiled for baseline x86-64 like
// every other and runs only after the CPU check below.
#include "gguf/dequant_internal.h"

#if STGUARD_DEQUANT_HAVE_AVX2

#include <cpuid.h>
#include <immintrin.h>

#include "gguf/dequant_grids.h"

namespace stguard::gguf::dequant {

namespace {

#define STGUARD_AVX2 __attribute__((target("avx2,f16c,fma")))

// Store8: eight int8 (or uint8) codes at the low 8 bytes of `codes`, as floats times
// `scale`, at out.
STGUARD_AVX2 __attribute__((always_inline)) inline void StoreScaled8(__m128i codes, bool is_signed, __m256 scale,
                                      float* out) {
  const __m256i wide = is_signed ? _mm256_cvtepi8_epi32(codes) : _mm256_cvtepu8_epi32(codes);
  _mm256_storeu_ps(out, _mm256_mul_ps(_mm256_cvtepi32_ps(wide), scale));
}

// Sixteen codes (a 128-bit register) times scale, at out[0..15].
STGUARD_AVX2 __attribute__((always_inline)) inline void StoreScaled16(__m128i codes, bool is_signed, __m256 scale,
                                       float* out) {
  StoreScaled8(codes, is_signed, scale, out);
  StoreScaled8(_mm_srli_si128(codes, 8), is_signed, scale, out + 8);
}

// Eight unsigned codes times scale plus `offset`, in that order.
STGUARD_AVX2 __attribute__((always_inline)) inline void StoreAffine8(__m128i codes, __m256 scale,
                                                                    __m256 offset, float* out) {
  const __m256 product = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(codes)), scale);
  _mm256_storeu_ps(out, _mm256_add_ps(product, offset));
}

// Load16: sixteen bytes, unaligned.
STGUARD_AVX2 __attribute__((always_inline)) inline __m128i Load16(const uint8_t* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}

// q4_0: (code - 8) * d; the low nibbles are elements 0-15, the high ones 16-31.
STGUARD_AVX2 void DecodeQ4_0Avx2(const uint8_t* blocks, size_t n_blocks, float* out) {
  const __m128i mask = _mm_set1_epi8(0x0F);
  const __m128i eight = _mm_set1_epi8(8);
  for (size_t b = 0; b < n_blocks; ++b, blocks += 18, out += 32) {
    const __m256 d = _mm256_set1_ps(LoadHalf(blocks));
    const __m128i q = Load16(blocks + 2);
    const __m128i low = _mm_sub_epi8(_mm_and_si128(q, mask), eight);
    const __m128i high = _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(q, 4), mask), eight);
    StoreScaled16(low, true, d, out);
    StoreScaled16(high, true, d, out + 16);
  }
}

// q4_1: code * d + m (m as the portable decoder's MinForAdd picks it).
STGUARD_AVX2 void DecodeQ4_1Avx2(const uint8_t* blocks, size_t n_blocks, float* out) {
  const __m128i mask = _mm_set1_epi8(0x0F);
  for (size_t b = 0; b < n_blocks; ++b, blocks += 20, out += 32) {
    const float d_scalar = LoadHalf(blocks);
    const float m_scalar = LoadHalf(blocks + 2);
    const __m256 d = _mm256_set1_ps(d_scalar);
    const __m256 m = _mm256_set1_ps(d_scalar != d_scalar ? d_scalar : m_scalar);
    const __m128i q = Load16(blocks + 4);
    const __m128i low = _mm_and_si128(q, mask);
    const __m128i high = _mm_and_si128(_mm_srli_epi16(q, 4), mask);
    StoreAffine8(low, d, m, out);
    StoreAffine8(_mm_srli_si128(low, 8), d, m, out + 8);
    StoreAffine8(high, d, m, out + 16);
    StoreAffine8(_mm_srli_si128(high, 8), d, m, out + 24);
  }
}

// HalfBroadcast: the half-precision scale at p in all 8 lanes (one F16C conversion of
// the broadcast bits: HalfToFloat's result, and no trip through memory).
STGUARD_AVX2 __attribute__((always_inline)) inline __m256 HalfBroadcast(const uint8_t* p) {
  return _mm256_cvtph_ps(_mm_set1_epi16(static_cast<short>(LoadU16(p))));
}

// Four signed codes from memory as four floats: one vpmovsxbd straight from the bytes,
// one vcvtdq2ps.
STGUARD_AVX2 __attribute__((always_inline)) inline __m128 SignedCodes4(const uint8_t* p) {
  return _mm_cvtepi32_ps(_mm_cvtepi8_epi32(_mm_cvtsi32_si128(static_cast<int>(LoadU32(p)))));
}

// `count` signed codes (a multiple of 4) times scale, four at a time in 128-bit
// registers. Zen 1 splits every 256-bit operation in two and has one store port, one
// convert unit and one shuffle-or-store pipe to spare; the 128-bit sequence (widen from
// memory, convert, multiply, store: one instruction each per four floats) keeps those
// four pipes equally busy, where the 256-bit one (widening eight bytes that had to be
// shuffled across lanes first) ran 1.2x ggml instead of 1.5x.
STGUARD_AVX2 __attribute__((always_inline)) inline void StoreSigned4s(const uint8_t* codes,
                                                                     int count, __m128 scale,
                                                                     float* out) {
  for (int j = 0; j < count; j += 4) {
    _mm_storeu_ps(out + j, _mm_mul_ps(SignedCodes4(codes + j), scale));
  }
}

// HalfBroadcast4: HalfBroadcast's four-lane form.
STGUARD_AVX2 __attribute__((always_inline)) inline __m128 HalfBroadcast4(const uint8_t* p) {
  return _mm_cvtph_ps(_mm_set1_epi16(static_cast<short>(LoadU16(p))));
}

// q8_0: code * d over 32 signed bytes. The scale is broadcast and converted per block
// (vpbroadcastw, vcvtph2ps): gathering eight blocks' scales through a stack array cost a
// store-forwarding stall per group.
STGUARD_AVX2 void DecodeQ8_0Avx2(const uint8_t* blocks, size_t n_blocks, float* out) {
  for (size_t b = 0; b < n_blocks; ++b, blocks += 34, out += 32) {
    StoreSigned4s(blocks + 2, 32, HalfBroadcast4(blocks), out);
  }
}

// q8_K: d (F32) * code over 256 signed bytes.
STGUARD_AVX2 void DecodeQ8_KAvx2(const uint8_t* blocks, size_t n_blocks, float* out) {
  for (size_t b = 0; b < n_blocks; ++b, blocks += 292, out += 256) {
    const __m128 d = _mm_set1_ps(LoadF32(blocks));
    // 32 codes per step: a loop the compiler unrolls whole inside, not 64 steps of four.
    for (int j = 0; j < 256; j += 32) StoreSigned4s(blocks + 4 + j, 32, d, out + j);
  }
}

// The 6-bit sub-block scales and mins of q4_K and q5_K, times d and dmin (as in
// dequant_k.cc's ScaleMin6, each product rounded once): the 12 bytes unpacked as three
// 32-bit words, four 6-bit fields a word at a time, then all eight converted and
// multiplied together (the scalar unpacking per sub-block cost as much as the codes).
// Eight bytes as eight floats.
STGUARD_AVX2 __attribute__((always_inline)) inline __m256 BytesAsFloats(uint64_t bytes) {
  return _mm256_cvtepi32_ps(
      _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<long long>(bytes))));
}
struct KScales {
  alignas(32) float dl[8];
  alignas(32) float ml[8];
};
STGUARD_AVX2 __attribute__((always_inline)) inline KScales LoadKScales(const uint8_t* block) {
  const uint32_t s0 = LoadU32(block + 4);
  const uint32_t s1 = LoadU32(block + 8);
  const uint32_t s2 = LoadU32(block + 12);
  constexpr uint32_t kLow6 = 0x3F3F3F3F;
  constexpr uint32_t kLow4 = 0x0F0F0F0F;
  constexpr uint32_t kTop2 = 0x03030303;  // after a shift by 6: each byte's top two bits
  // Byte j of scales (mins): sub-block j's 6-bit scale (min).
  const uint64_t scales =
      (s0 & kLow6) | (uint64_t{(s2 & kLow4) | (((s0 >> 6) & kTop2) << 4)} << 32);
  const uint64_t mins =
      (s1 & kLow6) | (uint64_t{((s2 >> 4) & kLow4) | (((s1 >> 6) & kTop2) << 4)} << 32);
  KScales k;
  _mm256_store_ps(k.dl, _mm256_mul_ps(HalfBroadcast(block), BytesAsFloats(scales)));
  _mm256_store_ps(k.ml, _mm256_mul_ps(HalfBroadcast(block + 2), BytesAsFloats(mins)));
  return k;
}

// Sixteen unsigned codes (one byte each) as dl * code - ml, four at a time in 128-bit
// registers: a vpshufb puts bytes 4k..4k+3 in the low byte of each 32-bit lane (zeros
// above), then convert, multiply, subtract, store. Per four floats that is one shuffle,
// one conversion, two float operations and a store, spread over Zen 1's four 128-bit
// pipes; widening from memory instead took a shuffle and a mask or shift per four.
struct Spread4 {
  __m128i lane[4];
};
STGUARD_AVX2 __attribute__((always_inline)) inline Spread4 MakeSpread4() {
  Spread4 s;
  for (int k = 0; k < 4; ++k) {
    const char b = static_cast<char>(4 * k);
    s.lane[k] = _mm_setr_epi8(b, -1, -1, -1, static_cast<char>(b + 1), -1, -1, -1,
                              static_cast<char>(b + 2), -1, -1, -1, static_cast<char>(b + 3),
                              -1, -1, -1);
  }
  return s;
}
// kFused: one fused multiply-subtract instead of the two operations. Equal bits when d
// and dmin are finite (KScalesFinite): dl = d * scale holds at most 17 significant bits
// (11 of a half, 6 of the scale) and a code at most 5, so dl * code is exact and the one
// rounding left is the subtraction's. With a NaN or an infinity the fused form could
// return another NaN than the two operations do, so those blocks take the unfused form.
template <bool kFused>
STGUARD_AVX2 __attribute__((always_inline)) inline void StoreKAffine16(__m128i codes,
                                                                      const Spread4& s,
                                                                      __m128 dl, __m128 ml,
                                                                      float* out) {
  for (int k = 0; k < 4; ++k) {
    const __m128 value = _mm_cvtepi32_ps(_mm_shuffle_epi8(codes, s.lane[k]));
    const __m128 result =
        kFused ? _mm_fmsub_ps(value, dl, ml) : _mm_sub_ps(_mm_mul_ps(value, dl), ml);
    _mm_storeu_ps(out + 4 * k, result);
  }
}

// KScalesFinite: neither d nor dmin (the block's first two halves) is an infinity or a
// NaN (exponent bits all ones).
inline bool KScalesFinite(const uint8_t* block) {
  return (LoadU16(block) & 0x7C00) != 0x7C00 && (LoadU16(block + 2) & 0x7C00) != 0x7C00;
}

// One q4_K or q5_K block (kFifthBit): per 64 elements 32 bytes of codes, low nibbles
// (sub-block 2i) then high (2i+1), value = dl * code - ml. q5_K's codes follow 32 bytes
// qh whose bit 2i of qh[l] adds 16 to element 64i + l, bit 2i+1 to element 64i + 32 + l.
template <bool kFused, bool kFifthBit>
STGUARD_AVX2 __attribute__((always_inline)) inline void DecodeKBlock(const uint8_t* block,
                                                                    const Spread4& spread,
                                                                    float* out) {
  const __m128i mask = _mm_set1_epi8(0x0F);
  const __m128i sixteen = _mm_set1_epi8(16);
  const KScales k = LoadKScales(block);
  const uint8_t* qh = block + 16;
  const uint8_t* q = block + (kFifthBit ? 48 : 16);
  for (int i = 0; i < 4; ++i, q += 32, out += 64) {
    const __m128 d_low = _mm_broadcast_ss(&k.dl[2 * i]);
    const __m128 m_low = _mm_broadcast_ss(&k.ml[2 * i]);
    const __m128 d_high = _mm_broadcast_ss(&k.dl[2 * i + 1]);
    const __m128 m_high = _mm_broadcast_ss(&k.ml[2 * i + 1]);
    const __m128i bit_low = _mm_set1_epi8(static_cast<char>(1 << (2 * i)));
    const __m128i bit_high = _mm_set1_epi8(static_cast<char>(2 << (2 * i)));
    for (int j = 0; j < 32; j += 16) {
      const __m128i codes = Load16(q + j);
      __m128i low = _mm_and_si128(codes, mask);
      __m128i high = _mm_and_si128(_mm_srli_epi16(codes, 4), mask);
      if constexpr (kFifthBit) {
        // The qh bit, as 16 or 0, added to the nibble.
        const __m128i bits = Load16(qh + j);
        low = _mm_or_si128(
            low, _mm_and_si128(_mm_cmpeq_epi8(_mm_and_si128(bits, bit_low), bit_low), sixteen));
        high = _mm_or_si128(
            high,
            _mm_and_si128(_mm_cmpeq_epi8(_mm_and_si128(bits, bit_high), bit_high), sixteen));
      }
      StoreKAffine16<kFused>(low, spread, d_low, m_low, out + j);
      StoreKAffine16<kFused>(high, spread, d_high, m_high, out + 32 + j);
    }
  }
}

// q4_K (144-byte blocks) and q5_K (176): each block fused when its d and dmin allow.
template <bool kFifthBit>
STGUARD_AVX2 void DecodeKAvx2(const uint8_t* blocks, size_t n_blocks, float* out) {
  constexpr size_t kBlockBytes = kFifthBit ? 176 : 144;
  const Spread4 spread = MakeSpread4();
  for (size_t b = 0; b < n_blocks; ++b, blocks += kBlockBytes, out += 256) {
    if (KScalesFinite(blocks)) {
      DecodeKBlock<true, kFifthBit>(blocks, spread, out);
    } else {
      DecodeKBlock<false, kFifthBit>(blocks, spread, out);
    }
  }
}

// Eight values dl * (grid value + delta) from an iq1 grid entry of eight signed bytes,
// the portable ShiftedGrid8's operations in its order.
STGUARD_AVX2 __attribute__((always_inline)) inline void StoreShifted8(uint64_t entry,
                                                                     __m256 delta, __m256 dl,
                                                                     float* out) {
  const __m256 value = _mm256_cvtepi32_ps(
      _mm256_cvtepi8_epi32(_mm_cvtsi64_si128(static_cast<long long>(entry))));
  _mm256_storeu_ps(out, _mm256_mul_ps(dl, _mm256_add_ps(value, delta)));
}

// iq1_s: as dequant_iq.cc's, eight grid values at a time.
STGUARD_AVX2 void DecodeIq1_sAvx2(const uint8_t* blocks, size_t n_blocks, float* out) {
  const __m256 plus = _mm256_set1_ps(grids::kIq1Delta);
  const __m256 minus = _mm256_set1_ps(-grids::kIq1Delta);
  for (size_t b = 0; b < n_blocks; ++b, blocks += 50) {
    const float d = LoadHalf(blocks);
    const uint8_t* qs = blocks + 2;
    for (int ib = 0; ib < 8; ++ib, qs += 4) {
      const uint16_t qh = LoadU16(blocks + 34 + 2 * ib);
      const __m256 dl = _mm256_set1_ps(d * static_cast<float>(2 * ((qh >> 12) & 7) + 1));
      const __m256 delta = (qh & 0x8000) != 0 ? minus : plus;
      for (int l = 0; l < 4; ++l, out += 8) {
        StoreShifted8(grids::kIq1sGrid[qs[l] | (((qh >> (3 * l)) & 7) << 8)], delta, dl, out);
      }
    }
  }
}

// iq1_m: as dequant_iq.cc's, eight grid values at a time.
STGUARD_AVX2 void DecodeIq1_mAvx2(const uint8_t* blocks, size_t n_blocks, float* out) {
  const __m256 plus = _mm256_set1_ps(grids::kIq1Delta);
  const __m256 minus = _mm256_set1_ps(-grids::kIq1Delta);
  for (size_t b = 0; b < n_blocks; ++b, blocks += 56) {
    const uint8_t* qs = blocks;
    const uint8_t* qh = blocks + 32;
    uint16_t sc[4];
    for (int i = 0; i < 4; ++i) sc[i] = LoadU16(blocks + 48 + 2 * i);
    const uint16_t scale_bits = grids::Iq1mScaleBits(sc);
    const float d = HalfToFloat(scale_bits);
    for (int ib = 0; ib < 8; ++ib, qs += 4, qh += 2) {
      const int shift = 6 * (ib % 2);
      const __m256 dl1 =
          _mm256_set1_ps(d * static_cast<float>(2 * ((sc[ib / 2] >> shift) & 7) + 1));
      const __m256 dl2 =
          _mm256_set1_ps(d * static_cast<float>(2 * ((sc[ib / 2] >> (shift + 3)) & 7) + 1));
      for (int l = 0; l < 4; ++l, out += 8) {
        const uint8_t nibble = (l % 2 == 0) ? (qh[l / 2] & 0x0F) : (qh[l / 2] >> 4);
        const int index = qs[l] | ((nibble & 7) << 8);
        StoreShifted8(grids::kIq1sGrid[index], (nibble & 8) != 0 ? minus : plus,
                      l < 2 ? dl1 : dl2, out);
      }
    }
  }
}

// HasF16c asks CPUID (leaf 1, ECX bit 29): clang's __builtin_cpu_supports does not know
// "f16c".
bool HasF16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
}

}  // namespace

Decoder Avx2Decoder(uint32_t type_id) {
  // Asked once per row: both answers are computed once.
  // Every CPU with AVX2 has FMA too in practice; one check keeps one set of kernels.
  static const bool usable =
      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && HasF16c();
  if (!usable) return nullptr;
  switch (type_id) {
    case 2: return DecodeQ4_0Avx2;
    case 3: return DecodeQ4_1Avx2;
    case 8: return DecodeQ8_0Avx2;
    case 12: return DecodeKAvx2<false>;
    case 13: return DecodeKAvx2<true>;
    case 15: return DecodeQ8_KAvx2;
    case 19: return DecodeIq1_sAvx2;
    case 29: return DecodeIq1_mAvx2;
    default: return nullptr;
  }
}

}  // namespace stguard::gguf::dequant

#endif  // STGUARD_DEQUANT_HAVE_AVX2
