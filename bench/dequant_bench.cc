// SPDX-License-Identifier: Apache-2.0
// dequant_bench: decoding speed of every ggml block type, stguard's DequantizeRow against
// ggml's reference dequantize_row_<type> (loaded with dlopen from the test-only library of
// tools/fetch_ggml.sh, $STGUARD_GGML_LIB to override; never linked) on the same blocks.
//
//   dequant_bench [MIB [TYPE...]]   output MiB per type (default 64); only the named types
//
// Input: 256 blocks quantized by the reference's quantize_row_<type>_ref (random blocks
// with a finite scale for the four types that have none), repeated to fill the buffer.
// Each side decodes the whole buffer 20 times; the best time counts. Prints MB/s of F32
// output and the ratio stguard / ggml, one line per type (a table for bench/README.md).
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "stguard/gguf.h"
#include "stguard/gguf_dequant.h"

namespace {

using DequantizeFn = void (*)(const void*, float*, int64_t);
using QuantizeFn = void (*)(const float*, void*, int64_t);
using QuantizeInitFn = void (*)(int);

void* OpenGgml() {
  const char* env = std::getenv("STGUARD_GGML_LIB");
  const char* home = std::getenv("HOME");
  const std::string path = env != nullptr ? std::string(env)
                                          : std::string(home != nullptr ? home : "") +
                                                "/.cache/stguard/ggml-3.21.1/libggml-base.so";
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) std::fprintf(stderr, "dequant_bench: cannot open %s\n", path.c_str());
  return handle;
}

// SampleBlocks: 256 blocks of `type` with realistic contents.
std::vector<uint8_t> SampleBlocks(void* ggml, const stguard::gguf::GgmlType& type) {
  constexpr size_t kBlocks = 256;
  std::mt19937_64 rng(7);
  std::vector<uint8_t> blocks(kBlocks * type.type_size);
  const std::string name(type.name);
  auto quantize =
      reinterpret_cast<QuantizeFn>(dlsym(ggml, ("quantize_row_" + name + "_ref").c_str()));
  if (quantize != nullptr) {
    reinterpret_cast<QuantizeInitFn>(dlsym(ggml, "ggml_quantize_init"))(
        static_cast<int>(type.id));
    std::normal_distribution<float> normal(0.0f, 0.02f);
    std::vector<float> values(kBlocks * type.block_size);
    for (float& v : values) v = normal(rng);
    quantize(values.data(), blocks.data(), static_cast<int64_t>(values.size()));
    return blocks;
  }
  for (uint8_t& byte : blocks) byte = static_cast<uint8_t>(rng());
  for (size_t b = 0; b < kBlocks; ++b) {
    uint8_t* block = blocks.data() + b * type.type_size;
    const uint16_t d = 0x2000 | static_cast<uint16_t>(rng() & 0x3FF);  // ~0.008
    if (name == "iq1_m") {
      for (int i = 0; i < 4; ++i) {
        block[49 + 2 * i] = static_cast<uint8_t>((block[49 + 2 * i] & 0x0F) |
                                                 (((d >> (4 * i)) & 0xF) << 4));
      }
    } else {
      std::memcpy(block, &d, 2);
    }
  }
  return blocks;
}

template <typename F>
double BestSeconds(F&& run) {
  double best = 1e30;
  for (int rep = 0; rep < 20; ++rep) {
    const auto start = std::chrono::steady_clock::now();
    run();
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    best = std::min(best, took.count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const size_t mib = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 64;
  void* ggml = OpenGgml();
  if (ggml == nullptr) return 1;
  std::printf("| type | stguard MB/s | ggml MB/s | ratio |\n|---|---:|---:|---:|\n");
  for (const stguard::gguf::GgmlType& type : stguard::gguf::GgmlTypes()) {
    if (!stguard::gguf::CanDequantize(type)) continue;
    const std::string name(type.name);
    if (argc > 2 && std::find(argv + 2, argv + argc, name) == argv + argc) continue;
    auto reference =
        reinterpret_cast<DequantizeFn>(dlsym(ggml, ("dequantize_row_" + name).c_str()));
    if (reference == nullptr) continue;
    const std::vector<uint8_t> sample = SampleBlocks(ggml, type);
    const size_t n_blocks = std::max<size_t>(1, mib * 1048576 / 4 / type.block_size);
    std::vector<uint8_t> blocks(n_blocks * type.type_size);
    for (size_t i = 0; i < blocks.size(); i += sample.size()) {
      std::memcpy(blocks.data() + i, sample.data(), std::min(sample.size(), blocks.size() - i));
    }
    const size_t n = n_blocks * type.block_size;
    std::vector<float> out(n, 1.0f);  // touched once, so page faults are not timed
    const double ours = BestSeconds([&] {
      const stguard::Error error = stguard::gguf::DequantizeRow(
          type, std::as_bytes(std::span<const uint8_t>(blocks)), out);
      if (!error.ok()) std::abort();
    });
    const double theirs = BestSeconds([&] {
      reference(blocks.data(), out.data(), static_cast<int64_t>(n));
    });
    const double mb = static_cast<double>(n) * 4 / 1e6;
    std::printf("| %s | %.0f | %.0f | %.2f |\n", name.c_str(), mb / ours, mb / theirs,
                theirs / ours);
  }
  return 0;
}
