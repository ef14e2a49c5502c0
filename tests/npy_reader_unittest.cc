// SPDX-License-Identifier: Apache-2.0
// The strict .npy reader: one accept and one reject case per rule of stguard/npy.h.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <string>

#include "stguard/npy.h"

namespace stguard {
namespace {

// MakeNpy builds a file: magic, version, length, `dict` padded with spaces to `align`
// bytes and a '\n' (numpy's layout), then `data_len` zero bytes.
std::string MakeNpy(const std::string& dict, uint64_t data_len, int major = 1,
                    size_t align = 64) {
  std::string file = std::string(kNpyMagic, kNpyMagicLen);
  file += static_cast<char>(major);
  file += '\0';
  const size_t prefix = major == 1 ? 10 : 12;
  std::string header = dict;
  while ((prefix + header.size() + 1) % align != 0) header += ' ';
  header += '\n';
  for (size_t i = 0; i < (major == 1 ? 2u : 4u); ++i) {
    file += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  }
  return file + header + std::string(data_len, '\0');
}

Result<NpyArrayInfo> Parse(const std::string& file) {
  return ParseNpy(std::as_bytes(std::span(file.data(), file.size())), file.size());
}

ErrorCode CodeOf(const std::string& file) {
  const Result<NpyArrayInfo> info = Parse(file);
  return info.ok() ? ErrorCode::kOk : info.error().code;
}

const std::string kF4 = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";

TEST(NpyReader, AcceptsWhatNumpyWrites) {
  const Result<NpyArrayInfo> info = Parse(MakeNpy(kF4, 24));
  ASSERT_TRUE(info.ok()) << info.error().ToString();
  EXPECT_EQ(info->descr, "<f4");
  EXPECT_EQ(info->type.dtype, Dtype::kF32);
  EXPECT_FALSE(info->fortran_order);
  EXPECT_EQ(info->shape, (std::vector<uint64_t>{2, 3}));
  EXPECT_EQ(info->data_offset, 128u);  // 10 + 62 dict bytes, padded to 64 bytes twice
  EXPECT_EQ(info->data_len, 24u);
}

TEST(NpyReader, Magic) {
  std::string file = MakeNpy(kF4, 24);
  EXPECT_EQ(CodeOf(file), ErrorCode::kOk);
  file[1] = 'n';
  EXPECT_EQ(CodeOf(file), ErrorCode::kNpyPreamble);
  EXPECT_EQ(CodeOf(std::string(kNpyMagic, 5)), ErrorCode::kNpyPreamble);
}

TEST(NpyReader, Versions) {
  for (int major : {1, 2, 3}) EXPECT_EQ(CodeOf(MakeNpy(kF4, 24, major)), ErrorCode::kOk);
  EXPECT_EQ(CodeOf(MakeNpy(kF4, 24, 4)), ErrorCode::kNpyPreamble);
  std::string minor = MakeNpy(kF4, 24);
  minor[7] = 1;
  EXPECT_EQ(CodeOf(minor), ErrorCode::kNpyPreamble);
}

TEST(NpyReader, HeaderLengthInsideFileAndBounded) {
  std::string file = MakeNpy(kF4, 0);
  file.resize(40);  // cut inside the header
  EXPECT_EQ(CodeOf(file), ErrorCode::kNpyPreamble);
  // 10,000 bytes is numpy's limit: accepted at 9,990 + 10 = 10,000, refused beyond it.
  const std::string dict_at_limit = kF4 + std::string(9990 - 1 - kF4.size() - 2, ' ');
  std::string at_limit = MakeNpy(dict_at_limit, 24, 1, 16);
  EXPECT_EQ(Parse(at_limit)->header_len, 9990u);  // 10 + 9990 = 10000, a multiple of 16
  EXPECT_EQ(CodeOf(MakeNpy(kF4 + std::string(10000, ' '), 24, 2, 16)), ErrorCode::kNpyPreamble);
}

TEST(NpyReader, SixteenByteAlignment) {
  EXPECT_EQ(CodeOf(MakeNpy(kF4, 24, 1, 16)), ErrorCode::kOk);
  EXPECT_EQ(CodeOf(MakeNpy(kF4, 24, 1, 8)), ErrorCode::kNpyPreamble);
}

TEST(NpyReader, DictSyntax) {
  const char* accepted[] = {
      "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (2, 3)}",
      "{'shape':(2,3),'descr':'<f4','fortran_order':False}",
      "{ 'shape' : ( 2 , 3 , ) , 'descr' : '<f4' , 'fortran_order' : False , }",
  };
  for (const char* dict : accepted) EXPECT_EQ(CodeOf(MakeNpy(dict, 24)), ErrorCode::kOk) << dict;
  const char* refused[] = {
      "{'descr': __import__('os').system('x'), 'fortran_order': False, 'shape': (6,)}",
      "{'descr': '<f4', 'fortran_order': np.False_, 'shape': (6,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (6L,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (06,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (-6,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (6)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': ((6,),)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': [6]}",
      "{'descr': '<' 'f4', 'fortran_order': False, 'shape': (6,)}",
      "{'descr': '<\\x66\\x34', 'fortran_order': False, 'shape': (6,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (6,)}}",
      "{'descr': '<f4',\t'fortran_order': False, 'shape': (6,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (6,),,}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1_0,)}",
      " {'descr': '<f4', 'fortran_order': False, 'shape': (6,)}",
  };
  for (const char* dict : refused) {
    EXPECT_EQ(CodeOf(MakeNpy(dict, 24)), ErrorCode::kNpyHeaderSyntax) << dict;
  }
  // Bytes after the final newline, and no final newline.
  std::string no_newline = MakeNpy(kF4, 24);
  no_newline[no_newline.size() - 24 - 1] = ' ';
  EXPECT_EQ(CodeOf(no_newline), ErrorCode::kNpyHeaderSyntax);
}

TEST(NpyReader, DeepNestingIsRefusedAtOnce) {
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': " +
                           std::string(9000, '(') + "}";
  const auto start = std::chrono::steady_clock::now();
  const Result<NpyArrayInfo> info = Parse(MakeNpy(dict, 0, 2, 16));
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.error().code, ErrorCode::kNpyHeaderSyntax);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(100));
}

