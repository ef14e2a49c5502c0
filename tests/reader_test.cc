// SPDX-License-Identifier: Apache-2.0
// The strict reader, rule by rule: every rule has an accept case and a reject case, and
// every rejection checks the error code and the absolute byte offset.
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "stguard/reader.h"
#include "support/test_files.h"

namespace stguard {
namespace {

using testing::FileWithHeader;
using testing::FileWithN;

constexpr uint64_t kHeaderStart = 8;

Error ErrorOf(const std::string& file, const Options& options = {}) {
  Result<Checkpoint> result = Checkpoint::FromBytes(file, options);
  return result.ok() ? Error{} : result.error();
}

// Offset of the first occurrence of `needle` in `header`, as an absolute file offset.
uint64_t At(std::string_view header, std::string_view needle) {
  const size_t index = header.find(needle);
  EXPECT_NE(index, std::string_view::npos) << needle;
  return kHeaderStart + index;
}

void ExpectAccepted(const std::string& file) {
  const Error error = ErrorOf(file);
  EXPECT_TRUE(error.ok()) << error.ToString();
}

void ExpectRejected(const std::string& file, ErrorCode code, uint64_t offset) {
  const Error error = ErrorOf(file);
  EXPECT_EQ(ErrorCodeName(error.code), ErrorCodeName(code)) << error.ToString();
  EXPECT_EQ(error.offset, offset) << error.ToString();
  EXPECT_LE(error.offset, file.size());
}

const std::string kOneByte = R"({"dtype":"U8","shape":[1],"data_offsets":[0,1]})";

// ---- The format page's worked example ----

TEST(ReaderTest, WorkedExampleParsesToExactlyItsTensor) {
  const std::string header =
      R"({"__metadata__":{"format":"tinyllm"},"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}})"
      "   ";
  ASSERT_EQ(header.size(), 96u);
  const std::string data("\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x40\x40\x00\x00\x80\x40", 16);
  const std::string file = FileWithHeader(header, data);
  ASSERT_EQ(file.size(), 120u);

  Result<Checkpoint> checkpoint = Checkpoint::FromBytes(file);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.error().ToString();
  EXPECT_EQ(checkpoint->header_len(), 96u);
  ASSERT_EQ(checkpoint->num_tensors(), 1u);
  const TensorView& w = checkpoint->tensors()[0];
  EXPECT_EQ(w.name, "w");
  EXPECT_EQ(w.dtype, Dtype::kF32);
  EXPECT_EQ(std::vector<uint64_t>(w.shape.begin(), w.shape.end()), (std::vector<uint64_t>{2, 2}));
  EXPECT_EQ(w.begin, 0u);
  EXPECT_EQ(w.end, 16u);
  EXPECT_EQ(w.num_elements(), 4u);
  EXPECT_EQ(w.data.data(), reinterpret_cast<const std::byte*>(file.data()) + 104);  // no copy
  float values[4];
  std::memcpy(values, w.data.data(), sizeof(values));
  EXPECT_EQ(values[0], 1.0f);
  EXPECT_EQ(values[3], 4.0f);
  ASSERT_EQ(checkpoint->metadata().size(), 1u);
  EXPECT_EQ(checkpoint->metadata()[0].key, "format");
  EXPECT_EQ(checkpoint->metadata()[0].value, "tinyllm");
  EXPECT_TRUE(checkpoint->has_metadata_object());
}

// ---- Stage 1: length prefix ----

TEST(LengthPrefixTest, FileShorterThanEightBytes) {
  ExpectRejected(std::string(7, '\0'), ErrorCode::kHeaderTooSmall, 0);
  ExpectRejected("", ErrorCode::kHeaderTooSmall, 0);
  ExpectAccepted(FileWithHeader("{}"));  // 10 bytes: the smallest valid file
}

TEST(LengthPrefixTest, EmptyHeaderIsNotJson) {
  ExpectRejected(FileWithHeader(""), ErrorCode::kUnexpectedEnd, 8);
}

