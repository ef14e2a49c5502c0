// SPDX-License-Identifier: Apache-2.0
// mutator_json.cc: JSON value tree, parser and styled writer for the mutators. See
// mutator_json.h.
#include "mutator_json.h"
#include "fuzz_support.h"

namespace stguard_fuzz::mutator {
namespace {

constexpr int kMaxDepth = 32;

// Parser is a recursive-descent JSON parser over [p, end); depth is bounded by kMaxDepth.
struct Parser {
  const char* p;
  const char* end;

  void SkipSpace() {
    while (p != end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) ++p;
  }
  bool Eat(char c) {
    if (p == end || *p != c) return false;
    ++p;
    return true;
  }
  bool Literal(std::string_view word) {
    if (static_cast<size_t>(end - p) < word.size() || std::string_view(p, word.size()) != word) {
      return false;
    }
    p += word.size();
    return true;
  }

  bool Hex4(uint32_t* out) {
    if (end - p < 4) return false;
    uint32_t value = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = *p++;
      value <<= 4;
      if (c >= '0' && c <= '9') value |= static_cast<uint32_t>(c - '0');
      else if (c >= 'a' && c <= 'f') value |= static_cast<uint32_t>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') value |= static_cast<uint32_t>(c - 'A' + 10);
      else return false;
    }
    *out = value;
    return true;
  }

  bool String(std::string* out);
  bool Number(std::string* out);
  bool Value(JsonValue* out, int depth);
};

bool Parser::String(std::string* out) {
  if (!Eat('"')) return false;
  out->clear();
  while (p != end) {
    const char c = *p++;
    if (c == '"') return true;
    if (static_cast<unsigned char>(c) < 0x20) return false;
    if (c != '\\') {
      out->push_back(c);  // UTF-8 is not checked: the checkers do that
      continue;
    }
    if (p == end) return false;
    switch (*p++) {
      case '"': out->push_back('"'); break;
      case '\\': out->push_back('\\'); break;
      case '/': out->push_back('/'); break;
      case 'b': out->push_back('\b'); break;
      case 'f': out->push_back('\f'); break;
      case 'n': out->push_back('\n'); break;
      case 'r': out->push_back('\r'); break;
      case 't': out->push_back('\t'); break;
      case 'u': {
        uint32_t cp = 0;
        if (!Hex4(&cp)) return false;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          uint32_t low = 0;
          if (!Literal("\\u") || !Hex4(&low) || low < 0xDC00 || low > 0xDFFF) return false;
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          return false;
        }
        AppendUtf8(cp, out);
        break;
      }
      default: return false;
    }
  }
  return false;
}

bool Parser::Number(std::string* out) {
  const char* start = p;
  Eat('-');
  auto digits = [this] {
    const char* first = p;
    while (p != end && *p >= '0' && *p <= '9') ++p;
    return p != first;
  };
  if (!digits()) return false;
  if (Eat('.') && !digits()) return false;
  if (p != end && (*p == 'e' || *p == 'E')) {
    ++p;
    if (!Eat('+')) Eat('-');
    if (!digits()) return false;
  }
  out->assign(start, p);
  return true;
}

bool Parser::Value(JsonValue* out, int depth) {
  SkipSpace();
  if (p == end) return false;
  switch (*p) {
    case '{': {
      if (depth >= kMaxDepth) return false;
      ++p;
      *out = JsonValue::Object();
      SkipSpace();
      if (Eat('}')) return true;
      do {
        SkipSpace();
        std::string key;
        if (!String(&key)) return false;
        SkipSpace();
        if (!Eat(':')) return false;
        JsonValue value;
        if (!Value(&value, depth + 1)) return false;
        out->members.emplace_back(std::move(key), std::move(value));
        SkipSpace();
      } while (Eat(','));
      return Eat('}');
    }
    case '[': {
      if (depth >= kMaxDepth) return false;
      ++p;
      *out = JsonValue::Array();
      SkipSpace();
      if (Eat(']')) return true;
      do {
        JsonValue item;
        if (!Value(&item, depth + 1)) return false;
        out->items.push_back(std::move(item));
        SkipSpace();
      } while (Eat(','));
      return Eat(']');
    }
    case '"':
      out->kind = JsonValue::Kind::kString;
      return String(&out->text);
    case 't':
    case 'f':
      out->kind = JsonValue::Kind::kBool;
      out->text = *p == 't' ? "true" : "false";
      return Literal(out->text);
    case 'n':
      out->kind = JsonValue::Kind::kNull;
      return Literal("null");
    default:
      out->kind = JsonValue::Kind::kNumber;
      return Number(&out->text);
  }
}