TEST(NpyReader, KeysExactlyOnce) {
  EXPECT_EQ(CodeOf(MakeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (6,), "
                           "'shape': (6,)}", 24)),
            ErrorCode::kNpyHeaderKeys);
  EXPECT_EQ(CodeOf(MakeNpy("{'descr': '<f4', 'shape': (6,)}", 24)), ErrorCode::kNpyHeaderKeys);
  EXPECT_EQ(CodeOf(MakeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (6,), "
                           "'extra': 'x'}", 24)),
            ErrorCode::kNpyHeaderKeys);
  EXPECT_EQ(CodeOf(MakeNpy("{'descr': '<f4', 'fortran_order': 'False', 'shape': (6,)}", 24)),
            ErrorCode::kNpyHeaderKeys);
  EXPECT_EQ(CodeOf(MakeNpy("{'descr': '<f4', 'fortran_order': True, 'shape': (6,)}", 24)),
            ErrorCode::kOk);
}

TEST(NpyReader, Descr) {
  struct Case {
    const char* descr;
    uint64_t itemsize;
    ErrorCode code;
  };
  const Case cases[] = {
      {"<f4", 4, ErrorCode::kOk},        {">i8", 8, ErrorCode::kOk},
      {"|b1", 1, ErrorCode::kOk},        {"<u1", 1, ErrorCode::kOk},
      {"<c8", 8, ErrorCode::kOk},        {"<c16", 16, ErrorCode::kOk},
      {"<U5", 20, ErrorCode::kOk},       {"|S4", 4, ErrorCode::kOk},
      {"<M8[s]", 8, ErrorCode::kOk},     {">m8[10ms]", 8, ErrorCode::kOk},
      {"<f2", 2, ErrorCode::kOk},        {"float32", 4, ErrorCode::kNpyDescr},
      {"=f4", 4, ErrorCode::kNpyDescr},  {"|f4", 4, ErrorCode::kNpyDescr},
      // Every descr numpy 1.24 writes for a non-structured dtype: the x86-64 long doubles,
      // raw bytes (V, '|V0' included) and generic datetimes without a unit.
      {"<f16", 16, ErrorCode::kOk},      {"<c32", 32, ErrorCode::kOk},
      {"<M8", 8, ErrorCode::kOk},        {">m8", 8, ErrorCode::kOk},
      {"|V4", 4, ErrorCode::kOk},        {"|V0", 0, ErrorCode::kOk},
      {"<f12", 12, ErrorCode::kNpyDescr}, {"<M8[]", 8, ErrorCode::kNpyDescr},
      {"<M4", 4, ErrorCode::kNpyDescr},  {"|V04", 4, ErrorCode::kNpyDescr},
      {"|V2147483648", 0, ErrorCode::kNpyDescr}, {"<M", 8, ErrorCode::kNpyDescr},
      {"<M8[parsec]", 8, ErrorCode::kNpyDescr}, {"|S0", 0, ErrorCode::kNpyDescr},
      {"|S2147483647", 0, ErrorCode::kOk},  {"|S2147483648", 0, ErrorCode::kNpyDescr},
      {"<U536870911", 0, ErrorCode::kOk},   {"<U536870912", 0, ErrorCode::kNpyDescr},
      {"<M8[2147483647s]", 8, ErrorCode::kOk}, {"<M8[2147483648s]", 8, ErrorCode::kNpyDescr},
      {"|O", 8, ErrorCode::kNpyObjectArray},
  };
  // itemsize 0 in the table: a huge item, tested as an empty array (shape (0,)).
  for (const Case& c : cases) {
    const std::string dict = std::string("{'descr': '") + c.descr +
                             "', 'fortran_order': False, 'shape': " +
                             (c.itemsize == 0 ? "(0,)" : "(3,)") + ", }";
    EXPECT_EQ(CodeOf(MakeNpy(dict, 3 * c.itemsize)), c.code) << c.descr;
  }
  EXPECT_EQ(CodeOf(MakeNpy("{'descr': [('a', '<f4')], 'fortran_order': False, "
                           "'shape': (3,)}", 12)),
            ErrorCode::kNpyHeaderSyntax);
}

