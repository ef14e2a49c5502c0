// SPDX-License-Identifier: Apache-2.0
// bench/header_bench.cc: header validation throughput, stguard against two JSON parsers
// that only parse (simdjson's DOM, nlohmann::json), on the same header bytes; and
// Checkpoint::Open of a 16 GB sparse checkpoint against the same header with no data.
#include <benchmark/benchmark.h>

#include <string>

#include "benchmarks.h"
#include "fixtures.h"
#include "stguard/reader.h"

#if STGUARD_BENCH_HAVE_SIMDJSON
#include <simdjson.h>
#endif
#if STGUARD_BENCH_HAVE_NLOHMANN
#include <nlohmann/json.hpp>
#endif

namespace stguard_bench {
namespace {

// Fail stops the benchmark with a message that outlives the call, as SkipWithError needs.
void Fail(benchmark::State& state, std::string message) {
  static std::string last_message;
  last_message = std::move(message);
  state.SkipWithError(last_message.c_str());
}

// Describe records what was measured: header bytes per second, and the input's size.
void Describe(benchmark::State& state, const Fixture& fixture) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(fixture.header_len()));
  state.counters["header_bytes"] = static_cast<double>(fixture.header_len());
  state.counters["tensors"] = static_cast<double>(fixture.header.tensors.size());
}

// Full validation: length prefix, tokenizer, schema, sizes, duplicates, tiling, and the
// Checkpoint's tensor table, over bytes already mapped (as Checkpoint::Open would see).
void ValidateMapped(benchmark::State& state, const Fixture& fixture) {
  for (auto _ : state) {
    stguard::Result<stguard::Checkpoint> checkpoint =
        stguard::Checkpoint::FromBytes(fixture.bytes());
    if (!checkpoint.ok()) return Fail(state, checkpoint.error().ToString());
    if (checkpoint->num_tensors() != fixture.header.tensors.size()) {
      return Fail(state, "wrong tensor count");
    }
    benchmark::DoNotOptimize(checkpoint->tensors().data());
  }
  Describe(state, fixture);
}

void ValidateStguard(benchmark::State& state, Layout layout) {
  ValidateMapped(state, GetFixture(layout));
}

#if STGUARD_BENCH_HAVE_SIMDJSON
// simdjson's DOM parse of the same N header bytes. The padded copy and the parser's
// buffers are made once, outside the timed loop, as simdjson recommends.
void ParseSimdjson(benchmark::State& state, Layout layout) {
  const Fixture& fixture = GetFixture(layout);
  const simdjson::padded_string json(fixture.header_text());
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (simdjson::error_code error = parser.parse(json).get(root); error != simdjson::SUCCESS) {
    return Fail(state, simdjson::error_message(error));
  }
  for (auto _ : state) {
    simdjson::error_code error = parser.parse(json).get(root);
    if (error != simdjson::SUCCESS) return Fail(state, simdjson::error_message(error));
    benchmark::DoNotOptimize(root);
  }
  state.SetLabel(std::string(simdjson::get_active_implementation()->name()));
  Describe(state, fixture);
}
#endif

#if STGUARD_BENCH_HAVE_NLOHMANN
// nlohmann::json::parse of the same N header bytes, building (and freeing) its DOM.
void ParseNlohmann(benchmark::State& state, Layout layout) {
  const Fixture& fixture = GetFixture(layout);
  const std::string_view text = fixture.header_text();
  for (auto _ : state) {
    nlohmann::json document = nlohmann::json::parse(text.begin(), text.end());
    benchmark::DoNotOptimize(document);
  }
  Describe(state, fixture);
}
#endif

// Checkpoint::Open (open, fstat, mmap, validate, munmap) of `fixture`'s file. Reports how
// many data pages are in the page cache afterwards: 0 means validation never read them.
// Measured in CPU time, system time included, like the rest: faulting in a data page of a
// sparse file costs system time, not disk waits.
void OpenStguard(benchmark::State& state, const Fixture& (*get_fixture)()) {
  const Fixture& fixture = get_fixture();
  for (auto _ : state) {
    stguard::Result<stguard::Checkpoint> checkpoint = stguard::Checkpoint::Open(fixture.path);
    if (!checkpoint.ok()) return Fail(state, checkpoint.error().ToString());
    benchmark::DoNotOptimize(checkpoint->tensors().data());
  }
  Describe(state, fixture);
  state.counters["file_bytes"] = static_cast<double>(fixture.bytes().size());
  state.counters["data_pages_resident"] =
      static_cast<double>(CountResidentDataPages(fixture));
}

const Fixture& Llama16GB() { return GetFixture(Layout::kLlama3_8B); }
const Fixture& LlamaHeaderOnly() { return GetZeroDataTwin(Layout::kLlama3_8B); }

// FromBytes over the header-only twin, to split its Open time into validation and the
// open/mmap/munmap overhead.
void ValidateHeaderOnly(benchmark::State& state) { ValidateMapped(state, LlamaHeaderOnly()); }

std::string Name(std::string_view group, std::string_view implementation,
                 std::string_view input) {
  return std::string(group) + "/" + std::string(implementation) + "/" + std::string(input);
}

}  // namespace

void RegisterHeaderBenchmarks() {
  const Layout layouts[] = {Layout::kGpt2, Layout::kLlama3_8B, Layout::kMoeShard,
                            Layout::kNearCap};
  for (Layout layout : layouts) {
    const bool big = layout == Layout::kNearCap;
    const benchmark::TimeUnit unit = big ? benchmark::kMillisecond : benchmark::kMicrosecond;
    const std::string_view input = LayoutName(layout);
    benchmark::RegisterBenchmark(Name("validate", "stguard", input).c_str(), ValidateStguard,
                                 layout)
        ->Unit(unit)
        ->Repetitions(5);
#if STGUARD_BENCH_HAVE_SIMDJSON
    benchmark::RegisterBenchmark(Name("validate", "simdjson", input).c_str(), ParseSimdjson,
                                 layout)
        ->Unit(unit)
        ->Repetitions(5);
#endif
#if STGUARD_BENCH_HAVE_NLOHMANN
    // nlohmann needs ~3 s per pass near the cap: three single passes are enough there.
    auto* nlohmann = benchmark::RegisterBenchmark(Name("validate", "nlohmann", input).c_str(),
                                                  ParseNlohmann, layout);
    nlohmann->Unit(unit)->Repetitions(big ? 3 : 5);
    if (big) nlohmann->Iterations(1);
#endif
  }
  benchmark::RegisterBenchmark("validate/stguard/llama3_8b_header_only", ValidateHeaderOnly)
      ->Unit(benchmark::kMicrosecond)
      ->Repetitions(5);
  benchmark::RegisterBenchmark("open/stguard/llama3_8b_16gb", OpenStguard, Llama16GB)
      ->Unit(benchmark::kMicrosecond)
      ->Repetitions(5);
  benchmark::RegisterBenchmark("open/stguard/llama3_8b_header_only", OpenStguard,
                               LlamaHeaderOnly)
      ->Unit(benchmark::kMicrosecond)
      ->Repetitions(5);
}

}  // namespace stguard_bench
