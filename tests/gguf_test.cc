// SPDX-License-Identifier: Apache-2.0
// The GGUF reader's rules, each with a file it accepts and one it refuses (stguard/gguf.h).
#include <chrono>
#include <cmath>
#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "stguard/gguf.h"
#include "support/gguf_encoder.h"

namespace stguard::gguf {
namespace {

using stguard::testing::Encode;
using stguard::testing::GgufBool;
using stguard::testing::GgufF32;
using stguard::testing::GgufKv;
using stguard::testing::GgufModel;
using stguard::testing::GgufStr;
using stguard::testing::GgufStrArray;
using stguard::testing::GgufString;
using stguard::testing::GgufTensor;
using stguard::testing::GgufU32;
using stguard::testing::GgufU64;
using stguard::testing::SimpleGgufModel;

std::span<const std::byte> Bytes(const std::string& text) {
  return std::as_bytes(std::span(text.data(), text.size()));
}

// Verdict reads `file` and returns kOk or the error's code.
ErrorCode Verdict(const std::string& file) {
  Result<GgufFile> result = GgufFile::FromBytes(Bytes(file));
  return result.ok() ? ErrorCode::kOk : result.error().code;
}

ErrorCode Verdict(const GgufModel& model) { return Verdict(Encode(model)); }

GgufModel WithKey(GgufKv kv) {
  GgufModel model = SimpleGgufModel();
  model.kvs.push_back(std::move(kv));
  return model;
}

GgufModel WithTensor(GgufTensor tensor) {
  GgufModel model = SimpleGgufModel();
  model.tensors.push_back(std::move(tensor));
  return model;
}

TEST(GgufReader, ReadsAValidFile) {
  const std::string file = Encode(SimpleGgufModel());
  Result<GgufFile> result = GgufFile::FromBytes(Bytes(file));
  ASSERT_TRUE(result.ok()) << result.error().ToString();
  const GgufFile& gguf = *result;
  EXPECT_EQ(gguf.version(), 3u);
  EXPECT_EQ(gguf.alignment(), 32u);
  EXPECT_EQ(gguf.data_offset() % 32, 0u);
  ASSERT_EQ(gguf.metadata().size(), 6u);
  EXPECT_EQ(gguf.FindKey("general.architecture")->value.AsString(), "llama");
  EXPECT_EQ(gguf.FindKey("llama.context_length")->value.AsUnsigned(), 4096u);
  EXPECT_EQ(gguf.FindKey("llama.rope.freq_base")->value.AsDouble(), 10000.0);
  EXPECT_EQ(gguf.FindKey("general.flag")->value.AsBool(), true);
  EXPECT_EQ(gguf.FindKey("no.such.key"), nullptr);
  const Value& tokens = gguf.FindKey("tokenizer.ggml.tokens")->value;
  EXPECT_EQ(tokens.element_type, ValueType::kString);
  std::vector<std::string> seen;
  tokens.StringElements([&](uint64_t, std::string_view text) {
    seen.emplace_back(text);
    return true;
  });
  EXPECT_EQ(seen, (std::vector<std::string>{"<s>", "</s>", "hello"}));
  const Value& types = gguf.FindKey("tokenizer.ggml.token_type")->value;
  EXPECT_EQ(types.Element(1).AsSigned(), 3);
  EXPECT_FALSE(types.Element(3).AsSigned().has_value());  // past the end: no value

  ASSERT_EQ(gguf.tensors().size(), 2u);
  const TensorInfo& embd = gguf.tensors()[0];
  EXPECT_EQ(embd.name, "token_embd.weight");
  EXPECT_EQ(embd.type->name, "f32");
  EXPECT_EQ(embd.shape(), (std::vector<uint64_t>{3, 4}));
  EXPECT_EQ(embd.byte_size, 48u);
  EXPECT_EQ(embd.absolute_offset, gguf.data_offset());
  EXPECT_EQ(embd.data.data(), Bytes(file).data() + gguf.data_offset());
  const TensorInfo& q = *gguf.FindTensor("blk.0.attn_q.weight");
  EXPECT_EQ(q.type->name, "q8_0");
  EXPECT_EQ(q.byte_size, 2u * 2 * 34);
  EXPECT_EQ(q.offset, 64u);  // 48 bytes rounded up to 32
  EXPECT_EQ(q.num_elements(), 128u);
}

TEST(GgufReader, MagicMustBeGguf) {
  std::string file = Encode(SimpleGgufModel());
  EXPECT_EQ(Verdict(file), ErrorCode::kOk);
  file[3] = 'G';
  EXPECT_EQ(Verdict(file), ErrorCode::kGgufBadMagic);
  EXPECT_EQ(Verdict(std::string("GG")), ErrorCode::kGgufBadMagic);
  EXPECT_TRUE(LooksLikeGguf(Bytes("GGUF....")));
  EXPECT_FALSE(LooksLikeGguf(Bytes("GGU")));
}

TEST(GgufReader, VersionTwoAndThreeOnly) {
  GgufModel model = SimpleGgufModel();
  model.version = 2;
  EXPECT_EQ(Verdict(model), ErrorCode::kOk);
  for (uint32_t version : {0u, 1u, 4u, 0xFFFFFFFFu}) {
    model.version = version;
    Result<GgufFile> result = GgufFile::FromBytes(Bytes(Encode(model)));
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.error().code, ErrorCode::kGgufUnsupportedVersion);
    EXPECT_EQ(result.error().context, std::to_string(version));
    EXPECT_EQ(result.error().offset, 4u);
  }
}

TEST(GgufReader, ByteSwappedFileIsNamed) {
  GgufModel model = SimpleGgufModel();
  model.version = 0x03000000;  // version 3 written big-endian
  Result<GgufFile> result = GgufFile::FromBytes(Bytes(Encode(model)));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ErrorCode::kGgufByteSwapped);
  EXPECT_NE(std::string(result.error().message).find("big-endian"), std::string::npos);
}

