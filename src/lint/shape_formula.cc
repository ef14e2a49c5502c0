// SPDX-License-Identifier: Apache-2.0
// Shape formulas (see shape_formula.h): factors joined by '*' and '/', left to right.
#include "lint/shape_formula.h"

#include <limits>

namespace stguard::lint {
namespace {

std::string_view Trim(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return text;
}

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// ReadFactor reads a decimal literal or a field name from the front of *text.
FormulaError ReadFactor(std::string_view* text, const std::vector<FieldValue>& fields,
                        uint64_t* out, std::string* name) {
  size_t len = 0;
  while (len < text->size() && IsNameChar((*text)[len])) ++len;
  if (len == 0) return FormulaError::kSyntax;
  const std::string_view token = text->substr(0, len);
  text->remove_prefix(len);
  *name = std::string(token);
  if (token[0] >= '0' && token[0] <= '9') {
    uint64_t value = 0;
    for (char c : token) {
      if (c < '0' || c > '9') return FormulaError::kSyntax;
      const uint64_t digit = static_cast<uint64_t>(c - '0');
      if (value > (std::numeric_limits<uint64_t>::max() - digit) / 10) return FormulaError::kSyntax;
      value = value * 10 + digit;
    }
    *out = value;
    return FormulaError::kOk;
  }
  for (const FieldValue& field : fields) {
    if (field.name == token) {
      if (!field.known) return FormulaError::kUnknownValue;
      *out = field.value;
      return FormulaError::kOk;
    }
  }
  return FormulaError::kSyntax;  // a name the family does not declare
}

}  // namespace

FormulaError EvaluateDim(std::string_view formula, const std::vector<FieldValue>& fields,
                         uint64_t* out, std::string* detail) {
  std::string_view text = Trim(formula);
  std::string name;
  uint64_t value = 0;
  if (FormulaError error = ReadFactor(&text, fields, &value, &name); error != FormulaError::kOk) {
    return error;
  }
  std::string shown = name + " (" + std::to_string(value) + ")";
  while (!text.empty()) {
    const char op = text.front();
    if (op != '*' && op != '/') return FormulaError::kSyntax;
    text.remove_prefix(1);
    uint64_t factor = 0;
    if (FormulaError error = ReadFactor(&text, fields, &factor, &name);
        error != FormulaError::kOk) {
      return error;
    }
    const std::string operand = name + " (" + std::to_string(factor) + ")";
    if (op == '*') {
      if (factor != 0 && value > std::numeric_limits<uint64_t>::max() / factor) {
        *detail = shown + " * " + operand + " overflows 64 bits";
        return FormulaError::kOverflow;
      }
      value *= factor;
    } else {
      if (factor == 0) {
        *detail = shown + " / " + operand + " divides by zero";
        return FormulaError::kDivisionByZero;
      }
      if (value % factor != 0) {
        *detail = shown + " / " + operand + " is not a whole number";
        return FormulaError::kInexact;
      }
      value /= factor;
    }
    shown += std::string(" ") + op + " " + operand;
  }
  *out = value;
  return FormulaError::kOk;
}

FormulaError EvaluateShape(std::string_view formula, const std::vector<FieldValue>& fields,
                           std::vector<uint64_t>* out, std::string* detail) {
  out->clear();
  if (Trim(formula).empty()) return FormulaError::kOk;
  while (true) {
    const size_t comma = formula.find(',');
    uint64_t dim = 0;
    if (FormulaError error = EvaluateDim(formula.substr(0, comma), fields, &dim, detail);
        error != FormulaError::kOk) {
      return error;
    }
    out->push_back(dim);
    if (comma == std::string_view::npos) return FormulaError::kOk;
    formula.remove_prefix(comma + 1);
  }
}

namespace {

// DescribeDim renders one dimension as "formula = values", or "" for a bare literal.
std::string DescribeDim(std::string_view formula, const std::vector<FieldValue>& fields) {
  formula = Trim(formula);
  std::string values;
  bool names_a_field = false;
  for (size_t i = 0; i < formula.size();) {
    size_t len = 0;
    while (i + len < formula.size() && IsNameChar(formula[i + len])) ++len;
    if (len == 0) {  // an operator or a space
      if (formula[i] != ' ') values += formula[i];
      ++i;
      continue;
    }
    const std::string_view token = formula.substr(i, len);
    i += len;
    std::string shown(token);
    for (const FieldValue& field : fields) {
      if (field.name == token) {
        names_a_field = true;
        shown = field.known ? std::to_string(field.value) : "?";
      }
    }
    values += shown;
  }
  if (!names_a_field) return {};
  std::string compact;
  for (char c : formula) {
    if (c != ' ') compact += c;
  }
  return compact + " = " + values;
}

}  // namespace

std::string DescribeShape(std::string_view formula, const std::vector<FieldValue>& fields) {
  std::string out;
  while (true) {
    const size_t comma = formula.find(',');
    const std::string dim = DescribeDim(formula.substr(0, comma), fields);
    if (!dim.empty()) out += (out.empty() ? "" : ", ") + dim;
    if (comma == std::string_view::npos) return out;
    formula.remove_prefix(comma + 1);
  }
}

}  // namespace stguard::lint
