// SPDX-License-Identifier: Apache-2.0
// The lint engine's internal interface: the stages of one lint run, each in its own file.
//
//   lint_engine.cc    LintShards (and LintLoaded, for a checkpoint already open): runs
//                     the stages below in this order
//   config_reader.cc  config.json -> top-level members (strict JSON)
//   model_spec.cc     members -> family, field values, each row's expected shape
//   contracts.cc      __metadata__.format and the tl_tokenizer rule
//   tensor_match.cc   tensor names -> table rows; missing, shape, dtype, layer rules
//   int4_rules.cc     <m>.qweight / <m>.scales pairs and the "quant" metadata
//   lint_model.cc     LintModel: opening the checkpoint and config.json (file system)
#ifndef STGUARD_SRC_LINT_ENGINE_H_
#define STGUARD_SRC_LINT_ENGINE_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lint/config_reader.h"
#include "lint/family_table.h"
#include "lint/findings.h"
#include "lint/shape_formula.h"
#include "stguard/lint.h"
#include "stguard/reader.h"

namespace stguard::lint {

// ShardRef is one validated file of the checkpoint.
struct ShardRef {
  std::string_view name;  // the file name shown in findings
  const Checkpoint* checkpoint = nullptr;
};

// TensorRef is one tensor of the whole checkpoint.
struct TensorRef {
  const TensorView* view = nullptr;
  uint32_t shard = 0;
  std::string_view shard_name;  // its shard, named by its findings (empty: one file)
};

// TokenizerFile says what is known about tokenizer.json beside the weights.
enum class TokenizerFile : uint8_t { kUnknown, kAbsent, kPresent };

// LintShards lints validated shards against config.json's text (when has_config).
void LintShards(std::span<const ShardRef> shards, bool has_config, std::string_view config_text,
                TokenizerFile tokenizer, uint32_t max_depth, LintReport* report);

// RowShape is one table row's expected shape, evaluated from the config.
struct RowShape {
  bool known = false;  // false when a field it needs is missing or its formula failed
  std::vector<uint64_t> dims;
  // formula: how the dims follow from the config, for messages
  // ("num_key_value_heads*head_dim = 2*16, hidden_size = 64"); literal dims are left out.
  std::string formula;
};

// ModelSpec is what the config says, once read: the family (or none) and its values.
struct ModelSpec {
  bool has_config = false;              // config.json was present and passed the policy
  bool course = false;                  // config has tl_arch or tl_tokenizer: a course file
  const Family* family = nullptr;       // nullptr: no family known
  std::vector<FieldValue> counts;       // the family's kCount fields, evaluated
  std::vector<FieldValue> bools;        // the family's kBool fields (value 0 or 1)
  std::vector<RowShape> row_shapes;     // one per family row
  bool layers_known = false;
  uint64_t num_layers = 0;
  std::optional<Dtype> torch_dtype;     // torch_dtype (or dtype) mapped to a safetensors dtype
  std::string torch_dtype_text;
  std::optional<std::string> tl_tokenizer;  // the tl_tokenizer string, when present

  // RowExpected says whether the row's When condition holds (kOptional: false).
  bool RowExpected(const TensorRow& row) const;
};

// BuildModelSpec reads the family, field values and row shapes from `config` (nullptr when
// there is none or it broke the policy), adding config findings.
void BuildModelSpec(const Config* config, Findings* findings, ModelSpec* out);

// TensorRowMatch is where a tensor landed in the family table.
struct TensorRowMatch {
  int32_t row = -1;        // -1: the family does not know the name
  uint64_t layer = 0;      // the {i} value (UINT64_MAX when it does not fit)
};

// CheckTensorsAgainstFamily applies the family rules (missing, wrong-shape, wrong-dtype,
// layer-out-of-range, duplicates, unexpected and unknown tensors, dtype vs torch_dtype)
// and fills *out_matches (one per tensor, same order) for the int4 rules.
void CheckTensorsAgainstFamily(std::span<const TensorRef> tensors, const ModelSpec& spec,
                               Findings* findings, std::vector<TensorRowMatch>* out_matches);

// CheckInt4 applies the int4 rules. `matches` may be empty (no family).
void CheckInt4(std::span<const ShardRef> shards, std::span<const TensorRef> tensors,
               std::span<const TensorRowMatch> matches, const ModelSpec& spec,
               Findings* findings);

// CheckContracts applies the format-metadata and tl_tokenizer rules.
void CheckContracts(std::span<const ShardRef> shards, const ModelSpec& spec,
                    TokenizerFile tokenizer, Findings* findings);

// Int4Part splits "<m>.qweight" / "<m>.scales" into the module name; part is 1 for
// qweight, 2 for scales, 0 for anything else (then the module is empty). Defined in
// tensor_match.cc, where a qweight or scales tensor matches the row of "<m>.weight", and
// used again by int4_rules.cc to pair them.
int Int4Part(std::string_view name, std::string_view* out_module);

}  // namespace stguard::lint

#endif  // STGUARD_SRC_LINT_ENGINE_H_