TEST(GgufReader, HugeCountsAreRefusedBeforeAllocating) {
  GgufModel model = SimpleGgufModel();
  const auto start = std::chrono::steady_clock::now();
  model.num_kvs = uint64_t{1} << 63;
  EXPECT_EQ(Verdict(model), ErrorCode::kGgufTruncated);
  model.num_kvs.reset();
  model.num_tensors = uint64_t{1} << 63;
  EXPECT_EQ(Verdict(model), ErrorCode::kGgufTruncated);
  model.num_tensors = ~uint64_t{0};
  EXPECT_EQ(Verdict(model), ErrorCode::kGgufTruncated);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  // One more than the file holds is refused too, but the true counts are accepted.
  model.num_tensors.reset();
  EXPECT_EQ(Verdict(model), ErrorCode::kOk);
  model.num_kvs = model.kvs.size() + 1;
  EXPECT_NE(Verdict(model), ErrorCode::kOk);
}

TEST(GgufReader, HugeArrayAndStringLengthsAreRefused) {
  GgufKv array = GgufStrArray("big.array", {"a"});
  EXPECT_EQ(Verdict(WithKey(array)), ErrorCode::kOk);
  array.count = uint64_t{1} << 61;  // 2^61 strings of at least 8 bytes each
  EXPECT_EQ(Verdict(WithKey(array)), ErrorCode::kGgufTruncated);
  GgufKv text = GgufStr("big.string", "abc");
  text.payload[7] = '\x7f';  // length 2^63-ish
  EXPECT_EQ(Verdict(WithKey(text)), ErrorCode::kGgufTruncated);
  GgufKv u64s{"big.u64s", 9, 10, (uint64_t{1} << 61) + 1, std::string(8, '\0')};
  EXPECT_EQ(Verdict(WithKey(u64s)), ErrorCode::kGgufTruncated);
}

TEST(GgufReader, KeysFollowTheSyntax) {
  for (const char* key : {"general.name", "gpt-oss.context_length", "a", "general.base_model.0.name",
                          "command-r.attention.head_count"}) {
    EXPECT_EQ(Verdict(WithKey(GgufU32(key, 1))), ErrorCode::kOk) << key;
  }
  for (const char* key : {"", "General.name", "a..b", ".a", "a.", "a b", "a/b", "caf\xc3\xa9"}) {
    EXPECT_EQ(Verdict(WithKey(GgufU32(key, 1))), ErrorCode::kGgufInvalidKey) << key;
  }
  EXPECT_EQ(Verdict(WithKey(GgufU32(std::string(65535, 'a'), 1))), ErrorCode::kOk);
  EXPECT_EQ(Verdict(WithKey(GgufU32(std::string(65536, 'a'), 1))), ErrorCode::kGgufInvalidKey);
}