TEST(LengthPrefixTest, HeaderLengthCapIsInclusive) {
  Options options;
  options.max_header_len = 16;
  const std::string header16 = "{}              ";
  EXPECT_TRUE(ErrorOf(FileWithHeader(header16), options).ok());
  EXPECT_EQ(ErrorOf(FileWithHeader(header16 + " "), options).code, ErrorCode::kHeaderTooLarge);
}

TEST(LengthPrefixTest, CapCannotBeRaised) {
  Options options;
  options.max_header_len = 1'000'000'000;
  EXPECT_EQ(ErrorOf(FileWithN(100'000'001, "{}"), options).code, ErrorCode::kHeaderTooLarge);
}

TEST(LengthPrefixTest, NAboveOneHundredMillionIsTooLarge) {
  ExpectRejected(FileWithN(100'000'001, "{}"), ErrorCode::kHeaderTooLarge, 0);
  ExpectRejected(FileWithN(UINT64_MAX, "{}"), ErrorCode::kHeaderTooLarge, 0);
  // Exactly the cap is allowed by the length check; this file is short, so the next
  // check (N fits in the file) is what fails.
  ExpectRejected(FileWithN(100'000'000, "{}"), ErrorCode::kInvalidHeaderLength, 0);
}

TEST(LengthPrefixTest, HeaderOfExactlyTheCapIsAccepted) {
  std::string header = "{}";
  header.resize(100'000'000, ' ');
  ExpectAccepted(FileWithHeader(header));
}

TEST(LengthPrefixTest, NMustFitInTheFile) {
  ExpectRejected(FileWithN(3, "{}"), ErrorCode::kInvalidHeaderLength, 0);
  ExpectAccepted(FileWithN(2, "{}"));
}

TEST(LengthPrefixTest, NNeedNotBeAMultipleOfEight) {
  ExpectAccepted(FileWithHeader("{} "));
  ExpectAccepted(FileWithHeader("{}"));
}

// ---- Stage 2: JSON text, as seen through the reader ----

TEST(HeaderJsonTest, WhitespaceAroundTheObject) {
  ExpectAccepted(FileWithHeader(" \t\r\n{} \t\r\n"));
  const std::string header = "{}\f";
  ExpectRejected(FileWithHeader(header), ErrorCode::kTrailingContent, 10);
}

TEST(HeaderJsonTest, NulPaddingIsTrailingContent) {
  ExpectRejected(FileWithHeader(std::string("{}\0\0", 4)), ErrorCode::kTrailingContent, 10);
}

TEST(HeaderJsonTest, SecondValueIsTrailingContent) {
  ExpectRejected(FileWithHeader("{} {}"), ErrorCode::kTrailingContent, 11);
}

TEST(HeaderJsonTest, InvalidUtf8InAName) {
  const std::string header = "{\"a\xC0\xAF\":" + kOneByte + "}";
  ExpectRejected(FileWithHeader(header, "x"), ErrorCode::kInvalidUtf8, 8 + 3);
  ExpectAccepted(FileWithHeader("{\"a\xC3\xA9\":" + kOneByte + "}", "x"));
}

TEST(HeaderJsonTest, ErrorsAfterTheHeaderStartArePositionedInTheFile) {
  const std::string header = R"({"a":{"dtype":"U8","shape":[01],"data_offsets":[0,1]}})";
  ExpectRejected(FileWithHeader(header, "x"), ErrorCode::kInvalidNumber, At(header, "01"));
}

// ---- Stage 3: schema ----

TEST(SchemaTest, EmptyObjectIsAnEmptyCheckpoint) {
  const std::string file = FileWithHeader("{}");
  Result<Checkpoint> checkpoint = Checkpoint::FromBytes(file);
  ASSERT_TRUE(checkpoint.ok());
  EXPECT_EQ(checkpoint->num_tensors(), 0u);
  EXPECT_FALSE(checkpoint->has_metadata_object());
  EXPECT_TRUE(checkpoint->data().empty());
}

