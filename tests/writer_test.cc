// SPDX-License-Identifier: Apache-2.0
// The canonical writer: goldens derived by hand from the rules in stguard/writer.h, every
// refusal with its code (and no output), streaming producers, and check --canonical.
//
// How a golden is derived. A tensor entry is
//   "NAME":{"dtype":"DT","shape":[S],"data_offsets":[B,E]}
// whose length is q + dt + s + b + e + 43, where q is the length of the quoted, escaped
// name, dt of the dtype name, s of the comma-separated dims, b and e of the two offsets:
//   q + 1 (:) + 1 ({) + 8 ("dtype":) + dt + 2 (quotes) + 1 (,) + 8 ("shape":) + 2 ([])
//   + s + 1 (,) + 15 ("data_offsets":) + 2 ([]) + b + 1 (,) + e + 1 (}) = q+dt+s+b+e+43.
// The header text is { + [metadata ,] + entries joined by , + }; N rounds it up to a
// multiple of 8 with spaces.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "stguard/reader.h"
#include "stguard/writer.h"
#include "support/temp_dir.h"
#include "support/tensor_set.h"
#include "support/test_files.h"

namespace stguard {
namespace {

using testing::AsBytes;
using testing::Bytes;
using testing::FileWithHeader;
using testing::HexDump;
using testing::kWorkedText;
using testing::LengthPrefix;
using testing::ReadFileBytes;
using testing::TempDir;
using testing::TensorSet;
using testing::WriteFileBytes;

std::string MustWrite(const Writer& writer) {
  Result<std::string> bytes = writer.WriteToString();
  EXPECT_TRUE(bytes.ok()) << bytes.error().ToString();
  return bytes.ok() ? *bytes : std::string();
}

void ExpectSameBytes(const std::string& actual, const std::string& expected) {
  EXPECT_EQ(actual.size(), expected.size());
  EXPECT_TRUE(actual == expected) << "actual:\n"
                                  << HexDump(actual) << "\nexpected:\n"
                                  << HexDump(expected);
}

// ---------------------------------------------------------------- goldens

TEST(WriterGoldenTest, WorkedExampleWritesExactlyThe120BytesOfTheFormatPage) {
  // One F32 tensor w = [[1, 2], [3, 4]], metadata {"format": "tinyllm"}. Header text:
  //   { + "__metadata__":{"format":"tinyllm"} (14+1+20 = 35) + , + entry + }
  //   entry: q=3 ("w"), dt=3 (F32), s=3 (2,2), b=1 (0), e=2 (16): 3+3+3+1+2+43 = 55
  //   total 1 + 35 + 1 + 55 + 1 = 93; 93 % 8 = 5, so 3 spaces and N = 96 = 0x60.
  // Data: 1.0f 2.0f 3.0f 4.0f little-endian = 0x3f800000 0x40000000 0x40400000 0x40800000.
  const std::string expected = Bytes({
      0x60, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x7b, 0x22, 0x5f, 0x5f,  // `.......{"__
      0x6d, 0x65, 0x74, 0x61, 0x64, 0x61, 0x74, 0x61, 0x5f, 0x5f, 0x22, 0x3a,  // metadata__":
      0x7b, 0x22, 0x66, 0x6f, 0x72, 0x6d, 0x61, 0x74, 0x22, 0x3a, 0x22, 0x74,  // {"format":"t
      0x69, 0x6e, 0x79, 0x6c, 0x6c, 0x6d, 0x22, 0x7d, 0x2c, 0x22, 0x77, 0x22,  // inyllm"},"w"
      0x3a, 0x7b, 0x22, 0x64, 0x74, 0x79, 0x70, 0x65, 0x22, 0x3a, 0x22, 0x46,  // :{"dtype":"F
      0x33, 0x32, 0x22, 0x2c, 0x22, 0x73, 0x68, 0x61, 0x70, 0x65, 0x22, 0x3a,  // 32","shape":
      0x5b, 0x32, 0x2c, 0x32, 0x5d, 0x2c, 0x22, 0x64, 0x61, 0x74, 0x61, 0x5f,  // [2,2],"data_
      0x6f, 0x66, 0x66, 0x73, 0x65, 0x74, 0x73, 0x22, 0x3a, 0x5b, 0x30, 0x2c,  // offsets":[0,
      0x31, 0x36, 0x5d, 0x7d, 0x7d, 0x20, 0x20, 0x20, 0x00, 0x00, 0x80, 0x3f,  // 16]}}   ...?
      0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x40, 0x40, 0x00, 0x00, 0x80, 0x40,  // ...@..@@...@
  });
  ASSERT_EQ(expected.size(), 120u);

  const float values[] = {1.0f, 2.0f, 3.0f, 4.0f};
  Writer writer;
  ASSERT_TRUE(writer.AddMetadata("format", "tinyllm").ok());
  ASSERT_TRUE(writer.AddTensor("w", Dtype::kF32, {2, 2}, std::as_bytes(std::span(values))).ok());
  ExpectSameBytes(MustWrite(writer), expected);

  Result<uint64_t> size = writer.FileSize();
  ASSERT_TRUE(size.ok());
  EXPECT_EQ(*size, 120u);
  Result<std::string> header = writer.CanonicalHeader();
  ASSERT_TRUE(header.ok());
  EXPECT_EQ(*header, expected.substr(8, 96));
}

TEST(WriterGoldenTest, SortsByDescendingDtypeThenNameWithEmptyAndScalarTensors) {
  // Given in scrambled order. Canonical order: F64 x, I16 e, U8 a, U8 b, F4 f, BOOL c
  // (dtype enum descending: F64 > I16 > U8 > F4 > BOOL; a < b within U8).
  // Sizes: x scalar F64 8 bytes; e [0] I16 0 bytes; a [1] U8 1; b [2] U8 2;
  // f [2] F4 2*4 bits = 1 byte; c [3] BOOL 3. Offsets: x [0,8] e [8,8] a [8,9] b [9,11]
  // f [11,12] c [12,15]; 15 data bytes.
  // Entries (q+dt+s+b+e+43): x 3+3+0+1+1 = 51, e 3+3+1+1+1 = 52, a 3+2+1+1+1 = 51,
  // b 3+2+1+1+2 = 52, f 3+2+1+2+2 = 53, c 3+4+1+2+2 = 55; sum 314.
  // Metadata keys sorted a < k: "__metadata__":{"a":"b","k":"v"} = 14+1+17 = 32.
  // Text: 2 braces + 32 + 6 commas + 314 = 354; 354 % 8 = 2, so 6 spaces, N = 360 = 0x168.
  const std::string expected_header =
      R"({"__metadata__":{"a":"b","k":"v"},)"
      R"("x":{"dtype":"F64","shape":[],"data_offsets":[0,8]},)"
      R"("e":{"dtype":"I16","shape":[0],"data_offsets":[8,8]},)"
      R"("a":{"dtype":"U8","shape":[1],"data_offsets":[8,9]},)"
      R"("b":{"dtype":"U8","shape":[2],"data_offsets":[9,11]},)"
      R"("f":{"dtype":"F4","shape":[2],"data_offsets":[11,12]},)"
      R"("c":{"dtype":"BOOL","shape":[3],"data_offsets":[12,15]}})"
      "      ";
  ASSERT_EQ(expected_header.size(), 360u);
  const std::string expected =
      Bytes({0x68, 0x01, 0, 0, 0, 0, 0, 0}) + expected_header +
      Bytes({0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf0, 0x3f,  // x = 1.0 (F64)
             0x03,                                            // a
             0x01, 0x02,                                      // b
             0x21,                                            // f: two F4 nibbles
             0x01, 0x00, 0x01});                              // c
  ASSERT_EQ(expected.size(), 383u);

  const std::string c = Bytes({1, 0, 1});
  const std::string a = Bytes({3});
  const std::string f = Bytes({0x21});
  const std::string x = Bytes({0, 0, 0, 0, 0, 0, 0xf0, 0x3f});
  const std::string b = Bytes({1, 2});
  Writer writer;
  ASSERT_TRUE(writer.AddTensor("c", Dtype::kBOOL, {3}, AsBytes(c)).ok());
  ASSERT_TRUE(writer.AddMetadata("k", "v").ok());
  ASSERT_TRUE(writer.AddTensor("a", Dtype::kU8, {1}, AsBytes(a)).ok());
  ASSERT_TRUE(writer.AddTensor("f", Dtype::kF4, {2}, AsBytes(f)).ok());
  ASSERT_TRUE(writer.AddTensor("x", Dtype::kF64, {}, AsBytes(x)).ok());
  ASSERT_TRUE(writer.AddMetadata("a", "b").ok());
  ASSERT_TRUE(writer.AddTensor("b", Dtype::kU8, {2}, AsBytes(b)).ok());
  ASSERT_TRUE(writer.AddTensor("e", Dtype::kI16, {0}, {}).ok());
  ExpectSameBytes(MustWrite(writer), expected);
}

TEST(WriterGoldenTest, EscapesNamesAndMetadataExactlyLikeSerdeJson) {
  // Ten U8 [1] tensors whose names cover every escaping rule, sorted by UTF-8 bytes:
  //   i name bytes       written as     q     i name bytes       written as     q
  //   0 (empty)          ""             2     5 61 22 62         "a\"b"         6
  //   1 01               "\u0001"       8     6 74 61 62 09      "tab\t"        7
  //   2 1f               "\u001f"       8     7 7f (DEL)         "<7f>" raw     3
  //   3 2f  /            "/" raw        3     8 c3 a9  é         "é" raw        4
  //   4 5c  backslash    "\\"           4     9 f0 9f 98 80 😀   raw            6
  // Tensor i holds the byte i at [i, i+1]. Entry = q + 2 (U8) + 1 ([1]) + b + e + 43:
  //   50 56 56 51 52 54 55 51 52 55 (only tensor 9 has a two-digit end, "10"): sum 532.
  // Metadata keys sorted 0a < 5a < 7a < c3:
  //   "\n":"\b\f\r" (4+1+8 = 13), "Z":"a/b<7f>" (3+1+6 = 10), "z":"\u0000" (3+1+8 = 12),
  //   "é":"" (4+1+2 = 7); "__metadata__":{...} = 14+1+1 + 13+10+12+7 + 3 commas + 1 = 62.
  // Text: 2 + 62 + 10 commas + 532 = 606; 606 % 8 = 6, so 2 spaces, N = 608 = 0x260.
  const std::string expected_header =
      "{\"__metadata__\":{\"\\n\":\"\\b\\f\\r\",\"Z\":\"a/b\x7f\",\"z\":\"\\u0000\","
      "\"\xc3\xa9\":\"\"},"
      "\"\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},"
      "\"\\u0001\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1,2]},"
      "\"\\u001f\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[2,3]},"
      "\"/\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[3,4]},"
      "\"\\\\\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[4,5]},"
      "\"a\\\"b\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[5,6]},"
      "\"tab\\t\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[6,7]},"
      "\"\x7f\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[7,8]},"
      "\"\xc3\xa9\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[8,9]},"
      "\"\xf0\x9f\x98\x80\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[9,10]}}"
      "  ";
  ASSERT_EQ(expected_header.size(), 608u);
  const std::string expected = Bytes({0x60, 0x02, 0, 0, 0, 0, 0, 0}) + expected_header +
                               Bytes({0, 1, 2, 3, 4, 5, 6, 7, 8, 9});

  // Given in reverse order, metadata too.
  const std::vector<std::string> names = {
      std::string(), std::string("\x01"), "\x1f", "/", "\\", "a\"b", "tab\t", "\x7f",
      "\xc3\xa9", "\xf0\x9f\x98\x80"};
  std::vector<std::string> data;
  for (size_t i = 0; i < names.size(); ++i) data.push_back(std::string(1, static_cast<char>(i)));
  Writer writer;
  for (size_t i = names.size(); i-- > 0;) {
    ASSERT_TRUE(writer.AddTensor(names[i], Dtype::kU8, {1}, AsBytes(data[i])).ok()) << i;
  }
  ASSERT_TRUE(writer.AddMetadata("\xc3\xa9", "").ok());
  ASSERT_TRUE(writer.AddMetadata("z", std::string(1, '\0')).ok());
  ASSERT_TRUE(writer.AddMetadata("Z", "a/b\x7f").ok());
  ASSERT_TRUE(writer.AddMetadata("\n", "\b\f\r").ok());
  const std::string written = MustWrite(writer);
  ExpectSameBytes(written, expected);

  // The reader gives back exactly the names, bytes and metadata.
  Result<Checkpoint> checkpoint = Checkpoint::FromBytes(written);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.error().ToString();
  for (size_t i = 0; i < names.size(); ++i) {
    const TensorView* view = checkpoint->Find(names[i]);
    ASSERT_NE(view, nullptr) << i;
    ASSERT_EQ(view->data.size(), 1u);
    EXPECT_EQ(static_cast<unsigned>(view->data[0]), i);
  }
  ASSERT_TRUE(checkpoint->FindMetadata("z").has_value());
  EXPECT_EQ(*checkpoint->FindMetadata("z"), std::string_view("\0", 1));
  ASSERT_TRUE(checkpoint->FindMetadata("\n").has_value());
  EXPECT_EQ(*checkpoint->FindMetadata("\n"), "\b\f\r");
}

TEST(WriterGoldenTest, ZeroTensorsAndNoMetadataIsTheSixteenByteEmptyFile) {
  // Text "{}" (2 bytes), 6 spaces, N = 8. The reader accepts it.
  const std::string expected = Bytes({0x08, 0, 0, 0, 0, 0, 0, 0, '{', '}', ' ', ' ', ' ', ' ',
                                      ' ', ' '});
  Writer writer;
  const std::string written = MustWrite(writer);
  ExpectSameBytes(written, expected);
  Result<Checkpoint> checkpoint = Checkpoint::FromBytes(written);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.error().ToString();
  EXPECT_EQ(checkpoint->num_tensors(), 0u);
  EXPECT_FALSE(checkpoint->has_metadata_object());
}

TEST(WriterGoldenTest, ZeroTensorsWithMetadata) {
  // {"__metadata__":{"a":"b"}}: 1 + 14 + 1 + 9 + 1 = 26; 6 spaces; N = 32.
  const std::string expected =
      LengthPrefix(32) + std::string(R"({"__metadata__":{"a":"b"}})") + "      ";
  Writer writer;
  ASSERT_TRUE(writer.AddMetadata("a", "b").ok());
  ExpectSameBytes(MustWrite(writer), expected);
}

TEST(WriterGoldenTest, WritesDimsUpToUint64Max) {
  // [0, 2^64-1]: the running product is 0 * (2^64-1) = 0, no overflow; 0 bytes.
  // Entry: q=3, dt=2, s=22 ("0,18446744073709551615"), b=1, e=1: 72. Text 74, 6 spaces,
  // N = 80.
  const std::string expected =
      LengthPrefix(80) +
      std::string(R"({"z":{"dtype":"U8","shape":[0,18446744073709551615],"data_offsets":[0,0]}})") +
      "      ";
  Writer writer;
  const uint64_t shape[] = {0, UINT64_MAX};
  ASSERT_TRUE(writer.AddTensor("z", Dtype::kU8, shape, {}).ok());
  const std::string written = MustWrite(writer);
  ExpectSameBytes(written, expected);
  Result<Checkpoint> checkpoint = Checkpoint::FromBytes(written);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.error().ToString();
}

TEST(WriterGoldenTest, NoPaddingWhenTheTextIsAMultipleOfEight) {
  // Entry for "abcdefgh" F32 [2,2] [0,16]: q=10, 10+3+3+1+2+43 = 62; text 64 = 8 * 8, so
  // no spaces and N = 64.
  const std::string expected =
      LengthPrefix(64) +
      std::string(R"({"abcdefgh":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}})") +
      std::string(16, '\0');
  const std::string zeros(16, '\0');
  Writer writer;
  ASSERT_TRUE(writer.AddTensor("abcdefgh", Dtype::kF32, {2, 2}, AsBytes(zeros)).ok());
  ExpectSameBytes(MustWrite(writer), expected);
}

TEST(WriterGoldenTest, AllTwentyTwoDtypesInDescendingEnumOrder) {
  // One empty tensor per dtype, named by the dtype in lowercase so that name order
  // ("bf16" < "bool" < ... < "u8") would give another order: only the dtype decides.
  const char* const kDescending[] = {
      "U64",         "I64",         "F64",     "C64",     "F32",     "U32",
      "I32",         "BF16",        "F16",     "U16",     "I16",     "F8_E5M2FNUZ",
      "F8_E4M3FNUZ", "F8_E8M0",     "F8_E4M3", "F8_E5M2", "I8",      "U8",
      "F6_E3M2",     "F6_E2M3",     "F4",      "BOOL"};
  std::string expected_text = "{";
  for (const char* name : kDescending) {
    std::string lower(name);
    for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (expected_text.size() > 1) expected_text += ",";
    expected_text += "\"" + lower + "\":{\"dtype\":\"" + name +
                     "\",\"shape\":[0],\"data_offsets\":[0,0]}";
  }
  expected_text += "}";
  ASSERT_EQ(expected_text.size(), 1281u);  // 7 spaces of padding to 1288

  Writer writer;
  for (Dtype dtype : kAllDtypes) {
    std::string lower(DtypeName(dtype));
    for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    ASSERT_TRUE(writer.AddTensor(lower, dtype, {0}, {}).ok());
  }
  Result<std::string> header = writer.CanonicalHeader();
  ASSERT_TRUE(header.ok()) << header.error().ToString();
  EXPECT_EQ(*header, expected_text + std::string(7, ' '));
}

// ---------------------------------------------------------------- refusals

Error AddError(std::string_view name, Dtype dtype, std::initializer_list<uint64_t> shape,
               std::string_view data) {
  Writer writer;
  return writer.AddTensor(name, dtype, shape, AsBytes(data));
}

void ExpectCode(const Error& error, ErrorCode code) {
  EXPECT_EQ(ErrorCodeName(error.code), ErrorCodeName(code)) << error.ToString();
}

TEST(WriterRefusalTest, TensorNamedMetadata) {
  const Error error = AddError("__metadata__", Dtype::kU8, {1}, "x");
  ExpectCode(error, ErrorCode::kInvalidTensorName);
  EXPECT_EQ(error.tensor, "__metadata__");
  // Near misses are ordinary names.
  ExpectCode(AddError("__metadata_", Dtype::kU8, {1}, "x"), ErrorCode::kOk);
  ExpectCode(AddError("__METADATA__", Dtype::kU8, {1}, "x"), ErrorCode::kOk);
}

TEST(WriterRefusalTest, InvalidUtf8Names) {
  for (const std::string& name :
       {std::string("\xc0\x80"),           // overlong NUL
        std::string("\xed\xa0\x80"),       // encoded surrogate U+D800
        std::string("\xf4\x90\x80\x80"),   // above U+10FFFF
        std::string("a\x80"),              // stray continuation byte
        std::string("\xe2\x82"),           // truncated sequence
        std::string("\xff")}) {
    const Error error = AddError(name, Dtype::kU8, {1}, "x");
    ExpectCode(error, ErrorCode::kInvalidArgument);
    EXPECT_EQ(error.tensor, name);
  }
}

TEST(WriterRefusalTest, InvalidUtf8Metadata) {
  Writer writer;
  ExpectCode(writer.AddMetadata("\xc3", "v"), ErrorCode::kInvalidArgument);
  Writer writer2;
  ExpectCode(writer2.AddMetadata("k", "\xed\xbf\xbf"), ErrorCode::kInvalidArgument);
}

TEST(WriterRefusalTest, ByteCountMismatch) {
  const Error error = AddError("w", Dtype::kF32, {2, 2}, std::string(15, '\0'));
  ExpectCode(error, ErrorCode::kInvalidArgument);
  EXPECT_EQ(error.context, "expected 16 bytes, got 15");
  ExpectCode(AddError("s", Dtype::kF64, {}, std::string(9, '\0')), ErrorCode::kInvalidArgument);
  ExpectCode(AddError("e", Dtype::kU8, {0, 5}, "x"), ErrorCode::kInvalidArgument);
}

TEST(WriterRefusalTest, SubByteDtypesMustFillWholeBytes) {
  ExpectCode(AddError("f4", Dtype::kF4, {3}, "xx"), ErrorCode::kMisalignedSlice);   // 12 bits
  ExpectCode(AddError("f4", Dtype::kF4, {}, "x"), ErrorCode::kMisalignedSlice);     // 4 bits
  ExpectCode(AddError("f6", Dtype::kF6_E2M3, {2}, "xx"), ErrorCode::kMisalignedSlice);  // 12
  ExpectCode(AddError("f6", Dtype::kF6_E3M2, {4}, "xxx"), ErrorCode::kOk);          // 24 bits
  ExpectCode(AddError("f4", Dtype::kF4, {2, 3}, "xxx"), ErrorCode::kOk);            // 24 bits
}

TEST(WriterRefusalTest, CountsBeyond64Bits) {
  // Element count 2^32 * 2^32 = 2^64 overflows at the second step.
  ExpectCode(AddError("a", Dtype::kU8, {1ull << 32, 1ull << 32}, ""),
             ErrorCode::kValidationOverflow);
  // 2^61 elements fit, but 2^61 * 64 bits do not.
  ExpectCode(AddError("b", Dtype::kF64, {1ull << 61}, ""), ErrorCode::kValidationOverflow);
  // As the reader: [2^40, 2^40, 0] overflows before reaching the 0.
  ExpectCode(AddError("c", Dtype::kU8, {1ull << 40, 1ull << 40, 0}, ""),
             ErrorCode::kValidationOverflow);
  ExpectCode(AddError("d", Dtype::kU8, {0, 1ull << 40, 1ull << 40}, ""), ErrorCode::kOk);
}

TEST(WriterRefusalTest, DataBufferBeyond64BitsIsRefusedBeforeAnyProducerRuns) {
  bool called = false;
  const TensorProducer producer = [&called](ByteSink&) {
    called = true;
    return Error{};
  };
  // The largest U8 tensor: 2^61 - 1 elements, whose bit count 2^64 - 8 still fits. Nine
  // of them need about 9 * 2^61 > 2^64 bytes.
  const uint64_t len = (1ull << 61) - 1;
  const uint64_t shape[] = {len};
  Writer writer;
  for (char name = 'a'; name < 'a' + 9; ++name) {
    ASSERT_TRUE(writer.AddTensor(std::string(1, name), Dtype::kU8, shape, len, producer).ok());
  }
  ExpectCode(writer.WriteToString().error(), ErrorCode::kValidationOverflow);
  EXPECT_FALSE(called);
}

TEST(WriterRefusalTest, DuplicateNamesEvenAcrossDtypes) {
  Writer writer;
  ASSERT_TRUE(writer.AddTensor("w", Dtype::kU8, {1}, AsBytes("x")).ok());
  ASSERT_TRUE(writer.AddTensor("v", Dtype::kU8, {1}, AsBytes("x")).ok());
  ASSERT_TRUE(writer.AddTensor("w", Dtype::kF32, {0}, {}).ok());
  const Error error = writer.WriteToString().error();
  ExpectCode(error, ErrorCode::kDuplicateName);
  EXPECT_EQ(error.tensor, "w");
}

TEST(WriterRefusalTest, DuplicateMetadataKeys) {
  Writer writer;
  ASSERT_TRUE(writer.AddMetadata("k", "1").ok());
  ASSERT_TRUE(writer.AddMetadata("k", "2").ok());
  ExpectCode(writer.WriteToString().error(), ErrorCode::kDuplicateName);
  // A tensor may share its name with a metadata key: they live in different maps.
  Writer other;
  ASSERT_TRUE(other.AddMetadata("k", "1").ok());
  ASSERT_TRUE(other.AddTensor("k", Dtype::kU8, {0}, {}).ok());
  EXPECT_TRUE(other.WriteToString().ok());
}

TEST(WriterRefusalTest, HeaderOfExactlyTheLimitIsWrittenOneByteMoreIsNot) {
  // {"__metadata__":{"k":"<v>"}} is v + 25 bytes: 1 + 14 + 1 + 1 + 3 ("k") + 1 + 2 + v + 2.
  // v = 99,999,975 gives exactly 100,000,000 (a multiple of 8: no padding).
  {
    Writer writer;
    ASSERT_TRUE(writer.AddMetadata("k", std::string(kMaxHeaderLen - 25, 'v')).ok());
    Result<uint64_t> size = writer.FileSize();
    ASSERT_TRUE(size.ok()) << size.error().ToString();
    EXPECT_EQ(*size, 8 + kMaxHeaderLen);
  }
  {
    Writer writer;
    ASSERT_TRUE(writer.AddMetadata("k", std::string(kMaxHeaderLen - 24, 'v')).ok());
    ExpectCode(writer.FileSize().error(), ErrorCode::kHeaderTooLarge);
    TempDir dir;
    ExpectCode(writer.WriteToFile(dir.File("out")), ErrorCode::kHeaderTooLarge);
    EXPECT_TRUE(dir.Entries().empty());
  }
}

TEST(WriterRefusalTest, FirstAddErrorSticksAndNothingIsWritten) {
  TempDir dir;
  Writer writer;
  ASSERT_TRUE(writer.AddTensor("ok", Dtype::kU8, {1}, AsBytes("x")).ok());
  ExpectCode(writer.AddTensor("__metadata__", Dtype::kU8, {1}, AsBytes("x")),
             ErrorCode::kInvalidTensorName);
  ExpectCode(writer.AddTensor("bad", Dtype::kU8, {2}, AsBytes("x")),
             ErrorCode::kInvalidArgument);
  EXPECT_EQ(writer.num_tensors(), 1u);
  // Every write reports the first refusal, so ignoring an Add's result cannot silently
  // drop a tensor.
  ExpectCode(writer.WriteToString().error(), ErrorCode::kInvalidTensorName);
  ExpectCode(writer.CanonicalHeader().error(), ErrorCode::kInvalidTensorName);
  ExpectCode(writer.WriteToFile(dir.File("out")), ErrorCode::kInvalidTensorName);
  EXPECT_TRUE(dir.Entries().empty());
}

TEST(WriterRefusalTest, RefusedWriteLeavesAnExistingDestinationUntouched) {
  TempDir dir;
  const std::string path = dir.File("model.safetensors");
  ASSERT_TRUE(WriteFileBytes(path, "old content"));
  Writer writer;
  ASSERT_TRUE(writer.AddTensor("a", Dtype::kU8, {1}, AsBytes("x")).ok());
  ASSERT_TRUE(writer.AddTensor("a", Dtype::kU8, {1}, AsBytes("y")).ok());
  ExpectCode(writer.WriteToFile(path), ErrorCode::kDuplicateName);
  EXPECT_EQ(ReadFileBytes(path), "old content");
  EXPECT_EQ(dir.Entries(), std::vector<std::string>{"model.safetensors"});
}

// ---------------------------------------------------------------- producers

// CountingSink records what reaches it.
class CollectingSink final : public ByteSink {
 public:
  Error Write(std::span<const std::byte> bytes) override {
    ++num_writes;
    data.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    return Error{};
  }
  std::string data;
  int num_writes = 0;
};

TEST(WriterProducerTest, ProducedBytesEqualSpanBytes) {
  std::string big(100000, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 7);
  Writer from_span;
  ASSERT_TRUE(from_span.AddTensor("big", Dtype::kI32, {25000}, AsBytes(big)).ok());
  ASSERT_TRUE(from_span.AddTensor("small", Dtype::kU8, {3}, AsBytes("abc")).ok());

  Writer from_producer;
  const uint64_t shape[] = {25000};
  ASSERT_TRUE(from_producer
                  .AddTensor("big", Dtype::kI32, shape, big.size(),
                             [&big](ByteSink& sink) {
                               // Uneven chunks, as a decompressor would hand them out.
                               for (size_t at = 0; at < big.size(); at += 333) {
                                 const size_t len = std::min<size_t>(333, big.size() - at);
                                 if (Error e = sink.Write(AsBytes(big).subspan(at, len));
                                     !e.ok()) {
                                   return e;
                                 }
                               }
                               return Error{};
                             })
                  .ok());
  ASSERT_TRUE(from_producer.AddTensor("small", Dtype::kU8, {3}, AsBytes("abc")).ok());
  const std::string expected = MustWrite(from_span);
  ExpectSameBytes(MustWrite(from_producer), expected);

  CollectingSink sink;
  ASSERT_TRUE(from_producer.WriteTo(sink).ok());
  EXPECT_EQ(sink.data, expected);
  EXPECT_GT(sink.num_writes, 300);  // streamed, not gathered
}

TEST(WriterProducerTest, WrongByteCountsAndProducerErrorsLeaveNoFile) {
  const uint64_t shape[] = {4};
  TempDir dir;
  const std::string path = dir.File("out");
  ASSERT_TRUE(WriteFileBytes(path, "previous"));
  struct Case {
    const char* what;
    TensorProducer producer;
    const char* message;
  };
  const Case cases[] = {
      {"too many",
       [](ByteSink& sink) { return sink.Write(AsBytes("12345")); },
       "the tensor's producer wrote more bytes than declared"},
      {"too few",
       [](ByteSink& sink) { return sink.Write(AsBytes("123")); },
       "the tensor's producer wrote fewer bytes than declared"},
      {"own error",
       [](ByteSink& sink) {
         (void)sink.Write(AsBytes("12"));
         Error error;
         error.code = ErrorCode::kIoError;
         error.message = "source went away";
         return error;
       },
       "source went away"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    Writer writer;
    ASSERT_TRUE(writer.AddTensor("t", Dtype::kU8, shape, 4, c.producer).ok());
    const Error error = writer.WriteToFile(path);
    EXPECT_FALSE(error.ok());
    EXPECT_STREQ(error.message, c.message);
    EXPECT_EQ(error.tensor, "t");
    EXPECT_EQ(ReadFileBytes(path), "previous");
    EXPECT_EQ(dir.Entries(), std::vector<std::string>{"out"});
    EXPECT_FALSE(writer.WriteToString().ok());
  }
}

TEST(WriterProducerTest, EmptyProducerIsRefused) {
  Writer writer;
  const uint64_t shape[] = {1};
  ExpectCode(writer.AddTensor("t", Dtype::kU8, shape, 1, TensorProducer()),
             ErrorCode::kInvalidArgument);
}

// ---------------------------------------------------------------- reader round trip

TEST(WriterRoundTripTest, CanonicalBytesOfACheckpointIsAFixedPoint) {
  // A valid but non-canonical file: whitespace, reverse order, escaped key.
  const std::string header =
      R"({ "b" : {"dtype":"U8","shape":[2],"data_offsets":[0,2]}, )"
      R"("\u0061":{"data_offsets":[2,6],"dtype":"F32","shape":[]},)"
      R"("__metadata__":{"z":"1","a":"\/"}})";
  const std::string file = FileWithHeader(header, Bytes({1, 2, 0, 0, 0x80, 0x3f}));
  Result<Checkpoint> original = Checkpoint::FromBytes(file);
  ASSERT_TRUE(original.ok()) << original.error().ToString();

  Result<std::string> canonical = CanonicalBytes(*original);
  ASSERT_TRUE(canonical.ok()) << canonical.error().ToString();
  // F32 "a" sorts before U8 "b"; "/" is written raw; metadata keys ascend.
  const std::string expected_text =
      R"({"__metadata__":{"a":"/","z":"1"},)"
      R"("a":{"dtype":"F32","shape":[],"data_offsets":[0,4]},)"
      R"("b":{"dtype":"U8","shape":[2],"data_offsets":[4,6]}})";
  ASSERT_EQ(expected_text.size(), 138u);  // 6 spaces of padding to 144
  ExpectSameBytes(*canonical, LengthPrefix(144) + expected_text + "      " +
                                  Bytes({0, 0, 0x80, 0x3f, 1, 2}));

  Result<Checkpoint> reread = Checkpoint::FromBytes(*canonical);
  ASSERT_TRUE(reread.ok()) << reread.error().ToString();
  EXPECT_EQ(testing::DescribeDifference(testing::FromCheckpoint(*original), *reread), "");
  Result<std::string> again = CanonicalBytes(*reread);
  ASSERT_TRUE(again.ok());
  ExpectSameBytes(*again, *canonical);
}

TEST(WriterRoundTripTest, EmptyMetadataObjectIsDropped) {
  const std::string file = FileWithHeader(R"({"__metadata__":{}})");
  Result<Checkpoint> checkpoint = Checkpoint::FromBytes(file);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.error().ToString();
  Result<std::string> canonical = CanonicalBytes(*checkpoint);
  ASSERT_TRUE(canonical.ok());
  EXPECT_EQ(*canonical, LengthPrefix(8) + "{}      ");
}

// ---------------------------------------------------------------- check --canonical

CanonicalDiff DiffOf(const std::string& file) {
  Result<Checkpoint> checkpoint = Checkpoint::FromBytes(file);
  EXPECT_TRUE(checkpoint.ok()) << checkpoint.error().ToString();
  if (!checkpoint.ok()) return {};
  Result<CanonicalDiff> diff = CompareToCanonical(*checkpoint);
  EXPECT_TRUE(diff.ok()) << diff.error().ToString();
  return diff.ok() ? *diff : CanonicalDiff{};
}

void ExpectDiff(const std::string& file, CanonicalDiffReason reason, uint64_t offset,
                uint64_t reason_offset) {
  const CanonicalDiff diff = DiffOf(file);
  EXPECT_FALSE(diff.canonical);
  EXPECT_EQ(CanonicalDiffReasonName(diff.reason), CanonicalDiffReasonName(reason));
  EXPECT_EQ(diff.offset, offset);
  EXPECT_EQ(diff.reason_offset, reason_offset);
}

const std::string kWorkedData(16, '\x11');
constexpr char kOneByteEntry[] = R"({"dtype":"U8","shape":[1],"data_offsets":)";

TEST(CanonicalCheckTest, WrittenFilesAreCanonical) {
  const CanonicalDiff diff = DiffOf(FileWithHeader(kWorkedText + "   ", kWorkedData));
  EXPECT_TRUE(diff.canonical);
  EXPECT_EQ(diff.reason, CanonicalDiffReason::kNone);
  EXPECT_EQ(diff.canonical_header_len, 96u);
  EXPECT_EQ(DescribeCanonicalDiff(diff), "canonical");
  EXPECT_TRUE(DiffOf(LengthPrefix(8) + "{}      ").canonical);
}

TEST(CanonicalCheckTest, Padding) {
  // No padding: N = 93 (0x5d) against 96 (0x60): the first byte differs. The JSON text is
  // canonical; it ends at 8 + 93 = 101, where the canonical padding starts.
  ExpectDiff(FileWithHeader(kWorkedText, kWorkedData), CanonicalDiffReason::kPadding, 0, 101);
  // Eleven spaces: N = 104 = 0x68. The canonical three end at 104; the extra begin there.
  ExpectDiff(FileWithHeader(kWorkedText + std::string(11, ' '), kWorkedData),
             CanonicalDiffReason::kPadding, 0, 104);
}

TEST(CanonicalCheckTest, WhitespaceAfterTheObjectOrBetweenTokens) {
  ExpectDiff(FileWithHeader(kWorkedText + "\n  ", kWorkedData), CanonicalDiffReason::kWhitespace,
             101, 101);
  // Same N as canonical (96), so the first differing byte is the whitespace itself.
  std::string spaced = kWorkedText;
  spaced.insert(spaced.find(":{\"format\"") + 1, " ");  // "__metadata__": {"format"...
  ASSERT_EQ(spaced.size(), 94u);
  ExpectDiff(FileWithHeader(spaced + "  ", kWorkedData), CanonicalDiffReason::kWhitespace,
             8 + 16, 8 + 16);
  // Leading whitespace.
  ExpectDiff(FileWithHeader(" " + kWorkedText + "  ", kWorkedData),
             CanonicalDiffReason::kWhitespace, 8, 8);
}

TEST(CanonicalCheckTest, TensorOrder) {
  // Same text length as canonical (a and b swapped): N = 8 + ... identical, so the first
  // differing byte is inside the first key, one past its quote.
  const std::string text = std::string("{\"b\":") + kOneByteEntry + "[1,2]},\"a\":" +
                           kOneByteEntry + "[0,1]}}";
  const std::string file = FileWithHeader(text + std::string((8 - text.size() % 8) % 8, ' '),
                                          "xy");
  ExpectDiff(file, CanonicalDiffReason::kOrder, 8 + 2, 8 + 1);
}

TEST(CanonicalCheckTest, DataOffsets) {
  // Keys in canonical order, but b's bytes come first in the data buffer.
  const std::string text = std::string("{\"a\":") + kOneByteEntry + "[1,2]},\"b\":" +
                           kOneByteEntry + "[0,1]}}";
  const size_t first_number = text.find("[1,2]") + 1;
  const std::string file = FileWithHeader(text + std::string((8 - text.size() % 8) % 8, ' '),
                                          "xy");
  ExpectDiff(file, CanonicalDiffReason::kOffsets, 8 + first_number, 8 + first_number);
}

TEST(CanonicalCheckTest, Escapes) {
  // "\u0077" is "w" escaped: longer, so N differs (0x68 against 0x60 at byte 0).
  std::string text = kWorkedText;
  text.replace(text.find("\"w\""), 3, "\"\\u0077\"");
  ExpectDiff(FileWithHeader(text + std::string((8 - text.size() % 8) % 8, ' '), kWorkedData),
             CanonicalDiffReason::kEscapes, 0, 8 + kWorkedText.find("\"w\""));
  // "\/" in a metadata value: 27 bytes padded to 32, as the canonical 26, so the first
  // difference is the backslash, one past the string's quote.
  const std::string slash = R"({"__metadata__":{"a":"\/"}})";
  ExpectDiff(FileWithHeader(slash + std::string((8 - slash.size() % 8) % 8, ' ')),
             CanonicalDiffReason::kEscapes, 8 + 22, 8 + 21);
}

TEST(CanonicalCheckTest, MetadataPlacementAndKeyOrder) {
  // __metadata__ after the tensors.
  const std::string last =
      R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},"__metadata__":{"format":"tinyllm"}})";
  ExpectDiff(FileWithHeader(last + "   ", kWorkedData), CanonicalDiffReason::kOrder, 8 + 2,
             8 + 1);
  // Metadata keys descending.
  const std::string keys = R"({"__metadata__":{"b":"1","a":"2"}})";
  ExpectDiff(FileWithHeader(keys + std::string((8 - keys.size() % 8) % 8, ' ')),
             CanonicalDiffReason::kOrder, 8 + 18, 8 + 17);
  // Tensor fields in another order.
  const std::string fields =
      R"({"w":{"shape":[2,2],"dtype":"F32","data_offsets":[0,16]}})";
  ExpectDiff(FileWithHeader(fields + std::string((8 - fields.size() % 8) % 8, ' '), kWorkedData),
             CanonicalDiffReason::kOrder, 8 + 7, 8 + 6);
}