TEST(GgufReader, KeysAreUnique) {
  EXPECT_EQ(Verdict(WithKey(GgufU32("general.other", 1))), ErrorCode::kOk);
  Result<GgufFile> result =
      GgufFile::FromBytes(Bytes(Encode(WithKey(GgufU32("llama.context_length", 1)))));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ErrorCode::kGgufDuplicateKey);
  EXPECT_EQ(result.error().context, "llama.context_length");
}

TEST(GgufReader, ValueTypesAreZeroToTwelveWithoutNestedArrays) {
  for (uint32_t type = 0; type <= 12; ++type) {
    if (type == 8 || type == 9) continue;
    GgufKv kv{"some.value", type, 0, 0, std::string(ValueTypeFixedSize(ValueType(type)), '\0')};
    EXPECT_EQ(Verdict(WithKey(kv)), ErrorCode::kOk) << type;
  }
  EXPECT_EQ(Verdict(WithKey({"some.value", 13, 0, 0, std::string(8, '\0')})),
            ErrorCode::kGgufInvalidValueType);
  EXPECT_EQ(Verdict(WithKey({"some.value", 0xFFFFFFFF, 0, 0, std::string(8, '\0')})),
            ErrorCode::kGgufInvalidValueType);
  // An array of arrays (each of zero u8s) is refused; an empty array of u8 is fine.
  EXPECT_EQ(Verdict(WithKey({"some.value", 9, 0, 0, ""})), ErrorCode::kOk);
  EXPECT_EQ(Verdict(WithKey({"some.value", 9, 9, 1, std::string(12, '\0')})),
            ErrorCode::kGgufInvalidValueType);
  EXPECT_EQ(Verdict(WithKey({"some.value", 9, 13, 0, ""})), ErrorCode::kGgufInvalidValueType);
}

TEST(GgufReader, BoolsAreZeroOrOne) {
  EXPECT_EQ(Verdict(WithKey(GgufBool("some.flag", false))), ErrorCode::kOk);
  EXPECT_EQ(Verdict(WithKey({"some.flag", 7, 0, 0, "\x02"})), ErrorCode::kGgufInvalidBool);
  EXPECT_EQ(Verdict(WithKey({"some.flags", 9, 7, 3, std::string("\x01\x00\x01", 3)})),
            ErrorCode::kOk);
  EXPECT_EQ(Verdict(WithKey({"some.flags", 9, 7, 3, std::string("\x01\x00\xff", 3)})),
            ErrorCode::kGgufInvalidBool);
}

TEST(GgufReader, StringsAreUtf8) {
  EXPECT_EQ(Verdict(WithKey(GgufStr("some.text", "caf\xc3\xa9 \xf0\x9f\x99\x82"))),
            ErrorCode::kOk);
  EXPECT_EQ(Verdict(WithKey(GgufStr("some.text", "caf\xc3"))), ErrorCode::kInvalidUtf8);
  EXPECT_EQ(Verdict(WithKey(GgufStr("some.text", "\xed\xa0\x80"))), ErrorCode::kInvalidUtf8);
  EXPECT_EQ(Verdict(WithKey(GgufStrArray("some.list", {"ok", "\xff"}))), ErrorCode::kInvalidUtf8);
  EXPECT_EQ(Verdict(WithTensor({"caf\xc3\xa9", 0, {2}, {}, {}})), ErrorCode::kOk);
  EXPECT_EQ(Verdict(WithTensor({"bad\xc0\xaf", 0, {2}, {}, {}})), ErrorCode::kInvalidUtf8);
}

