// SPDX-License-Identifier: Apache-2.0
// The hand-written AVX2 kernels (src/gguf/dequant_avx2.cc) against the portable decoders
// they replace, bit for bit, on the same blocks: the third side of the comparison with
// ggml in gguf_dequant_test.cc, which only sees the path this CPU selects. Skipped where
// the kernels are not built or the CPU lacks AVX2, F16C or FMA.
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "gguf/dequant_internal.h"
#include "stguard/gguf.h"

namespace stguard {
namespace {

#if STGUARD_DEQUANT_HAVE_AVX2

using gguf::dequant::Decoder;

struct Peer {
  uint32_t type_id;
  Decoder portable;
};

// Every type with a kernel, and its portable decoder.
const Peer kPeers[] = {
    {2, gguf::dequant::DecodeQ4_0},  {3, gguf::dequant::DecodeQ4_1},
    {8, gguf::dequant::DecodeQ8_0},  {12, gguf::dequant::DecodeQ4_K},
    {13, gguf::dequant::DecodeQ5_K}, {15, gguf::dequant::DecodeQ8_K},
    {19, gguf::dequant::DecodeIq1_s}, {29, gguf::dequant::DecodeIq1_m},
};


bool KernelsRun() { return gguf::dequant::Avx2Decoder(8) != nullptr; }

// ExpectSameBits decodes `blocks` with both and compares every float's bits.
void ExpectSameBits(const Peer& peer, const std::vector<uint8_t>& blocks, const char* what) {
  const gguf::GgmlType* type = gguf::FindGgmlType(peer.type_id);
  ASSERT_NE(type, nullptr);
  const Decoder kernel = gguf::dequant::Avx2Decoder(peer.type_id);
  ASSERT_NE(kernel, nullptr) << type->name;
  const size_t n_blocks = blocks.size() / type->type_size;
  std::vector<float> portable(n_blocks * type->block_size), fast(portable.size());
  peer.portable(blocks.data(), n_blocks, portable.data());
  kernel(blocks.data(), n_blocks, fast.data());
  size_t mismatches = 0;
  for (size_t i = 0; i < portable.size(); ++i) {
    uint32_t a = 0, b = 0;
    std::memcpy(&a, &fast[i], 4);
    std::memcpy(&b, &portable[i], 4);
    if (a != b && mismatches++ < 5) {
      ADD_FAILURE() << type->name << " (" << what << "): element " << i << ": kernel 0x"
                    << std::hex << a << ", portable 0x" << b;
    }
  }
  EXPECT_EQ(mismatches, 0u) << type->name << " (" << what << ")";
}

TEST(GgufDequantAvx2, EveryKernelHasAPortablePeerHere) {
  if (!KernelsRun()) GTEST_SKIP() << "no AVX2, F16C and FMA on this CPU";
  for (uint32_t id = 0; id < 256; ++id) {
    if (gguf::dequant::Avx2Decoder(id) == nullptr) continue;
    bool listed = false;
    for (const Peer& peer : kPeers) listed = listed || peer.type_id == id;
    EXPECT_TRUE(listed) << "type " << id << " has a kernel but no entry in kPeers";
  }
}

TEST(GgufDequantAvx2, KernelsMatchThePortableDecodersOnRandomBlocks) {
  if (!KernelsRun()) GTEST_SKIP() << "no AVX2, F16C and FMA on this CPU";
  std::mt19937_64 rng(44);
  for (const Peer& peer : kPeers) {
    const gguf::GgmlType* type = gguf::FindGgmlType(peer.type_id);
    ASSERT_NE(type, nullptr);
    // Block counts 1, 3 and 67: no kernel may depend on a multiple of its unroll.
    for (size_t n_blocks : {size_t{1}, size_t{3}, size_t{67}}) {
      std::vector<uint8_t> blocks(n_blocks * type->type_size);
      for (uint8_t& byte : blocks) byte = static_cast<uint8_t>(rng());
      ExpectSameBits(peer, blocks, "random bytes");
    }
  }
}

// Every byte pair one half-precision pattern (NaN, signalling NaN, infinities,
// subnormals, signed zeros, extremes), so every scale and code field takes it at once.
TEST(GgufDequantAvx2, KernelsMatchThePortableDecodersOnSpecialScales) {
  if (!KernelsRun()) GTEST_SKIP() << "no AVX2, F16C and FMA on this CPU";
  const uint16_t kPatterns[] = {0x7E00, 0x7C01, 0xFD55, 0x7C00, 0xFC00, 0x0001, 0x83FF,
                                0x0000, 0x8000, 0x7BFF, 0xFBFF, 0x7FFF, 0xFFFF, 0x3C00};
  for (const Peer& peer : kPeers) {
    const gguf::GgmlType* type = gguf::FindGgmlType(peer.type_id);
    ASSERT_NE(type, nullptr);
    for (uint16_t pattern : kPatterns) {
      std::vector<uint8_t> blocks(2 * type->type_size);
      for (size_t i = 0; i < blocks.size(); ++i) {
        blocks[i] = static_cast<uint8_t>(i % 2 == 0 ? pattern : pattern >> 8);
      }
      ExpectSameBits(peer, blocks, "special pattern");
    }
  }
}

// The types whose block starts with two halves, d then a min, every pair of patterns
// (a NaN in one and a finite value or another NaN in the other...): q4_K and q5_K fuse
// the multiply and the subtraction only when both are finite, and a fused form given
// two NaNs may return the other one.
TEST(GgufDequantAvx2, KernelsMatchThePortableDecodersOnEveryScaleAndMinPair) {
  if (!KernelsRun()) GTEST_SKIP() << "no AVX2, F16C and FMA on this CPU";
  const uint16_t kPatterns[] = {0x7E00, 0x7E01, 0xFE02, 0x7C01, 0x7C00, 0xFC00, 0x0001,
                                0x83FF, 0x0000, 0x8000, 0x7BFF, 0xFBFF, 0x3C00, 0xB555};
  std::mt19937_64 rng(7);
  for (const Peer& peer : kPeers) {
    if (peer.type_id != 3 && peer.type_id != 12 && peer.type_id != 13) continue;
    const gguf::GgmlType* type = gguf::FindGgmlType(peer.type_id);
    ASSERT_NE(type, nullptr);
    std::vector<uint8_t> blocks;
    for (uint16_t d : kPatterns) {
      for (uint16_t min : kPatterns) {
        const size_t at = blocks.size();
        blocks.resize(at + type->type_size);
        for (size_t i = at + 4; i < blocks.size(); ++i) blocks[i] = static_cast<uint8_t>(rng());
        const uint8_t halves[4] = {static_cast<uint8_t>(d), static_cast<uint8_t>(d >> 8),
                                   static_cast<uint8_t>(min), static_cast<uint8_t>(min >> 8)};
        std::memcpy(&blocks[at], halves, 4);
      }
    }
    ExpectSameBits(peer, blocks, "scale and min pairs");
  }
}

#else

TEST(GgufDequantAvx2, KernelsAreNotBuiltHere) {
  GTEST_SKIP() << "the AVX2 kernels are built only for x86-64 ELF with GCC or clang";
}

#endif  // STGUARD_DEQUANT_HAVE_AVX2

}  // namespace
}  // namespace stguard
