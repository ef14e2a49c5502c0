// SPDX-License-Identifier: Apache-2.0
// json/token_cursor.h: what a schema reader needs to walk a JSON text token by token.
//
// The schema readers (the safetensors header, a sharded checkpoint's index) pull tokens
// from JsonTokenizer one at a time and stop at the first error. TokenCursor is their
// shared base: the tokenizer, the token just read, the error, and the three helpers every
// such reader writes. An error's optional parts are named fields of ErrorDetail, so a
// tensor name cannot silently land where the context belongs.
//
// Everything here is inline: the header reader calls Next for every token, on the path
// whose speed bench/header_bench.cc measures.
#ifndef STGUARD_SRC_JSON_TOKEN_CURSOR_H_
#define STGUARD_SRC_JSON_TOKEN_CURSOR_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "stguard/error.h"
#include "stguard/json_tokenizer.h"

namespace stguard {

// ErrorDetail is the optional part of a schema error: the tensor concerned and dynamic
// context (a key, two sizes). Callers name the fields: `{.tensor = name}`.
struct ErrorDetail {
  std::string_view tensor;
  std::string context;
};

// TokenCursor is a base class for a reader of one JSON text: derive from it privately
// and read `token_` after each Next().
class TokenCursor {
 protected:
  // `text` must outlive the cursor; `base_offset` is added to every offset (8 for a
  // safetensors header, 0 for a file that is all JSON).
  TokenCursor(std::string_view text, uint64_t base_offset, uint32_t max_depth)
      : tokens_(text, base_offset, max_depth) {}

  // Next reads one token into token_. On a grammar error it copies the tokenizer's error
  // into error_ and returns false.
  bool Next() {
    if (tokens_.Next(&token_)) return true;
    error_ = tokens_.error();
    return false;
  }

  // Fail records an error and returns false, so that checks read as one line:
  // `if (!ok) return Fail(...)`. Every schema error passes through here.
  bool Fail(ErrorCode code, uint64_t offset, const char* message, ErrorDetail detail = {}) {
    error_ = Error{code, offset, message, std::move(detail.context), std::string(detail.tensor)};
    return false;
  }

  // KeepText is TokenText for strings that outlive the parse (names, metadata): a string
  // without escapes stays a view into the text; one with escapes is unescaped into a new
  // element of `owned` (a std::forward_list or std::deque of std::string: both keep their
  // elements where they are as they grow, so the view stays valid).
  template <typename OwnedStrings>
  static std::string_view KeepText(const Token& token, OwnedStrings* owned) {
    if (!token.has_escapes) return token.text;
    std::string& kept = owned->emplace_front();
    UnescapeJsonString(token.text, &kept);
    return kept;
  }

  JsonTokenizer tokens_;
  Token token_;
  Error error_;
};

}  // namespace stguard

#endif  // STGUARD_SRC_JSON_TOKEN_CURSOR_H_