TEST(SchemaTest, TopLevelMustBeAnObject) {
  ExpectRejected(FileWithHeader(" []"), ErrorCode::kHeaderNotObject, 9);
  ExpectRejected(FileWithHeader("\"x\""), ErrorCode::kHeaderNotObject, 8);
  ExpectRejected(FileWithHeader("null"), ErrorCode::kHeaderNotObject, 8);
}

TEST(SchemaTest, DuplicateTensorNames) {
  const std::string second = R"({"dtype":"U8","shape":[1],"data_offsets":[1,2]})";
  const std::string header = "{\"a\":" + kOneByte + ",\"a\":" + second + "}";
  ExpectRejected(FileWithHeader(header, "xy"), ErrorCode::kDuplicateKey,
                 8 + header.rfind("\"a\""));
  ExpectAccepted(FileWithHeader("{\"a\":" + kOneByte + ",\"b\":" + second + "}", "xy"));
}

TEST(SchemaTest, DuplicateNamesAreComparedAfterUnescaping) {
  const std::string second = R"({"dtype":"U8","shape":[1],"data_offsets":[1,2]})";
  const std::string header = "{\"w\":" + kOneByte + ",\"\\u0077\":" + second + "}";
  ExpectRejected(FileWithHeader(header, "xy"), ErrorCode::kDuplicateKey, At(header, "\"\\u0077"));
}

TEST(SchemaTest, FirstDuplicateInFileOrderIsReported) {
  // b repeats at 3rd position, a repeats at 4th: b's repeat comes first in the file.
  const std::string z = R"({"dtype":"U8","shape":[0],"data_offsets":[0,0]})";
  const std::string header =
      "{\"a\":" + z + ",\"b\":" + z + ",\"b\":" + z + ",\"a\":" + z + "}";
  const size_t second_b = header.find("\"b\"", header.find("\"b\"") + 1);
  ExpectRejected(FileWithHeader(header), ErrorCode::kDuplicateKey, 8 + second_b);
}

TEST(SchemaTest, EscapedMetadataKeyIsMetadata) {
  const std::string header = R"({"__metadata__":{},"\u005f_metadata__":{}})";
  ExpectRejected(FileWithHeader(header), ErrorCode::kDuplicateKey, At(header, "\"\\u005f"));
  // Escaped once, it is still __metadata__, so its value must be an object of strings.
  ExpectRejected(FileWithHeader(R"({"\u005f_metadata__":1})"), ErrorCode::kMetadataNotObject, 29);
  ExpectAccepted(FileWithHeader(R"({"\u005f_metadata__":{"k":"v"}})"));
}

TEST(SchemaTest, MetadataMustBeAnObjectOfStrings) {
  ExpectAccepted(FileWithHeader(R"({"__metadata__":{"k":"v","":""}})"));
  ExpectRejected(FileWithHeader(R"({"__metadata__":null})"), ErrorCode::kMetadataNotObject, 24);
  ExpectRejected(FileWithHeader(R"({"__metadata__":[]})"), ErrorCode::kMetadataNotObject, 24);
  ExpectRejected(FileWithHeader(R"({"__metadata__":{"k":1}})"),
                 ErrorCode::kMetadataValueNotString, 29);
  ExpectRejected(FileWithHeader(R"({"__metadata__":{"k":{}}})"),
                 ErrorCode::kMetadataValueNotString, 29);
}

TEST(SchemaTest, DuplicateMetadataKeys) {
  const std::string header = R"({"__metadata__":{"k":"1","j":"2","k":"3"}})";
  ExpectRejected(FileWithHeader(header), ErrorCode::kDuplicateKey, 8 + header.rfind("\"k\""));
  ExpectRejected(FileWithHeader(R"({"__metadata__":{},"__metadata__":{}})"),
                 ErrorCode::kDuplicateKey, 27);
}