// The canonical header is made and compared in pieces of 64 KB: a name, a metadata value
// and a shape longer than a piece are split across pieces, and the verdict and offsets are
// those of the whole text.
TEST(CanonicalCheckTest, EntriesLongerThanAPiece) {
  const std::string long_name(70000, 'n');
  std::string dims = "1";
  for (int i = 0; i < 40000; ++i) dims += ",1";  // 80 KB of shape
  const std::string value(100000, 'v');
  const std::string text = R"({"__metadata__":{"k":")" + value + R"("},")" + long_name +
                           R"(":{"dtype":"U8","shape":[)" + dims +
                           R"(],"data_offsets":[0,1]}})";
  const std::string pad((8 - text.size() % 8) % 8, ' ');
  EXPECT_TRUE(DiffOf(FileWithHeader(text + pad, "x")).canonical);
  // An escape near the end of the long value: the difference is found past the first piece.
  std::string escaped = text;
  const size_t slash = escaped.find(value) + value.size() - 1;
  escaped.replace(slash, 1, "\\/");  // "v...v\/" is "v...v/" (one byte longer)
  std::string plain = text;
  plain.replace(slash, 1, "/");
  ASSERT_EQ(escaped.size(), plain.size() + 1);
  const std::string plain_pad((8 - plain.size() % 8) % 8, ' ');
  const std::string escaped_pad((8 - escaped.size() % 8) % 8, ' ');
  EXPECT_TRUE(DiffOf(FileWithHeader(plain + plain_pad, "x")).canonical);
  const CanonicalDiff diff = DiffOf(FileWithHeader(escaped + escaped_pad, "x"));
  EXPECT_FALSE(diff.canonical);
  EXPECT_EQ(diff.reason, CanonicalDiffReason::kEscapes);
  EXPECT_EQ(diff.reason_offset, 8 + text.find(value) - 1);  // the string's quote
  // Whitespace deep inside the long shape.
  std::string spaced = text;
  spaced.insert(spaced.find(dims) + 70001, " ");
  const CanonicalDiff spaced_diff =
      DiffOf(FileWithHeader(spaced + std::string((8 - spaced.size() % 8) % 8, ' '), "x"));
  EXPECT_EQ(spaced_diff.reason, CanonicalDiffReason::kWhitespace);
  EXPECT_EQ(spaced_diff.reason_offset, 8 + text.find(dims) + 70001);
}

TEST(CanonicalCheckTest, EmptyMetadataObject) {
  const std::string text =
      R"({"__metadata__":{},"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}})";
  const CanonicalDiff diff =
      DiffOf(FileWithHeader(text + std::string((8 - text.size() % 8) % 8, ' '), kWorkedData));
  EXPECT_FALSE(diff.canonical);
  EXPECT_EQ(diff.reason, CanonicalDiffReason::kEmptyMetadata);
  EXPECT_EQ(diff.reason_offset, 9u);
  EXPECT_EQ(DescribeCanonicalDiff(diff),
            "not canonical: first difference at byte 0 (empty-metadata at byte 9)");
  ExpectDiff(FileWithHeader(R"({"__metadata__":{}})"), CanonicalDiffReason::kEmptyMetadata, 0,
             9);
}

TEST(CanonicalCheckTest, FirstDifferenceWinsWhenThereAreSeveral) {
  // Escape in the first key, whitespace later: escapes.
  const std::string text = R"({"\u0061":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}, "b":)" +
                           std::string(kOneByteEntry) + "[1,2]}}";
  ExpectDiff(FileWithHeader(text, "xy"), CanonicalDiffReason::kEscapes, 0, 9);
}

}  // namespace
}  // namespace stguard
