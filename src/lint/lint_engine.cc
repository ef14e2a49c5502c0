// SPDX-License-Identifier: Apache-2.0
// LintShards and LintLoaded: one lint run over validated shards, stage by stage (see
// engine.h for the stages).
#include <algorithm>

#include "lint/engine.h"

namespace stguard {
namespace lint {

void LintShards(std::span<const ShardRef> shards, bool has_config, std::string_view config_text,
                TokenizerFile tokenizer, uint32_t max_depth, LintReport* report) {
  Findings findings(&report->findings);
  Config config;
  bool config_ok = false;
  if (has_config) {
    config_ok = ReadConfig(config_text, max_depth, &config, &findings);
  } else {
    findings.Warning("config-missing", {}, "config.json", "absent",
                     "no config.json: only the int4 rules and the format metadata are checked",
                     "config.json");
  }
  ModelSpec spec;
  BuildModelSpec(config_ok ? &config : nullptr, &findings, &spec);
  report->family = spec.family != nullptr ? std::string(spec.family->name) : std::string();

  std::vector<TensorRef> tensors;
  for (uint32_t s = 0; s < shards.size(); ++s) {
    for (const TensorView& view : shards[s].checkpoint->tensors()) {
      // A sharded checkpoint's findings name the shard; one file needs no name.
      tensors.push_back(TensorRef{&view, s, shards.size() > 1 ? shards[s].name : ""});
    }
  }
  // Name order makes every finding list deterministic, whatever the shard layout.
  std::sort(tensors.begin(), tensors.end(), [](const TensorRef& a, const TensorRef& b) {
    return a.view->name < b.view->name;
  });
  report->num_tensors = tensors.size();
  report->num_shards = shards.size();

  CheckContracts(shards, spec, tokenizer, &findings);
  std::vector<TensorRowMatch> matches;
  CheckTensorsAgainstFamily(tensors, spec, &findings, &matches);
  CheckInt4(shards, tensors, matches, spec, &findings);
  findings.Finish();
}

}  // namespace lint

std::string_view LintSeverityName(LintSeverity severity) {
  return severity == LintSeverity::kError ? "error" : "warning";
}

size_t LintReport::num_errors() const {
  return static_cast<size_t>(std::count_if(findings.begin(), findings.end(), [](const LintFinding& f) {
    return f.severity == LintSeverity::kError;
  }));
}

size_t LintReport::num_warnings() const { return findings.size() - num_errors(); }

void LintLoaded(const CheckpointDir& checkpoint, bool has_config, std::string_view config_text,
                bool has_tokenizer_file, LintReport* report) {
  std::vector<lint::ShardRef> shards;
  for (const ShardFile& shard : checkpoint.shards()) {
    shards.push_back(lint::ShardRef{shard.name, &shard.checkpoint});
  }
  lint::LintShards(shards, has_config, config_text,
                   has_tokenizer_file ? lint::TokenizerFile::kPresent : lint::TokenizerFile::kAbsent,
                   kDefaultMaxDepth, report);
}

}  // namespace stguard