TEST(SchemaTest, MetadataIsSortedAndSearchable) {
  const std::string file =
      FileWithHeader(R"({"__metadata__":{"b":"2","a":"1","\u00e9":"x\n"}})");
  Result<Checkpoint> checkpoint = Checkpoint::FromBytes(file);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.error().ToString();
  ASSERT_EQ(checkpoint->metadata().size(), 3u);
  EXPECT_EQ(checkpoint->metadata()[0].key, "a");
  EXPECT_EQ(checkpoint->metadata()[1].key, "b");
  EXPECT_EQ(checkpoint->metadata()[2].key, "\xC3\xA9");
  ASSERT_TRUE(checkpoint->FindMetadata("\xC3\xA9").has_value());
  EXPECT_EQ(*checkpoint->FindMetadata("\xC3\xA9"), "x\n");
  EXPECT_FALSE(checkpoint->FindMetadata("c").has_value());
}

TEST(SchemaTest, TensorEntryMustBeAnObject) {
  const std::string header = R"({"a":["U8",[1],[0,1]]})";
  ExpectRejected(FileWithHeader(header, "x"), ErrorCode::kTensorNotObject, At(header, "["));
  ExpectRejected(FileWithHeader(R"({"a":null})"), ErrorCode::kTensorNotObject, 13);
}

TEST(SchemaTest, UnknownFieldIsRejected) {
  const std::string header = R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"x":0}})";
  ExpectRejected(FileWithHeader(header, "x"), ErrorCode::kUnknownField, At(header, "\"x\""));
  // Case matters: "Dtype" is not "dtype".
  const std::string cased = R"({"a":{"Dtype":"U8","shape":[1],"data_offsets":[0,1]}})";
  ExpectRejected(FileWithHeader(cased, "x"), ErrorCode::kUnknownField, At(cased, "\"Dtype"));
}

TEST(SchemaTest, FieldsMayComeInAnyOrderAndBeEscaped) {
  ExpectAccepted(FileWithHeader(R"({"a":{"data_offsets":[0,1],"shape":[1],"dtype":"U8"}})", "x"));
  ExpectAccepted(FileWithHeader(R"({"a":{"\u0064type":"U8","shape":[1],"data_offsets":[0,1]}})", "x"));
}

TEST(SchemaTest, RepeatedFieldIsADuplicateKey) {
  const std::string header = R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"shape":[1]}})";
  ExpectRejected(FileWithHeader(header, "x"), ErrorCode::kDuplicateKey, 8 + header.rfind("\"shape\""));
}

TEST(SchemaTest, MissingFields) {
  const std::string no_dtype = R"({"a":{"shape":[1],"data_offsets":[0,1]}})";
  ExpectRejected(FileWithHeader(no_dtype, "x"), ErrorCode::kMissingField, At(no_dtype, "}"));
  const std::string no_shape = R"({"a":{"dtype":"U8","data_offsets":[0,1]}})";
  ExpectRejected(FileWithHeader(no_shape, "x"), ErrorCode::kMissingField, At(no_shape, "}"));
  const std::string no_offsets = R"({"a":{"dtype":"U8","shape":[1]}})";
  ExpectRejected(FileWithHeader(no_offsets, "x"), ErrorCode::kMissingField, At(no_offsets, "}"));
}

TEST(SchemaTest, DtypeMustBeAKnownNameCaseSensitive) {
  for (Dtype dtype : kAllDtypes) {
    const std::string header = "{\"a\":{\"dtype\":\"" + std::string(DtypeName(dtype)) +
                               "\",\"shape\":[0],\"data_offsets\":[0,0]}}";
    ExpectAccepted(FileWithHeader(header));
  }
  const std::string lower = R"({"a":{"dtype":"f32","shape":[0],"data_offsets":[0,0]}})";
  ExpectRejected(FileWithHeader(lower), ErrorCode::kInvalidDtype, At(lower, "\"f32"));
  const std::string number = R"({"a":{"dtype":32,"shape":[0],"data_offsets":[0,0]}})";
  ExpectRejected(FileWithHeader(number), ErrorCode::kInvalidDtype, At(number, "32"));
  const std::string escaped = R"({"a":{"dtype":"F\u0033\u0032","shape":[0],"data_offsets":[0,0]}})";
  ExpectAccepted(FileWithHeader(escaped));
}