// Space between tokens, as the style says.
void WriteSpace(const JsonStyle& style, Rng& rng, int depth, bool newline, std::string* out) {
  switch (style.space) {
    case JsonStyle::Space::kCompact:
      return;
    case JsonStyle::Space::kPretty:
      if (newline) {
        out->push_back('\n');
        out->append(static_cast<size_t>(2 * depth), ' ');
      }
      return;
    case JsonStyle::Space::kRandom: {
      static constexpr const char* kSpaces[] = {"", "", "", " ", "\n", "\t", "\r\n", "  \t "};
      out->append(kSpaces[rng.Below(std::size(kSpaces))]);
      return;
    }
  }
}

void WriteHex4(uint32_t value, bool upper, std::string* out) {
  const char* digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  out->append("\\u");
  for (int shift = 12; shift >= 0; shift -= 4) out->push_back(digits[(value >> shift) & 0xF]);
}

// DecodeUtf8 reads one code point at text[*i]; on a malformed sequence it returns false
// and leaves *i alone (the byte is then copied raw).
bool DecodeUtf8(std::string_view text, size_t* i, uint32_t* cp) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(*i);
  size_t length = 0;
  if (lead < 0x80) {
    *cp = lead;
    ++*i;
    return true;
  }
  if (lead >= 0xC2 && lead <= 0xDF) length = 2;
  else if (lead >= 0xE0 && lead <= 0xEF) length = 3;
  else if (lead >= 0xF0 && lead <= 0xF4) length = 4;
  else return false;
  if (*i + length > text.size()) return false;
  uint32_t value = lead & (0x7F >> length);
  for (size_t k = 1; k < length; ++k) {
    if ((byte(*i + k) & 0xC0) != 0x80) return false;
    value = (value << 6) | (byte(*i + k) & 0x3F);
  }
  if ((length == 3 && (value < 0x800 || (value >= 0xD800 && value <= 0xDFFF))) ||
      (length == 4 && (value < 0x10000 || value > 0x10FFFF))) {
    return false;
  }
  *cp = value;
  *i += length;
  return true;
}

}  // namespace

JsonValue JsonValue::String(std::string value) {
  JsonValue v;
  v.kind = Kind::kString;
  v.text = std::move(value);
  return v;
}

JsonValue::JsonValue() = default;

JsonValue JsonValue::Object() {
  JsonValue v;
  v.kind = Kind::kObject;
  return v;
}

JsonValue JsonValue::Array() {
  JsonValue v;
  v.kind = Kind::kArray;
  return v;
}

JsonValue JsonValue::Number(uint64_t value) {
  JsonValue v;
  v.kind = Kind::kNumber;
  v.text = std::to_string(value);
  return v;
}

const JsonValue* JsonValue::Find(std::string_view key) const {
  for (const auto& [name, value] : members) {
    if (name == key) return &value;
  }
  return nullptr;
}

bool ParseJson(std::string_view text, JsonValue* out) {
  Parser parser{text.data(), text.data() + text.size()};
  if (!parser.Value(out, 0)) return false;
  parser.SkipSpace();
  return parser.p == parser.end;
}

JsonStyle RandomStyle(Rng& rng) {
  JsonStyle style;
  style.space = static_cast<JsonStyle::Space>(rng.Below(3));
  style.escape_one_in = rng.OneIn(2) ? 0 : 1 + rng.Below(8);
  style.upper_hex = rng.OneIn(2);
  style.break_one_in = rng.OneIn(16) ? 1 + rng.Below(4) : 0;
  return style;
}

