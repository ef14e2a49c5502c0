// SPDX-License-Identifier: Apache-2.0
// bench/bench_main.cc: registers every benchmark group in a fixed order and runs them
// with Google Benchmark's usual flags (--benchmark_filter, --benchmark_format=json, ...).
#include <benchmark/benchmark.h>

#include "benchmarks.h"

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  stguard_bench::RegisterHeaderBenchmarks();
  stguard_bench::RegisterWriterBenchmarks();
  stguard_bench::RegisterConvertBenchmarks();
  stguard_bench::RegisterLintBenchmarks();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