TEST(SchemaTest, ShapeIsAnArrayOfNonNegativeIntegers) {
  auto with_shape = [](std::string_view shape) {
    return "{\"a\":{\"dtype\":\"U8\",\"shape\":" + std::string(shape) +
           ",\"data_offsets\":[0,0]}}";
  };
  ExpectAccepted(FileWithHeader(with_shape("[0]")));
  ExpectAccepted(FileWithHeader(with_shape("[0,18446744073709551615]")));
  for (std::string_view bad : {"[-1]", "[1.0]", "[1e2]", "[-0]", "[\"1\"]", "[[0]]",
                               "[18446744073709551616]", "[null]"}) {
    const std::string header = with_shape(bad);
    ExpectRejected(FileWithHeader(header), ErrorCode::kInvalidShape, 8 + header.find('[') + 1);
  }
  const std::string not_array = with_shape("0");
  ExpectRejected(FileWithHeader(not_array), ErrorCode::kInvalidShape, At(not_array, "0,"));
}

TEST(SchemaTest, ScalarShapeHasOneElement) {
  ExpectAccepted(FileWithHeader(R"({"s":{"dtype":"F32","shape":[],"data_offsets":[0,4]}})", "abcd"));
  const std::string empty = R"({"s":{"dtype":"F32","shape":[],"data_offsets":[0,0]}})";
  ExpectRejected(FileWithHeader(empty), ErrorCode::kTensorInvalidInfo, At(empty, "\"data_offsets"));
}

TEST(SchemaTest, DataOffsetsAreExactlyTwoIntegers) {
  auto with_offsets = [](std::string_view offsets) {
    return "{\"a\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":" + std::string(offsets) + "}}";
  };
  ExpectAccepted(FileWithHeader(with_offsets("[0,0]")));
  const std::string one = with_offsets("[0]");
  ExpectRejected(FileWithHeader(one), ErrorCode::kInvalidDataOffsets, 8 + one.rfind(']'));
  const std::string three = with_offsets("[0,0,0]");
  ExpectRejected(FileWithHeader(three), ErrorCode::kInvalidDataOffsets, 8 + three.rfind("0]"));
  const std::string negative = with_offsets("[-1,0]");
  ExpectRejected(FileWithHeader(negative), ErrorCode::kInvalidDataOffsets, At(negative, "-1"));
  const std::string huge = with_offsets("[0,18446744073709551616]");
  ExpectRejected(FileWithHeader(huge), ErrorCode::kInvalidDataOffsets, At(huge, "1844"));
  const std::string object = with_offsets("{}");
  ExpectRejected(FileWithHeader(object), ErrorCode::kInvalidDataOffsets, At(object, "{}"));
}

// ---- Stage 4: sizes ----

TEST(SizeTest, RunningProductMatchesTheReference) {
  // 0 first: every later step is 0 * 2^40, no overflow.
  ExpectAccepted(FileWithHeader(
      R"({"z":{"dtype":"F32","shape":[0,1099511627776,1099511627776],"data_offsets":[0,0]}})"));
  // 2^40 * 2^40 overflows before the 0 is reached.
  const std::string header =
      R"({"z":{"dtype":"F32","shape":[1099511627776,1099511627776,0],"data_offsets":[0,0]}})";
  ExpectRejected(FileWithHeader(header), ErrorCode::kValidationOverflow, At(header, "\"shape"));
}

TEST(SizeTest, BitCountOverflow) {
  const std::string header =
      R"({"z":{"dtype":"U64","shape":[2305843009213693952],"data_offsets":[0,0]}})";
  ExpectRejected(FileWithHeader(header), ErrorCode::kValidationOverflow, At(header, "\"shape"));
}

