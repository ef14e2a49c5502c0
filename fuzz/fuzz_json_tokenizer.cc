// SPDX-License-Identifier: Apache-2.0
// fuzz_json_tokenizer: arbitrary bytes through JsonTokenizer.
//
// Checked for every input:
// - the Next() loop ends (at most one token per byte, plus kEndOfInput), tokens lie inside
//   the input in increasing order, and a failed or finished tokenizer stays so;
// - every error has a real code and an offset inside [0, size]; a base offset shifts it
//   and nothing else;
// - ValidateJson gives the Next() loop's verdict, code and offset;
// - the independent recursive parser (reference_checker.cc) gives the same verdict.
// Checked for accepted documents:
// - re-serialized compactly, and again with spaces everywhere, they re-tokenize to the
//   same token sequence (kinds, texts, has_escapes);
// - the deepest nesting seen is exactly the smallest max_depth that accepts;
// - every string unescapes to what the reference decoder gives, valid UTF-8, and
//   AppendJsonString re-escapes it to a string that decodes back the same;
// - three proper prefixes (all but the last byte, the first half, and one cut picked by
//   the first byte) are each accepted or end in kUnexpectedEnd at their own end.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_support.h"
#include "reference_checker.h"
#include "stguard/json_escape.h"
#include "stguard/json_tokenizer.h"

namespace {

using stguard::Error;
using stguard::ErrorCode;
using stguard::JsonTokenizer;
using stguard::Token;
using stguard::TokenKind;

struct Run {
  bool accepted = false;
  std::vector<Token> tokens;  // without the final kEndOfInput
  Error error;
  uint32_t max_depth_seen = 0;
};

// Tokenize runs the Next() loop over `text` and checks what holds for any input.
Run Tokenize(std::string_view text, uint64_t base_offset, uint32_t max_depth) {
  Run run;
  JsonTokenizer tokenizer(text, base_offset, max_depth);
  const uint64_t end_offset = base_offset + text.size();
  uint64_t last_offset = 0;
  for (;;) {
    FUZZ_CHECK_MSG(run.tokens.size() <= text.size(), "more tokens than input bytes");
    Token token;
    if (!tokenizer.Next(&token)) {
      run.error = tokenizer.error();
      FUZZ_CHECK(run.error.code != ErrorCode::kOk);
      FUZZ_CHECK(run.error.code < ErrorCode::kNumErrorCodes);
      FUZZ_CHECK_MSG(run.error.offset >= base_offset && run.error.offset <= end_offset,
                     run.error.ToString());
      // Failure is final and the error does not change.
      Token again;
      FUZZ_CHECK(!tokenizer.Next(&again));
      FUZZ_CHECK(tokenizer.error().code == run.error.code);
      FUZZ_CHECK(tokenizer.error().offset == run.error.offset);
      return run;
    }
    FUZZ_CHECK(token.offset >= base_offset && token.offset <= end_offset);
    if (token.kind == TokenKind::kEndOfInput) {
      FUZZ_CHECK(token.offset == end_offset);
      FUZZ_CHECK(tokenizer.depth() == 0);
      Token again;
      FUZZ_CHECK(tokenizer.Next(&again) && again.kind == TokenKind::kEndOfInput);
      run.accepted = true;
      return run;
    }
    // The token's text lies inside the input, after the previous token.
    FUZZ_CHECK(token.text.data() >= text.data());
    FUZZ_CHECK(token.text.data() + token.text.size() <= text.data() + text.size());
    FUZZ_CHECK(run.tokens.empty() || token.offset > last_offset);
    last_offset = token.offset;
    const bool is_string = token.kind == TokenKind::kKey || token.kind == TokenKind::kString;
    if (is_string) {
      // The text is what lies between the quotes.
      const size_t at = static_cast<size_t>(token.offset - base_offset);
      FUZZ_CHECK(text[at] == '"');
      FUZZ_CHECK(token.text.data() == text.data() + at + 1);
      FUZZ_CHECK(token.has_escapes == (token.text.find('\\') != std::string_view::npos));
    } else {
      FUZZ_CHECK(token.text.data() == text.data() + (token.offset - base_offset));
      FUZZ_CHECK(!token.has_escapes);
    }
    FUZZ_CHECK(tokenizer.depth() <= max_depth);
    if (tokenizer.depth() > run.max_depth_seen) run.max_depth_seen = tokenizer.depth();
    run.tokens.push_back(token);
  }
}

bool EndsValue(TokenKind kind) {
  return kind != TokenKind::kBeginObject && kind != TokenKind::kBeginArray &&
         kind != TokenKind::kKey;
}

// Serialize writes the tokens back as JSON, with `space` between all of them.
std::string Serialize(const std::vector<Token>& tokens, std::string_view space) {
  std::string out;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const Token& token = tokens[i];
    const bool closer = token.kind == TokenKind::kEndObject || token.kind == TokenKind::kEndArray;
    if (i > 0) {
      if (!closer && EndsValue(tokens[i - 1].kind)) out.push_back(',');
      out.append(space);
    }
    switch (token.kind) {
      case TokenKind::kKey:
        out.append("\"").append(token.text).append("\"").append(space).append(":");
        break;
      case TokenKind::kString:
        out.append("\"").append(token.text).append("\"");
        break;
      default:
        out.append(token.text);
        break;
    }
  }
  return out;
}

