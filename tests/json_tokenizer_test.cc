// SPDX-License-Identifier: Apache-2.0
// json_tokenizer_test.cc: every rule of the strict tokenizer, each with an accepted and a
// rejected case; rejections assert the error code and the exact absolute offset.
//
// Choices the tests pin down (see also the offset rules at the top of json_tokenizer.cc):
// - NaN, Infinity and other bare words are kInvalidLiteral; "-Infinity", "+1" and ".5" are
//   kInvalidNumber (they start like numbers).
// - A byte-order mark is kUnexpectedToken at its first byte.
// - Input that stops early is always kUnexpectedEnd at the end offset, even where the
//   bytes so far would be wrong anyway if more followed ("1." "-" "tru" "\u12").
// - Number and literal errors point at the token's first byte.
#include "stguard/json_tokenizer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "stguard/error.h"
#include "base/utf8.h"

namespace stguard {
namespace {

using std::string_view_literals::operator""sv;

// Tokenize returns every token of `input` up to and including kEndOfInput, or up to the
// error, which is stored in *error (kOk on success).
std::vector<Token> Tokenize(std::string_view input, Error* error, uint64_t base_offset = 0,
                            uint32_t max_depth = kDefaultMaxDepth) {
  JsonTokenizer tokenizer(input, base_offset, max_depth);
  std::vector<Token> tokens;
  Token token;
  while (tokenizer.Next(&token)) {
    tokens.push_back(token);
    if (token.kind == TokenKind::kEndOfInput) {
      *error = Error{};
      return tokens;
    }
  }
  *error = tokenizer.error();
  return tokens;
}

::testing::AssertionResult Accepts(std::string_view input, uint64_t base_offset = 0,
                                   uint32_t max_depth = kDefaultMaxDepth) {
  Error error;
  Tokenize(input, &error, base_offset, max_depth);
  if (error.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "rejected: " << error.ToString();
}

::testing::AssertionResult Rejects(std::string_view input, ErrorCode code, uint64_t offset,
                                   uint64_t base_offset = 0,
                                   uint32_t max_depth = kDefaultMaxDepth) {
  Error error;
  Tokenize(input, &error, base_offset, max_depth);
  if (error.ok()) return ::testing::AssertionFailure() << "accepted";
  if (error.code != code || error.offset != offset) {
    return ::testing::AssertionFailure() << "got " << error.ToString() << ", want "
                                         << ErrorCodeName(code) << " at byte " << offset;
  }
  if (error.message == nullptr || error.message[0] == '\0') {
    return ::testing::AssertionFailure() << "empty message";
  }
  return ::testing::AssertionSuccess();
}

struct ExpectedToken {
  TokenKind kind;
  uint64_t offset;
  std::string_view text;
  bool has_escapes = false;
};

void ExpectTokens(std::string_view input, uint64_t base_offset,
                  const std::vector<ExpectedToken>& expected) {
  Error error;
  const std::vector<Token> tokens = Tokenize(input, &error, base_offset);
  ASSERT_TRUE(error.ok()) << error.ToString();
  ASSERT_EQ(tokens.size(), expected.size());
  for (size_t i = 0; i < tokens.size(); ++i) {
    SCOPED_TRACE("token " + std::to_string(i));
    EXPECT_EQ(static_cast<int>(tokens[i].kind), static_cast<int>(expected[i].kind));
    EXPECT_EQ(tokens[i].offset, expected[i].offset);
    EXPECT_EQ(tokens[i].text, expected[i].text);
    EXPECT_EQ(tokens[i].has_escapes, expected[i].has_escapes);
  }
}

std::string Unescape(std::string_view text) {
  std::string out;
  UnescapeJsonString(text, &out);
  return out;
}

// ---------------------------------------------------------------------------------------
// Token sequences

TEST(JsonTokenizerTest, SafetensorsHeaderTokens) {
  // Offsets are absolute: the header starts at byte 8 of a safetensors file.
  const std::string_view input = R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},)"
                                 R"("__metadata__":{"k":"a\nb"}})";
  using K = TokenKind;
  ExpectTokens(input, 8,
               {
                   {K::kBeginObject, 8, "{"},
                   {K::kKey, 9, "w"},
                   {K::kBeginObject, 13, "{"},
                   {K::kKey, 14, "dtype"},
                   {K::kString, 22, "F32"},
                   {K::kKey, 28, "shape"},
                   {K::kBeginArray, 36, "["},
                   {K::kNumber, 37, "2"},
                   {K::kNumber, 39, "3"},
                   {K::kEndArray, 40, "]"},
                   {K::kKey, 42, "data_offsets"},
                   {K::kBeginArray, 57, "["},
                   {K::kNumber, 58, "0"},
                   {K::kNumber, 60, "24"},
                   {K::kEndArray, 62, "]"},
                   {K::kEndObject, 63, "}"},
                   {K::kKey, 65, "__metadata__"},
                   {K::kBeginObject, 80, "{"},
                   {K::kKey, 81, "k"},
                   {K::kString, 85, "a\\nb", true},
                   {K::kEndObject, 91, "}"},
                   {K::kEndObject, 92, "}"},
                   {K::kEndOfInput, 93, ""},
               });
}

TEST(JsonTokenizerTest, EveryValueKindWithWhitespace) {
  const std::string_view input = " [ true ,\tfalse,\nnull ,\r\"\" , -1.5e+3 , {} , [ ] ] \n";
  using K = TokenKind;
  ExpectTokens(input, 100,
               {
                   {K::kBeginArray, 101, "["},
                   {K::kTrue, 103, "true"},
                   {K::kFalse, 110, "false"},
                   {K::kNull, 117, "null"},
                   {K::kString, 124, ""},
                   {K::kNumber, 129, "-1.5e+3"},
                   {K::kBeginObject, 139, "{"},
                   {K::kEndObject, 140, "}"},
                   {K::kBeginArray, 144, "["},
                   {K::kEndArray, 146, "]"},
                   {K::kEndArray, 148, "]"},
                   {K::kEndOfInput, 151, ""},
               });
}

TEST(JsonTokenizerTest, KeysConsumeTheColonAndAllowWhitespaceAroundIt) {
  using K = TokenKind;
  ExpectTokens(R"({ "a" : 1 , "b\"c":"d" })", 0,
               {
                   {K::kBeginObject, 0, "{"},
                   {K::kKey, 2, "a"},
                   {K::kNumber, 8, "1"},
                   {K::kKey, 12, "b\\\"c", true},
                   {K::kString, 19, "d"},
                   {K::kEndObject, 23, "}"},
                   {K::kEndOfInput, 24, ""},
               });
}

