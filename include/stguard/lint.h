// SPDX-License-Identifier: Apache-2.0
// stguard/lint.h: a model folder checked against its config.json and the format page's
// contracts (`stguard lint`).
//
// `check` proves that each file is well formed; lint asks whether the folder is the model
// its config.json describes. It runs `check` first (CheckpointDir::Open: a single file or
// shards; an invalid file is an error finding), reads config.json strictly, picks the
// family (model_type, else tl_arch, else architectures[0]) and compares every tensor with
// the family's table of name patterns and shape formulas (src/lint/families.cc).
//
// FINDINGS carry a severity, a rule id, the tensor (may be empty), the expected and found
// values (may be empty) and a sentence. The rule ids are listed in README ("stguard lint")
// and each is produced in exactly one place of src/lint/. At most kMaxFindingsPerRule
// findings of one rule are listed; the rest are counted in one final finding of that rule
// ("... N more"), so a hostile folder cannot flood the report.
//
// RESOURCES: lint never allocates or loops by a number read from config.json. Shape
// formulas are evaluated with checked 64-bit arithmetic (an overflow is a finding). Missing
// tensors are enumerated only up to the per-rule cap and counted arithmetically beyond it,
// so num_hidden_layers = 10^18 costs no more than num_hidden_layers = 32. Time is
// O(T log T + T * R) for T tensors and R table rows; memory O(T) beyond what `check` uses.
// config.json is capped at Options::max_header_len bytes and read with the strict
// tokenizer (depth limit, no recursion).
#ifndef STGUARD_LINT_H_
#define STGUARD_LINT_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stguard/checkpoint_dir.h"
#include "stguard/error.h"
#include "stguard/export.h"

namespace stguard {

// kMaxFindingsPerRule is how many findings of one rule a report lists before counting.
inline constexpr size_t kMaxFindingsPerRule = 20;

enum class LintSeverity : uint8_t {
  kWarning,  // worth a look; the folder may still load correctly
  kError,    // the folder is not the model its config describes, or breaks a contract
};

// LintSeverityName returns "warning" or "error".
STGUARD_API std::string_view LintSeverityName(LintSeverity severity);

// LintFinding is one verdict.
struct STGUARD_API LintFinding {
  LintSeverity severity = LintSeverity::kError;
  std::string rule;      // a stable id such as "wrong-shape" (README lists them all)
  std::string file;      // the file concerned (config.json, a shard), may be empty
  std::string tensor;    // the tensor concerned, may be empty
  std::string expected;  // e.g. "[1024, 4096]" or "BF16"; may be empty
  std::string found;     // e.g. "[4096, 4096]"; may be empty
  bool transposed = false;  // wrong-shape only: found is expected with its two dims swapped
  std::string message;   // one sentence for a person
  // When `expected` / `found` is a shape, the same shape as numbers (JSON prints it as an
  // array); empty otherwise.
  std::optional<std::vector<uint64_t>> expected_shape;
  std::optional<std::vector<uint64_t>> found_shape;
};

// LintOptions tunes LintModel.
struct STGUARD_API LintOptions {
  // How the checkpoint is opened (limits, external symbolic links).
  DirOptions dir;
  // config_path, when not empty, is the config.json to use; otherwise config.json in the
  // checkpoint's folder, whose absence is a warning ("config-missing").
  std::string config_path;
};

// LintReport is the result of LintModel.
struct STGUARD_API LintReport {
  // error is set (not ok) only when lint could not run: the path or the named config
  // cannot be reached or read (kIoError, kNotARegularFile). Invalid content is a finding.
  Error error;
  std::string family;       // "llama", "qwen2", "qwen3", "gpt2", "bigram"; empty if none
  size_t num_tensors = 0;   // tensors in the checkpoint (0 when it failed `check`)
  size_t num_shards = 0;
  std::vector<LintFinding> findings;

  size_t num_errors() const;
  size_t num_warnings() const;
  // ok says whether lint ran and found no error (warnings allowed).
  bool ok() const { return error.ok() && num_errors() == 0; }
};

// LintModel lints the folder, sharded index or single .safetensors file at `path` (see
// CheckpointDir::Open) against its config.json. Never throws; see LintReport::error.
STGUARD_API LintReport LintModel(const std::string& path, const LintOptions& options = {});

// LintModel over a checkpoint the caller has already opened and validated, with the
// reader options of `options.dir` (the front door's kept reader: lint after check reads
// each header once): a folder or sharded index, or one .safetensors file at `file_path`.
// The checkpoint is not opened again: options.dir applies to config.json only (its cap,
// links out of the folder) and the rules' depth.
STGUARD_API LintReport LintModel(const CheckpointDir& checkpoint, const LintOptions& options);
// The same with the folder's config.json as the check already read it (CheckResult::config,
// null when it read none): lint takes its text from `config` instead of reading the file
// again, unless options.config_path names another file or the text is over options.dir's
// cap (then the file is read, and judged, as above). Links out of the folder are refused
// as above whichever way the text comes.
STGUARD_API LintReport LintModel(const CheckpointDir& checkpoint, const MappedFile* config,
                                 const LintOptions& options);
STGUARD_API LintReport LintModel(const std::string& file_path, const Checkpoint& file,
                                 const LintOptions& options);

// LintLoaded lints an already validated checkpoint against `config_text` (the bytes of a
// config.json; pass has_config = false when there is none). `has_tokenizer_file` says
// whether tokenizer.json sits beside the weights (for the tl_tokenizer rule). Findings are
// appended to report->findings and report->family is set.
STGUARD_API void LintLoaded(const CheckpointDir& checkpoint, bool has_config,
                            std::string_view config_text, bool has_tokenizer_file,
                            LintReport* report);

}  // namespace stguard

#endif  // STGUARD_LINT_H_