TEST(SizeTest, SubByteDtypesMustFillWholeBytes) {
  ExpectAccepted(FileWithHeader(R"({"a":{"dtype":"F4","shape":[2],"data_offsets":[0,1]}})", "x"));
  ExpectAccepted(FileWithHeader(R"({"a":{"dtype":"F6_E2M3","shape":[4],"data_offsets":[0,3]}})", "xyz"));
  const std::string f4 = R"({"a":{"dtype":"F4","shape":[3],"data_offsets":[0,1]}})";
  ExpectRejected(FileWithHeader(f4, "x"), ErrorCode::kMisalignedSlice, At(f4, "\"shape"));
  const std::string f6 = R"({"a":{"dtype":"F6_E3M2","shape":[2],"data_offsets":[0,1]}})";
  ExpectRejected(FileWithHeader(f6, "x"), ErrorCode::kMisalignedSlice, At(f6, "\"shape"));
}

TEST(SizeTest, LengthMustEqualDtypeTimesShape) {
  ExpectAccepted(FileWithHeader(R"({"a":{"dtype":"BF16","shape":[2,3],"data_offsets":[0,12]}})",
                                std::string(12, 'x')));
  const std::string header = R"({"a":{"dtype":"BF16","shape":[2,3],"data_offsets":[0,11]}})";
  ExpectRejected(FileWithHeader(header, std::string(11, 'x')), ErrorCode::kTensorInvalidInfo,
                 At(header, "\"data_offsets"));
}

TEST(SizeTest, EndBeforeBeginIsAnInvalidOffset) {
  const std::string header = R"({"a":{"dtype":"U8","shape":[0],"data_offsets":[1,0]}})";
  ExpectRejected(FileWithHeader(header, "x"), ErrorCode::kInvalidOffset,
                 At(header, "\"data_offsets"));
}

// ---- Stage 5: tiling ----

TEST(TilingTest, TensorsTileTheBufferInAnyHeaderOrder) {
  const std::string header =
      R"({"b":{"dtype":"U8","shape":[2],"data_offsets":[1,3]},"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})";
  const std::string file = FileWithHeader(header, "xyz");
  Result<Checkpoint> checkpoint = Checkpoint::FromBytes(file);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.error().ToString();
  EXPECT_EQ(checkpoint->tensors()[0].name, "a");  // file order, not header order
  EXPECT_EQ(checkpoint->tensors()[1].name, "b");
  EXPECT_EQ(std::string_view(reinterpret_cast<const char*>(checkpoint->Find("b")->data.data()), 2),
            "yz");
}

TEST(TilingTest, FirstTensorMustStartAtZero) {
  const std::string header = R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})";
  ExpectRejected(FileWithHeader(header, "xy"), ErrorCode::kInvalidOffset, At(header, "\"a\""));
}

TEST(TilingTest, Gap) {
  const std::string header =
      R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"b":{"dtype":"U8","shape":[1],"data_offsets":[2,3]}})";
  ExpectRejected(FileWithHeader(header, "xyz"), ErrorCode::kInvalidOffset, At(header, "\"b\""));
}

TEST(TilingTest, Overlap) {
  const std::string header =
      R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},"b":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})";
  ExpectRejected(FileWithHeader(header, "xy"), ErrorCode::kInvalidOffset, At(header, "\"b\""));
}

TEST(TilingTest, ZeroSizeTensorMayShareItsBeginWithTheNext) {
  const std::string header =
      R"({"b":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"a":{"dtype":"U8","shape":[0],"data_offsets":[0,0]},"c":{"dtype":"U8","shape":[0],"data_offsets":[1,1]}})";
  const std::string file = FileWithHeader(header, "x");
  Result<Checkpoint> checkpoint = Checkpoint::FromBytes(file);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.error().ToString();
  EXPECT_EQ(checkpoint->tensors()[0].name, "a");
  EXPECT_EQ(checkpoint->tensors()[1].name, "b");
  EXPECT_EQ(checkpoint->tensors()[2].name, "c");
}