TEST(JsonTokenizerTest, AnyValueMayBeTopLevel) {
  using K = TokenKind;
  ExpectTokens("\"s\"", 0, {{K::kString, 0, "s"}, {K::kEndOfInput, 3, ""}});
  ExpectTokens("-0", 0, {{K::kNumber, 0, "-0"}, {K::kEndOfInput, 2, ""}});
  ExpectTokens("true", 0, {{K::kTrue, 0, "true"}, {K::kEndOfInput, 4, ""}});
  ExpectTokens("false", 0, {{K::kFalse, 0, "false"}, {K::kEndOfInput, 5, ""}});
  ExpectTokens(" null ", 0, {{K::kNull, 1, "null"}, {K::kEndOfInput, 6, ""}});
  ExpectTokens("{}", 0,
               {{K::kBeginObject, 0, "{"}, {K::kEndObject, 1, "}"}, {K::kEndOfInput, 2, ""}});
}

TEST(JsonTokenizerTest, DepthFollowsContainers) {
  JsonTokenizer tokenizer(R"([{"a":[]}])");
  Token token;
  std::vector<uint32_t> depths;
  while (tokenizer.Next(&token) && token.kind != TokenKind::kEndOfInput) {
    depths.push_back(tokenizer.depth());
  }
  // [  {  key  [  ]  }  ]
  EXPECT_EQ(depths, (std::vector<uint32_t>{1, 2, 2, 3, 2, 1, 0}));
}

TEST(JsonTokenizerTest, EndOfInputRepeatsAndErrorsStick) {
  JsonTokenizer done("1");
  Token token;
  ASSERT_TRUE(done.Next(&token));
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(done.Next(&token));
    EXPECT_EQ(token.kind, TokenKind::kEndOfInput);
    EXPECT_EQ(token.offset, 1u);
  }

  JsonTokenizer failed("[1,,2]", 5);
  ASSERT_TRUE(failed.Next(&token));  // [
  ASSERT_TRUE(failed.Next(&token));  // 1
  EXPECT_FALSE(failed.Next(&token));
  const Error first = failed.error();
  EXPECT_EQ(first.code, ErrorCode::kUnexpectedToken);
  EXPECT_EQ(first.offset, 8u);
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(failed.Next(&token));
  EXPECT_EQ(failed.error().code, first.code);
  EXPECT_EQ(failed.error().offset, first.offset);
}

TEST(JsonTokenizerTest, ValidateJson) {
  EXPECT_TRUE(ValidateJson(R"({"a":[1,2,{"b":null}]})").ok());
  const Error error = ValidateJson("[1,]");
  EXPECT_EQ(error.code, ErrorCode::kUnexpectedToken);
  EXPECT_EQ(error.offset, 3u);
  EXPECT_EQ(ValidateJson("[[1]]", 1).code, ErrorCode::kDepthExceeded);
}

// ---------------------------------------------------------------------------------------
// Whitespace, empty input, trailing content, BOM

TEST(JsonTokenizerTest, WhitespaceIsOnlySpaceTabLfCr) {
  EXPECT_TRUE(Accepts(" \t\n\r[ \t\n\r1 \t\n\r, \t\n\r2 \t\n\r] \t\n\r"));
  EXPECT_TRUE(Rejects("\f1", ErrorCode::kUnexpectedToken, 10, 10));
  EXPECT_TRUE(Rejects("[\v1]", ErrorCode::kUnexpectedToken, 1));
  EXPECT_TRUE(Rejects("[1,\xC2\xA0]", ErrorCode::kUnexpectedToken, 3));  // NBSP
  EXPECT_TRUE(Rejects("1\f", ErrorCode::kTrailingContent, 1));
}

TEST(JsonTokenizerTest, EmptyInputEndsEarly) {
  EXPECT_TRUE(Rejects("", ErrorCode::kUnexpectedEnd, 0));
  EXPECT_TRUE(Rejects("", ErrorCode::kUnexpectedEnd, 8, 8));
  EXPECT_TRUE(Rejects(" \n\t\r ", ErrorCode::kUnexpectedEnd, 13, 8));
}

TEST(JsonTokenizerTest, TrailingContent) {
  EXPECT_TRUE(Accepts("{} \n"));
  EXPECT_TRUE(Rejects("1 2", ErrorCode::kTrailingContent, 2));
  EXPECT_TRUE(Rejects("{}}", ErrorCode::kTrailingContent, 10, 8));
  EXPECT_TRUE(Rejects("[] ,", ErrorCode::kTrailingContent, 3));
  EXPECT_TRUE(Rejects("\"a\"x", ErrorCode::kTrailingContent, 3));
  EXPECT_TRUE(Rejects("{}\0"sv, ErrorCode::kTrailingContent, 2));
  EXPECT_TRUE(Rejects("null //", ErrorCode::kTrailingContent, 5));
}