// llama.cpp reads every string as a C string: "a\0x" and "a\0y" would be one token to it.
TEST(GgufReader, StringsHoldNoNul) {
  const std::string nul_x("a\0x", 3);
  EXPECT_EQ(Verdict(WithKey(GgufStr("some.text", "ax"))), ErrorCode::kOk);
  EXPECT_EQ(Verdict(WithKey(GgufStr("some.text", nul_x))), ErrorCode::kGgufNulInString);
  EXPECT_EQ(Verdict(WithKey(GgufStr("some.text", std::string(1, '\0')))),
            ErrorCode::kGgufNulInString);
  EXPECT_EQ(Verdict(WithKey(GgufStrArray("some.tokens", {"a", "ax", ""}))), ErrorCode::kOk);
  EXPECT_EQ(Verdict(WithKey(GgufStrArray("some.tokens", {"a", nul_x}))),
            ErrorCode::kGgufNulInString);
  EXPECT_EQ(Verdict(WithKey(GgufU32(std::string("some.key\0x", 10), 1))),
            ErrorCode::kGgufNulInString);
  EXPECT_EQ(Verdict(WithTensor({nul_x, 0, {2}, {}, {}})), ErrorCode::kGgufNulInString);
  // The offset is the NUL's own byte.
  const std::string file = Encode(WithKey(GgufStr("some.text", nul_x)));
  Result<GgufFile> result = GgufFile::FromBytes(Bytes(file));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(file[result.error().offset], '\0');
  EXPECT_EQ(file[result.error().offset - 1], 'a');
}

TEST(GgufReader, AlignmentIsAU32PowerOfTwoAndMultipleOfEight) {
  for (uint32_t alignment : {8u, 16u, 64u, 4096u}) {
    GgufModel model = WithKey(GgufU32("general.alignment", alignment));
    model.alignment = alignment;
    const std::string file = Encode(model);  // the reader views these bytes: keep them
    Result<GgufFile> result = GgufFile::FromBytes(Bytes(file));
    ASSERT_TRUE(result.ok()) << alignment << ": " << result.error().ToString();
    EXPECT_EQ(result->alignment(), alignment);
  }
  for (uint32_t alignment : {0u, 1u, 2u, 4u, 24u, 48u}) {
    GgufModel model = WithKey(GgufU32("general.alignment", alignment));
    model.alignment = alignment < 8 ? 8 : 32;
    EXPECT_EQ(Verdict(model), ErrorCode::kGgufInvalidAlignment) << alignment;
  }
  EXPECT_EQ(Verdict(WithKey(GgufU64("general.alignment", 32))), ErrorCode::kGgufInvalidAlignment);
  // Data laid out at 32 in a file that declares 64 is misplaced: the section would start
  // inside the first tensor's bytes, which are not zero padding.
  EXPECT_EQ(Verdict(WithKey(GgufU32("general.alignment", 64))), ErrorCode::kGgufNonZeroPadding);
}

TEST(GgufReader, TensorNamesAreShorterThan64Bytes) {
  EXPECT_EQ(Verdict(WithTensor({std::string(63, 'n'), 0, {2}, {}, {}})), ErrorCode::kOk);
  EXPECT_EQ(Verdict(WithTensor({"", 0, {2}, {}, {}})), ErrorCode::kOk);
  EXPECT_EQ(Verdict(WithTensor({std::string(64, 'n'), 0, {2}, {}, {}})),
            ErrorCode::kGgufInvalidTensorName);
}

TEST(GgufReader, TensorNamesAreUnique) {
  EXPECT_EQ(Verdict(WithTensor({"other", 0, {2}, {}, {}})), ErrorCode::kOk);
  Result<GgufFile> result =
      GgufFile::FromBytes(Bytes(Encode(WithTensor({"token_embd.weight", 0, {2}, {}, {}}))));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ErrorCode::kGgufDuplicateTensor);
  EXPECT_EQ(result.error().tensor, "token_embd.weight");
}

TEST(GgufReader, DimsAreOneToFourAndNotNegative) {
  EXPECT_EQ(Verdict(WithTensor({"t", 0, {2}, {}, {}})), ErrorCode::kOk);
  EXPECT_EQ(Verdict(WithTensor({"t", 0, {2, 1, 3, 2}, {}, {}})), ErrorCode::kOk);
  EXPECT_EQ(Verdict(WithTensor({"t", 0, {}, {}, std::string("\0\0\0\0", 4)})),
            ErrorCode::kGgufInvalidDims);
  EXPECT_EQ(Verdict(WithTensor({"t", 0, {1, 1, 1, 1, 2}, {}, {}})), ErrorCode::kGgufInvalidDims);
  EXPECT_EQ(Verdict(WithTensor({"t", 0, {2, ~uint64_t{0}}, {}, {""}})),
            ErrorCode::kGgufInvalidDims);
}

