// SPDX-License-Identifier: Apache-2.0
// DequantizeRow: the size checks and the choice of decoder by ggml type id. The decoders
// live one family per file (dequant_legacy.cc, dequant_k.cc, dequant_iq.cc,
// dequant_ternary.cc, dequant_fp4.cc), with AVX2 versions of a few in dequant_avx2.cc.
#include "stguard/gguf_dequant.h"

#include <array>
#include <string>

#include "gguf/dequant_internal.h"

namespace stguard::gguf {

namespace {

using dequant::Decoder;

// kDecoders maps a ggml type id to its decoder; null for plain types, q8_1 and removed ids.
constexpr std::array<Decoder, kNumGgmlTypeIds> MakeDecoders() {
  std::array<Decoder, kNumGgmlTypeIds> d{};
  d[2] = dequant::DecodeQ4_0;
  d[3] = dequant::DecodeQ4_1;
  d[6] = dequant::DecodeQ5_0;
  d[7] = dequant::DecodeQ5_1;
  d[8] = dequant::DecodeQ8_0;
  d[10] = dequant::DecodeQ2_K;
  d[11] = dequant::DecodeQ3_K;
  d[12] = dequant::DecodeQ4_K;
  d[13] = dequant::DecodeQ5_K;
  d[14] = dequant::DecodeQ6_K;
  d[15] = dequant::DecodeQ8_K;
  d[16] = dequant::DecodeIq2_xxs;
  d[17] = dequant::DecodeIq2_xs;
  d[18] = dequant::DecodeIq3_xxs;
  d[19] = dequant::DecodeIq1_s;
  d[20] = dequant::DecodeIq4_nl;
  d[21] = dequant::DecodeIq3_s;
  d[22] = dequant::DecodeIq2_s;
  d[23] = dequant::DecodeIq4_xs;
  d[29] = dequant::DecodeIq1_m;
  d[34] = dequant::DecodeTq1_0;
  d[35] = dequant::DecodeTq2_0;
  d[39] = dequant::DecodeMxfp4;
  d[40] = dequant::DecodeNvfp4;
  d[41] = dequant::DecodeQ1_0;
  d[42] = dequant::DecodeQ2_0;
  return d;
}
constexpr std::array<Decoder, kNumGgmlTypeIds> kDecoders = MakeDecoders();

Decoder FindDecoder(const GgmlType& type) {
  // A row that is not the table's own (a caller-made GgmlType) must agree with it, so a
  // wrong block or byte size can never steer a decoder past its buffers.
  const GgmlType* row = FindGgmlType(type.id);
  if (row == nullptr || row->block_size != type.block_size ||
      row->type_size != type.type_size) {
    return nullptr;
  }
#if STGUARD_DEQUANT_HAVE_AVX2
  if (const Decoder fast = dequant::Avx2Decoder(type.id); fast != nullptr) return fast;
#endif
  return kDecoders[type.id];
}

Error MakeError(ErrorCode code, const char* message, std::string context) {
  Error error;
  error.code = code;
  error.message = message;
  error.context = std::move(context);
  return error;
}

}  // namespace

bool CanDequantize(const GgmlType& type) { return FindDecoder(type) != nullptr; }

Error DequantizeRow(const GgmlType& type, std::span<const std::byte> blocks,
                    std::span<float> out) {
  const Decoder decode = FindDecoder(type);
  if (decode == nullptr) {
    return MakeError(ErrorCode::kGgufNotDequantizable, "ggml type has no dequantizer",
                     std::string(type.name));
  }
  if (out.size() % type.block_size != 0) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "element count is not a whole number of blocks",
                     std::string(type.name) + ": " + std::to_string(out.size()) +
                         " elements, blocks of " + std::to_string(type.block_size));
  }
  const size_t n_blocks = out.size() / type.block_size;
  // n_blocks * type_size cannot overflow: it is at most out.size() * 4 bytes (every
  // block type takes fewer bytes than 4 per element), and out spans real floats.
  if (blocks.size() != n_blocks * type.type_size) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "block bytes do not match the element count",
                     std::string(type.name) + ": " + std::to_string(blocks.size()) +
                         " bytes for " + std::to_string(n_blocks) + " blocks of " +
                         std::to_string(type.type_size));
  }
  if (n_blocks != 0) {
    decode(reinterpret_cast<const uint8_t*>(blocks.data()), n_blocks, out.data());
  }
  return Error{};
}

}  // namespace stguard::gguf