TEST(JsonTokenizerTest, ByteOrderMarkIsRejected) {
  EXPECT_TRUE(Rejects("\xEF\xBB\xBF{}", ErrorCode::kUnexpectedToken, 8, 8));
  EXPECT_TRUE(Rejects("\xEF\xBB\xBF", ErrorCode::kUnexpectedToken, 0));
  EXPECT_TRUE(Rejects("{}\xEF\xBB\xBF", ErrorCode::kTrailingContent, 2));
}

// ---------------------------------------------------------------------------------------
// Grammar

TEST(JsonTokenizerTest, ArrayGrammar) {
  EXPECT_TRUE(Accepts("[]"));
  EXPECT_TRUE(Accepts("[1]"));
  EXPECT_TRUE(Accepts("[1,[2,[3]],4]"));
  EXPECT_TRUE(Rejects("[1 2]", ErrorCode::kUnexpectedToken, 3));
  EXPECT_TRUE(Rejects("[1,]", ErrorCode::kUnexpectedToken, 3));
  EXPECT_TRUE(Rejects("[,1]", ErrorCode::kUnexpectedToken, 1));
  EXPECT_TRUE(Rejects("[1,,2]", ErrorCode::kUnexpectedToken, 3));
  EXPECT_TRUE(Rejects("[1:2]", ErrorCode::kUnexpectedToken, 2));
  EXPECT_TRUE(Rejects("[1}", ErrorCode::kUnexpectedToken, 2));
  EXPECT_TRUE(Rejects("]", ErrorCode::kUnexpectedToken, 0));
  EXPECT_TRUE(Rejects("[*]", ErrorCode::kUnexpectedToken, 1));
  EXPECT_TRUE(Rejects("[\0]"sv, ErrorCode::kUnexpectedToken, 1));
  EXPECT_TRUE(Rejects("[1", ErrorCode::kUnexpectedEnd, 2));
  EXPECT_TRUE(Rejects("[1,", ErrorCode::kUnexpectedEnd, 3));
  EXPECT_TRUE(Rejects("[", ErrorCode::kUnexpectedEnd, 1));
}

TEST(JsonTokenizerTest, ObjectGrammar) {
  EXPECT_TRUE(Accepts("{}"));
  EXPECT_TRUE(Accepts(R"({"a":1,"b":{"c":[]}})"));
  EXPECT_TRUE(Accepts(R"({"a":1,"a":2})"));  // duplicate keys are the schema's business
  EXPECT_TRUE(Rejects(R"({1:2})", ErrorCode::kUnexpectedToken, 1));
  EXPECT_TRUE(Rejects(R"({null:2})", ErrorCode::kUnexpectedToken, 1));
  EXPECT_TRUE(Rejects(R"({"a" 1})", ErrorCode::kUnexpectedToken, 5));
  EXPECT_TRUE(Rejects(R"({"a",1})", ErrorCode::kUnexpectedToken, 4));
  EXPECT_TRUE(Rejects(R"({"a"::1})", ErrorCode::kUnexpectedToken, 5));
  EXPECT_TRUE(Rejects(R"({"a":})", ErrorCode::kUnexpectedToken, 5));
  EXPECT_TRUE(Rejects(R"({"a":1,})", ErrorCode::kUnexpectedToken, 7));
  EXPECT_TRUE(Rejects(R"({"a":1 "b":2})", ErrorCode::kUnexpectedToken, 7));
  EXPECT_TRUE(Rejects(R"({"a":1])", ErrorCode::kUnexpectedToken, 6));
  EXPECT_TRUE(Rejects(R"({"a"})", ErrorCode::kUnexpectedToken, 4));
  EXPECT_TRUE(Rejects(R"({,})", ErrorCode::kUnexpectedToken, 1));
  EXPECT_TRUE(Rejects(R"({'a':1})", ErrorCode::kUnexpectedToken, 1));
  EXPECT_TRUE(Rejects(R"({a:1})", ErrorCode::kUnexpectedToken, 1));
  EXPECT_TRUE(Rejects(R"(["a":1])", ErrorCode::kUnexpectedToken, 4));
  EXPECT_TRUE(Rejects(R"({"a")", ErrorCode::kUnexpectedEnd, 4));
  EXPECT_TRUE(Rejects(R"({"a":)", ErrorCode::kUnexpectedEnd, 5));
  EXPECT_TRUE(Rejects(R"({"a":1,)", ErrorCode::kUnexpectedEnd, 7));
  EXPECT_TRUE(Rejects(R"({"a":1)", ErrorCode::kUnexpectedEnd, 6));
}

// ---------------------------------------------------------------------------------------
// Strings

TEST(JsonTokenizerTest, ControlCharactersMustBeEscaped) {
  for (int c = 0; c < 0x20; ++c) {
    std::string input = "[\"ab";
    input.push_back(static_cast<char>(c));
    input += "\"]";
    EXPECT_TRUE(Rejects(input, ErrorCode::kControlCharacter, 1004, 1000)) << "byte " << c;
  }
  EXPECT_TRUE(Accepts("\" ~\x7F\""));  // space, tilde and DEL need no escape
}

TEST(JsonTokenizerTest, ValidEscapes) {
  using K = TokenKind;
  const std::string_view escaped = R"(\"\\\/\b\f\n\r\t\u0041\u00e9\u00E9\uD834\uDD1E)";
  ExpectTokens("\"" + std::string(escaped) + "\"", 0,
               {{K::kString, 0, escaped, true}, {K::kEndOfInput, escaped.size() + 2, ""}});
  ExpectTokens(R"("plain")", 0, {{K::kString, 0, "plain", false}, {K::kEndOfInput, 7, ""}});
}

