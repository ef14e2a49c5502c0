// SPDX-License-Identifier: Apache-2.0
// AVX2 decoders of the block types whose portable loops the compiler does not turn into
// good vector code on its own (q4_0, q4_1, q8_0, q4_K, q5_K, q8_K): every byte of codes
// is widened to 8 lanes of int32 and converted in one instruction, the block scale is
// broadcast once. The float operations are the portable decoders' own, in the same
// order (convert, multiply, then add or subtract), one rounding each, so the bits are
// the same; the tests run these on any CPU that has AVX2. Built only for x86-64 with
// GCC or clang; the functions carry the avx2 target attribute, so the file is compiled
// for baseline x86-64 like every other and runs only after the CPU check below.
#include "gguf/dequant_internal.h"

#if STGUARD_DEQUANT_HAVE_AVX2

#include <cpuid.h>
#include <immintrin.h>

namespace stguard::gguf::dequant {

namespace {

#define STGUARD_AVX2 __attribute__((target("avx2,f16c")))

// Scales: the half-precision scales of up to 8 blocks, `stride` bytes apart, as floats,
// converted together (F16C's conversion gives HalfToFloat's bits, NaNs quieted alike).
struct Scales {
  alignas(32) float value[8];
};
STGUARD_AVX2 inline Scales LoadScales(const uint8_t* first, size_t stride, size_t count) {
  alignas(16) uint16_t halves[8] = {};
  for (size_t i = 0; i < count; ++i) halves[i] = LoadU16(first + i * stride);
  Scales scales;
  _mm256_store_ps(scales.value,
                  _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(halves))));
  return scales;
}

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

// Eight unsigned codes times scale minus (or plus) `offset`, in that order.
STGUARD_AVX2 __attribute__((always_inline)) inline void StoreAffine8(__m128i codes, __m256 scale, __m256 offset, bool subtract,
                                      float* out) {
  const __m256 product =
      _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(codes)), scale);
  _mm256_storeu_ps(out, subtract ? _mm256_sub_ps(product, offset) : _mm256_add_ps(product, offset));
}

// Thirty-two unsigned codes (a 256-bit register) times scale, minus or plus offset.
STGUARD_AVX2 __attribute__((always_inline)) inline void StoreAffine32(__m256i codes, __m256 scale, __m256 offset,
                                       bool subtract, float* out) {
  const __m128i low = _mm256_castsi256_si128(codes);
  const __m128i high = _mm256_extracti128_si256(codes, 1);
  StoreAffine8(low, scale, offset, subtract, out);
  StoreAffine8(_mm_srli_si128(low, 8), scale, offset, subtract, out + 8);
  StoreAffine8(high, scale, offset, subtract, out + 16);
  StoreAffine8(_mm_srli_si128(high, 8), scale, offset, subtract, out + 24);
}

// Load8: 8 bytes into the low half (the widening conversions read it straight from memory).
STGUARD_AVX2 __attribute__((always_inline)) inline __m128i Load8(const uint8_t* p) {
  return _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
}
STGUARD_AVX2 __attribute__((always_inline)) inline __m128i Load16(const uint8_t* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}
STGUARD_AVX2 __attribute__((always_inline)) inline __m256i Load32(const uint8_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
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
    StoreAffine8(low, d, m, false, out);
    StoreAffine8(_mm_srli_si128(low, 8), d, m, false, out + 8);
    StoreAffine8(high, d, m, false, out + 16);
    StoreAffine8(_mm_srli_si128(high, 8), d, m, false, out + 24);
  }
}

// q8_0: code * d over 32 signed bytes.
STGUARD_AVX2 void DecodeQ8_0Avx2(const uint8_t* blocks, size_t n_blocks, float* out) {
  for (size_t group = 0; group < n_blocks; group += 8) {
    const size_t count = n_blocks - group < 8 ? n_blocks - group : 8;
    const Scales scales = LoadScales(blocks, 34, count);
    for (size_t b = 0; b < count; ++b, blocks += 34, out += 32) {
      const __m256 d = _mm256_broadcast_ss(&scales.value[b]);
      for (int j = 0; j < 32; j += 8) StoreScaled8(Load8(blocks + 2 + j), true, d, out + j);
    }
  }
}

// q8_K: d (F32) * code over 256 signed bytes.
STGUARD_AVX2 void DecodeQ8_KAvx2(const uint8_t* blocks, size_t n_blocks, float* out) {
  for (size_t b = 0; b < n_blocks; ++b, blocks += 292, out += 256) {
    const __m256 d = _mm256_set1_ps(LoadF32(blocks));
    for (int j = 0; j < 256; j += 8) StoreScaled8(Load8(blocks + 4 + j), true, d, out + j);
  }
}

