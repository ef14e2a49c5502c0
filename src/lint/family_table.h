// SPDX-License-Identifier: Apache-2.0
// The shape of a family table: what a model family (llama, gpt2, ...) is, as data.
//
// A family lists the config.json fields it reads (with their types and defaults) and one
// row per tensor: a name pattern, a shape formula over the fields, and when the tensor is
// expected. One engine reads every table (the stages listed in engine.h: model_spec.cc
// picks the family and reads its fields and shape formulas, tensor_match.cc its rows);
// adding a family is adding a table to families.cc, a row of kFamilies, and its tests,
// never code.
//
// PATTERNS: a tensor name, with "{i}" standing for the layer index (decimal, no leading
// zeros), for example "model.layers.{i}.self_attn.q_proj.weight". A family may accept
// name prefixes (gpt2: "" and "transformer."); rows with `unprefixed` ignore them.
// SHAPE FORMULAS: dimensions separated by commas, "" for a scalar. Each dimension is a
// product of factors separated by '*' or '/', read left to right, each factor a field
// name or a decimal literal: "num_key_value_heads*head_dim, hidden_size". Division must be
// exact. Arithmetic is checked: overflow, division by zero or an inexact division is a
// config finding, never a crash.
#ifndef STGUARD_SRC_LINT_FAMILY_TABLE_H_
#define STGUARD_SRC_LINT_FAMILY_TABLE_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "stguard/dtype.h"

namespace stguard::lint {

// FieldType is what a config field must hold.
enum class FieldType : uint8_t {
  kCount,  // a non-negative integer written as digits ("4096"; not 4096.0, "4096" or -1)
  kBool,   // true or false
};

// FieldSpec is one config field a family reads. A field is absent when the key is missing
// or its value is null; then `fallback` applies: a formula over earlier fields (kCount),
// "true"/"false" (kBool), or "" when the field is required.
struct FieldSpec {
  std::string_view name;
  FieldType type;
  std::string_view fallback;
};

// When says under which config condition a row's tensor is expected.
enum class When : uint8_t {
  kAlways,    // always expected
  kIfTrue,    // expected when the bool field `when_field` is true
  kIfFalse,   // expected when the bool field `when_field` is false
  kOptional,  // may be present (a known buffer), never required
};

// Int4Layout says how an int4 pair of this row's module maps to [out, in].
enum class Int4Layout : uint8_t {
  kNone,   // not a linear weight: no <m>.qweight / <m>.scales form
  kOutIn,  // torch.nn.Linear: shape [out, in]
  kInOut,  // GPT-2's Conv1D: shape [in, out]
};

// TensorRow is one expected tensor.
struct TensorRow {
  std::string_view pattern;
  std::string_view shape;
  When when = When::kAlways;
  std::string_view when_field = {};
  Int4Layout int4 = Int4Layout::kNone;
  std::optional<Dtype> dtype = std::nullopt;  // a dtype the format requires (bigram: F32)
  bool unprefixed = false;                    // the family's name prefixes do not apply
  // Rule ids for an absent expected tensor and for a present unexpected one (a When row
  // whose condition is false); empty means "missing-tensor" / "unexpected-tensor".
  std::string_view missing_rule = {};
  std::string_view unexpected_rule = {};
};

// Family is one table.
struct Family {
  std::string_view name;
  std::span<const std::string_view> model_types;    // config "model_type" / "tl_arch" values
  std::span<const std::string_view> architectures;  // config "architectures"[0] values
  std::string_view layers_field;                    // the layer count, a kCount field
  std::span<const std::string_view> prefixes;       // accepted name prefixes ("" first)
  std::span<const FieldSpec> fields;                // in evaluation order
  std::span<const TensorRow> rows;
  // Formulas that must have a value (a division must be exact), for relations between
  // fields that no shape shows: attention heads shared evenly among key/value heads.
  std::span<const std::string_view> constraints = {};
};

// Families lists every table.
std::span<const Family> Families();

}  // namespace stguard::lint

#endif  // STGUARD_SRC_LINT_FAMILY_TABLE_H_