// ggml built from llama.cpp's July 2026 sources divides INT64_MAX by ne[1], ne[2] and ne[3]:
// a zero there is SIGFPE. gguf-py writes a numpy shape (0, 32) as ne = [32, 0].
TEST(GgufReader, OnlyTheFirstDimMayBeZero) {
  EXPECT_EQ(Verdict(WithTensor({"t", 0, {0}, {}, {""}})), ErrorCode::kOk);
  EXPECT_EQ(Verdict(WithTensor({"t", 0, {0, 32}, {}, {""}})), ErrorCode::kOk);
  EXPECT_EQ(Verdict(WithTensor({"t", 0, {0, 3, 2, 5}, {}, {""}})), ErrorCode::kOk);
  for (const std::vector<uint64_t>& ne : std::vector<std::vector<uint64_t>>{
           {32, 0}, {2, 3, 0}, {2, 3, 4, 0}, {0, 0}, {2, 0, 3, 4}}) {
    EXPECT_EQ(Verdict(WithTensor({"t", 0, ne, {}, {""}})), ErrorCode::kGgufInvalidDims)
        << ne.size();
  }
  // The offset is the zero dim's own field.
  const std::string file = Encode(WithTensor({"t", 0, {32, 7, 0}, {}, {""}}));
  Result<GgufFile> result = GgufFile::FromBytes(Bytes(file));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().context, "ne[2] = 0");
  uint64_t at_offset = 0;
  std::memcpy(&at_offset, file.data() + result.error().offset, 8);
  uint64_t before = 0;
  std::memcpy(&before, file.data() + result.error().offset - 8, 8);
  EXPECT_EQ(at_offset, 0u);
  EXPECT_EQ(before, 7u);
}

TEST(GgufReader, ZeroElementTensorsTakeNoBytes) {
  GgufModel model = WithTensor({"empty", 0, {0, uint64_t{1} << 31, uint64_t{1} << 31}, {}, {""}});
  model.tensors.push_back({"after", 0, {2}, {}, {}});
  const std::string file = Encode(model);  // the reader views these bytes: keep them
  Result<GgufFile> result = GgufFile::FromBytes(Bytes(file));
  ASSERT_TRUE(result.ok()) << result.error().ToString();
  EXPECT_EQ(result->FindTensor("empty")->byte_size, 0u);
  EXPECT_EQ(result->FindTensor("after")->offset, result->FindTensor("empty")->offset);
}

TEST(GgufReader, TypesAreKnownAndNotRemoved) {
  EXPECT_EQ(Verdict(WithTensor({"t", 9, {32}, {}, {}})), ErrorCode::kOk);   // q8_1
  EXPECT_EQ(Verdict(WithTensor({"t", 42, {64}, {}, {}})), ErrorCode::kOk);  // q2_0
  for (uint32_t removed : {4u, 5u, 31u, 36u, 43u, 0xFFFFFFFFu}) {
    EXPECT_EQ(Verdict(WithTensor({"t", removed, {256}, {}, {std::string(256, '\1')}})),
              ErrorCode::kGgufUnknownType)
        << removed;
  }
}

TEST(GgufReader, FirstDimIsWholeBlocks) {
  EXPECT_EQ(Verdict(WithTensor({"t", 12, {512, 2}, {}, {}})), ErrorCode::kOk);  // q4_K
  EXPECT_EQ(Verdict(WithTensor({"t", 12, {100, 2}, {}, {std::string(100, '\1')}})),
            ErrorCode::kGgufBlockMismatch);
}

TEST(GgufReader, SizesNeverOverflow) {
  EXPECT_EQ(Verdict(WithTensor({"t", 0, {uint64_t{1} << 32, uint64_t{1} << 32}, {}, {""}})),
            ErrorCode::kValidationOverflow);
  // 2^62 f64 elements fit in int64 but their bytes do not fit in uint64.
  EXPECT_EQ(Verdict(WithTensor({"t", 28, {uint64_t{1} << 62}, {}, {""}})),
            ErrorCode::kValidationOverflow);
  // 2^40 bytes fit in the arithmetic but not in the file.
  EXPECT_EQ(Verdict(WithTensor({"t", 24, {uint64_t{1} << 40}, {}, {""}})),
            ErrorCode::kGgufTensorOutOfFile);
}

