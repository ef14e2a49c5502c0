// SPDX-License-Identifier: Apache-2.0
// A strict reader for the one dict literal numpy writes as a .npy header:
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// numpy reads it with ast.literal_eval, which accepts any Python literal (nested
// containers, sets, bytes, arithmetic on numbers, string concatenation). This parser
// accepts only what numpy writes, so it needs no evaluator and no recursion: the only
// container inside the dict is one flat tuple of integers.
#include "npy/dict_literal.h"

#include <optional>

#include "base/checked_math.h"

namespace stguard::npy {

namespace {

bool IsIdentifierChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '_';
}

// Parser walks the header once; every method either advances past what it read or
// records the first error (and the caller stops).
class Parser {
 public:
  Parser(std::string_view text, uint64_t base) : text_(text), base_(base) {}

  Result<std::vector<DictEntry>> ParseDict();

 private:
  Error Fail(const char* message, std::string context = {}) const {
    return Error{ErrorCode::kNpyHeaderSyntax, base_ + pos_, message, std::move(context), {}};
  }
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return AtEnd() ? '\0' : text_[pos_]; }
  // SkipSpaces skips ' ' only: numpy writes no other blank inside the header.
  void SkipSpaces() {
    while (!AtEnd() && text_[pos_] == ' ') ++pos_;
  }
  bool Consume(char c) {
    if (Peek() != c || AtEnd()) return false;
    ++pos_;
    return true;
  }
  Error ParseString(std::string* out);
  Error ParseValue(DictEntry* entry);
  Error ParseWord(DictEntry* entry);
  Error ParseInteger(uint64_t* out);
  Error ParseTuple(std::vector<uint64_t>* out);
  Error ParseEnd();

  std::string_view text_;
  uint64_t base_;
  size_t pos_ = 0;
};

// ParseString reads a quoted string without escapes: numpy's descr and keys never need
// one, and refusing backslashes keeps a reader from having to interpret them.
Error Parser::ParseString(std::string* out) {
  const char quote = Peek();
  if (quote != '\'' && quote != '"') {
    return Fail("expected a string in single or double quotes");
  }
  ++pos_;
  const size_t start = pos_;
  while (!AtEnd() && text_[pos_] != quote) {
    const auto c = static_cast<unsigned char>(text_[pos_]);
    if (c == '\\') return Fail("a backslash in a header string (escapes are refused)");
    if (c < 0x20 || c >= 0x7f) return Fail("a control or non-ASCII byte in a header string");
    ++pos_;
  }
  if (AtEnd()) return Fail("the header ends inside a string");
  *out = std::string(text_.substr(start, pos_ - start));
  ++pos_;  // the closing quote
  return {};
}

// ParseInteger reads a decimal integer as Python 3 writes it: no sign, no leading zeros,
// no underscores, and no suffix ("2L" is Python 2; numpy rewrites it, stguard refuses it).
Error Parser::ParseInteger(uint64_t* out) {
  const size_t start = pos_;
  while (!AtEnd() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
  const std::string_view digits = text_.substr(start, pos_ - start);
  if (digits.empty()) {
    pos_ = start;
    if (Peek() == '-') return Fail("a negative dimension in shape");
    return Fail("expected a non-negative integer in shape");
  }
  if (digits.size() > 1 && digits[0] == '0') {
    pos_ = start;
    return Fail("an integer with a leading zero");
  }
  if (!AtEnd() && IsIdentifierChar(text_[pos_])) {
    if (text_[pos_] == 'L' || text_[pos_] == 'l') {
      return Fail("a Python 2 long integer suffix ('2L')");
    }
    return Fail("an integer followed by a letter, '_' or a digit group");
  }
  if (Peek() == '.') return Fail("a non-integer number in shape");
  if (!ParseUint64(digits, out)) {
    pos_ = start;
    return Fail("a dimension that does not fit in 64 bits", std::string(digits));
  }
  return {};
}

// ParseTuple reads "()", "(n,)" or "(n, m, ...)" with an optional trailing comma. "(n)" is
// an integer in Python, not a tuple, and is refused.
Error Parser::ParseTuple(std::vector<uint64_t>* out) {
  ++pos_;  // '('
  SkipSpaces();
  if (Consume(')')) return {};
  while (true) {
    uint64_t value = 0;
    if (Error e = ParseInteger(&value); !e.ok()) return e;
    out->push_back(value);
    SkipSpaces();
    if (Consume(')')) {
      if (out->size() == 1) {
        --pos_;
        return Fail("'(n)' is an integer, not a tuple: a 1-d shape is written '(n,)'");
      }
      return {};
    }
    if (!Consume(',')) return Fail("expected ',' or ')' in shape");
    SkipSpaces();
    if (Consume(')')) return {};
  }
}

// ParseWord reads True or False, the only names allowed. Any other name (a call, an
// attribute, None, a variable) is refused before anything could look it up.
Error Parser::ParseWord(DictEntry* entry) {
  const size_t start = pos_;
  while (!AtEnd() && IsIdentifierChar(text_[pos_])) ++pos_;
  const std::string_view word = text_.substr(start, pos_ - start);
  if (word == "True" || word == "False") {
    entry->kind = LiteralKind::kBool;
    entry->flag = word == "True";
    return {};
  }
  pos_ = start;
  return Fail("a name other than True or False in the header (nothing is evaluated)",
              std::string(word.substr(0, 64)));
}

Error Parser::ParseValue(DictEntry* entry) {
  entry->value_offset = base_ + pos_;
  const char c = Peek();
  if (c == '\'' || c == '"') {
    entry->kind = LiteralKind::kString;
    return ParseString(&entry->text);
  }
  if (c == '(') {
    entry->kind = LiteralKind::kIntTuple;
    return ParseTuple(&entry->integers);
  }
  if (IsIdentifierChar(c) && !(c >= '0' && c <= '9')) return ParseWord(entry);
  if (c == '[' || c == '{') {
    return Fail("a list or dict inside the header (structured dtypes are refused)");
  }
  return Fail("expected a string, True, False or a tuple of integers");
}

// ParseEnd reads the padding: spaces, then '\n' as the header's last byte.
Error Parser::ParseEnd() {
  SkipSpaces();
  if (AtEnd()) return Fail("the header does not end with '\\n'");
  if (text_[pos_] != '\n') return Fail("something other than spaces after the header's '}'");
  if (pos_ + 1 != text_.size()) {
    ++pos_;
    return Fail("bytes after the header's final '\\n'");
  }
  return {};
}

Result<std::vector<DictEntry>> Parser::ParseDict() {
  std::vector<DictEntry> entries;
  if (!Consume('{')) return Fail("the header does not begin with '{'");
  SkipSpaces();
  while (!Consume('}')) {
    DictEntry entry;
    entry.key_offset = base_ + pos_;
    if (Error e = ParseString(&entry.key); !e.ok()) return e;
    SkipSpaces();
    if (!Consume(':')) return Fail("expected ':' after a key");
    SkipSpaces();
    if (Error e = ParseValue(&entry); !e.ok()) return e;
    entries.push_back(std::move(entry));
    SkipSpaces();
    if (Consume('}')) break;
    if (!Consume(',')) return Fail("expected ',' or '}' after a value");
    SkipSpaces();
  }
  if (Error e = ParseEnd(); !e.ok()) return e;
  return entries;
}

}  // namespace

Result<std::vector<DictEntry>> ParseDictLiteral(std::string_view header, uint64_t base) {
  return Parser(header, base).ParseDict();
}

}  // namespace stguard::npy