TEST(JsonTokenizerTest, InvalidEscapes) {
  for (const char letter : std::string_view("avx0'U \xC3\tBFNRTe")) {
    std::string input = "\"x\\";
    input.push_back(letter);
    input += "\"";
    EXPECT_TRUE(Rejects(input, ErrorCode::kInvalidEscape, 12, 10)) << "letter " << letter;
  }
}

TEST(JsonTokenizerTest, UnicodeEscapesNeedFourHexDigits) {
  EXPECT_TRUE(Accepts(R"("\u0000\uffff\uFFFF\uaBcD\u1234")"));
  EXPECT_TRUE(Rejects(R"("\u00g0")", ErrorCode::kInvalidUnicodeEscape, 1));
  EXPECT_TRUE(Rejects(R"("ab\u12")", ErrorCode::kInvalidUnicodeEscape, 3));
  EXPECT_TRUE(Rejects(R"("\u")", ErrorCode::kInvalidUnicodeEscape, 1));
  EXPECT_TRUE(Rejects(R"("\u-123")", ErrorCode::kInvalidUnicodeEscape, 1));
  EXPECT_TRUE(Rejects(R"("\U0041")", ErrorCode::kInvalidEscape, 1));
  EXPECT_TRUE(Rejects(R"(["\u 123"])", ErrorCode::kInvalidUnicodeEscape, 2 + 40, 40));
}

TEST(JsonTokenizerTest, SurrogateEscapesMustPair) {
  EXPECT_TRUE(Accepts(R"("\uD834\uDD1E")"));
  EXPECT_TRUE(Accepts(R"("\ud800\udc00\udbff\udfff")"));
  EXPECT_TRUE(Accepts(R"("\uD7FF\uE000")"));  // just outside the surrogate range
  // Offsets point at the backslash of the first \u involved.
  EXPECT_TRUE(Rejects(R"("x\uD834")", ErrorCode::kLoneSurrogate, 2));
  EXPECT_TRUE(Rejects(R"("\uD834x")", ErrorCode::kLoneSurrogate, 1));
  EXPECT_TRUE(Rejects(R"("\uD834\n")", ErrorCode::kLoneSurrogate, 1));
  EXPECT_TRUE(Rejects(R"("\uD834\uD834")", ErrorCode::kLoneSurrogate, 1));
  EXPECT_TRUE(Rejects(R"("\uD834\u0041")", ErrorCode::kLoneSurrogate, 1));
  EXPECT_TRUE(Rejects(R"("\uDD1E")", ErrorCode::kLoneSurrogate, 1));
  EXPECT_TRUE(Rejects(R"("\uDD1E\uD834")", ErrorCode::kLoneSurrogate, 1));  // reversed
  EXPECT_TRUE(Rejects(R"({"\uDFFF":0})", ErrorCode::kLoneSurrogate, 102, 100));
  // The second escape is malformed in itself: that error wins, at its backslash.
  EXPECT_TRUE(Rejects(R"("\uD834\uDD")", ErrorCode::kInvalidUnicodeEscape, 7));
}

TEST(JsonTokenizerTest, UnterminatedStringsEndEarly) {
  EXPECT_TRUE(Rejects("\"abc", ErrorCode::kUnexpectedEnd, 4));
  EXPECT_TRUE(Rejects("[\"abcdefghijklmnopqrstuvwxyz", ErrorCode::kUnexpectedEnd, 28));
  EXPECT_TRUE(Rejects("\"\\", ErrorCode::kUnexpectedEnd, 2));
  EXPECT_TRUE(Rejects("\"\\u12", ErrorCode::kUnexpectedEnd, 5));
  EXPECT_TRUE(Rejects("\"\\uD834", ErrorCode::kUnexpectedEnd, 7));
  EXPECT_TRUE(Rejects("\"\\uD834\\", ErrorCode::kUnexpectedEnd, 8));
  EXPECT_TRUE(Rejects("\"\\uD834\\u", ErrorCode::kUnexpectedEnd, 9));
  EXPECT_TRUE(Rejects("\"\\uD834\\uDD", ErrorCode::kUnexpectedEnd, 11));
  EXPECT_TRUE(Rejects("\"\xE2\x82", ErrorCode::kUnexpectedEnd, 3));
}

// The 8-byte scanner must find the first special byte at every position of a long string,
// and never miss one hidden behind plain bytes or just before the end of input.
TEST(JsonTokenizerTest, SpecialBytesAtEveryPositionOfLongStrings) {
  for (size_t length = 0; length < 40; ++length) {
    for (size_t at = 0; at < length; ++at) {
      SCOPED_TRACE("length " + std::to_string(length) + " at " + std::to_string(at));
      std::string body(length, 'a');
      body[at] = '\x1F';
      EXPECT_TRUE(Rejects("\"" + body + "\"", ErrorCode::kControlCharacter, 1 + at));
      EXPECT_TRUE(Rejects("\"" + body, ErrorCode::kControlCharacter, 1 + at));
      body[at] = '\x80';
      EXPECT_TRUE(Rejects("\"" + body + "\"", ErrorCode::kInvalidUtf8, 1 + at));
      body[at] = '"';
      if (at + 1 < length) {
        EXPECT_TRUE(Rejects("\"" + body + "\"", ErrorCode::kTrailingContent, 2 + at));
      }
      body[at] = '\\';
      EXPECT_TRUE(Rejects("\"" + body + "\"",
                          at + 1 < length ? ErrorCode::kInvalidEscape : ErrorCode::kUnexpectedEnd,
                          at + 1 < length ? 1 + at : length + 2));
      body.replace(at, 1, "\xC3\xA9");  // é
      const std::string input = "\"" + body + "\"";
      Error error;
      const std::vector<Token> tokens = Tokenize(input, &error);
      ASSERT_TRUE(error.ok()) << error.ToString();
      EXPECT_EQ(tokens[0].text, body);
    }
    const std::string plain(length, 'x');
    const std::string input = "\"" + plain + "\"";
    Error error;
    const std::vector<Token> tokens = Tokenize(input, &error);
    ASSERT_TRUE(error.ok());
    EXPECT_EQ(tokens[0].text, plain);
    EXPECT_TRUE(Rejects("\"" + plain, ErrorCode::kUnexpectedEnd, 1 + length));
  }
  // Bytes that are special only as a whole word, never per byte, must not be flagged.
  EXPECT_TRUE(Accepts("\"!#[]{}~@AZaz09 ?>=<;:\x7F\x21\x23\x5B\x5D\""));
}