TEST(TilingTest, ZeroSizeTensorsAtOneOffsetAreInNameOrder) {
  // Found by fuzz_header's order check: ties used to keep header order.
  const std::string header =
      R"({"b":{"dtype":"U8","shape":[0],"data_offsets":[0,0]},"a":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}})";
  const std::string file = FileWithHeader(header);
  Result<Checkpoint> checkpoint = Checkpoint::FromBytes(file);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.error().ToString();
  EXPECT_EQ(checkpoint->tensors()[0].name, "a");
  EXPECT_EQ(checkpoint->tensors()[1].name, "b");
}

TEST(TilingTest, TrailingBytesAreNotAllowed) {
  const std::string header = "{\"a\":" + kOneByte + "}";
  const std::string file = FileWithHeader(header, "xy");
  ExpectRejected(file, ErrorCode::kMetadataIncompleteBuffer, file.size() - 1);
  ExpectRejected(FileWithHeader("{}", "x"), ErrorCode::kMetadataIncompleteBuffer, 10);
}

TEST(TilingTest, TensorsMayNotRunPastTheEnd) {
  const std::string header = R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}})";
  const std::string file = FileWithHeader(header, "x");
  ExpectRejected(file, ErrorCode::kMetadataIncompleteBuffer, file.size());
}

// ---- API ----

TEST(ReaderApiTest, FindLooksUpByUnescapedName) {
  const std::string header =
      R"({"\u00e9\n":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"b":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})";
  const std::string file = FileWithHeader(header, "xy");
  Result<Checkpoint> checkpoint = Checkpoint::FromBytes(file);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.error().ToString();
  ASSERT_NE(checkpoint->Find("\xC3\xA9\n"), nullptr);
  EXPECT_EQ(checkpoint->Find("\xC3\xA9\n")->begin, 0u);
  EXPECT_EQ(checkpoint->Find("b")->begin, 1u);
  EXPECT_EQ(checkpoint->Find("c"), nullptr);
  EXPECT_EQ(checkpoint->Find(""), nullptr);

  // Moving the checkpoint keeps every view valid.
  Checkpoint moved = std::move(checkpoint.value());
  EXPECT_EQ(moved.Find("\xC3\xA9\n")->name, "\xC3\xA9\n");
}

TEST(ReaderApiTest, ErrorsNameTheTensor) {
  const std::string header = R"({"layer.0":{"dtype":"X","shape":[1],"data_offsets":[0,1]}})";
  const Error error = ErrorOf(FileWithHeader(header, "x"));
  EXPECT_EQ(error.tensor, "layer.0");
  EXPECT_NE(error.ToString().find("(tensor 'layer.0')"), std::string::npos) << error.ToString();
}

