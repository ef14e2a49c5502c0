// SPDX-License-Identifier: Apache-2.0
// bench/lint_bench.cc: `stguard lint` against `stguard check` on the same model folder.
//
// The folder: config.json of a 400-layer Llama (hidden 1024, 8 kv heads), an index and 8
// sparse BF16 shards holding 30,003 tensors: per layer the 9 the llama table expects plus
// 66 it does not know (mlp.experts.{0..21}.{gate,up,down}_proj.weight, as in a
// mixture-of-experts checkpoint), so most names take lint's slowest path (no row
// matches) and end in unknown-tensor findings.
//   lint_vs_check/check/folder_30k   CheckpointDir::Open + CheckModelFolder (= check DIR)
//   lint_vs_check/lint/folder_30k    LintModel (opens the folder the same way, then lints)
#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>
#include <vector>

#include "benchmarks.h"
#include "generators.h"
#include "stguard/checkpoint_dir.h"
#include "stguard/lint.h"

namespace stguard_bench {
namespace {

constexpr int kLayers = 400;
constexpr int kExperts = 22;
constexpr int kShards = 8;

// LintFolder writes the folder once per process and returns its path.
const std::string& LintFolder() {
  static ScratchDir* dir = new ScratchDir();  // lives until exit: the files are reused
  static const std::string path = [] {
    using stguard::Dtype;
    std::vector<TensorSpec> tensors = {{"model.embed_tokens.weight", Dtype::kBF16, {32000, 1024}},
                                       {"model.norm.weight", Dtype::kBF16, {1024}},
                                       {"lm_head.weight", Dtype::kBF16, {32000, 1024}}};
    for (int i = 0; i < kLayers; ++i) {
      const std::string p = "model.layers." + std::to_string(i) + ".";
      tensors.push_back({p + "self_attn.q_proj.weight", Dtype::kBF16, {1024, 1024}});
      tensors.push_back({p + "self_attn.k_proj.weight", Dtype::kBF16, {512, 1024}});
      tensors.push_back({p + "self_attn.v_proj.weight", Dtype::kBF16, {512, 1024}});
      tensors.push_back({p + "self_attn.o_proj.weight", Dtype::kBF16, {1024, 1024}});
      tensors.push_back({p + "mlp.gate_proj.weight", Dtype::kBF16, {2816, 1024}});
      tensors.push_back({p + "mlp.up_proj.weight", Dtype::kBF16, {2816, 1024}});
      tensors.push_back({p + "mlp.down_proj.weight", Dtype::kBF16, {1024, 2816}});
      tensors.push_back({p + "input_layernorm.weight", Dtype::kBF16, {1024}});
      tensors.push_back({p + "post_attention_layernorm.weight", Dtype::kBF16, {1024}});
      for (int e = 0; e < kExperts; ++e) {
        const std::string x = p + "mlp.experts." + std::to_string(e) + ".";
        tensors.push_back({x + "gate_proj.weight", Dtype::kBF16, {256, 1024}});
        tensors.push_back({x + "up_proj.weight", Dtype::kBF16, {256, 1024}});
        tensors.push_back({x + "down_proj.weight", Dtype::kBF16, {1024, 256}});
      }
    }
    std::string index = "{\"metadata\": {}, \"weight_map\": {";
    std::string folder;
    for (int s = 0; s < kShards; ++s) {
      char name[64];
      std::snprintf(name, sizeof(name), "model-%05d-of-%05d.safetensors", s + 1, kShards);
      std::vector<TensorSpec> part;
      for (size_t t = static_cast<size_t>(s); t < tensors.size(); t += kShards) {
        part.push_back(tensors[t]);
        if (index.back() != '{') index += ", ";
        index += "\"" + tensors[t].name + "\": \"" + name + "\"";
      }
      const std::string shard_path = dir->File(name);
      WriteSparseCheckpoint(shard_path, BuildCanonicalHeader(std::move(part)));
      folder = shard_path.substr(0, shard_path.rfind('/'));
    }
    const auto write = [&](const char* name, const std::string& text) {
      std::FILE* file = std::fopen(dir->File(name).c_str(), "wb");
      if (file == nullptr || std::fwrite(text.data(), 1, text.size(), file) != text.size()) {
        std::perror(name);
        std::abort();
      }
      std::fclose(file);
    };
    write("model.safetensors.index.json", index + "}}");
    write("config.json",
          "{\"model_type\": \"llama\", \"vocab_size\": 32000, \"hidden_size\": 1024, "
          "\"num_hidden_layers\": 400, \"num_attention_heads\": 8, \"num_key_value_heads\": 4, "
          "\"intermediate_size\": 2816, \"tie_word_embeddings\": false, "
          "\"torch_dtype\": \"bfloat16\"}");
    return folder;
  }();
  return path;
}

void CheckFolder(benchmark::State& state) {
  const std::string& folder = LintFolder();
  for (auto _ : state) {
    auto checkpoint = stguard::CheckpointDir::Open(folder);
    if (!checkpoint.ok()) {
      state.SkipWithError("check failed");
      return;
    }
    stguard::ModelFolderReport report = stguard::CheckModelFolder(folder, &*checkpoint);
    benchmark::DoNotOptimize(report);
  }
  state.counters["tensors"] = 30003;
}

void LintFolderBench(benchmark::State& state) {
  const std::string& folder = LintFolder();
  size_t findings = 0;
  for (auto _ : state) {
    stguard::LintReport report = stguard::LintModel(folder);
    if (!report.error.ok() || report.num_tensors != 30003) {
      state.SkipWithError("lint failed");
      return;
    }
    findings = report.findings.size();
    benchmark::DoNotOptimize(report);
  }
  state.counters["tensors"] = 30003;
  state.counters["findings"] = static_cast<double>(findings);
}

}  // namespace

void RegisterLintBenchmarks() {
  benchmark::RegisterBenchmark("lint_vs_check/check/folder_30k", CheckFolder)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("lint_vs_check/lint/folder_30k", LintFolderBench)
      ->Unit(benchmark::kMillisecond);
}

}  // namespace stguard_bench