// A zero must not hide an overflow, wherever it lies: gguf-py (and ggml built from
// llama.cpp in July 2026) refuse these; the element count would wrap to 0 elsewhere.
TEST(GgufReader, AZeroDimHidesNoOverflow) {
  const uint64_t p40 = uint64_t{1} << 40, p62 = uint64_t{1} << 62;
  for (const std::vector<uint64_t>& ne : std::vector<std::vector<uint64_t>>{
           {p40, p40, 0}, {p62, p62, p62, 0}, {0, p40, p40}, {0, p62, 4}}) {
    EXPECT_EQ(Verdict(WithTensor({"t", 0, ne, {}, {""}})), ErrorCode::kValidationOverflow)
        << ne[0] << "," << ne[1];
  }
  // The largest product that fits beside a zero stays an empty tensor.
  EXPECT_EQ(Verdict(WithTensor({"t", 0, {0, uint64_t{1} << 31, (uint64_t{1} << 31) - 1}, {}, {""}})),
            ErrorCode::kOk);
}

TEST(GgufReader, TensorsTileTheDataSectionInOrder) {
  GgufModel model = SimpleGgufModel();
  model.tensors[1].offset = 48;  // right after the first, but not aligned
  EXPECT_EQ(Verdict(model), ErrorCode::kGgufTensorOffset);
  model.tensors[1].offset = 96;  // aligned, with a gap
  EXPECT_EQ(Verdict(model), ErrorCode::kGgufTensorOffset);
  model.tensors[1].offset = 0;   // overlapping the first
  EXPECT_EQ(Verdict(model), ErrorCode::kGgufTensorOffset);
  model.tensors[1].offset = 64;  // where ggml puts it
  EXPECT_EQ(Verdict(model), ErrorCode::kOk);
  model.tensors[0].offset = 32;  // the first tensor starts the section
  EXPECT_EQ(Verdict(model), ErrorCode::kGgufTensorOffset);
}

TEST(GgufReader, TensorsLieInsideTheFile) {
  std::string file = Encode(SimpleGgufModel());
  Result<GgufFile> full = GgufFile::FromBytes(Bytes(file));
  ASSERT_TRUE(full.ok());
  const uint64_t last_end = full->tensors()[1].absolute_offset + full->tensors()[1].byte_size;
  EXPECT_EQ(Verdict(file.substr(0, last_end - 1)), ErrorCode::kGgufTensorOutOfFile);
}

TEST(GgufReader, PaddingIsZero) {
  std::string file = Encode(SimpleGgufModel());
  Result<GgufFile> good = GgufFile::FromBytes(Bytes(file));
  ASSERT_TRUE(good.ok());
  const TensorInfo first = good->tensors()[0];
  const TensorInfo second = good->tensors()[1];
  const uint64_t before_data = good->data_offset() - 1;
  const uint64_t between = first.absolute_offset + first.byte_size;
  const uint64_t after = second.absolute_offset + second.byte_size;
  ASSERT_LT(between, second.absolute_offset);
  ASSERT_LT(after, file.size());
  for (uint64_t at : {before_data, between, after}) {
    std::string bad = file;
    bad[at] = '\x01';
    Result<GgufFile> result = GgufFile::FromBytes(Bytes(bad));
    ASSERT_FALSE(result.ok()) << at;
    EXPECT_EQ(result.error().code, ErrorCode::kGgufNonZeroPadding);
    EXPECT_EQ(result.error().offset, at);
  }
}

TEST(GgufReader, NothingFollowsTheLastTensorsPadding) {
  GgufModel model = SimpleGgufModel();
  EXPECT_EQ(Verdict(model), ErrorCode::kOk);
  model.trailing = std::string(1, '\0');
  EXPECT_EQ(Verdict(model), ErrorCode::kGgufTrailingBytes);
  model.trailing = "junk";
  EXPECT_EQ(Verdict(model), ErrorCode::kGgufTrailingBytes);
  // Without tensors the file ends after the infos, or after zeros up to the alignment.
  GgufModel bare;
  bare.kvs = {GgufStr("general.name", "x")};
  EXPECT_EQ(Verdict(bare), ErrorCode::kOk);
  std::string file = Encode(bare);
  EXPECT_EQ(Verdict(file + std::string(32 - file.size() % 32, '\0')), ErrorCode::kOk);
  EXPECT_EQ(Verdict(file + std::string(32 - file.size() % 32 + 1, '\0')),
            ErrorCode::kGgufTrailingBytes);
}

