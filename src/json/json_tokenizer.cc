// SPDX-License-Identifier: Apache-2.0
// json_tokenizer.cc: the strict streaming JSON tokenizer. See the policy block in
// include/stguard/json_tokenizer.h for what is accepted; this file is how.
//
// How it works. The tokenizer is a cursor (pos_) over the input plus a small state machine.
// Next() skips whitespace, looks at the state to know what the grammar allows here, and
// reads exactly one token. Nesting lives in depth_ and a bit stack (one bit per open
// container: 1 = object, 0 = array), so deep input costs memory bits, not call frames.
//
// Where errors point (absolute offsets, base_offset_ + index):
// - the offending byte for a bad token start, a missing ',' ':' or closer, trailing content,
//   a control character, and the bracket that would nest too deep;
// - the backslash for a bad escape, the first "\u" of a surrogate problem;
// - the first byte that breaks Unicode Table 3-7 for bad UTF-8 (the second byte of
//   ED A0 80, the lead byte of a stray continuation or of C0/F5..FF);
// - the first byte of the number or literal for a malformed number or literal;
// - base_offset_ + input size (the end) whenever the input stops before the text is
//   complete, whatever was being read: a string, an escape, a UTF-8 sequence, a number
//   ("1." and "-" at the very end), a literal ("tru"), or an open container. So a
//   truncated document always reports kUnexpectedEnd.
#include "stguard/json_tokenizer.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "base/out_of_memory.h"
#include "json/string_scan.h"
#include "base/utf8.h"