TEST(NpyReader, ZeroDimensionalAndEmpty) {
  const Result<NpyArrayInfo> scalar =
      Parse(MakeNpy("{'descr': '<f8', 'fortran_order': False, 'shape': (), }", 8));
  ASSERT_TRUE(scalar.ok());
  EXPECT_TRUE(scalar->shape.empty());
  EXPECT_EQ(CodeOf(MakeNpy("{'descr': '<f8', 'fortran_order': False, 'shape': (0, 5), }", 0)),
            ErrorCode::kOk);
}

TEST(NpyReader, DataLengthExact) {
  EXPECT_EQ(CodeOf(MakeNpy(kF4, 23)), ErrorCode::kNpyDataLength);
  EXPECT_EQ(CodeOf(MakeNpy(kF4, 25)), ErrorCode::kNpyDataLength);
  EXPECT_EQ(CodeOf(MakeNpy(kF4, 24)), ErrorCode::kOk);
}

TEST(NpyReader, HugeShapeOverFewBytesIsRefusedWithoutAllocating) {
  const std::string big =
      "{'descr': '<f8', 'fortran_order': False, 'shape': (268435456,), }";  // 2 GB
  const Result<NpyArrayInfo> info = Parse(MakeNpy(big, 10));
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.error().code, ErrorCode::kNpyDataLength);
  const std::string overflow = "{'descr': '<f8', 'fortran_order': False, "
                               "'shape': (4294967296, 4294967296), }";
  EXPECT_EQ(CodeOf(MakeNpy(overflow, 10)), ErrorCode::kValidationOverflow);
  EXPECT_EQ(CodeOf(MakeNpy("{'descr': '<f8', 'fortran_order': False, "
                           "'shape': (18446744073709551616,), }", 10)),
            ErrorCode::kNpyHeaderSyntax);
  // numpy's sizes are signed 64-bit, and it checks the non-zero dimensions even beside a
  // 0: (0, 2**63) is refused, (0, 2**62) with one-byte items is an empty array.
  EXPECT_EQ(CodeOf(MakeNpy("{'descr': '|u1', 'fortran_order': False, "
                           "'shape': (0, 9223372036854775808), }", 0)),
            ErrorCode::kValidationOverflow);
  EXPECT_EQ(CodeOf(MakeNpy("{'descr': '|u1', 'fortran_order': False, "
                           "'shape': (0, 4611686018427387904), }", 0)),
            ErrorCode::kOk);
  EXPECT_EQ(CodeOf(MakeNpy("{'descr': '<u2', 'fortran_order': False, "
                           "'shape': (0, 4611686018427387904), }", 0)),
            ErrorCode::kValidationOverflow);
  // The element count is an intp whatever the item size: np.load refuses V0 arrays of
  // 2**63 elements or more ("negative dimensions are not allowed", "cannot reshape").
  for (const char* shape : {"(9223372036854775808,)", "(2, 4611686018427387904)",
                            "(3037000500, 3037000500)", "(0, 4294967296, 4294967296)"}) {
    EXPECT_EQ(CodeOf(MakeNpy(std::string("{'descr': '|V0', 'fortran_order': False, 'shape': ") +
                                 shape + ", }", 0)),
              ErrorCode::kValidationOverflow)
        << shape;
  }
  for (const char* shape : {"(9223372036854775807,)", "(3037000499, 3037000499)", "(0, 7)"}) {
    EXPECT_EQ(CodeOf(MakeNpy(std::string("{'descr': '|V0', 'fortran_order': False, 'shape': ") +
                                 shape + ", }", 0)),
              ErrorCode::kOk)
        << shape;
  }
}