// ---------------------------------------------------------------------------------------
// UTF-8, by the boundaries of Unicode Table 3-7

struct Utf8Case {
  std::string_view bytes;
  int bad_index;  // -1: well-formed; else the index of the first byte that breaks the table
};

const Utf8Case kUtf8Cases[] = {
    // Accepted: each row's lowest and highest sequence.
    {"\x7F", -1},
    {"\xC2\x80", -1},
    {"\xDF\xBF", -1},
    {"\xE0\xA0\x80", -1},
    {"\xE0\xBF\xBF", -1},
    {"\xE1\x80\x80", -1},
    {"\xEC\xBF\xBF", -1},
    {"\xED\x80\x80", -1},
    {"\xED\x9F\xBF", -1},  // U+D7FF, the last before the surrogates
    {"\xEE\x80\x80", -1},  // U+E000, the first after them
    {"\xEF\xBF\xBF", -1},
    {"\xF0\x90\x80\x80", -1},
    {"\xF0\xBF\xBF\xBF", -1},
    {"\xF1\x80\x80\x80", -1},
    {"\xF3\xBF\xBF\xBF", -1},
    {"\xF4\x80\x80\x80", -1},
    {"\xF4\x8F\xBF\xBF", -1},  // U+10FFFF
    // Rejected: just past each boundary.
    {"\x80", 0},  // stray continuation bytes
    {"\xBF", 0},
    {"\xC0\x80", 0},      // overlong NUL
    {"\xC1\xBF", 0},      // overlong U+007F
    {"\xC2\x7F", 1},      // continuation below 80
    {"\xC2\xC0", 1},      // continuation above BF
    {"\xDF\x41", 1},      // truncated by an ASCII byte
    {"\xE0\x80\x80", 1},  // overlong
    {"\xE0\x9F\xBF", 1},  // overlong U+07FF
    {"\xE1\x7F\x80", 1},
    {"\xE1\x80\xC0", 2},
    {"\xEC\xC0\x80", 1},
    {"\xED\xA0\x80", 1},  // U+D800
    {"\xED\xBF\xBF", 1},  // U+DFFF
    {"\xEE\x7F\x80", 1},
    {"\xEF\xBF\x41", 2},
    {"\xF0\x80\x80\x80", 1},  // overlong
    {"\xF0\x8F\xBF\xBF", 1},  // overlong U+FFFF
    {"\xF0\xC0\x80\x80", 1},
    {"\xF1\x7F\x80\x80", 1},
    {"\xF3\xBF\xBF\x41", 3},
    {"\xF4\x90\x80\x80", 1},  // U+110000
    {"\xF4\xBF\xBF\xBF", 1},
    {"\xF5\x80\x80\x80", 0},  // lead bytes that can only encode beyond U+10FFFF
    {"\xF7\xBF\xBF\xBF", 0},
    {"\xF8\x88\x80\x80\x80", 0},  // old 5- and 6-byte forms
    {"\xFC\x84\x80\x80\x80\x80", 0},
    {"\xFE", 0},
    {"\xFF", 0},
};

TEST(JsonTokenizerTest, Utf8TableBoundariesInStrings) {
  for (const Utf8Case& c : kUtf8Cases) {
    std::string hex;
    for (const char byte : c.bytes) hex += std::to_string(static_cast<unsigned char>(byte)) + " ";
    SCOPED_TRACE("bytes " + hex);
    const std::string input = "[\"a" + std::string(c.bytes) + "\"]";
    if (c.bad_index < 0) {
      EXPECT_TRUE(Accepts(input));
    } else {
      EXPECT_TRUE(Rejects(input, ErrorCode::kInvalidUtf8, 53 + c.bad_index, 50));
    }
    // In keys too.
    const std::string key = "{\"" + std::string(c.bytes) + "\":0}";
    if (c.bad_index < 0) {
      EXPECT_TRUE(Accepts(key));
    } else {
      EXPECT_TRUE(Rejects(key, ErrorCode::kInvalidUtf8, 2 + c.bad_index));
    }
  }
}

TEST(JsonTokenizerTest, NonAsciiOutsideStringsIsASyntaxError) {
  EXPECT_TRUE(Rejects("[\xC3\xA9]", ErrorCode::kUnexpectedToken, 1));
  EXPECT_TRUE(Rejects("\xFF", ErrorCode::kUnexpectedToken, 0));
  EXPECT_TRUE(Rejects("[1\xC2\xA0]", ErrorCode::kUnexpectedToken, 2));
}

