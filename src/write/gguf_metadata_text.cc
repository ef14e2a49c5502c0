// SPDX-License-Identifier: Apache-2.0
// GgufMetadataText: a GGUF metadata value as the text of one __metadata__ entry. Strings
// stay as they are; every other value becomes compact JSON that keeps its GGUF type, so
// that {"u32":4096} and {"i64":4096} stay apart and a reader can rebuild the value.
#include "stguard/gguf_convert.h"

#include <string>

#include "stguard/json_escape.h"

namespace stguard {
namespace {

using gguf::Value;
using gguf::ValueType;

// AppendJsonNumber appends a scalar number or bool; floats as AppendJsonFloat writes them
// (the shortest decimal that reads back as the same f32 or f64; "nan", "inf", "-inf").
void AppendJsonNumber(const Value& value, std::string* out) {
  if (auto u = value.AsUnsigned()) {
    *out += std::to_string(*u);
  } else if (auto s = value.AsSigned()) {
    *out += std::to_string(*s);
  } else if (auto d = value.AsDouble()) {
    AppendJsonFloat(*d, value.type == ValueType::kF32, out);
  } else if (auto b = value.AsBool()) {
    *out += *b ? "true" : "false";
  }
}

void AppendJsonArray(const Value& value, std::string* out) {
  *out += '[';
  if (value.element_type == ValueType::kString) {
    value.StringElements([out](uint64_t i, std::string_view text) {
      if (i > 0) *out += ',';
      AppendJsonString(text, out);  // validation proved every string UTF-8
      return true;
    });
  } else {
    for (uint64_t i = 0; i < value.count; ++i) {
      if (i > 0) *out += ',';
      AppendJsonNumber(value.Element(i), out);
    }
  }
  *out += ']';
}

}  // namespace

std::string GgufMetadataText(const Value& value) {
  if (value.type == ValueType::kString) return std::string(*value.AsString());
  const bool array = value.type == ValueType::kArray;
  std::string out = "{\"";
  out += gguf::ValueTypeName(array ? value.element_type : value.type);
  out += "\":";
  if (array) {
    AppendJsonArray(value, &out);
  } else {
    AppendJsonNumber(value, &out);
  }
  out += '}';
  return out;
}

}  // namespace stguard
