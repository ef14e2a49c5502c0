// SPDX-License-Identifier: Apache-2.0
// Shape formulas: "num_key_value_heads*head_dim, hidden_size" evaluated over config values
// with checked 64-bit arithmetic (grammar in family_table.h). Tables are written by us, but
// the values come from an untrusted config.json: every product and quotient is checked.
#ifndef STGUARD_SRC_LINT_SHAPE_FORMULA_H_
#define STGUARD_SRC_LINT_SHAPE_FORMULA_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace stguard::lint {

// FieldValue is one evaluated config field.
struct FieldValue {
  std::string_view name;
  uint64_t value = 0;
  bool known = false;  // false: absent without a fallback, or its own formula failed
};

// FormulaError says why a formula has no value; kOk when it has one.
enum class FormulaError : uint8_t {
  kOk,
  kUnknownValue,    // a field that has no value (reported where that field failed)
  kOverflow,        // a product beyond 2^64 - 1
  kDivisionByZero,  // a quotient by zero
  kInexact,         // a quotient with a remainder: hidden_size not divisible by heads
  kSyntax,          // a malformed table formula (a bug in families.cc; tested)
};

// EvaluateDim evaluates one dimension formula. On failure *detail names the operands
// ("hidden_size / num_attention_heads = 10 / 3").
FormulaError EvaluateDim(std::string_view formula, const std::vector<FieldValue>& fields,
                         uint64_t* out, std::string* detail);

// EvaluateShape evaluates a comma-separated shape ("" is a scalar: no dimensions) into
// *out. Stops at the first failing dimension.
FormulaError EvaluateShape(std::string_view formula, const std::vector<FieldValue>& fields,
                           std::vector<uint64_t>* out, std::string* detail);

// DescribeShape shows how a shape formula's dimensions follow from the config: each
// dimension that names a field, as "formula = values" ("num_key_value_heads*head_dim =
// 2*16"), joined by ", "; literal dimensions are left out. Empty when none names a field.
std::string DescribeShape(std::string_view formula, const std::vector<FieldValue>& fields);

}  // namespace stguard::lint

#endif  // STGUARD_SRC_LINT_SHAPE_FORMULA_H_