// A reference decoder written differently from utf8.h: decode by bit masks, then require the
// code point to be a scalar value whose shortest encoding is exactly these bytes.
bool ReferenceIsValidUtf8(const std::string& bytes) {
  size_t i = 0;
  while (i < bytes.size()) {
    const auto lead = static_cast<unsigned char>(bytes[i]);
    size_t length;
    uint32_t code_point;
    if (lead < 0x80) {
      ++i;
      continue;
    } else if ((lead & 0xE0) == 0xC0) {
      length = 2;
      code_point = lead & 0x1F;
    } else if ((lead & 0xF0) == 0xE0) {
      length = 3;
      code_point = lead & 0x0F;
    } else if ((lead & 0xF8) == 0xF0) {
      length = 4;
      code_point = lead & 0x07;
    } else {
      return false;
    }
    if (bytes.size() - i < length) return false;
    for (size_t k = 1; k < length; ++k) {
      const auto byte = static_cast<unsigned char>(bytes[i + k]);
      if ((byte & 0xC0) != 0x80) return false;
      code_point = code_point << 6 | (byte & 0x3F);
    }
    if (code_point > 0x10FFFF || (code_point >= 0xD800 && code_point <= 0xDFFF)) return false;
    const size_t shortest = code_point < 0x80      ? 1
                            : code_point < 0x800   ? 2
                            : code_point < 0x10000 ? 3
                                                   : 4;
    if (shortest != length) return false;
    i += length;
  }
  return true;
}

TEST(Utf8Test, MatchesReferenceOnAllShortSequences) {
  std::string bytes;
  for (int a = 0; a < 256; ++a) {
    bytes.assign(1, static_cast<char>(a));
    ASSERT_EQ(IsValidUtf8(bytes), ReferenceIsValidUtf8(bytes)) << a;
    for (int b = 0; b < 256; ++b) {
      bytes.assign({static_cast<char>(a), static_cast<char>(b)});
      ASSERT_EQ(IsValidUtf8(bytes), ReferenceIsValidUtf8(bytes)) << a << " " << b;
      // Third and fourth bytes: one value from each interesting class.
      for (const int c : {0x00, 0x7F, 0x80, 0xBF, 0xC0, 0xFF}) {
        bytes.assign({static_cast<char>(a), static_cast<char>(b), static_cast<char>(c)});
        ASSERT_EQ(IsValidUtf8(bytes), ReferenceIsValidUtf8(bytes)) << a << " " << b << " " << c;
        for (const int d : {0x41, 0x80, 0xBF, 0xC0}) {
          bytes.push_back(static_cast<char>(d));
          ASSERT_EQ(IsValidUtf8(bytes), ReferenceIsValidUtf8(bytes));
          bytes.pop_back();
        }
      }
    }
  }
}

TEST(Utf8Test, ReportsFirstBadByteAndEncodes) {
  size_t bad = 99;
  EXPECT_TRUE(IsValidUtf8("a\xC3\xA9z", &bad));
  EXPECT_EQ(bad, 99u);
  EXPECT_FALSE(IsValidUtf8("ab\xED\xA0\x80", &bad));
  EXPECT_EQ(bad, 3u);
  EXPECT_FALSE(IsValidUtf8("ab\xF0\x9F\x98", &bad));  // truncated: points at the end
  EXPECT_EQ(bad, 5u);

  std::string out;
  for (const uint32_t code_point : {0x41u, 0x7FFu, 0x800u, 0xFFFFu, 0x10000u, 0x10FFFFu}) {
    AppendUtf8(code_point, &out);
  }
  EXPECT_EQ(out, "A\xDF\xBF\xE0\xA0\x80\xEF\xBF\xBF\xF0\x90\x80\x80\xF4\x8F\xBF\xBF");
  out.clear();
  AppendUtf8(0xD800, &out);
  AppendUtf8(0x110000, &out);
  EXPECT_EQ(out, "\xEF\xBF\xBD\xEF\xBF\xBD");
}

// ---------------------------------------------------------------------------------------
// Numbers

TEST(JsonTokenizerTest, NumbersInTheGrammar) {
  for (const std::string_view number :
       {"0", "-0", "1", "-1", "10", "9876543210", "0.5", "-0.0", "1.25", "1e5", "1E5", "1e+5",
        "1e-5", "0e0", "-0.0e-0", "1.5E+10", "123456789012345678901234567890", "1e999999999999",
        "-1.000000000000000000000001e-999999"}) {
    SCOPED_TRACE(std::string(number));
    const std::string input = "[" + std::string(number) + "]";
    Error error;
    const std::vector<Token> tokens = Tokenize(input, &error, 7);
    ASSERT_TRUE(error.ok()) << error.ToString();
    ASSERT_EQ(tokens.size(), 4u);
    EXPECT_EQ(tokens[1].kind, TokenKind::kNumber);
    EXPECT_EQ(tokens[1].offset, 8u);
    EXPECT_EQ(tokens[1].text, number);
    EXPECT_TRUE(Accepts(number));  // also at top level, ending at the end of input
  }
}

TEST(JsonTokenizerTest, NumbersOutsideTheGrammar) {
  // Reported at the number's first byte (here byte 2 + base 30).
  for (const std::string_view number :
       {"01",    "-01",   "00",  "-00",  "+1",  ".5",        "-.5",  "1.",   "1.e5",  "1.x",
        "1e",    "1e+",   "1ex", "1e+x", "--1", "-a",        "- 1",  "0x10", "1.2.3", "1e5e",
        "1e5.0", "1E2E3", "2-1", "1+",   "0a",  "-Infinity", "-NaN", "1_000"}) {
    EXPECT_TRUE(Rejects("[ " + std::string(number) + "]", ErrorCode::kInvalidNumber, 32, 30))
        << number;
  }
}

