// SPDX-License-Identifier: Apache-2.0
// BuildModelSpec: from config.json's members to the family, its typed field values and
// every row's expected shape (see engine.h).
#include <algorithm>
#include <set>

#include "base/concat.h"
#include "lint/engine.h"

namespace stguard::lint {
namespace {

constexpr std::string_view kConfigFile = "config.json";

std::string KindName(TokenKind kind) {
  switch (kind) {
    case TokenKind::kString: return "a string";
    case TokenKind::kNumber: return "a number";
    case TokenKind::kTrue:
    case TokenKind::kFalse: return "a boolean";
    case TokenKind::kNull: return "null";
    case TokenKind::kBeginObject: return "an object";
    case TokenKind::kBeginArray: return "an array";
    default: return "a token";
  }
}

void WrongType(const ConfigMember& member, std::string_view expected, Findings* findings) {
  std::string found = KindName(member.kind);
  if (member.kind == TokenKind::kNumber || member.kind == TokenKind::kString) {
    found += " (" + PrintableText(member.text.substr(0, 64)) + ")";
  }
  findings->Error("config-wrong-type", {}, std::string(expected), found,
                  "config.json's \"" + member.key + "\" must be " + std::string(expected) +
                      " (at byte " + std::to_string(member.offset) + ")",
                  std::string(kConfigFile));
}

// ReadString returns a string member's text; a member of another kind (null excepted) is
// a config-wrong-type error.
std::optional<std::string> ReadString(const Config& config, std::string_view key,
                                      Findings* findings) {
  const ConfigMember* member = config.Find(key);
  if (member == nullptr || member->kind == TokenKind::kNull) return std::nullopt;
  if (member->kind != TokenKind::kString) {
    WrongType(*member, "a string", findings);
    return std::nullopt;
  }
  return member->text;
}

// ReadCount parses a kCount member. Returns false (after a finding) when it is present but
// not a non-negative integer that fits in 64 bits.
bool ReadCount(const ConfigMember& member, uint64_t* out, Findings* findings) {
  const std::string& text = member.text;
  bool digits = member.kind == TokenKind::kNumber && !text.empty();
  for (char c : text) digits = digits && c >= '0' && c <= '9';
  if (!digits) {
    const bool negative_integer =
        member.kind == TokenKind::kNumber && text.size() > 1 && text[0] == '-' &&
        std::all_of(text.begin() + 1, text.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (negative_integer) {
      findings->Error("config-value", {}, "a non-negative integer", text.substr(0, 64),
                      "config.json's \"" + member.key + "\" is negative",
                      std::string(kConfigFile));
    } else {
      WrongType(member, "a non-negative integer", findings);
    }
    return false;
  }
  uint64_t value = 0;
  for (char c : text) {
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (value > (UINT64_MAX - digit) / 10) {
      findings->Error("config-value", {}, "at most 18446744073709551615", text.substr(0, 64),
                      "config.json's \"" + member.key + "\" does not fit in 64 bits",
                      std::string(kConfigFile));
      return false;
    }
    value = value * 10 + digit;
  }
  *out = value;
  return true;
}

bool Contains(std::span<const std::string_view> names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// DetectFamily picks the table: model_type, else tl_arch, else architectures[0].
const Family* DetectFamily(const Config& config, Findings* findings) {
  const std::optional<std::string> model_type = ReadString(config, "model_type", findings);
  const std::optional<std::string> tl_arch = ReadString(config, "tl_arch", findings);
  const ConfigMember* architectures = config.Find("architectures");
  if (architectures != nullptr && architectures->kind != TokenKind::kBeginArray &&
      architectures->kind != TokenKind::kNull) {
    WrongType(*architectures, "an array of strings", findings);
    architectures = nullptr;
  }
  const std::optional<std::string>& type = model_type ? model_type : tl_arch;
  if (type) {
    for (const Family& family : Families()) {
      if (Contains(family.model_types, *type)) return &family;
    }
    findings->Warning("unknown-family", {}, {}, PrintableText(type->substr(0, 64)),
                      "no family table for this model type: only the format contracts are "
                      "checked",
                      std::string(kConfigFile));
    return nullptr;
  }
  if (architectures != nullptr && architectures->array_has_string) {
    for (const Family& family : Families()) {
      if (Contains(family.architectures, architectures->array_first_string)) return &family;
    }
    findings->Warning("unknown-family", {}, {},
                      PrintableText(architectures->array_first_string.substr(0, 64)),
                      "no family table for this architecture: only the format contracts are "
                      "checked",
                      std::string(kConfigFile));
    return nullptr;
  }
  findings->Warning("unknown-family", {}, "model_type, tl_arch or architectures", {},
                    "config.json names no model type: only the format contracts are checked",
                    std::string(kConfigFile));
  return nullptr;
}

std::optional<Dtype> TorchDtype(std::string_view name) {
  if (name == "float32" || name == "float") return Dtype::kF32;
  if (name == "float16" || name == "half") return Dtype::kF16;
  if (name == "bfloat16") return Dtype::kBF16;
  if (name == "float64" || name == "double") return Dtype::kF64;
  return std::nullopt;  // "auto", quantized types...: nothing to compare against
}

// EvaluateFields fills spec->counts and spec->bools in table order.
void EvaluateFields(const Config& config, Findings* findings, ModelSpec* spec) {
  const Family& family = *spec->family;
  for (const FieldSpec& field : family.fields) {
    const ConfigMember* member = config.Find(field.name);
    if (member != nullptr && member->kind == TokenKind::kNull) member = nullptr;
    FieldValue value{field.name};
    if (field.type == FieldType::kBool) {
      if (member != nullptr) {
        if (member->kind == TokenKind::kTrue || member->kind == TokenKind::kFalse) {
          value.value = member->kind == TokenKind::kTrue;
          value.known = true;
        } else {
          WrongType(*member, "true or false", findings);
        }
      } else {
        value.value = field.fallback == "true";
        value.known = true;
      }
      // An unusable bool acts as its default, so that the tensor rules still run.
      if (!value.known) value.value = field.fallback == "true";
      spec->bools.push_back(value);
      continue;
    }
    if (member != nullptr) {
      value.known = ReadCount(*member, &value.value, findings);
    } else if (field.fallback.empty()) {
      findings->Error("config-missing-field", {}, std::string(field.name), {},
                      Concat({"config.json lacks \"", field.name, "\", which the ",
                              family.name, " family requires"}),
                      std::string(kConfigFile));
    } else {
      std::string detail;
      const FormulaError error = EvaluateDim(field.fallback, spec->counts, &value.value, &detail);
      value.known = error == FormulaError::kOk;
      if (error != FormulaError::kOk && error != FormulaError::kUnknownValue) {
        findings->Error("config-value", {}, {}, {},
                        Concat({"\"", field.name, "\" is absent and its default ",
                                field.fallback, " has no value: ", detail}),
                        std::string(kConfigFile));
      }
    }
    spec->counts.push_back(value);
  }
}

}  // namespace

bool ModelSpec::RowExpected(const TensorRow& row) const {
  if (row.when == When::kAlways) return true;
  if (row.when == When::kOptional) return false;
  for (const FieldValue& field : bools) {
    if (field.name == row.when_field) return (field.value != 0) == (row.when == When::kIfTrue);
  }
  return false;
}

void BuildModelSpec(const Config* config, Findings* findings, ModelSpec* out) {
  if (config == nullptr) return;
  out->has_config = true;
  out->course = config->Find("tl_arch") != nullptr || config->Find("tl_tokenizer") != nullptr;
  out->tl_tokenizer = ReadString(*config, "tl_tokenizer", findings);
  // transformers writes "torch_dtype"; versions from 4.56 on write "dtype" instead.
  std::optional<std::string> dtype = ReadString(*config, "torch_dtype", findings);
  if (!dtype) dtype = ReadString(*config, "dtype", findings);
  if (dtype) {
    out->torch_dtype = TorchDtype(*dtype);
    out->torch_dtype_text = *dtype;
  }
  out->family = DetectFamily(*config, findings);
  if (out->family == nullptr) return;
  EvaluateFields(*config, findings, out);
  for (const FieldValue& field : out->counts) {
    if (field.name == out->family->layers_field) {
      out->layers_known = field.known;
      out->num_layers = field.value;
    }
  }
  // Constraints, then row shapes. A failing formula is reported once per distinct cause,
  // not once per row.
  std::set<std::string> reported;
  for (std::string_view constraint : out->family->constraints) {
    uint64_t value = 0;
    std::string detail;
    const FormulaError error = EvaluateDim(constraint, out->counts, &value, &detail);
    if (error != FormulaError::kOk && error != FormulaError::kUnknownValue &&
        reported.insert(detail).second) {
      findings->Error("config-value", {}, std::string(constraint) + " a whole number", {},
                      "the config's fields do not fit together: " + detail,
                      std::string(kConfigFile));
    }
  }
  for (const TensorRow& row : out->family->rows) {
    RowShape shape;
    std::string detail;
    const FormulaError error = EvaluateShape(row.shape, out->counts, &shape.dims, &detail);
    shape.known = error == FormulaError::kOk;
    if (shape.known) shape.formula = DescribeShape(row.shape, out->counts);
    if (error != FormulaError::kOk && error != FormulaError::kUnknownValue &&
        reported.insert(detail).second) {
      findings->Error("config-value", std::string(row.pattern), std::string(row.shape), {},
                      "the config gives this tensor no valid shape: " +
                          (detail.empty() ? std::string("malformed table formula") : detail),
                      std::string(kConfigFile));
    }
    out->row_shapes.push_back(std::move(shape));
  }
}

}  // namespace stguard::lint
