// SPDX-License-Identifier: Apache-2.0
// stguard/gguf_dequant.h: ggml's block-quantized tensor types decoded to F32.
//
// Each decoder gives, bit for bit, what ggml's reference `dequantize_row_<type>` gives for
// the same blocks: the same arithmetic in the same order (no fused multiply-add: these
// sources are built with floating-point contraction off), the same half-precision
// conversion (a signalling NaN scale comes out quiet, as ggml's arithmetic conversion
// makes it), the same lookup grids. NaN and infinity in a block's scales therefore give
// the values ggml computes from them; nothing is refused for its numbers.
//
// Decodable: q4_0, q4_1, q5_0, q5_1, q8_0, q1_0, q2_0 (one scale per block); q2_K, q3_K,
// q4_K, q5_K, q6_K, q8_K (256-element super-blocks); iq1_s, iq1_m, iq2_xxs, iq2_xs, iq2_s,
// iq3_xxs, iq3_s, iq4_nl, iq4_xs (grid and non-linear types); tq1_0, tq2_0 (ternary);
// mxfp4, nvfp4 (4-bit floats). Plain types (f32, f16, bf16, ints) are not block types and
// are not handled here. q8_1 is refused: it is an activation format ggml never stores a
// dequantizer for.
//
// Time and memory: linear in the bytes, no allocation, no state; safe to call from many
// threads at once.
#ifndef STGUARD_GGUF_DEQUANT_H_
#define STGUARD_GGUF_DEQUANT_H_

#include <cstddef>
#include <span>

#include "stguard/error.h"
#include "stguard/export.h"
#include "stguard/gguf.h"

namespace stguard::gguf {

// CanDequantize says whether DequantizeRow decodes `type` (a block-quantized type with a
// reference dequantizer; false for plain types and for q8_1).
STGUARD_API bool CanDequantize(const GgmlType& type);

// DequantizeRow decodes `blocks` (whole blocks of `type`, exactly out.size() elements:
// out.size() / type.block_size blocks of type.type_size bytes) into `out`.
// Errors: kGgufNotDequantizable naming the type when CanDequantize(type) is false;
// kInvalidArgument when out.size() is not a multiple of the block size or blocks.size()
// is not the bytes those blocks take. On error `out` is left untouched. Offsets in the
// error are 0: the caller knows where the blocks lie in its file and sets them.
STGUARD_API Error DequantizeRow(const GgmlType& type, std::span<const std::byte> blocks,
                                std::span<float> out);

}  // namespace stguard::gguf

#endif  // STGUARD_GGUF_DEQUANT_H_