// The 6-bit sub-block scales and mins of q4_K and q5_K, times d and dmin (as in
// dequant_k.cc's ScaleMin6).
inline void KScales(const uint8_t* block, float dl[8], float ml[8]) {
  const float d = LoadHalf(block);
  const float dmin = LoadHalf(block + 2);
  const uint8_t* s = block + 4;
  for (int j = 0; j < 8; ++j) {
    int scale = 0;
    int min = 0;
    if (j < 4) {
      scale = s[j] & 63;
      min = s[j + 4] & 63;
    } else {
      scale = (s[j + 4] & 0x0F) | ((s[j - 4] >> 6) << 4);
      min = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
    }
    dl[j] = d * static_cast<float>(scale);
    ml[j] = dmin * static_cast<float>(min);
  }
}

// q4_K: per 64 elements 32 bytes, low nibbles (scale 2i) then high (2i+1);
// value = dl * code - ml.
STGUARD_AVX2 void DecodeQ4_KAvx2(const uint8_t* blocks, size_t n_blocks, float* out) {
  const __m256i mask = _mm256_set1_epi8(0x0F);
  for (size_t b = 0; b < n_blocks; ++b, blocks += 144) {
    float dl[8];
    float ml[8];
    KScales(blocks, dl, ml);
    const uint8_t* q = blocks + 16;
    for (int i = 0; i < 4; ++i, q += 32, out += 64) {
      const __m256i codes = Load32(q);
      StoreAffine32(_mm256_and_si256(codes, mask), _mm256_set1_ps(dl[2 * i]),
                    _mm256_set1_ps(ml[2 * i]), true, out);
      StoreAffine32(_mm256_and_si256(_mm256_srli_epi16(codes, 4), mask),
                    _mm256_set1_ps(dl[2 * i + 1]), _mm256_set1_ps(ml[2 * i + 1]), true,
                    out + 32);
    }
  }
}

// q5_K: as q4_K, bit 2i of qh[l] adding 16 to element 64i + l, bit 2i+1 to 64i + 32 + l.
STGUARD_AVX2 void DecodeQ5_KAvx2(const uint8_t* blocks, size_t n_blocks, float* out) {
  const __m256i mask = _mm256_set1_epi8(0x0F);
  const __m256i sixteen = _mm256_set1_epi8(16);
  for (size_t b = 0; b < n_blocks; ++b, blocks += 176) {
    float dl[8];
    float ml[8];
    KScales(blocks, dl, ml);
    const __m256i qh = Load32(blocks + 16);
    const uint8_t* q = blocks + 48;
    for (int i = 0; i < 4; ++i, q += 32, out += 64) {
      const __m256i codes = Load32(q);
      // Bit 2i (2i+1) of each qh byte, moved to bit 4 and added to the nibble.
      const __m256i bit_low = _mm256_set1_epi8(static_cast<char>(1 << (2 * i)));
      const __m256i bit_high = _mm256_set1_epi8(static_cast<char>(2 << (2 * i)));
      const __m256i add_low =
          _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(qh, bit_low), bit_low), sixteen);
      const __m256i add_high = _mm256_and_si256(
          _mm256_cmpeq_epi8(_mm256_and_si256(qh, bit_high), bit_high), sixteen);
      StoreAffine32(_mm256_or_si256(_mm256_and_si256(codes, mask), add_low),
                    _mm256_set1_ps(dl[2 * i]), _mm256_set1_ps(ml[2 * i]), true, out);
      StoreAffine32(
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(codes, 4), mask), add_high),
          _mm256_set1_ps(dl[2 * i + 1]), _mm256_set1_ps(ml[2 * i + 1]), true, out + 32);
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
  static const bool usable = __builtin_cpu_supports("avx2") && HasF16c();
  if (!usable) return nullptr;
  switch (type_id) {
    case 2: return DecodeQ4_0Avx2;
    case 3: return DecodeQ4_1Avx2;
    case 8: return DecodeQ8_0Avx2;
    case 12: return DecodeQ4_KAvx2;
    case 13: return DecodeQ5_KAvx2;
    case 15: return DecodeQ8_KAvx2;
    default: return nullptr;
  }
}

}  // namespace stguard::gguf::dequant

#endif  // STGUARD_DEQUANT_HAVE_AVX2