TEST(NpyReader, ValidationReadsOnlyTheHeader) {
  // ParseNpy is given only the preamble and header, and the file's size: no data at all.
  const std::string file = MakeNpy(kF4, 0);
  EXPECT_TRUE(ParseNpy(std::as_bytes(std::span(file.data(), file.size())), file.size() + 24).ok());
  EXPECT_FALSE(ParseNpy(std::as_bytes(std::span(file.data(), file.size())), file.size() + 23).ok());
}

}  // namespace
}  // namespace stguard

namespace stguard {
namespace {

// Errors point at the offending byte of the file, not of the header.
TEST(NpyReader, ErrorOffsetsAreFileOffsets) {
  const std::string call = "{'descr': __import__('os'), 'fortran_order': False, 'shape': (6,)}";
  Result<NpyArrayInfo> info = Parse(MakeNpy(call, 24));
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.error().offset, 10 + call.find("__import__"));
  EXPECT_NE(std::string(info.error().message).find("True or False"), std::string::npos);

  const std::string twice = "{'descr': '<f4', 'fortran_order': False, 'shape': (6,), 'shape': (6,)}";
  info = Parse(MakeNpy(twice, 24, 2));
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.error().offset, 12 + twice.rfind("'shape'"));

  const std::string object = "{'descr': '|O', 'fortran_order': False, 'shape': (6,)}";
  info = Parse(MakeNpy(object, 48));
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.error().offset, 10 + object.find("'|O'"));
  EXPECT_NE(std::string(info.error().message).find("would run code"), std::string::npos);

  const std::string file = MakeNpy(kF4, 30);
  info = Parse(file);
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.error().offset, file.size() - 6);  // where the data should have ended
}

// A header full of dimensions stays linear: 3,000 dims of 1 parse at once.
// OnesShape is the dict of a float32 array of `n` dimensions of 1.
std::string OnesShape(int n) {
  std::string shape = "(";
  for (int i = 0; i < n; ++i) shape += "1, ";
  return "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ")}";
}

TEST(NpyReader, AtMostNumpy1sThirtyTwoDimensions) {
  const Result<NpyArrayInfo> info = Parse(MakeNpy(OnesShape(32), 4));
  ASSERT_TRUE(info.ok()) << info.error().ToString();
  EXPECT_EQ(info->shape.size(), 32u);
  // numpy 1.x: "maximum supported dimension for an ndarray is 32" (numpy 2 allows 64).
  const Result<NpyArrayInfo> refused = Parse(MakeNpy(OnesShape(33), 4));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kNpyHeaderKeys);
  EXPECT_EQ(refused.error().offset, 10u + std::string(OnesShape(33)).find('('));
}

TEST(NpyReader, ManyDimensionsStayLinear) {
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(CodeOf(MakeNpy(OnesShape(3000), 4, 2, 16)), ErrorCode::kNpyHeaderKeys);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(100));
}

}  // namespace
}  // namespace stguard