TEST(JsonTokenizerTest, NumbersCutByTheEndOfInput) {
  EXPECT_TRUE(Rejects("-", ErrorCode::kUnexpectedEnd, 1));
  EXPECT_TRUE(Rejects("1.", ErrorCode::kUnexpectedEnd, 2));
  EXPECT_TRUE(Rejects("1e", ErrorCode::kUnexpectedEnd, 2));
  EXPECT_TRUE(Rejects("1E-", ErrorCode::kUnexpectedEnd, 3));
  EXPECT_TRUE(Rejects("[12", ErrorCode::kUnexpectedEnd, 103, 100));
  // The same text followed by a delimiter is a bad number, not an early end.
  EXPECT_TRUE(Rejects("1. ", ErrorCode::kInvalidNumber, 0));
  EXPECT_TRUE(Rejects("-]", ErrorCode::kInvalidNumber, 0));
}

// ---------------------------------------------------------------------------------------
// Literals

TEST(JsonTokenizerTest, Literals) {
  EXPECT_TRUE(Accepts("[true,false,null]"));
  for (const std::string_view word :
       {"tru", "trUe", "True", "TRUE", "truex", "true1", "nul", "nulll", "nil", "fals", "falsy",
        "NaN", "Infinity", "undefined", "t"}) {
    EXPECT_TRUE(Rejects("[ " + std::string(word) + " ]", ErrorCode::kInvalidLiteral, 2)) << word;
  }
  EXPECT_TRUE(Rejects("nul", ErrorCode::kUnexpectedEnd, 3));
  EXPECT_TRUE(Rejects("[f", ErrorCode::kUnexpectedEnd, 12, 10));
  EXPECT_TRUE(Rejects("nulx", ErrorCode::kInvalidLiteral, 0));
  EXPECT_TRUE(Rejects("true false", ErrorCode::kTrailingContent, 5));
  EXPECT_TRUE(Rejects("[true\"x\"]", ErrorCode::kUnexpectedToken, 5));
}

// ---------------------------------------------------------------------------------------
// Depth

TEST(JsonTokenizerTest, DepthLimitBoundary) {
  for (const uint32_t max_depth : {1u, 2u, 63u, 64u, 65u, 128u, 1024u}) {
    SCOPED_TRACE(max_depth);
    std::string exact = std::string(max_depth, '[') + std::string(max_depth, ']');
    EXPECT_TRUE(Accepts(exact, 0, max_depth));
    std::string deeper = std::string(max_depth + 1, '[') + std::string(max_depth + 1, ']');
    EXPECT_TRUE(Rejects(deeper, ErrorCode::kDepthExceeded, 8 + max_depth, 8, max_depth));
    // Objects count alike.
    std::string objects;
    for (uint32_t i = 0; i < max_depth; ++i) objects += "{\"k\":";
    EXPECT_TRUE(Accepts(objects + "0" + std::string(max_depth, '}'), 0, max_depth));
    EXPECT_TRUE(Rejects(objects + "{}", ErrorCode::kDepthExceeded, 5 * max_depth, 0, max_depth));
  }
  EXPECT_TRUE(Accepts("1", 0, 0));
  EXPECT_TRUE(Rejects("[]", ErrorCode::kDepthExceeded, 0, 0, 0));
}

TEST(JsonTokenizerTest, DepthBombIsRejectedWithoutRecursion) {
  const std::string bomb(100'000, '[');
  EXPECT_TRUE(Rejects(bomb, ErrorCode::kDepthExceeded, kDefaultMaxDepth));
  EXPECT_EQ(ValidateJson(bomb).code, ErrorCode::kDepthExceeded);
}

TEST(JsonTokenizerTest, HundredThousandLevelsWithinTheLimitAreAccepted) {
  // Deep enough to overflow the stack of any recursive parser.
  constexpr uint32_t kLevels = 100'000;
  std::string input;
  // Alternate arrays and objects so that the bit stack is exercised across its words.
  for (uint32_t i = 0; i < kLevels; ++i) input += (i % 3 == 0) ? "{\"\":" : "[";
  input += "null";
  for (uint32_t i = kLevels; i-- > 0;) input += (i % 3 == 0) ? "}" : "]";
  EXPECT_TRUE(Accepts(input, 0, 200'000));
  EXPECT_EQ(ValidateJson(input, kLevels).code, ErrorCode::kOk);
  EXPECT_EQ(ValidateJson(input, kLevels - 1).code, ErrorCode::kDepthExceeded);
  // A mismatched closer deep down is still found.
  std::string mismatched = input;
  char& closer = mismatched[input.size() - kLevels / 2];
  closer = closer == '}' ? ']' : '}';
  EXPECT_EQ(ValidateJson(mismatched, kLevels).code, ErrorCode::kUnexpectedToken);
}

// ---------------------------------------------------------------------------------------
// Truncation and robustness

TEST(JsonTokenizerTest, EveryProperPrefixEndsEarly) {
  const std::string document =
      " {\"w\\u00e9\": {\"dtype\": \"BF16\", \"shape\": [4096, -1.5e+10, 0], "
      "\"data_offsets\": [0, 33554432]}, \"m\": [true, false, null, \"\\uD834\\uDD1E\\n\","
      " \"\xF0\x9D\x84\x9E\xC3\xA9\xE2\x82\xAC\", {}, [[]]], \"e\": \"\"}\r\n";
  ASSERT_TRUE(Accepts(document));
  for (size_t length = 0; length + 2 < document.size(); ++length) {  // "\r\n" may go
    // An exact-size heap copy, so that ASan sees any read past the prefix.
    const std::unique_ptr<char[]> prefix(new char[length]);
    std::memcpy(prefix.get(), document.data(), length);
    EXPECT_TRUE(
        Rejects(std::string_view(prefix.get(), length), ErrorCode::kUnexpectedEnd, 8 + length, 8))
        << "prefix of length " << length;
  }
}

TEST(JsonTokenizerTest, RandomMutationsNeverMisbehave) {
  // Not a fuzzer, a smoke test: flip and cut bytes of a valid document; every outcome must
  // be a clean accept or an error pointing inside the input. ASan runs see any overread
  // because each input is an exact-size heap copy.
  const std::string seed =
      R"({"a.b":{"dtype":"F16","shape":[1,2],"data_offsets":[0,4]},)"
      R"("__metadata__":{"k":"\u00e9\uD834\uDD1E\"\\x"},"n":[-0.5e-7,true,null]})";
  const char kAlphabet[] = "{}[]\",:\\u0123456789-+.eEtrufalsn \t\x80\xBF\xC3\xED\xF4\x1F";
  std::mt19937 rng(12345);
  for (int round = 0; round < 20000; ++round) {
    std::string input = seed;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t at = rng() % input.size();
      switch (rng() % 3) {
        case 0:
          input[at] = kAlphabet[rng() % (sizeof(kAlphabet) - 1)];
          break;
        case 1:
          input.erase(at, 1 + rng() % 3);
          break;
        default:
          input.resize(at);
          break;
      }
      if (input.empty()) input = "x";
    }
    const std::unique_ptr<char[]> copy(new char[input.size()]);
    std::memcpy(copy.get(), input.data(), input.size());
    const std::string_view view(copy.get(), input.size());
    JsonTokenizer tokenizer(view, 8);
    Token token;
    bool ended = false;
    while (tokenizer.Next(&token)) {
      ASSERT_GE(token.offset, 8u);
      ASSERT_LE(token.offset, 8 + input.size());
      if (token.kind == TokenKind::kEndOfInput) {
        ended = true;
        break;
      }
      if (token.kind == TokenKind::kString || token.kind == TokenKind::kKey) {
        std::string decoded;
        UnescapeJsonString(token.text, &decoded);
        ASSERT_TRUE(IsValidUtf8(decoded)) << input;
      }
    }
    if (!ended) {
      ASSERT_NE(tokenizer.error().code, ErrorCode::kOk);
      ASSERT_GE(tokenizer.error().offset, 8u);
      ASSERT_LE(tokenizer.error().offset, 8 + input.size());
    }
  }
}