void CheckSameTokens(const std::vector<Token>& a, const std::vector<Token>& b) {
  FUZZ_CHECK(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    FUZZ_CHECK(a[i].kind == b[i].kind);
    FUZZ_CHECK(a[i].text == b[i].text);
    FUZZ_CHECK(a[i].has_escapes == b[i].has_escapes);
  }
}

void CheckString(const Token& token) {
  std::string decoded;
  stguard::UnescapeJsonString(token.text, &decoded);
  std::string expected;
  const std::string quoted = "\"" + std::string(token.text) + "\"";
  FUZZ_CHECK_MSG(stguard_fuzz::reference::DecodeJsonString(quoted, &expected),
                 "the reference rejects an accepted string: " + stguard_fuzz::Hex(quoted));
  FUZZ_CHECK_MSG(decoded == expected, "UnescapeJsonString(" + stguard_fuzz::Hex(token.text) +
                                          ") = " + stguard_fuzz::Hex(decoded) + ", expected " +
                                          stguard_fuzz::Hex(expected));
  FUZZ_CHECK(stguard_fuzz::reference::IsValidUtf8(decoded));
  // Re-escaped, it is one valid JSON string that decodes to the same value.
  std::string escaped;
  stguard::AppendJsonString(decoded, &escaped);
  const Run again = Tokenize(escaped, 0, stguard::kDefaultMaxDepth);
  FUZZ_CHECK_MSG(again.accepted && again.tokens.size() == 1 &&
                     again.tokens[0].kind == TokenKind::kString,
                 "AppendJsonString output is not one string: " + stguard_fuzz::Hex(escaped));
  std::string round_trip;
  stguard::UnescapeJsonString(again.tokens[0].text, &round_trip);
  FUZZ_CHECK(round_trip == decoded);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const stguard_fuzz::ExactCopy input(data, size);
  const std::string_view text = input.text();

  const Run run = Tokenize(text, 0, stguard::kDefaultMaxDepth);

  // ValidateJson and the Next() loop agree.
  const Error verdict = stguard::ValidateJson(text);
  FUZZ_CHECK(verdict.ok() == run.accepted);
  stguard_fuzz::CountExecution(run.accepted);  // the checks on accepted texts
  if (!run.accepted) {
    FUZZ_CHECK(verdict.code == run.error.code);
    FUZZ_CHECK(verdict.offset == run.error.offset);
  }
  // A base offset moves errors and nothing else.
  const Run shifted = Tokenize(text, 8, stguard::kDefaultMaxDepth);
  FUZZ_CHECK(shifted.accepted == run.accepted);
  FUZZ_CHECK(shifted.tokens.size() == run.tokens.size());
  if (!run.accepted) {
    FUZZ_CHECK(shifted.error.code == run.error.code);
    FUZZ_CHECK(shifted.error.offset == run.error.offset + 8);
  }
  // The independent parser agrees.
  const bool reference_accepts =
      stguard_fuzz::reference::IsJsonText(text, stguard::kDefaultMaxDepth);
  FUZZ_CHECK_MSG(reference_accepts == run.accepted,
                 run.accepted ? std::string("the tokenizer accepts; the reference rejects")
                              : "the tokenizer rejects (" + run.error.ToString() +
                                    "); the reference accepts");

  if (!run.accepted) {
    // Defined as unspecified but memory-safe on text the tokenizer did not accept.
    std::string ignored;
    stguard::UnescapeJsonString(text, &ignored);
    return 0;
  }

  // Re-serialized, the document re-tokenizes to the same tokens.
  for (std::string_view space : {std::string_view(""), std::string_view(" \n\t\r")}) {
    const std::string again = Serialize(run.tokens, space);
    const Run rerun = Tokenize(again, 0, stguard::kDefaultMaxDepth);
    FUZZ_CHECK_MSG(rerun.accepted, "re-serialized document rejected: " + rerun.error.ToString());
    CheckSameTokens(run.tokens, rerun.tokens);
  }
  // The deepest nesting is exactly the smallest limit that accepts.
  FUZZ_CHECK(Tokenize(text, 0, run.max_depth_seen).accepted);
  if (run.max_depth_seen > 0) {
    const Run too_shallow = Tokenize(text, 0, run.max_depth_seen - 1);
    FUZZ_CHECK(!too_shallow.accepted && too_shallow.error.code == ErrorCode::kDepthExceeded);
  }
  for (const Token& token : run.tokens) {
    if (token.kind == TokenKind::kKey || token.kind == TokenKind::kString) {
      CheckString(token);
    } else if (token.kind == TokenKind::kNumber) {
      FUZZ_CHECK(stguard_fuzz::reference::IsJsonText(token.text, 0));
    }
  }
  // A truncated document is accepted or reports kUnexpectedEnd at its end; try a few cuts.
  if (size > 0) {
    const size_t cuts[] = {size - 1, size / 2, (static_cast<size_t>(data[0]) * 131 + size) % size};
    for (size_t cut : cuts) {
      const Run prefix = Tokenize(text.substr(0, cut), 0, stguard::kDefaultMaxDepth);
      FUZZ_CHECK_MSG(prefix.accepted || (prefix.error.code == ErrorCode::kUnexpectedEnd &&
                                         prefix.error.offset == cut),
                     "prefix of " + std::to_string(cut) + " bytes: " + prefix.error.ToString());
    }
  }
  return 0;
}
