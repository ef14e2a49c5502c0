// SPDX-License-Identifier: Apache-2.0
// fuzz_config: a config.json and a safetensors file together through the lint engine.
//
// The input is split at its first NUL byte: the bytes before it are config.json (strict
// JSON never holds a raw NUL, so the split is unambiguous), the bytes after it a whole
// safetensors file (length prefix, header, data). Without a NUL, the whole input is the
// config and the checkpoint is empty. A file the reader rejects is linted as an empty
// checkpoint, so every config still reaches the family tables.
//
// Checks: no crash, hang or unbounded allocation whatever the config claims (huge layer
// counts, overflowing products, giant vocabularies); every finding has a rule id; at most
// kMaxFindingsPerRule + 1 findings per rule (the "N more" line); the tensor count is the
// checkpoint's; a run without config never names a family; the same input gives the same
// findings twice (no hidden state).
//
// Mutation is structure-aware (fuzz/config_mutator.h): configs naming the families of the
// lint tables with values that fit or do not, and checkpoints rebuilt from them with the
// changes the rules look for, so most executions lint a real family.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "config_mutator.h"
#include "fuzz_support.h"
#include "lint/engine.h"
#include "stguard/reader.h"

namespace {

std::string Render(const stguard::LintReport& report) {
  std::string out = report.family + "\n";
  for (const stguard::LintFinding& f : report.findings) {
    out += f.rule + "|" + f.file + "|" + f.tensor + "|" + f.expected + "|" + f.found + "|" +
           f.message + "\n";
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const stguard_fuzz::ExactCopy input(data, size);
  const auto [config, file] = stguard_fuzz::mutator::SplitConfigInput(input.text());

  stguard::Result<stguard::Checkpoint> checkpoint = stguard::Checkpoint::FromBytes(file);
  std::vector<stguard::lint::ShardRef> shards;
  if (checkpoint.ok()) shards.push_back(stguard::lint::ShardRef{"model.safetensors", &*checkpoint});

  bool linted_a_family = false;  // a checkpoint went through a family's tables
  for (const bool has_config : {true, false}) {
    stguard::LintReport first;
    stguard::lint::LintShards(shards, has_config, config, stguard::lint::TokenizerFile::kAbsent,
                              stguard::kDefaultMaxDepth, &first);
    std::map<std::string, size_t> per_rule;
    for (const stguard::LintFinding& finding : first.findings) {
      FUZZ_CHECK(!finding.rule.empty());
      FUZZ_CHECK_MSG(++per_rule[finding.rule] <= stguard::kMaxFindingsPerRule + 1, finding.rule);
    }
    FUZZ_CHECK(first.num_tensors == (checkpoint.ok() ? checkpoint->num_tensors() : 0));
    if (!has_config) FUZZ_CHECK(first.family.empty());
    if (has_config && checkpoint.ok() && !first.family.empty()) linted_a_family = true;
    stguard::LintReport second;
    stguard::lint::LintShards(shards, has_config, config, stguard::lint::TokenizerFile::kAbsent,
                              stguard::kDefaultMaxDepth, &second);
    FUZZ_CHECK(Render(first) == Render(second));
  }
  stguard_fuzz::CountExecution(linted_a_family);
  return 0;
}

STGUARD_FUZZ_CUSTOM_MUTATORS(stguard_fuzz::mutator::MutateConfigInput,
                             stguard_fuzz::mutator::CrossOverConfigInput)