// ---------------------------------------------------------------------------------------
// UnescapeJsonString

TEST(UnescapeJsonStringTest, EveryEscape) {
  EXPECT_EQ(Unescape(R"(\"\\\/\b\f\n\r\t)"), "\"\\/\b\f\n\r\t");
  EXPECT_EQ(Unescape(R"(\u0041\u00e9\u00E9\u20AC\uffff)"),
            "A\xC3\xA9\xC3\xA9\xE2\x82\xAC\xEF\xBF\xBF");
  EXPECT_EQ(Unescape(R"(a\u0000b)"), std::string("a\0b", 3));
}

TEST(UnescapeJsonStringTest, SurrogatePairsBecomeFourBytes) {
  EXPECT_EQ(Unescape(R"(\uD834\uDD1E)"), "\xF0\x9D\x84\x9E");  // U+1D11E
  EXPECT_EQ(Unescape(R"(\ud800\udc00)"), "\xF0\x90\x80\x80");  // U+10000
  EXPECT_EQ(Unescape(R"(\uDBFF\uDFFF)"), "\xF4\x8F\xBF\xBF");  // U+10FFFF
  EXPECT_EQ(Unescape(R"(x\uD83D\uDE00y)"), "x\xF0\x9F\x98\x80y");
}

TEST(UnescapeJsonStringTest, RawUtf8AndPlainTextPassThrough) {
  EXPECT_EQ(Unescape(""), "");
  EXPECT_EQ(Unescape("model.layers.0.weight"), "model.layers.0.weight");
  EXPECT_EQ(Unescape("\xC3\xA9\xF0\x9D\x84\x9E\\n\xE2\x82\xAC"),
            "\xC3\xA9\xF0\x9D\x84\x9E\n\xE2\x82\xAC");
  std::string out = "kept:";
  UnescapeJsonString("a\\tb", &out);  // appends
  EXPECT_EQ(out, "kept:a\tb");
}

TEST(UnescapeJsonStringTest, GarbageIsMemorySafe) {
  // Unspecified output, but no overread (ASan) and valid UTF-8 out.
  for (const std::string_view garbage :
       {"\\", "a\\", "\\u", "\\u1", "\\u12", "\\u123", "\\uZZZZ", "\\x", "\\uD834", "\\uD834\\",
        "\\uD834\\u", "\\uD834\\uDD", "\\uDD1E", "\\uD834\\uD834"}) {
    const std::unique_ptr<char[]> copy(new char[garbage.size()]);
    std::memcpy(copy.get(), garbage.data(), garbage.size());
    std::string out;
    UnescapeJsonString(std::string_view(copy.get(), garbage.size()), &out);
    EXPECT_TRUE(IsValidUtf8(out)) << garbage;
  }
}

}  // namespace
}  // namespace stguard

namespace stguard {
namespace {

TEST(TokenTextTest, ViewWithoutEscapesDecodedCopyWithThem) {
  JsonTokenizer tokens(R"({"plain":"a\u0062"})");
  Token token;
  std::string scratch = "untouched";
  ASSERT_TRUE(tokens.Next(&token));  // {
  ASSERT_TRUE(tokens.Next(&token));  // "plain"
  EXPECT_EQ(TokenText(token, &scratch), "plain");
  EXPECT_EQ(TokenText(token, &scratch).data(), token.text.data());  // no copy
  EXPECT_EQ(scratch, "untouched");
  ASSERT_TRUE(tokens.Next(&token));  // "a\u0062"
  EXPECT_EQ(TokenText(token, &scratch), "ab");
  EXPECT_EQ(scratch, "ab");
}

}  // namespace
}  // namespace stguard
