// SPDX-License-Identifier: Apache-2.0
// The dequantizers (stguard/gguf_dequant.h) against ggml itself, bit for bit, through the
// test-only reference library (tools/fetch_ggml.sh; these tests skip with a message when
// it is absent). For every type the reference dequantizes:
// - data quantized by the reference's quantize_row_<type>_ref (for iq1_s, iq1_m, iq2_xxs
//   and iq2_xs, which have none: random blocks with finite, sane scales);
// - random raw blocks, whose half-precision scales are now and then infinity, NaN or a
//   signalling NaN, and blocks whose every scale byte is such a pattern;
// each decoded by DequantizeRow and by the reference's dequantize_row_<type>, compared as
// bits. Without the reference: the accept/refuse rules (which types, which sizes).
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "stguard/gguf.h"
#include "stguard/gguf_dequant.h"
#include "support/ggml_reference.h"

namespace stguard::testing {
namespace {

using gguf::GgmlType;

using DequantizeFn = void (*)(const void* blocks, float* out, int64_t n);
using QuantizeFn = void (*)(const float* in, void* blocks, int64_t n);
using QuantizeInitFn = void (*)(int type);

// The types ggml can dequantize, by name; every other row of the table is refused.
const char* const kDecodable[] = {
    "q4_0",  "q4_1",    "q5_0",   "q5_1",  "q8_0",   "q2_K",    "q3_K",   "q4_K",  "q5_K",
    "q6_K",  "q8_K",    "iq2_xxs", "iq2_xs", "iq3_xxs", "iq1_s", "iq4_nl", "iq3_s", "iq2_s",
    "iq4_xs", "iq1_m",  "tq1_0",  "tq2_0", "mxfp4",  "nvfp4",   "q1_0",   "q2_0"};

bool IsDecodable(std::string_view name) {
  for (const char* decodable : kDecodable) {
    if (name == decodable) return true;
  }
  return false;
}

const GgmlType& TypeNamed(std::string_view name) {
  for (const GgmlType& type : gguf::GgmlTypes()) {
    if (type.name == name) return type;
  }
  ADD_FAILURE() << "no type " << name;
  return gguf::GgmlTypes()[0];
}

std::span<const std::byte> Bytes(const std::vector<uint8_t>& bytes) {
  return std::as_bytes(std::span<const uint8_t>(bytes));
}

TEST(GgufDequant, DecodesExactlyTheBlockTypesWithAReferenceDequantizer) {
  for (const GgmlType& type : gguf::GgmlTypes()) {
    EXPECT_EQ(gguf::CanDequantize(type), IsDecodable(type.name)) << type.name;
  }
  EXPECT_FALSE(gguf::CanDequantize(TypeNamed("q8_1")));
  EXPECT_FALSE(gguf::CanDequantize(TypeNamed("f32")));
}

TEST(GgufDequant, RefusesQ8_1ByName) {
  std::vector<uint8_t> block(36, 0);
  std::vector<float> out(32, 1.0f);
  const Error error = gguf::DequantizeRow(TypeNamed("q8_1"), Bytes(block), out);
  EXPECT_EQ(error.code, ErrorCode::kGgufNotDequantizable);
  EXPECT_EQ(error.context, "q8_1");
  EXPECT_EQ(out[0], 1.0f) << "out is untouched on error";
}

TEST(GgufDequant, RefusesSizesThatDisagree) {
  const GgmlType& q4_0 = TypeNamed("q4_0");
  std::vector<uint8_t> two_blocks(36, 0);
  std::vector<float> out(64);
  EXPECT_TRUE(gguf::DequantizeRow(q4_0, Bytes(two_blocks), out).ok());
  std::vector<float> partial(63);
  EXPECT_EQ(gguf::DequantizeRow(q4_0, Bytes(two_blocks), partial).code,
            ErrorCode::kInvalidArgument);
  std::vector<uint8_t> short_bytes(35, 0);
  EXPECT_EQ(gguf::DequantizeRow(q4_0, Bytes(short_bytes), out).code,
            ErrorCode::kInvalidArgument);
  std::vector<uint8_t> long_bytes(37, 0);
  EXPECT_EQ(gguf::DequantizeRow(q4_0, Bytes(long_bytes), out).code,
            ErrorCode::kInvalidArgument);
  // Zero elements from zero bytes is a valid, empty row.
  EXPECT_TRUE(gguf::DequantizeRow(q4_0, {}, std::span<float>()).ok());
}

TEST(GgufDequant, RefusesATypeRowThatDisagreesWithTheTable) {
  GgmlType forged = TypeNamed("q8_0");
  forged.type_size = 2;  // would let 32 elements be read from 2 bytes
  std::vector<uint8_t> bytes(2, 0);
  std::vector<float> out(32);
  EXPECT_FALSE(gguf::CanDequantize(forged));
  EXPECT_EQ(gguf::DequantizeRow(forged, Bytes(bytes), out).code,
            ErrorCode::kGgufNotDequantizable);
}

TEST(GgufDequant, DecodesAKnownQ8_0Block) {
  std::vector<uint8_t> block(34, 0);
  block[0] = 0x00;
  block[1] = 0x38;  // half 0.5
  block[2] = 4;
  block[3] = 0xFE;  // -2
  std::vector<float> out(32);
  ASSERT_TRUE(gguf::DequantizeRow(TypeNamed("q8_0"), Bytes(block), out).ok());
  EXPECT_EQ(out[0], 2.0f);
  EXPECT_EQ(out[1], -1.0f);
  EXPECT_EQ(out[2], 0.0f);
}

// ---- Against the reference.

const GgmlReference* ReferenceOrSkip() {
  std::string why;
  const GgmlReference* reference = GgmlReference::Load(&why);
  if (reference == nullptr) std::fprintf(stderr, "SKIPPED: %s\n", why.c_str());
  return reference;
}

#define STGUARD_REFERENCE_OR_SKIP(var)                          \
  const GgmlReference* var = ReferenceOrSkip();                 \
  if (var == nullptr) GTEST_SKIP() << "ggml's reference library is absent (tools/fetch_ggml.sh)"

// ExpectSameBits decodes `blocks` with both and compares every float's bits.
void ExpectSameBits(const GgmlReference& reference, const GgmlType& type,
                    const std::vector<uint8_t>& blocks, const std::string& what) {
  const auto dequantize = reinterpret_cast<DequantizeFn>(
      reference.Symbol(("dequantize_row_" + std::string(type.name)).c_str()));
  ASSERT_NE(dequantize, nullptr) << type.name;
  const size_t n_blocks = blocks.size() / type.type_size;
  const size_t n = n_blocks * type.block_size;
  std::vector<float> theirs(n), ours(n);
  dequantize(blocks.data(), theirs.data(), static_cast<int64_t>(n));
  const Error error = gguf::DequantizeRow(type, Bytes(blocks), ours);
  ASSERT_TRUE(error.ok()) << error.ToString();
  size_t mismatches = 0;
  for (size_t i = 0; i < n; ++i) {
    uint32_t a = 0, b = 0;
    std::memcpy(&a, &ours[i], 4);
    std::memcpy(&b, &theirs[i], 4);
    if (a != b && mismatches++ < 5) {
      ADD_FAILURE() << type.name << " (" << what << "): element " << i << " of block "
                    << i / type.block_size << ": ours 0x" << std::hex << a << ", ggml's 0x"
                    << b;
    }
  }
  EXPECT_EQ(mismatches, 0u) << type.name << " (" << what << ") of " << n << " elements";
}

// RandomFloats: normal values at a few magnitudes, with exact zeros and some outliers, so
// that the quantizers pick many different scales.
std::vector<float> RandomFloats(size_t n, std::mt19937_64& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> pick(0, 99);
  std::vector<float> values(n);
  float magnitude = 1.0f;
  for (size_t i = 0; i < n; ++i) {
    if (i % 32 == 0) magnitude = std::ldexp(1.0f, pick(rng) % 24 - 16);
    const int kind = pick(rng);
    values[i] = kind < 3 ? 0.0f : normal(rng) * magnitude * (kind > 96 ? 50.0f : 1.0f);
  }
  return values;
}

std::vector<uint8_t> RandomBytes(size_t n, std::mt19937_64& rng) {
  std::vector<uint8_t> bytes(n);
  for (uint8_t& byte : bytes) byte = static_cast<uint8_t>(rng());
  return bytes;
}

// SaneHalf: a finite half-precision value of magnitude 2^-10 .. 2^1, as bits.
uint16_t SaneHalf(std::mt19937_64& rng) {
  const uint32_t r = static_cast<uint32_t>(rng());
  const uint32_t sign = r & 1u;
  const uint32_t exponent = 5u + (r >> 1) % 12u;
  return static_cast<uint16_t>((sign << 15) | (exponent << 10) | ((r >> 16) & 0x3FFu));
}

// The four types with no reference quantizer: random blocks with a sane scale.
std::vector<uint8_t> SaneRandomBlocks(const GgmlType& type, size_t n_blocks,
                                      std::mt19937_64& rng) {
  std::vector<uint8_t> bytes = RandomBytes(n_blocks * type.type_size, rng);
  for (size_t b = 0; b < n_blocks; ++b) {
    uint8_t* block = bytes.data() + b * type.type_size;
    const uint16_t d = SaneHalf(rng);
    if (type.name == "iq1_m") {
      // The scale's four nibbles are the top nibbles of the four u16 at byte 48.
      for (int i = 0; i < 4; ++i) {
        block[48 + 2 * i + 1] =
            static_cast<uint8_t>((block[48 + 2 * i + 1] & 0x0F) | (((d >> (4 * i)) & 0xF) << 4));
      }
    } else {
      block[0] = static_cast<uint8_t>(d);
      block[1] = static_cast<uint8_t>(d >> 8);
    }
  }
  return bytes;
}

constexpr size_t kBlocksPerCase = 512;

TEST(GgufDequantReference, QuantizedDataDecodesToTheReferenceBits) {
  STGUARD_REFERENCE_OR_SKIP(reference);
  const auto init = reinterpret_cast<QuantizeInitFn>(reference->Symbol("ggml_quantize_init"));
  ASSERT_NE(init, nullptr);
  std::mt19937_64 rng(29);
  for (const char* name : kDecodable) {
    const GgmlType& type = TypeNamed(name);
    const auto quantize = reinterpret_cast<QuantizeFn>(
        reference->Symbol(("quantize_row_" + std::string(name) + "_ref").c_str()));
    std::vector<uint8_t> blocks;
    if (quantize == nullptr) {
      std::fprintf(stderr, "%s: no reference quantizer; random blocks with sane scales\n",
                   name);
      blocks = SaneRandomBlocks(type, kBlocksPerCase, rng);
    } else {
      init(static_cast<int>(type.id));
      // The IQ quantizers search their grids: slow, so fewer blocks.
      const size_t n_blocks =
          type.name.starts_with("iq") ? kBlocksPerCase / 16 : kBlocksPerCase;
      const size_t n = n_blocks * type.block_size;
      const std::vector<float> values = RandomFloats(n, rng);
      blocks.assign(n_blocks * type.type_size, 0);
      quantize(values.data(), blocks.data(), static_cast<int64_t>(n));
    }
    ExpectSameBits(*reference, type, blocks, "quantized");
  }
}

TEST(GgufDequantReference, RandomBlocksDecodeToTheReferenceBits) {
  STGUARD_REFERENCE_OR_SKIP(reference);
  std::mt19937_64 rng(2029);
  for (const char* name : kDecodable) {
    const GgmlType& type = TypeNamed(name);
    ExpectSameBits(*reference, type, RandomBytes(8 * kBlocksPerCase * type.type_size, rng),
                   "random bytes");
  }
}

// Every block byte one special pattern: NaN, signalling NaN, infinities, subnormals,
// zeros, the largest values, so that the scales of every field are such values at once.
TEST(GgufDequantReference, SpecialScalePatternsDecodeToTheReferenceBits) {
  STGUARD_REFERENCE_OR_SKIP(reference);
  const uint16_t kPatterns[] = {0x7E00, 0x7C01, 0xFD55, 0x7C00, 0xFC00, 0x0001, 0x83FF,
                                0x0000, 0x8000, 0x7BFF, 0xFBFF, 0x7FFF, 0xFFFF, 0x3C00};
  for (const char* name : kDecodable) {
    const GgmlType& type = TypeNamed(name);
    for (uint16_t pattern : kPatterns) {
      std::vector<uint8_t> blocks(4 * type.type_size);
      for (size_t i = 0; i < blocks.size(); ++i) {
        blocks[i] = static_cast<uint8_t>(i % 2 == 0 ? pattern : pattern >> 8);
      }
      char what[32];
      std::snprintf(what, sizeof what, "pattern 0x%04x", pattern);
      ExpectSameBits(*reference, type, blocks, what);
      // Shifted by one byte, so that odd-offset fields see the pattern too.
      for (size_t i = 0; i < blocks.size(); ++i) {
        blocks[i] = static_cast<uint8_t>(i % 2 == 1 ? pattern : pattern >> 8);
      }
      ExpectSameBits(*reference, type, blocks, std::string(what) + " shifted");
    }
  }
}

}  // namespace
}  // namespace stguard::testing