namespace stguard {
namespace {

// State says what the grammar allows at the cursor. It is stored in the uint8_t state_.
enum State : uint8_t {
  kExpectValue = 0,   // the top-level value, or a value after a key's ':'
  kExpectFirstValue,  // just after '[': a value or ']'
  kExpectFirstKey,    // just after '{': a key or '}'
  kAfterValue,        // a value just ended: ',' or the closer; at depth 0, end of input
  kDone,              // kEndOfInput was returned; it is returned again on every call
  kFailed,            // an error was reported; every call returns false
};

constexpr bool IsDigit(char c) { return static_cast<unsigned char>(c - '0') < 10; }

constexpr bool IsAsciiLetter(char c) {
  const char lower = static_cast<char>(c | 0x20);
  return lower >= 'a' && lower <= 'z';
}

// IsTokenGlue says whether `c` would glue onto a number or literal that just ended, as in
// "01", "1.2.3", "0x10", "1e5e", "truex". Such input is one malformed token, so it is
// reported as kInvalidNumber / kInvalidLiteral rather than as the next token being wrong.
constexpr bool IsTokenGlue(char c) {
  return IsDigit(c) || IsAsciiLetter(c) || c == '.' || c == '+' || c == '-' || c == '_';
}

constexpr bool IsJsonWhitespace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

constexpr int HexDigitValue(char c) {
  if (IsDigit(c)) return c - '0';
  const char lower = static_cast<char>(c | 0x20);  // 'A'..'F' -> 'a'..'f'
  if (lower >= 'a' && lower <= 'f') return lower - 'a' + 10;
  return -1;
}

}  // namespace

JsonTokenizer::JsonTokenizer(std::string_view input, uint64_t base_offset, uint32_t max_depth)
    : begin_(input.data()),
      pos_(begin_),
      end_(begin_ + input.size()),
      base_offset_(base_offset),
      max_depth_(max_depth) {
  static_assert(kExpectValue == 0, "state_ starts at 0");
  // Room for kDefaultMaxDepth levels (16 words), so that Next() allocates only for input
  // nested deeper than that, and then once per 64 new levels.
  is_object_bits_.reserve((std::min(max_depth, kDefaultMaxDepth) + 63) / 64);
}

bool JsonTokenizer::Next(Token* out) {
  SkipWhitespace();
  switch (state_) {
    case kExpectValue:
      return ReadValue(out);
    case kExpectFirstValue:
      if (pos_ != end_ && *pos_ == ']') return CloseContainer(out);
      return ReadValue(out);
    case kExpectFirstKey:
      if (pos_ != end_ && *pos_ == '}') return CloseContainer(out);
      return ReadKey(out);
    case kAfterValue: {
      if (depth_ == 0) return FinishTopLevel(out);
      if (pos_ == end_) {
        return Fail(ErrorCode::kUnexpectedEnd, end_, "input ended inside an array or object");
      }
      const bool in_object = InObject();
      if (*pos_ == ',') {
        // A comma is not a token: consume it and read what must follow it.
        ++pos_;
        SkipWhitespace();
        return in_object ? ReadKey(out) : ReadValue(out);
      }
      if (*pos_ == (in_object ? '}' : ']')) return CloseContainer(out);
      return Fail(ErrorCode::kUnexpectedToken, pos_,
                  in_object ? "expected ',' or '}' after an object member"
                            : "expected ',' or ']' after an array element");
    }
    case kDone:
      Emit(TokenKind::kEndOfInput, end_, 0, out);
      return true;
    default:  // kFailed
      return false;
  }
}

// SkipWhitespace moves pos_ past spaces, tabs, LFs and CRs.
void JsonTokenizer::SkipWhitespace() {
  // Fast exit: compact JSON, such as most safetensors headers, has no whitespace at all,
  // and no byte above ' ' is whitespace.
  if (pos_ != end_ && static_cast<unsigned char>(*pos_) > ' ') return;
  while (pos_ != end_ && IsJsonWhitespace(*pos_)) ++pos_;
}

void JsonTokenizer::ResumeAfterValue(size_t position) {
  pos_ = begin_ + position;
  state_ = kAfterValue;
}

bool JsonTokenizer::InObject() const {
  const uint32_t top = depth_ - 1;  // callers ensure depth_ > 0
  return (is_object_bits_[top / 64] >> (top % 64)) & 1;
}

void JsonTokenizer::Emit(TokenKind kind, const char* start, size_t len, Token* out) {
  out->kind = kind;
  out->offset = base_offset_ + static_cast<uint64_t>(start - begin_);
  out->text = std::string_view(start, len);
  out->has_escapes = false;
}

// ReadValue reads any value: the start of a container, a string, a number or a literal.
bool JsonTokenizer::ReadValue(Token* out) {
  if (pos_ == end_) {
    return Fail(ErrorCode::kUnexpectedEnd, end_, "input ended where a value was expected");
  }
  switch (*pos_) {
    case '"':
      if (!ScanString(out)) return false;
      out->kind = TokenKind::kString;
      state_ = kAfterValue;
      return true;
    case '{':
      return OpenContainer(/*is_object=*/true, out);
    case '[':
      return OpenContainer(/*is_object=*/false, out);
    case '-':
    case '0':
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7':
    case '8':
    case '9':
      return ReadNumber(out);
    case 't':
      return ReadLiteral("true", TokenKind::kTrue, out);
    case 'f':
      return ReadLiteral("false", TokenKind::kFalse, out);
    case 'n':
      return ReadLiteral("null", TokenKind::kNull, out);
    default:
      return FailAtUnexpectedValueByte();
  }
}

// FailAtUnexpectedValueByte picks the most helpful error for a byte that starts no value.
bool JsonTokenizer::FailAtUnexpectedValueByte() {
  const char c = *pos_;
  if (IsAsciiLetter(c)) {
    // NaN, Infinity, True, undefined, ...
    return Fail(ErrorCode::kInvalidLiteral, pos_,
                "unknown word; the only literals are true, false and null");
  }
  if (c == '+' || c == '.') {
    return Fail(ErrorCode::kInvalidNumber, pos_, "a number must start with '-' or a digit");
  }
  if (pos_ == begin_ && end_ - begin_ >= 3 && std::memcmp(begin_, "\xEF\xBB\xBF", 3) == 0) {
    return Fail(ErrorCode::kUnexpectedToken, pos_, "a byte-order mark is not allowed");
  }
  return Fail(ErrorCode::kUnexpectedToken, pos_, "expected a value");
}

// ReadKey reads an object key and the ':' after it.
bool JsonTokenizer::ReadKey(Token* out) {
  if (pos_ == end_) {
    return Fail(ErrorCode::kUnexpectedEnd, end_, "input ended where an object key was expected");
  }
  if (*pos_ != '"') {
    return Fail(ErrorCode::kUnexpectedToken, pos_, "expected a string as object key");
  }
  if (!ScanString(out)) return false;
  out->kind = TokenKind::kKey;
  SkipWhitespace();
  if (pos_ == end_) {
    return Fail(ErrorCode::kUnexpectedEnd, end_, "input ended where ':' was expected");
  }
  if (*pos_ != ':') {
    return Fail(ErrorCode::kUnexpectedToken, pos_, "expected ':' after an object key");
  }
  ++pos_;
  state_ = kExpectValue;
  return true;
}

// ScanString reads a string whose opening quote is at pos_, checking escapes and UTF-8,
// and fills in everything but out->kind. pos_ ends after the closing quote.
bool JsonTokenizer::ScanString(Token* out) {
  const char* const quote = pos_;
  const char* p = quote + 1;
  bool has_escapes = false;
  for (;;) {
    p = FindStringSpecialByte(p, end_);
    if (p == end_) return Fail(ErrorCode::kUnexpectedEnd, end_, "input ended inside a string");
    const unsigned char c = static_cast<unsigned char>(*p);
    if (c == '"') break;
    if (c == '\\') {
      has_escapes = true;
      if (!ScanEscape(&p)) return false;
    } else if (c < 0x20) {
      return Fail(ErrorCode::kControlCharacter, p,
                  "raw control character in a string; it must be escaped");
    } else if (c >= 0x80) {
      const auto* u = reinterpret_cast<const unsigned char*>(p);
      const Utf8Status status = CheckUtf8Sequence(&u, reinterpret_cast<const unsigned char*>(end_));
      p = reinterpret_cast<const char*>(u);
      if (status == Utf8Status::kInvalid) {
        return Fail(ErrorCode::kInvalidUtf8, p, "invalid UTF-8 in a string");
      }
      if (status == Utf8Status::kTruncated) {
        return Fail(ErrorCode::kUnexpectedEnd, end_, "input ended inside a string");
      }
    }
  }
  Emit(TokenKind::kString, quote, 0, out);
  out->text = std::string_view(quote + 1, static_cast<size_t>(p - (quote + 1)));
  out->has_escapes = has_escapes;
  pos_ = p + 1;
  return true;
}

// ScanEscape checks the escape sequence whose backslash is at *pos and moves *pos past it.
bool JsonTokenizer::ScanEscape(const char** pos) {
  const char* const backslash = *pos;
  if (end_ - backslash < 2) {
    return Fail(ErrorCode::kUnexpectedEnd, end_, "input ended inside an escape sequence");
  }
  switch (backslash[1]) {
    case '"':
    case '\\':
    case '/':
    case 'b':
    case 'f':
    case 'n':
    case 'r':
    case 't':
      *pos = backslash + 2;
      return true;
    case 'u':
      break;
    default:
      return Fail(ErrorCode::kInvalidEscape, backslash,
                  "invalid escape; allowed are \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX");
  }
  uint32_t unit = 0;  // set by ReadHex4 when it succeeds
  if (!ReadHex4(backslash, &unit)) return false;
  if (unit < 0xD800 || unit > 0xDFFF) {
    *pos = backslash + 6;
    return true;
  }
  if (unit >= 0xDC00) {
    return Fail(ErrorCode::kLoneSurrogate, backslash,
                "low surrogate escape without a high surrogate before it");
  }
  // A high surrogate (D800..DBFF) means nothing alone: a \u low surrogate must follow.
  const char* const low = backslash + 6;
  if (low == end_ || (low[0] == '\\' && low + 1 == end_)) {
    return Fail(ErrorCode::kUnexpectedEnd, end_, "input ended inside a surrogate pair");
  }
  if (low[0] != '\\' || low[1] != 'u') {
    return Fail(ErrorCode::kLoneSurrogate, backslash,
                "high surrogate escape not followed by a low surrogate escape");
  }
  uint32_t low_unit = 0;
  if (!ReadHex4(low, &low_unit)) return false;
  if (low_unit < 0xDC00 || low_unit > 0xDFFF) {
    return Fail(ErrorCode::kLoneSurrogate, backslash,
                "high surrogate escape not followed by a low surrogate escape");
  }
  *pos = backslash + 12;
  return true;
}

// ReadHex4 reads the four hex digits after the "\u" that starts at `backslash`, which the
// caller has checked to be there.
bool JsonTokenizer::ReadHex4(const char* backslash, uint32_t* out_unit) {
  const char* const digits = backslash + 2;
  uint32_t unit = 0;
  for (int i = 0; i < 4; ++i) {
    if (digits + i == end_) {
      return Fail(ErrorCode::kUnexpectedEnd, end_, "input ended inside a \\u escape");
    }
    const int value = HexDigitValue(digits[i]);
    if (value < 0) {
      return Fail(ErrorCode::kInvalidUnicodeEscape, backslash,
                  "\\u must be followed by four hex digits");
    }
    unit = unit << 4 | static_cast<uint32_t>(value);
  }
  *out_unit = unit;
  return true;
}

// ReadNumber reads -? (0 | [1-9][0-9]*) (\.[0-9]+)? ([eE][+-]?[0-9]+)? starting at pos_.
bool JsonTokenizer::ReadNumber(Token* out) {
  const char* const start = pos_;
  const char* p = start;
  auto skip_digits = [this](const char* at) {
    while (at != end_ && IsDigit(*at)) ++at;
    return at;
  };
  // A digit was required at `at` but is not there.
  auto fail_missing_digit = [this, start](const char* at, const char* message) {
    if (at == end_) {
      return Fail(ErrorCode::kUnexpectedEnd, end_, "input ended inside a number");
    }
    return Fail(ErrorCode::kInvalidNumber, start, message);
  };

  if (*p == '-') ++p;
  if (p == end_ || !IsDigit(*p)) return fail_missing_digit(p, "expected a digit after '-'");
  if (*p == '0') {
    ++p;
    if (p != end_ && IsDigit(*p)) {
      return Fail(ErrorCode::kInvalidNumber, start, "leading zeros are not allowed");
    }
  } else {
    p = skip_digits(p + 1);
  }
  if (p != end_ && *p == '.') {
    const char* const fraction = p + 1;
    p = skip_digits(fraction);
    if (p == fraction) return fail_missing_digit(p, "expected a digit after '.'");
  }
  if (p != end_ && (*p == 'e' || *p == 'E')) {
    ++p;
    if (p != end_ && (*p == '+' || *p == '-')) ++p;
    const char* const exponent = p;
    p = skip_digits(exponent);
    if (p == exponent) return fail_missing_digit(p, "expected a digit in the exponent");
  }
  if (p != end_ && IsTokenGlue(*p)) {
    return Fail(ErrorCode::kInvalidNumber, start, "malformed number");
  }
  Emit(TokenKind::kNumber, start, static_cast<size_t>(p - start), out);
  pos_ = p;
  state_ = kAfterValue;
  return true;
}

// ReadLiteral reads `word` (true, false or null), whose first letter is at pos_.
bool JsonTokenizer::ReadLiteral(std::string_view word, TokenKind kind, Token* out) {
  const char* const start = pos_;
  const size_t available = static_cast<size_t>(end_ - start);
  if (available < word.size()) {
    // "tru" at the very end is a truncated literal; "trx" is a wrong one.
    if (std::memcmp(start, word.data(), available) == 0) {
      return Fail(ErrorCode::kUnexpectedEnd, end_, "input ended inside a literal");
    }
    return Fail(ErrorCode::kInvalidLiteral, start, "expected true, false or null");
  }
  if (std::memcmp(start, word.data(), word.size()) != 0 ||
      (available > word.size() && IsTokenGlue(start[word.size()]))) {
    return Fail(ErrorCode::kInvalidLiteral, start, "expected true, false or null");
  }
  Emit(kind, start, word.size(), out);
  pos_ = start + word.size();
  state_ = kAfterValue;
  return true;
}

bool JsonTokenizer::OpenContainer(bool is_object, Token* out) {
  if (depth_ == max_depth_) {
    return Fail(ErrorCode::kDepthExceeded, pos_, "nesting is deeper than max_depth");
  }
  const size_t word = depth_ / 64;
  const uint64_t bit = uint64_t{1} << (depth_ % 64);
  if (word == is_object_bits_.size()) is_object_bits_.push_back(0);
  if (is_object) {
    is_object_bits_[word] |= bit;
  } else {
    is_object_bits_[word] &= ~bit;
  }
  ++depth_;
  Emit(is_object ? TokenKind::kBeginObject : TokenKind::kBeginArray, pos_, 1, out);
  ++pos_;
  state_ = is_object ? kExpectFirstKey : kExpectFirstValue;
  return true;
}

// CloseContainer reads the '}' or ']' at pos_, which the caller has matched to the
// innermost open container.
bool JsonTokenizer::CloseContainer(Token* out) {
  Emit(*pos_ == '}' ? TokenKind::kEndObject : TokenKind::kEndArray, pos_, 1, out);
  ++pos_;
  --depth_;
  state_ = kAfterValue;
  return true;
}

// FinishTopLevel is called after the top-level value and any whitespace after it.
bool JsonTokenizer::FinishTopLevel(Token* out) {
  if (pos_ != end_) {
    return Fail(ErrorCode::kTrailingContent, pos_, "unexpected content after the JSON value");
  }
  state_ = kDone;
  Emit(TokenKind::kEndOfInput, end_, 0, out);
  return true;
}

// Fail is deliberately out of line and cold: errors happen once per input at most, and
// this is the one place to set a breakpoint on any rejection.
[[gnu::cold]] [[gnu::noinline]] bool JsonTokenizer::Fail(ErrorCode code, const char* at,
                                                         const char* message) {
  error_.code = code;
  error_.offset = base_offset_ + static_cast<uint64_t>(at - begin_);
  error_.message = message;
  error_.context.clear();
  state_ = kFailed;
  return false;
}

namespace {

// DecodeHex4 reads four hex digits at text[at..at+3]; false if they are not all there.
bool DecodeHex4(std::string_view text, size_t at, uint32_t* out_unit) {
  if (at > text.size() || text.size() - at < 4) return false;
  uint32_t unit = 0;
  for (size_t i = 0; i < 4; ++i) {
    const int value = HexDigitValue(text[at + i]);
    if (value < 0) return false;
    unit = unit << 4 | static_cast<uint32_t>(value);
  }
  *out_unit = unit;
  return true;
}

}  // namespace

void UnescapeJsonString(std::string_view text, std::string* out) {
  constexpr uint32_t kReplacementCharacter = 0xFFFD;  // for escapes the tokenizer rejects
  out->reserve(out->size() + text.size());            // valid escapes never decode longer
  size_t i = 0;
  while (i < text.size()) {
    // Copy the run up to the next backslash as is: the tokenizer validated its UTF-8.
    const size_t backslash = text.find('\\', i);
    if (backslash == std::string_view::npos) {
      out->append(text.substr(i));
      return;
    }
    out->append(text.substr(i, backslash - i));
    i = backslash;
    if (i + 1 == text.size()) {  // a lone backslash at the end: not from the tokenizer
      AppendUtf8(kReplacementCharacter, out);
      return;
    }
    const char letter = text[i + 1];
    char decoded;
    switch (letter) {
      case '"':
      case '\\':
      case '/':
        decoded = letter;
        break;
      case 'b':
        decoded = '\b';
        break;
      case 'f':
        decoded = '\f';
        break;
      case 'n':
        decoded = '\n';
        break;
      case 'r':
        decoded = '\r';
        break;
      case 't':
        decoded = '\t';
        break;
      case 'u': {
        uint32_t unit;
        if (!DecodeHex4(text, i + 2, &unit)) {
          AppendUtf8(kReplacementCharacter, out);
          i += 2;
          continue;
        }
        i += 6;
        uint32_t low;
        if (unit >= 0xD800 && unit <= 0xDBFF && i + 1 < text.size() && text[i] == '\\' &&
            text[i + 1] == 'u' && DecodeHex4(text, i + 2, &low) && low >= 0xDC00 && low <= 0xDFFF) {
          unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
          i += 6;
        }
        AppendUtf8(unit, out);  // a surrogate left unpaired becomes U+FFFD
        continue;
      }
      default:
        AppendUtf8(kReplacementCharacter, out);
        i += 2;
        continue;
    }
    out->push_back(decoded);
    i += 2;
  }
}

std::string_view TokenText(const Token& token, std::string* scratch) {
  if (!token.has_escapes) return token.text;
  scratch->clear();
  UnescapeJsonString(token.text, scratch);
  return *scratch;
}

Error ValidateJson(std::string_view input, uint32_t max_depth) {
  return CatchOutOfMemory("out of memory while validating JSON", [&]() -> Error {
    JsonTokenizer tokenizer(input, /*base_offset=*/0, max_depth);
    Token token;
    while (tokenizer.Next(&token)) {
      if (token.kind == TokenKind::kEndOfInput) return Error{};
    }
    return tokenizer.error();
  });
}

}  // namespace stguard