TEST(ReaderApiTest, ToStringDoesNotPrintControlCharacters) {
  const std::string header = R"({"a\u001b[2J":{"dtype":"X","shape":[1],"data_offsets":[0,1]}})";
  const Error error = ErrorOf(FileWithHeader(header, "x"));
  EXPECT_EQ(error.ToString().find('\x1b'), std::string::npos);
  EXPECT_NE(error.ToString().find("\\x1b"), std::string::npos);
}

class ReaderFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("stguard_reader_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& content) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }
  std::filesystem::path dir_;
};

TEST_F(ReaderFileTest, OpenMapsAndValidates) {
  const std::string path = Write("ok.safetensors", FileWithHeader("{\"a\":" + kOneByte + "}", "x"));
  Result<Checkpoint> checkpoint = Checkpoint::Open(path);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.error().ToString();
  EXPECT_EQ(checkpoint->Find("a")->data.size(), 1u);
}

TEST_F(ReaderFileTest, MissingFileIsAnIoError) {
  EXPECT_EQ(Checkpoint::Open((dir_ / "missing").string()).error().code, ErrorCode::kIoError);
}

TEST_F(ReaderFileTest, DirectoryIsNotARegularFile) {
  EXPECT_EQ(Checkpoint::Open(dir_.string()).error().code, ErrorCode::kNotARegularFile);
}

TEST_F(ReaderFileTest, FifoIsRefusedWithoutWaitingForAWriter) {
  const std::string path = (dir_ / "fifo").string();
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  EXPECT_EQ(Checkpoint::Open(path).error().code, ErrorCode::kNotARegularFile);
}

TEST_F(ReaderFileTest, EmptyFileIsTooSmall) {
  EXPECT_EQ(Checkpoint::Open(Write("empty", "")).error().code, ErrorCode::kHeaderTooSmall);
}

// ---- Resources ----

TEST(ReaderResourceTest, AllocationFailureIsAnErrorNotACrash) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer reserves address space, so RLIMIT_AS cannot be used";
#else
  // A 20 MB header whose tensor list needs more memory than the child is allowed.
  std::string header = "{";
  for (int i = 0; i < 200000; ++i) {
    if (i > 0) header += ",";
    header += "\"t" + std::to_string(i) + R"(":{"dtype":"U8","shape":[0],"data_offsets":[0,0]})";
  }
  header += "}";
  const std::string file = FileWithHeader(header);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    long vm_pages = 0;
    std::ifstream("/proc/self/statm") >> vm_pages;
    const rlim_t limit = static_cast<rlim_t>(vm_pages) * ::sysconf(_SC_PAGESIZE) + (8 << 20);
    const rlimit rl{limit, limit};
    ::setrlimit(RLIMIT_AS, &rl);
    Result<Checkpoint> result = Checkpoint::FromBytes(file);
    // Say which code came back (without allocating), so a failure here can be diagnosed.
    if (!result.ok()) {
      const std::string_view name = ErrorCodeName(result.error().code);
      std::fprintf(stderr, "child: %.*s\n", static_cast<int>(name.size()), name.data());
    }
    ::_exit(result.ok() ? 1 : result.error().code == ErrorCode::kOutOfMemory ? 0 : 2);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the child crashed instead of reporting OutOfMemory";
  EXPECT_EQ(WEXITSTATUS(status), 0);
#endif
}

// ---- Corpus replay: the expected error code is each invalid file's name prefix ----

std::vector<std::filesystem::path> FilesIn(const std::string& folder) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(CorpusTest, SampleCheckpointIsValid) {
  Result<Checkpoint> checkpoint = Checkpoint::Open(STGUARD_CORPUS_DIR "/sample.safetensors");
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.error().ToString();
  EXPECT_EQ(checkpoint->num_tensors(), 7u);
}

TEST(CorpusTest, ValidFilesAreAccepted) {
  const auto files = FilesIn(STGUARD_CORPUS_DIR "/valid");
  ASSERT_GE(files.size(), 10u);
  for (const auto& path : files) {
    Result<Checkpoint> checkpoint = Checkpoint::Open(path.string());
    EXPECT_TRUE(checkpoint.ok()) << path << ": " << checkpoint.error().ToString();
  }
}

TEST(CorpusTest, InvalidFilesFailWithTheCodeInTheirName) {
  const auto files = FilesIn(STGUARD_CORPUS_DIR "/invalid");
  ASSERT_GE(files.size(), 40u);
  for (const auto& path : files) {
    const std::string name = path.filename().string();
    const std::string expected = name.substr(0, name.find("__"));
    Result<Checkpoint> checkpoint = Checkpoint::Open(path.string());
    ASSERT_FALSE(checkpoint.ok()) << path;
    EXPECT_EQ(ErrorCodeName(checkpoint.error().code), expected)
        << path << ": " << checkpoint.error().ToString();
    EXPECT_LE(checkpoint.error().offset, std::filesystem::file_size(path)) << path;
  }
}

}  // namespace
}  // namespace stguard