void WriteJsonString(std::string_view value, const JsonStyle& style, Rng& rng, std::string* out) {
  out->push_back('"');
  const bool broken = style.break_one_in != 0 && rng.OneIn(style.break_one_in);
  const size_t break_at = broken ? rng.Below(value.size() + 1) : 0;
  const auto escape = [&] { return style.escape_one_in != 0 && rng.OneIn(style.escape_one_in); };
  size_t i = 0;
  while (true) {
    if (broken && i >= break_at) {
      static constexpr const char* kErrors[] = {"\x01", "\\ud800", "\\udc00x", "\\x", "\\u12",
                                                "\x7f", "\xc0\x80", "\xed\xa0\x80"};
      out->append(kErrors[rng.Below(std::size(kErrors))]);  // \x7f is fine: a control check
    }
    if (i >= value.size()) break;
    uint32_t cp = 0;
    if (!DecodeUtf8(value, &i, &cp)) {
      out->push_back(value[i++]);  // not UTF-8: copied raw, for the checkers to refuse
      continue;
    }
    const bool want_escape = escape();
    switch (cp) {
      case '"': out->append(want_escape ? "\\u0022" : "\\\""); continue;
      case '\\': out->append(want_escape ? "\\u005c" : "\\\\"); continue;
      case '/': out->append(want_escape ? (rng.OneIn(2) ? "\\/" : "\\u002f") : "/"); continue;
      case '\b': out->append(want_escape ? "\\u0008" : "\\b"); continue;
      case '\f': out->append(want_escape ? "\\u000c" : "\\f"); continue;
      case '\n': out->append(want_escape ? "\\u000a" : "\\n"); continue;
      case '\r': out->append(want_escape ? "\\u000d" : "\\r"); continue;
      case '\t': out->append(want_escape ? "\\u0009" : "\\t"); continue;
      default: break;
    }
    if (cp < 0x20) {
      WriteHex4(cp, style.upper_hex, out);
    } else if (!want_escape) {
      AppendUtf8(cp, out);
    } else if (cp < 0x10000) {
      WriteHex4(cp, style.upper_hex, out);
    } else {
      const uint32_t v = cp - 0x10000;
      WriteHex4(0xD800 + (v >> 10), style.upper_hex, out);
      WriteHex4(0xDC00 + (v & 0x3FF), style.upper_hex, out);
    }
  }
  out->push_back('"');
}

namespace {

void Write(const JsonValue& value, const JsonStyle& style, Rng& rng, int depth, std::string* out) {
  switch (value.kind) {
    case JsonValue::Kind::kNull: out->append("null"); return;
    case JsonValue::Kind::kBool:
    case JsonValue::Kind::kNumber: out->append(value.text); return;
    case JsonValue::Kind::kString: WriteJsonString(value.text, style, rng, out); return;
    case JsonValue::Kind::kArray:
      out->push_back('[');
      for (size_t i = 0; i < value.items.size(); ++i) {
        if (i != 0) out->push_back(',');
        WriteSpace(style, rng, depth + 1, false, out);
        Write(value.items[i], style, rng, depth + 1, out);
        WriteSpace(style, rng, depth + 1, false, out);
      }
      out->push_back(']');
      return;
    case JsonValue::Kind::kObject:
      out->push_back('{');
      for (size_t i = 0; i < value.members.size(); ++i) {
        if (i != 0) out->push_back(',');
        WriteSpace(style, rng, depth + 1, true, out);
        WriteJsonString(value.members[i].first, style, rng, out);
        WriteSpace(style, rng, depth + 1, false, out);
        out->push_back(':');
        if (style.space == JsonStyle::Space::kPretty) out->push_back(' ');
        WriteSpace(style, rng, depth + 1, false, out);
        Write(value.members[i].second, style, rng, depth + 1, out);
      }
      if (!value.members.empty()) WriteSpace(style, rng, depth, true, out);
      out->push_back('}');
      return;
  }
}

}  // namespace

void WriteJson(const JsonValue& value, const JsonStyle& style, Rng& rng, std::string* out) {
  Write(value, style, rng, 0, out);
}

std::string RandomName(Rng& rng) {
  using namespace std::string_view_literals;
  static constexpr std::string_view kParts[] = {
      "model", "layers", "weight", "bias", "embed_tokens", "lm_head", "attn", "q_proj",
      "norm", "0", "1", "17", "é", "名前", "Ωmega", "😀", "a\"b", "back\\slash", "a/b",
      "tab\there", "new\nline", "nul\0in"sv, "\x1f", "\x7f",
      "__metadata__", " ", "ǅ", "\xef\xbb\xbf", "𝔁"};
  std::string name;
  switch (rng.Below(8)) {
    case 0:
      return "";
    case 1: {  // random code points of every UTF-8 length
      const size_t length = 1 + rng.Below(6);
      for (size_t i = 0; i < length; ++i) {
        static constexpr uint32_t kRanges[][2] = {
            {0, 0x1F}, {0x20, 0x7E}, {0x80, 0x7FF}, {0x800, 0xD7FF}, {0xE000, 0xFFFF},
            {0x10000, 0x10FFFF}};
        const auto& range = kRanges[rng.Below(std::size(kRanges))];
        AppendUtf8(range[0] + static_cast<uint32_t>(rng.Below(range[1] - range[0] + 1)), &name);
      }
      return name;
    }
    default: {
      const size_t parts = 1 + rng.Below(4);
      for (size_t i = 0; i < parts; ++i) {
        if (i != 0) name.push_back('.');
        name.append(kParts[rng.Below(std::size(kParts))]);
      }
      return name;
    }
  }
}

}  // namespace stguard_fuzz::mutator
