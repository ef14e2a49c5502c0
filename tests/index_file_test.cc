// SPDX-License-Identifier: Apache-2.0
// The index parser (model.safetensors.index.json): every schema rule has an accept case
// and a reject case; rejections check the code and the byte offset.
#include <gtest/gtest.h>

#include "folder/index_file.h"

namespace stguard {
namespace {

Error ParseError(std::string_view text, IndexFile* out = nullptr, const Options& options = {}) {
  IndexFile scratch;
  return ParseIndexFile(text, options, out != nullptr ? out : &scratch);
}

uint64_t At(std::string_view text, std::string_view needle, size_t nth = 0) {
  size_t index = text.find(needle);
  for (size_t i = 0; i < nth && index != std::string_view::npos; ++i) {
    index = text.find(needle, index + 1);
  }
  EXPECT_NE(index, std::string_view::npos) << needle;
  return index;
}

void ExpectRejected(std::string_view text, ErrorCode code, uint64_t offset) {
  const Error error = ParseError(text);
  EXPECT_EQ(ErrorCodeName(error.code), ErrorCodeName(code)) << text << "\n" << error.ToString();
  EXPECT_EQ(error.offset, offset) << text << "\n" << error.ToString();
}

TEST(IndexFileTest, ParsesMetadataAndWeightMapInFileOrder) {
  const std::string text =
      R"({"metadata": {"total_size": 1234, "total_parameters": 7, "extra": {"k": [1, {"k": null}]}},)"
      R"( "weight_map": {"b": "model-00002-of-00002.safetensors", "a": "model-00001-of-00002.safetensors"}})";
  IndexFile index;
  const Error error = ParseError(text, &index);
  ASSERT_TRUE(error.ok()) << error.ToString();
  EXPECT_TRUE(index.has_metadata);
  ASSERT_TRUE(index.has_total_size);
  EXPECT_EQ(index.total_size, 1234u);
  EXPECT_EQ(index.total_size_offset, At(text, "1234"));
  ASSERT_EQ(index.weight_map.size(), 2u);
  EXPECT_EQ(index.weight_map[0].tensor, "b");
  EXPECT_EQ(index.weight_map[0].shard, "model-00002-of-00002.safetensors");
  EXPECT_EQ(index.weight_map[0].key_offset, At(text, "\"b\""));
  EXPECT_EQ(index.weight_map[0].value_offset, At(text, "\"model-00002"));
  EXPECT_EQ(index.weight_map[1].tensor, "a");
}

TEST(IndexFileTest, MetadataIsOptionalAndAnEmptyWeightMapIsValid) {
  IndexFile index;
  ASSERT_TRUE(ParseError(R"( {"weight_map":{}} )", &index).ok());
  EXPECT_FALSE(index.has_metadata);
  EXPECT_FALSE(index.has_total_size);
  EXPECT_TRUE(index.weight_map.empty());
  ASSERT_TRUE(ParseError(R"({"metadata":{},"weight_map":{}})", &index).ok());
  EXPECT_TRUE(index.has_metadata);
  EXPECT_FALSE(index.has_total_size);
}

TEST(IndexFileTest, NamesAreUnescaped) {
  IndexFile index;
  ASSERT_TRUE(ParseError(R"({"weight_map":{"\u0061.w\n":"s\u00e9.safetensors"}})", &index).ok());
  ASSERT_EQ(index.weight_map.size(), 1u);
  EXPECT_EQ(index.weight_map[0].tensor, "a.w\n");
  EXPECT_EQ(index.weight_map[0].shard, "s\xc3\xa9.safetensors");
}

TEST(IndexFileTest, DuplicateKeysAreRejectedAfterUnescaping) {
  // A tensor listed twice, even for the same shard.
  const std::string twice = R"({"weight_map":{"a":"s1","b":"s1","\u0061":"s2"}})";
  ExpectRejected(twice, ErrorCode::kDuplicateKey, At(twice, "\"\\u0061\""));
  const std::string same = R"({"weight_map":{"a":"s1","a":"s1"}})";
  ExpectRejected(same, ErrorCode::kDuplicateKey, At(same, "\"a\"", 1));
  const std::string top = R"({"weight_map":{},"metadata":{},"weight_map":{}})";
  ExpectRejected(top, ErrorCode::kDuplicateKey, At(top, "\"weight_map\"", 1));
  const std::string meta = R"({"metadata":{"total_size":1,"total_size":2},"weight_map":{}})";
  ExpectRejected(meta, ErrorCode::kDuplicateKey, At(meta, "\"total_size\"", 1));
  // Deep inside a metadata value too.
  const std::string deep = R"({"metadata":{"x":[{"k":1,"j":{},"k":2}]},"weight_map":{}})";
  ExpectRejected(deep, ErrorCode::kDuplicateKey, At(deep, "\"k\"", 1));
  // The same key in different objects is fine.
  EXPECT_TRUE(ParseError(R"({"metadata":{"a":{"a":{"a":1}},"b":[{"a":1},{"a":2}]},"weight_map":{"a":"a"}})").ok());
}

TEST(IndexFileTest, TopLevelMustBeAnObjectWithOnlyMetadataAndWeightMap) {
  ExpectRejected("[]", ErrorCode::kInvalidIndex, 0);
  ExpectRejected("  \"weight_map\"", ErrorCode::kInvalidIndex, 2);
  ExpectRejected("null", ErrorCode::kInvalidIndex, 0);
  ExpectRejected(R"({"metadata":{}})", ErrorCode::kInvalidIndex, 0);  // no weight_map
  const std::string extra = R"({"weight_map":{},"format":"pt"})";
  ExpectRejected(extra, ErrorCode::kInvalidIndex, At(extra, "\"format\""));
  const Error error = ParseError(extra);
  EXPECT_EQ(error.context, "\"format\"");
}

TEST(IndexFileTest, WeightMapIsAnObjectOfStrings) {
  ExpectRejected(R"({"weight_map":[]})", ErrorCode::kInvalidIndex, 14);
  ExpectRejected(R"({"weight_map":null})", ErrorCode::kInvalidIndex, 14);
  const std::string number = R"({"weight_map":{"a":"s","b":1}})";
  ExpectRejected(number, ErrorCode::kInvalidIndex, At(number, "1}"));
  EXPECT_EQ(ParseError(number).tensor, "b");
  const std::string nested = R"({"weight_map":{"a":{"s":"t"}}})";
  ExpectRejected(nested, ErrorCode::kInvalidIndex, At(nested, "{\"s\""));
}

TEST(IndexFileTest, MetadataIsAnObject) {
  ExpectRejected(R"({"metadata":null,"weight_map":{}})", ErrorCode::kInvalidIndex, 12);
  ExpectRejected(R"({"metadata":[],"weight_map":{}})", ErrorCode::kInvalidIndex, 12);
  ExpectRejected(R"({"metadata":"x","weight_map":{}})", ErrorCode::kInvalidIndex, 12);
}

TEST(IndexFileTest, TotalSizeIsANonNegativeIntegerThatFitsIn64Bits) {
  IndexFile index;
  ASSERT_TRUE(ParseError(R"({"metadata":{"total_size":0},"weight_map":{}})", &index).ok());
  EXPECT_EQ(index.total_size, 0u);
  ASSERT_TRUE(
      ParseError(R"({"metadata":{"total_size":18446744073709551615},"weight_map":{}})", &index).ok());
  EXPECT_EQ(index.total_size, UINT64_MAX);
  for (const char* bad : {"-1", "-0", "1.0", "1e3", "18446744073709551616", "\"16\"", "null",
                          "true", "[16]"}) {
    const std::string text =
        std::string(R"({"metadata":{"total_size":)") + bad + R"(},"weight_map":{}})";
    ExpectRejected(text, ErrorCode::kInvalidIndex, At(text, bad));
  }
}

TEST(IndexFileTest, InvalidJsonIsRejectedWithTheTokenizersCode) {
  EXPECT_EQ(ParseError(R"({"weight_map":{},})").code, ErrorCode::kUnexpectedToken);
  EXPECT_EQ(ParseError(R"({"weight_map":{}} x)").code, ErrorCode::kTrailingContent);
  EXPECT_EQ(ParseError("\xEF\xBB\xBF{\"weight_map\":{}}").ok(), false);  // BOM
  EXPECT_EQ(ParseError("{\"weight_map\":{\"a\":\"s\xFF\"}}").code, ErrorCode::kInvalidUtf8);
  EXPECT_EQ(ParseError(R"({"weight_map":{"a":"s)").code, ErrorCode::kUnexpectedEnd);
  EXPECT_EQ(ParseError("").code, ErrorCode::kUnexpectedEnd);
  Options shallow;
  shallow.max_depth = 3;
  EXPECT_EQ(ParseError(R"({"metadata":{"x":[[1]]},"weight_map":{}})", nullptr, shallow).code,
            ErrorCode::kDepthExceeded);
  EXPECT_TRUE(ParseError(R"({"metadata":{"x":[1]},"weight_map":{}})", nullptr, shallow).ok());
}

TEST(IndexFileTest, ValidateJsonUniqueKeysAcceptsAnyValueAndRejectsRepeats) {
  EXPECT_TRUE(ValidateJsonUniqueKeys("1").ok());
  EXPECT_TRUE(ValidateJsonUniqueKeys(R"([{"a":1},{"a":1}])").ok());
  EXPECT_TRUE(ValidateJsonUniqueKeys(R"({"a":{"b":1},"b":{"a":1}})").ok());
  const Error error = ValidateJsonUniqueKeys(R"({"a":{"b":1,"c":2},"z":0,"a":3})");
  EXPECT_EQ(error.code, ErrorCode::kDuplicateKey);
  EXPECT_EQ(error.offset, 25u);
  EXPECT_EQ(error.context, "a");
  EXPECT_EQ(ValidateJsonUniqueKeys("[1,]").code, ErrorCode::kUnexpectedToken);
}

// Many keys: duplicates are found by sorting, so this stays fast.
TEST(IndexFileTest, LargeWeightMapsParseAndRepeatsAreFoundAnywhere) {
  std::string text = R"({"weight_map":{)";
  for (int i = 0; i < 100000; ++i) {
    if (i > 0) text += ",";
    text += "\"layers." + std::to_string(i) + ".w\":\"s" + std::to_string(i % 7) + "\"";
  }
  IndexFile index;
  ASSERT_TRUE(ParseError(text + "}}", &index).ok());
  EXPECT_EQ(index.weight_map.size(), 100000u);
  const std::string repeated = text + R"(,"layers.5.w":"s0"}})";
  ExpectRejected(repeated, ErrorCode::kDuplicateKey, repeated.size() - 19);
}

}  // namespace
}  // namespace stguard
