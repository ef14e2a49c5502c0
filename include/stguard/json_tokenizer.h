// SPDX-License-Identifier: Apache-2.0
// stguard/json_tokenizer.h: a strict, streaming, non-recursive JSON tokenizer (RFC 8259).
//
// Policy, for every choice the RFC leaves open:
// - Input must be UTF-8: no overlong forms, no encoded surrogates (U+D800..U+DFFF), nothing
//   above U+10FFFF, no truncated or stray continuation bytes. A byte-order mark is rejected.
// - Strings: no raw U+0000..U+001F; only the escapes \" \\ \/ \b \f \n \r \t and \uXXXX;
//   \u surrogates must form a high-then-low pair; lone or reversed surrogates are errors.
// - Numbers follow the RFC grammar exactly (no leading zeros, '+', NaN, Infinity, '.5',
//   '1.'). Any magnitude is accepted: the tokenizer never converts numbers.
// - Literals are exactly true, false, null.
// - Any value may stand at the top level. Whitespace (space, tab, LF, CR) may surround it;
//   anything else after it, NUL bytes included, is an error.
// - Duplicate keys are not the tokenizer's concern: the schema checker rejects them.
// - Nesting deeper than max_depth is an error. Depth is a counter and a bit stack.
// - Time is O(input size); memory is O(max_depth / 8) beyond the input.
#ifndef STGUARD_JSON_TOKENIZER_H_
#define STGUARD_JSON_TOKENIZER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "stguard/error.h"
#include "stguard/export.h"
#include "stguard/options.h"

namespace stguard {

enum class TokenKind : uint8_t {
  kBeginObject,  // {
  kEndObject,    // }
  kBeginArray,   // [
  kEndArray,     // ]
  kKey,          // a string in key position; the ':' after it has been consumed
  kString,       // a string in value position
  kNumber,
  kTrue,
  kFalse,
  kNull,
  kEndOfInput,   // the top-level value is complete and only whitespace followed
};

struct STGUARD_API Token {
  TokenKind kind = TokenKind::kEndOfInput;
  uint64_t offset = 0;    // absolute offset of the token's first byte (the quote, for strings)
  std::string_view text;  // strings: the bytes between the quotes, still escaped;
                          // numbers: the number's text; other kinds: the token's bytes
  bool has_escapes = false;  // strings: text contains a backslash
};

// JsonTokenizer reads one JSON text token by token, checking the grammar as it goes, so a
// consumer sees only well-formed prefixes. It never allocates beyond its depth bit stack.
class STGUARD_API JsonTokenizer {
 public:
  // `input` must outlive the tokenizer. `base_offset` is added to every reported offset so
  // that errors point into the enclosing file (8 for a safetensors header).
  explicit JsonTokenizer(std::string_view input, uint64_t base_offset = 0,
                         uint32_t max_depth = kDefaultMaxDepth);

  // Next reads the next token into *out. Returns false on error; error() then says what
  // and where, and every later call returns false. After a kEndOfInput token, the input
  // was exactly one JSON text.
  bool Next(Token* out);

  const Error& error() const { return error_; }

  // position is the index in the input of the next byte the tokenizer will read.
  size_t position() const { return static_cast<size_t>(pos_ - begin_); }

  // ResumeAfterValue is for schema-specific fast paths that read some input themselves.
  // The caller promises that the bytes from position() up to `position` are exactly what
  // Next() would have consumed to return one or more complete values (with their keys,
  // separators and whitespace) at the current depth, ending after a value. The tokenizer
  // continues from there as if it had read them.
  void ResumeAfterValue(size_t position);
  // depth is the number of containers currently open.
  uint32_t depth() const { return depth_; }

 private:
  // The helpers below are the grammar, one production each; src/json_tokenizer.cc
  // explains the states. Each returns false after calling Fail().
  bool ReadValue(Token* out);
  bool ReadKey(Token* out);
  bool ScanString(Token* out);
  bool ReadNumber(Token* out);
  bool ReadLiteral(std::string_view word, TokenKind kind, Token* out);
  bool OpenContainer(bool is_object, Token* out);
  bool CloseContainer(Token* out);
  bool FinishTopLevel(Token* out);
  bool FailAtUnexpectedValueByte();
  bool ScanEscape(const char** pos);
  bool ReadHex4(const char* backslash, uint32_t* out_unit);
  void SkipWhitespace();
  bool InObject() const;
  void Emit(TokenKind kind, const char* start, size_t len, Token* out);
  // Fail records the first error (code, absolute offset of `at`, static message), makes
  // every later Next() return false, and returns false. Every error passes through here.
  bool Fail(ErrorCode code, const char* at, const char* message);

  const char* begin_;
  const char* pos_;
  const char* end_;
  uint64_t base_offset_;
  uint32_t max_depth_;
  uint32_t depth_ = 0;
  std::vector<uint64_t> is_object_bits_;  // bit d: container at depth d+1 is an object
  uint8_t state_ = 0;                     // see State in json_tokenizer.cc
  Error error_;
};

// UnescapeJsonString decodes the text of a string token that JsonTokenizer accepted and
// appends the UTF-8 result to *out. Behaviour on text the tokenizer did not accept is
// unspecified but memory-safe.
STGUARD_API void UnescapeJsonString(std::string_view text, std::string* out);

// TokenText returns the unescaped text of a string or key token: a view of the input when
// the token has no escapes (the common case, no copy), else the decoded text, placed in
// *scratch and valid until *scratch changes.
STGUARD_API std::string_view TokenText(const Token& token, std::string* scratch);

// ValidateJson tokenizes all of `input` as one JSON text. Returns an Error whose code is
// kOk when the input is valid.
STGUARD_API Error ValidateJson(std::string_view input, uint32_t max_depth = kDefaultMaxDepth);

}  // namespace stguard

#endif  // STGUARD_JSON_TOKENIZER_H_