// ggml's full load (no_alloc = false) reads every tensor's padded size: a file cut inside
// the last tensor's padding is refused there (the metadata-only load and llama.cpp's mmap
// loader accept it).
TEST(GgufReader, TheLastTensorIsPadded) {
  const std::string file = Encode(SimpleGgufModel());
  Result<GgufFile> full = GgufFile::FromBytes(Bytes(file));
  ASSERT_TRUE(full.ok()) << full.error().ToString();
  const uint64_t last_end = full->tensors()[1].absolute_offset + full->tensors()[1].byte_size;
  ASSERT_LT(last_end, file.size());
  for (uint64_t length : {last_end, last_end + 1, uint64_t{file.size() - 1}}) {
    Result<GgufFile> cut = GgufFile::FromBytes(Bytes(file.substr(0, length)));
    ASSERT_FALSE(cut.ok()) << length;
    EXPECT_EQ(cut.error().code, ErrorCode::kGgufMissingPadding);
    EXPECT_EQ(cut.error().offset, length);
    EXPECT_EQ(cut.error().tensor, "blk.0.attn_q.weight");
  }
  GgufModel unpadded = SimpleGgufModel();
  unpadded.pad_last = false;
  EXPECT_EQ(Verdict(unpadded), ErrorCode::kGgufMissingPadding);
  // Zero-byte tensors only: ggml reads nothing, so nothing need follow the infos.
  GgufModel empty;
  empty.tensors = {{"e", 0, {0, 4}, {}, {""}}};
  empty.pad_last = false;
  const std::string bare = Encode(empty);
  EXPECT_EQ(Verdict(bare), ErrorCode::kOk) << bare.size();
}

TEST(GgufReader, TruncationAnywhereIsAnError) {
  const std::string file = Encode(SimpleGgufModel());
  for (size_t length = 0; length < file.size(); ++length) {
    EXPECT_NE(Verdict(file.substr(0, length)), ErrorCode::kOk) << length;
  }
}

TEST(GgufReader, ErrorsCarryOffsetAndTensor) {
  GgufModel model = SimpleGgufModel();
  model.tensors[1].type = 4;
  model.tensors[1].data = std::string(4, '\1');
  Result<GgufFile> result = GgufFile::FromBytes(Bytes(Encode(model)));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().tensor, "blk.0.attn_q.weight");
  EXPECT_NE(result.error().ToString().find("GgufUnknownType at byte"), std::string::npos);
}

TEST(GgufTypeTable, RowsAreConsistent) {
  EXPECT_EQ(GgmlTypes().size(), 35u);
  uint32_t previous = 0;
  for (const GgmlType& type : GgmlTypes()) {
    EXPECT_EQ(FindGgmlType(type.id), &type);
    EXPECT_GT(type.block_size, 0u);
    EXPECT_GT(type.type_size, 0u);
    if (&type != GgmlTypes().data()) EXPECT_GT(type.id, previous);
    previous = type.id;
    EXPECT_EQ(type.dtype.has_value(), type.block_size == 1) << type.name;
  }
  EXPECT_EQ(FindGgmlType(30)->dtype, Dtype::kBF16);
  EXPECT_EQ(FindGgmlType(4), nullptr);
  EXPECT_EQ(FindGgmlType(kNumGgmlTypeIds), nullptr);
}

TEST(GgufFileOpen, OpensAPathAndRefusesMissingOnes) {
  const std::string path = ::testing::TempDir() + "/stguard_gguf_open.gguf";
  const std::string file = Encode(SimpleGgufModel());
  FILE* out = std::fopen(path.c_str(), "wb");
  ASSERT_NE(out, nullptr);
  std::fwrite(file.data(), 1, file.size(), out);
  std::fclose(out);
  Result<GgufFile> opened = GgufFile::Open(path);
  ASSERT_TRUE(opened.ok()) << opened.error().ToString();
  GgufFile moved = std::move(*opened);
  EXPECT_EQ(moved.tensors()[0].data.size(), 48u);
  EXPECT_EQ(static_cast<uint8_t>(moved.tensors()[0].data[0]), 1u);
  std::remove(path.c_str());
  EXPECT_EQ(GgufFile::Open(path).error().code, ErrorCode::kIoError);
}

}  // namespace
}  // namespace stguard::gguf
