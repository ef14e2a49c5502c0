// SPDX-License-Identifier: Apache-2.0
// Writing JSON strings the way the reference writer (serde_json) does, and floats as
// shortest round-trip digits that every JSON reader takes for the same float.
#include "stguard/json_escape.h"

#include <charconv>
#include <cmath>

namespace stguard {
namespace {

// Utf8SequenceLength returns the length of the well-formed UTF-8 sequence at text[i]
// (shortest form, no surrogates, at most U+10FFFF), or 0 for a byte that starts none.
size_t Utf8SequenceLength(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[i + k]); };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return 1;
  size_t len = 0;
  unsigned char second_min = 0x80;
  unsigned char second_max = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    len = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    len = 3;
    if (lead == 0xE0) second_min = 0xA0;  // no overlong forms
    if (lead == 0xED) second_max = 0x9F;  // no surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    len = 4;
    if (lead == 0xF0) second_min = 0x90;
    if (lead == 0xF4) second_max = 0x8F;  // nothing past U+10FFFF
  } else {
    return 0;
  }
  if (text.size() - i < len) return 0;
  if (byte(1) < second_min || byte(1) > second_max) return 0;
  for (size_t k = 2; k < len; ++k) {
    if ((byte(k) & 0xC0) != 0x80) return 0;
  }
  return len;
}

}  // namespace

void AppendJsonString(std::string_view utf8, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  size_t run_start = 0;  // copy unescaped runs in one append
  for (size_t i = 0; i < utf8.size(); ++i) {
    const auto c = static_cast<unsigned char>(utf8[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out->append(utf8, run_start, i - run_start);
    run_start = i + 1;
    switch (c) {
      case '"': out->append("\\\""); break;
      case '\\': out->append("\\\\"); break;
      case '\b': out->append("\\b"); break;
      case '\f': out->append("\\f"); break;
      case '\n': out->append("\\n"); break;
      case '\r': out->append("\\r"); break;
      case '\t': out->append("\\t"); break;
      default:
        out->append("\\u00");
        out->push_back(kHex[c >> 4]);
        out->push_back(kHex[c & 0xF]);
    }
  }
  out->append(utf8, run_start, utf8.size() - run_start);
  out->push_back('"');
}

void AppendJsonText(std::string_view text, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  // Rebuild the text with invalid bytes spelled out, then escape it as JSON. PrintableText
  // would also spell out controls; here JSON's own escapes handle those.
  std::string utf8;
  utf8.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t len = Utf8SequenceLength(text, i);
    if (len == 0) {
      const auto byte = static_cast<unsigned char>(text[i]);
      utf8 += "\\x";
      utf8 += kHex[byte >> 4];
      utf8 += kHex[byte & 0xF];
      ++i;
    } else {
      utf8.append(text, i, len);
      i += len;
    }
  }
  AppendJsonString(utf8, out);
}

std::string FloatText(double value, bool single) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[64];
  const std::to_chars_result result =
      single ? std::to_chars(buffer, buffer + sizeof buffer, static_cast<float>(value))
             : std::to_chars(buffer, buffer + sizeof buffer, value);
  std::string text(buffer, result.ptr);
  // "1" and "-0" read back as integers in Python's json (and -0 as 0): make them floats.
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

void AppendJsonFloat(double value, bool single, std::string* out) {
  const bool number = std::isfinite(value);
  if (!number) *out += '"';
  *out += FloatText(value, single);
  if (!number) *out += '"';
}

}  // namespace stguard
