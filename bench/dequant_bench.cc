// SPDX-License-Identifier: Apache-2.0
// dequant_bench: decoding speed of every ggml block type, stguard's DequantizeRow against
// ggml's reference dequantize_row_<type> (loaded with dlopen from the test-only library of
// tools/fetch_ggml.sh, $STGUARD_GGML_LIB to override; never linked) on the same blocks.
//
//   dequant_bench [MIB [TYPE...]]   output MiB per type (default 1: the step of
//                                   gguf_convert, kGgufConvertStepElements floats)
//
// Input: 256 blocks quantized by the reference's quantize_row_<type>_ref (random blocks
// with a finite scale for the four types that have none), repeated to fill the buffer.
// Both sides decode the same input into the same output buffer. Seven rounds, the two
// sides alternating within each round (the first one swaps every round); a side's
// time in a round is the mean thread CPU time of enough passes to fill about 20 ms. The median round
// counts. Prints MB/s of F32 output and the ratio of the medians, one line per type
// (a table for bench/README.md), and the ceiling: ggml's time over that of only filling
// the same output buffer (timed the same way), the ratio no decoder could exceed.
#include <dlfcn.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <utility>
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

constexpr int kRounds = 7;

// ThreadSeconds: this thread's CPU time. The machine is shared, so wall time would
// count other jobs' turns on the core; CPU time counts only the decoding.
double ThreadSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// SecondsPerPass: the mean CPU time of `passes` back-to-back runs.
template <typename F>
double SecondsPerPass(F& run, int passes) {
  const double start = ThreadSeconds();
  for (int i = 0; i < passes; ++i) run();
  return (ThreadSeconds() - start) / passes;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// AlternatingMedians times `a` and `b` in kRounds rounds, alternating which goes first,
// and returns the median seconds per pass of each.
template <typename A, typename B>
std::pair<double, double> AlternatingMedians(A& a, B& b) {
  a();
  b();  // warm both code paths and the buffers
  const double probe = std::max(1e-7, SecondsPerPass(a, 3));
  const int passes = std::max(1, static_cast<int>(0.02 / probe));
  std::vector<double> ta, tb;
  for (int round = 0; round < kRounds; ++round) {
    if (round % 2 == 0) {
      ta.push_back(SecondsPerPass(a, passes));
      tb.push_back(SecondsPerPass(b, passes));
    } else {
      tb.push_back(SecondsPerPass(b, passes));
      ta.push_back(SecondsPerPass(a, passes));
    }
  }
  return {Median(ta), Median(tb)};
}

}  // namespace

int main(int argc, char** argv) {
  const double mib = argc > 1 ? std::strtod(argv[1], nullptr) : 1.0;
  void* ggml = OpenGgml();
  if (ggml == nullptr) return 1;
  std::printf("| type | stguard MB/s | ggml MB/s | ratio | store-only ceiling |\n");
  std::printf("|---|---:|---:|---:|---:|\n");
  for (const stguard::gguf::GgmlType& type : stguard::gguf::GgmlTypes()) {
    if (!stguard::gguf::CanDequantize(type)) continue;
    const std::string name(type.name);
    if (argc > 2 && std::find(argv + 2, argv + argc, name) == argv + argc) continue;
    auto reference =
        reinterpret_cast<DequantizeFn>(dlsym(ggml, ("dequantize_row_" + name).c_str()));
    if (reference == nullptr) continue;
    const std::vector<uint8_t> sample = SampleBlocks(ggml, type);
    const size_t n_blocks = std::max<size_t>(1, static_cast<size_t>(mib * 1048576) / 4 / type.block_size);
    std::vector<uint8_t> blocks(n_blocks * type.type_size);
    for (size_t i = 0; i < blocks.size(); i += sample.size()) {
      std::memcpy(blocks.data() + i, sample.data(), std::min(sample.size(), blocks.size() - i));
    }
    const size_t n = n_blocks * type.block_size;
    std::vector<float> out(n, 1.0f);  // touched once, so page faults are not timed
    auto ours_run = [&] {
      const stguard::Error error = stguard::gguf::DequantizeRow(
          type, std::as_bytes(std::span<const uint8_t>(blocks)), out);
      if (!error.ok()) std::abort();
    };
    auto theirs_run = [&] { reference(blocks.data(), out.data(), static_cast<int64_t>(n)); };
    const auto [ours, theirs] = AlternatingMedians(ours_run, theirs_run);
    // The ceiling: only the stores (the same buffer filled with a constant, baseline
    // 128-bit stores), against ggml again. No decoder can beat ggml by more than this.
    auto fill_run = [&] {
      std::fill(out.begin(), out.end(), 2.0f);
      asm volatile("" : : "r"(out.data()) : "memory");
    };
    const auto [fill, theirs_again] = AlternatingMedians(fill_run, theirs_run);
    const double mb = static_cast<double>(n) * 4 / 1e6;
    std::printf("| %s | %.0f | %.0f | %.2f | %.2f |\n", name.c_str(), mb / ours, mb / theirs,
                theirs / ours, theirs_again / fill);
  }
  return 0;
}
