// SPDX-License-Identifier: Apache-2.0
// What the decoders of each type family share: the decoder signature, little-endian loads
// and ggml's conversions of the small float formats a block's scales are stored in.
// Every decoder file is built with floating-point contraction off (CMakeLists.txt): ggml
// computes `q*d + m` as a multiply then an add, and a fused multiply-add rounds once,
// which changes the last bit.
#ifndef STGUARD_SRC_GGUF_DEQUANT_INTERNAL_H_
#define STGUARD_SRC_GGUF_DEQUANT_INTERNAL_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

// Hidden: with target_clones each decoder is an ifunc whose resolver the compiler emits
// with default visibility, so the shared library would export these internals.
#pragma GCC visibility push(hidden)
namespace stguard::gguf::dequant {

// STGUARD_DEQUANT_CLONES on a decoder makes the compiler emit it twice, for baseline
// x86-64 and for AVX2 (8 floats a vector instead of 4), and pick one at load time by the
// CPU (an ifunc). Only the vector width changes: AVX2 brings no fused multiply-add, and
// contraction is off anyway, so both copies give the same bits (the tests run whichever
// this CPU selects). Elsewhere it is empty.
// g++ only: clang emits the ifunc resolver of a file-local clone with default visibility,
// so the shared library would export it; clang builds get the baseline copy.
#if defined(__x86_64__) && defined(__ELF__) && defined(__GNUC__) && !defined(__clang__)
#define STGUARD_DEQUANT_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define STGUARD_DEQUANT_CLONES
#endif

// STGUARD_DEQUANT_HAVE_AVX2: dequant_avx2.cc's hand-written AVX2 decoders exist (x86-64,
// GCC or clang, ELF). Everywhere else, the WebAssembly build included, the portable
// loops below are all there is.
#if defined(__x86_64__) && defined(__ELF__) && defined(__GNUC__)
#define STGUARD_DEQUANT_HAVE_AVX2 1
#else
#define STGUARD_DEQUANT_HAVE_AVX2 0
#endif

// A Decoder turns `n_blocks` whole blocks at `blocks` into n_blocks * block_size floats.
// The caller has checked the sizes.
using Decoder = void (*)(const uint8_t* blocks, size_t n_blocks, float* out);

inline uint16_t LoadU16(const uint8_t* p) {
  return static_cast<uint16_t>(p[0] | (p[1] << 8));
}
inline uint32_t LoadU32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}
inline float LoadF32(const uint8_t* p) { return std::bit_cast<float>(LoadU32(p)); }

// HalfToFloat converts IEEE half bits as ggml's portable conversion does: exactly, except
// that a signalling NaN comes out quiet (ggml scales the re-biased bits by 2^-112 with a
// float multiply, and a multiply quiets a NaN). Branch-free so loops over it vectorise.
inline float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t magnitude = h & 0x7FFFu;
  const uint32_t exponent = magnitude >> 10;
  // Normal: re-bias 15 -> 127. Inf/NaN: exponent 31 -> 255, and NaN made quiet.
  uint32_t bits = (magnitude << 13) + (112u << 23);
  const uint32_t special = 0u - static_cast<uint32_t>(exponent == 31);
  const uint32_t quiet = 0u - static_cast<uint32_t>(magnitude > 0x7C00u);
  bits += special & (112u << 23);
  bits |= quiet & 0x00400000u;
  // Subnormal m * 2^-24: int -> float times a power of two, exact.
  const float subnormal = static_cast<float>(static_cast<int32_t>(magnitude)) * 0x1p-24f;
  const uint32_t is_subnormal = 0u - static_cast<uint32_t>(exponent == 0);
  bits = (std::bit_cast<uint32_t>(subnormal) & is_subnormal) | (bits & ~is_subnormal);
  return std::bit_cast<float>(sign | bits);
}
inline float LoadHalf(const uint8_t* p) { return HalfToFloat(LoadU16(p)); }

// The decoders, one family per file.
// dequant_legacy.cc: one half-precision scale (and min) per block.
void DecodeQ4_0(const uint8_t*, size_t, float*);
void DecodeQ4_1(const uint8_t*, size_t, float*);
void DecodeQ5_0(const uint8_t*, size_t, float*);
void DecodeQ5_1(const uint8_t*, size_t, float*);
void DecodeQ8_0(const uint8_t*, size_t, float*);
void DecodeQ1_0(const uint8_t*, size_t, float*);
void DecodeQ2_0(const uint8_t*, size_t, float*);
// dequant_k.cc: 256-element super-blocks with quantized sub-block scales.
void DecodeQ2_K(const uint8_t*, size_t, float*);
void DecodeQ3_K(const uint8_t*, size_t, float*);
void DecodeQ4_K(const uint8_t*, size_t, float*);
void DecodeQ5_K(const uint8_t*, size_t, float*);
void DecodeQ6_K(const uint8_t*, size_t, float*);
void DecodeQ8_K(const uint8_t*, size_t, float*);
// dequant_iq.cc: lookup-grid and non-linear types.
void DecodeIq2_xxs(const uint8_t*, size_t, float*);
void DecodeIq2_xs(const uint8_t*, size_t, float*);
void DecodeIq2_s(const uint8_t*, size_t, float*);
void DecodeIq3_xxs(const uint8_t*, size_t, float*);
void DecodeIq3_s(const uint8_t*, size_t, float*);
void DecodeIq1_s(const uint8_t*, size_t, float*);
void DecodeIq1_m(const uint8_t*, size_t, float*);
void DecodeIq4_nl(const uint8_t*, size_t, float*);
void DecodeIq4_xs(const uint8_t*, size_t, float*);
// dequant_ternary.cc: values in {-1, 0, 1} times one scale.
void DecodeTq1_0(const uint8_t*, size_t, float*);
void DecodeTq2_0(const uint8_t*, size_t, float*);
// dequant_fp4.cc: E2M1 values with power-of-two or E4M3 scales.
void DecodeMxfp4(const uint8_t*, size_t, float*);
void DecodeNvfp4(const uint8_t*, size_t, float*);
#if STGUARD_DEQUANT_HAVE_AVX2
// dequant_avx2.cc: the AVX2 decoder of a type id when this CPU has AVX2 and the type has
// one, else null (the portable decoder then runs).
Decoder Avx2Decoder(uint32_t type_id);
#endif

}  // namespace stguard::gguf::dequant
#pragma GCC visibility pop

#endif  // STGUARD_SRC_GGUF_DEQUANT_INTERNAL_H_
