// SPDX-License-Identifier: Apache-2.0
// bench/convert_bench.cc: dtype conversion throughput, bytes of output per second, on one
// core. The target: at least 1 GB/s of F32 output for BF16 -> F32 and F16 -> F32.
//
//   convert/<from>_to_<to>/<elements>
#include <benchmark/benchmark.h>

#include <cstring>
#include <random>
#include <vector>

#include "benchmarks.h"
#include "stguard/convert.h"

namespace stguard_bench {
namespace {

using stguard::Dtype;

// 16 Mi elements: 64 MiB of F32 output, far beyond the caches, as a real checkpoint is.
constexpr size_t kElements = size_t{1} << 24;

std::vector<std::byte> RandomBytes(size_t len) {
  std::vector<std::byte> bytes(len);
  std::mt19937_64 random(42);
  for (size_t i = 0; i + 8 <= len; i += 8) {
    const uint64_t word = random();
    std::memcpy(bytes.data() + i, &word, 8);
  }
  return bytes;
}

void Convert(benchmark::State& state, Dtype from, Dtype to) {
  const std::vector<std::byte> src = RandomBytes(kElements * stguard::ElementSize(from));
  std::vector<std::byte> dst(kElements * stguard::ElementSize(to));
  for (auto _ : state) {
    const stguard::Error error = stguard::ConvertElements(from, src, to, dst);
    if (!error.ok()) {
      state.SkipWithError(error.ToString().c_str());
      break;
    }
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * dst.size()));
  state.counters["elements"] = static_cast<double>(kElements);
}

}  // namespace

void RegisterConvertBenchmarks() {
  struct Pair {
    const char* name;
    Dtype from;
    Dtype to;
  };
  for (const Pair& pair : {Pair{"convert/bf16_to_f32/16M", Dtype::kBF16, Dtype::kF32},
                           Pair{"convert/f16_to_f32/16M", Dtype::kF16, Dtype::kF32},
                           Pair{"convert/f8_e4m3_to_f32/16M", Dtype::kF8_E4M3, Dtype::kF32},
                           Pair{"convert/f32_to_bf16/16M", Dtype::kF32, Dtype::kBF16},
                           Pair{"convert/f32_to_f16/16M", Dtype::kF32, Dtype::kF16}}) {
    benchmark::RegisterBenchmark(pair.name, Convert, pair.from, pair.to)
        ->Unit(benchmark::kMillisecond)
        ->Repetitions(5);
  }
}

}  // namespace stguard_bench
