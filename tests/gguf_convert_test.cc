// SPDX-License-Identifier: Apache-2.0
// GGUF to safetensors (stguard/gguf_convert.h): plain types copied bit for bit under the
// GGUF name with ne reversed, --dtype conversion, quantized types decoded, metadata as
// typed JSON text, long arrays left out unless asked, split models to a folder with an
// index, and every refusal leaving nothing behind. The bits of every quantized type
// against ggml itself are in gguf_convert_reference_test.cc; the command line in
// tests/cli/convert_cli_test.cc.
#include <sys/stat.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "stguard/checkpoint_dir.h"
#include "stguard/convert.h"
#include "stguard/gguf.h"
#include "stguard/gguf_convert.h"
#include "stguard/gguf_dequant.h"
#include "stguard/json_escape.h"
#include "stguard/reader.h"
#include "support/gguf_encoder.h"
#include "support/gguf_fixtures.h"
#include "support/temp_dir.h"

namespace stguard::testing {
namespace {

std::vector<uint64_t> ShapeOf(const TensorView& tensor) {
  return std::vector<uint64_t>(tensor.shape.begin(), tensor.shape.end());
}

std::string Bytes(std::span<const std::byte> bytes) {
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

template <typename T>
std::string RawBytes(const std::vector<T>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

// One tensor of every plain type (ggml ids F32 0, F16 1, I8 24, I16 25, I32 26, I64 27,
// F64 28, BF16 30), 1 to 4 dims.
GgufModel EveryPlainType() {
  GgufModel model;
  model.kvs = {GgufStr("general.architecture", "llama")};
  model.tensors = {{"f32", 0, {3, 2}, {}, {}},   {"f16", 1, {4}, {}, {}},
                   {"i8", 24, {5, 1, 2}, {}, {}}, {"i16", 25, {2, 2, 2, 2}, {}, {}},
                   {"i32", 26, {3}, {}, {}},      {"i64", 27, {1, 3}, {}, {}},
                   {"f64", 28, {2, 1}, {}, {}},   {"bf16", 30, {6}, {}, {}}};
  return model;
}

TEST_F(GgufConvert, PlainTypesAreCopiedBitForBitWithNeReversed) {
  const GgufModel model = EveryPlainType();
  const std::string in = WriteModel(model);
  ASSERT_TRUE(Convert(in).ok());
  Result<gguf::GgufFile> source = gguf::GgufFile::Open(in);
  Result<Checkpoint> out = Checkpoint::Open(out_);
  ASSERT_TRUE(source.ok() && out.ok()) << out.error().ToString();
  ASSERT_EQ(out->num_tensors(), model.tensors.size());
  const std::pair<const char*, Dtype> expected[] = {
      {"f32", Dtype::kF32}, {"f16", Dtype::kF16}, {"i8", Dtype::kI8},   {"i16", Dtype::kI16},
      {"i32", Dtype::kI32}, {"i64", Dtype::kI64}, {"f64", Dtype::kF64}, {"bf16", Dtype::kBF16}};
  for (const auto& [name, dtype] : expected) {
    const TensorView* tensor = out->Find(name);
    const gguf::TensorInfo* info = source->FindTensor(name);
    ASSERT_NE(tensor, nullptr) << name;
    EXPECT_EQ(tensor->dtype, dtype) << name;
    EXPECT_EQ(ShapeOf(*tensor), info->shape()) << name;
    EXPECT_EQ(Bytes(tensor->data), Bytes(info->data)) << name;
  }
  EXPECT_EQ(ShapeOf(*out->Find("i16")), (std::vector<uint64_t>{2, 2, 2, 2}));
  EXPECT_EQ(ShapeOf(*out->Find("i8")), (std::vector<uint64_t>{2, 1, 5}));
  EXPECT_EQ(report_.num_tensors, 8u);
  EXPECT_EQ(report_.num_dequantized, 0u);
}

TEST_F(GgufConvert, DtypeConvertsFloatingTensorsAndCopiesIntegers) {
  const std::vector<float> values = {1.0f, -0.1f, 3.14159f, 65536.0f, 1e-8f, -0.0f};
  GgufModel model;
  model.tensors = {{"w", 0, {6}, {}, RawBytes(values)},
                   {"ids", 26, {2}, {}, RawBytes(std::vector<int32_t>{7, -9})}};
  const std::string in = WriteModel(model);
  GgufConvertOptions options;
  options.dtype = Dtype::kBF16;
  ASSERT_TRUE(Convert(in, options).ok());
  Result<Checkpoint> out = Checkpoint::Open(out_);
  ASSERT_TRUE(out.ok());
  const TensorView* w = out->Find("w");
  ASSERT_EQ(w->dtype, Dtype::kBF16);
  std::vector<uint16_t> expected(values.size());
  for (size_t i = 0; i < values.size(); ++i) expected[i] = F32ToBf16(values[i]);
  EXPECT_EQ(Bytes(w->data), RawBytes(expected));
  EXPECT_EQ(out->Find("ids")->dtype, Dtype::kI32);
  EXPECT_EQ(Bytes(out->Find("ids")->data), RawBytes(std::vector<int32_t>{7, -9}));
}

TEST_F(GgufConvert, QuantizedTensorsAreDequantizedToF32OrTheDtype) {
  // Q8_0 (id 8): blocks of 32 int8 values after an f16 scale.
  GgufModel model;
  model.tensors = {{"q", 8, {64, 3}, {}, {}}};
  const std::string in = WriteModel(model);
  ASSERT_TRUE(Convert(in).ok());
  EXPECT_EQ(report_.num_dequantized, 1u);
  Result<gguf::GgufFile> source = gguf::GgufFile::Open(in);
  Result<Checkpoint> out = Checkpoint::Open(out_);
  ASSERT_TRUE(source.ok() && out.ok());
  const gguf::TensorInfo& info = source->tensors()[0];
  std::vector<float> expected(info.num_elements());
  ASSERT_TRUE(gguf::DequantizeRow(*info.type, info.data, expected).ok());
  const TensorView* q = out->Find("q");
  EXPECT_EQ(q->dtype, Dtype::kF32);
  EXPECT_EQ(ShapeOf(*q), (std::vector<uint64_t>{3, 64}));
  EXPECT_EQ(Bytes(q->data), RawBytes(expected));

  GgufConvertOptions options;
  options.dtype = Dtype::kF16;
  ASSERT_TRUE(Convert(in, options).ok());
  out = Checkpoint::Open(out_);
  ASSERT_TRUE(out.ok());
  std::vector<uint16_t> halves(expected.size());
  for (size_t i = 0; i < expected.size(); ++i) halves[i] = F32ToF16(expected[i]);
  EXPECT_EQ(out->Find("q")->dtype, Dtype::kF16);
  EXPECT_EQ(Bytes(out->Find("q")->data), RawBytes(halves));
}

TEST_F(GgufConvert, ATypeWithoutDecoderIsRefusedByNameAndNothingIsWritten) {
  // Q8_1 (id 9) is an activation format: ggml has no dequantizer for it.
  GgufModel model = EveryPlainType();
  model.tensors.push_back({"activations", 9, {32}, {}, {}});
  const std::string in = WriteModel(model);
  const Error error = Convert(in);
  EXPECT_EQ(error.code, ErrorCode::kGgufNotDequantizable);
  EXPECT_EQ(error.tensor, "activations");
  EXPECT_NE(error.context.find("q8_1"), std::string::npos) << error.context;
  Result<gguf::GgufFile> source = gguf::GgufFile::Open(in);
  EXPECT_EQ(error.offset, source->FindTensor("activations")->info_offset);
  EXPECT_EQ(dir_.Entries(), std::vector<std::string>{"in.gguf"});
  // An existing OUT keeps its content.
  ASSERT_TRUE(WriteFileBytes(out_, "old"));
  EXPECT_FALSE(Convert(in).ok());
  EXPECT_EQ(dir_.Entries(), (std::vector<std::string>{"in.gguf", "out.safetensors"}));
  struct stat info;
  ASSERT_EQ(::stat(out_.c_str(), &info), 0);
  EXPECT_EQ(info.st_size, 3);
}

TEST_F(GgufConvert, MetadataKeepsEveryValueWithItsType) {
  GgufModel model = SimpleGgufModel();
  model.kvs.push_back(GgufU64("v.u64", 18446744073709551615ull));
  model.kvs.push_back(GgufI8("v.i8", -7));
  model.kvs.push_back(GgufF32("v.f32", 0.1f));
  model.kvs.push_back(GgufF64("v.f64", 0.1));
  model.kvs.push_back(GgufF32("v.nan", std::numeric_limits<float>::quiet_NaN()));
  model.kvs.push_back(GgufF64("v.inf", -std::numeric_limits<double>::infinity()));
  model.kvs.push_back(GgufF32("v.neg_zero", -0.0f));
  model.kvs.push_back(GgufF64("v.one", 1.0));
  model.kvs.push_back(GgufStr("v.quote", "say \"hi\"\n"));
  model.kvs.push_back(GgufStrArray("v.words", {"a\"b", "\xc3\xa9"}));
  const std::string in = WriteModel(model);
  ASSERT_TRUE(Convert(in).ok());
  Result<Checkpoint> out = Checkpoint::Open(out_);
  ASSERT_TRUE(out.ok());
  const std::pair<const char*, const char*> expected[] = {
      {"general.architecture", "llama"},
      {"llama.context_length", R"({"u32":4096})"},
      {"llama.rope.freq_base", R"({"f32":10000.0})"},
      {"general.flag", R"({"bool":true})"},
      {"tokenizer.ggml.tokens", R"({"string":["<s>","</s>","hello"]})"},
      {"tokenizer.ggml.token_type", R"({"i32":[1,3,1]})"},
      {"v.u64", R"({"u64":18446744073709551615})"},
      {"v.i8", R"({"i8":-7})"},
      {"v.f32", R"({"f32":0.1})"},
      {"v.f64", R"({"f64":0.1})"},
      {"v.nan", R"({"f32":"nan"})"},
      {"v.inf", R"({"f64":"-inf"})"},
      {"v.neg_zero", R"({"f32":-0.0})"},  // "-0" would read back as the integer 0
      {"v.one", R"({"f64":1.0})"},
      {"v.quote", "say \"hi\"\n"},
      {"v.words", "{\"string\":[\"a\\\"b\",\"\xc3\xa9\"]}"}};
  for (const auto& [key, text] : expected) {
    EXPECT_EQ(out->FindMetadata(key).value_or("(absent)"), text) << key;
  }
  EXPECT_EQ(out->metadata().size(), std::size(expected));
}

// FloatText, the one float printer of the CLI text, --json, result.metadata (the page) and
// convert's __metadata__: shortest digits that read back as the same bits, always with a
// '.' or an exponent, so that -0.0 and 1.0 stay floats in Python's and JavaScript's JSON.
TEST(FloatText, ReadsBackAsTheSameFloat) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(FloatText(-0.0, false), "-0.0");
  EXPECT_EQ(FloatText(-0.0, true), "-0.0");
  EXPECT_EQ(FloatText(1.0, true), "1.0");
  EXPECT_EQ(FloatText(0.1f, true), "0.1");   // the f32's shortest, not 0.10000000149011612
  EXPECT_EQ(FloatText(0.1f, false), "0.10000000149011612");
  EXPECT_EQ(FloatText(123456789.0, false), "123456789.0");
  EXPECT_EQ(FloatText(1e300, false), "1e+300");
  EXPECT_EQ(FloatText(nan, false), "nan");
  EXPECT_EQ(FloatText(-nan, true), "nan");
  EXPECT_EQ(FloatText(inf, false), "inf");
  EXPECT_EQ(FloatText(-inf, true), "-inf");
  std::string json;
  AppendJsonFloat(-0.0, false, &json);
  AppendJsonFloat(nan, true, &json);
  AppendJsonFloat(-inf, false, &json);
  EXPECT_EQ(json, R"(-0.0"nan""-inf")");
  std::mt19937_64 random(36);
  for (int i = 0; i < 20000; ++i) {
    const uint64_t bits = random();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    const auto bits32 = static_cast<uint32_t>(bits);
    float f;
    std::memcpy(&f, &bits32, sizeof f);
    if (std::isfinite(d)) {
      const std::string text = FloatText(d, false);
      ASSERT_NE(text.find_first_of(".e"), std::string::npos) << text;
      const double back = std::strtod(text.c_str(), nullptr);
      ASSERT_EQ(std::memcmp(&back, &d, sizeof d), 0) << text;
    }
    if (std::isfinite(f)) {
      const std::string text = FloatText(f, true);
      ASSERT_NE(text.find_first_of(".e"), std::string::npos) << text;
      const float back = std::strtof(text.c_str(), nullptr);
      ASSERT_EQ(std::memcmp(&back, &f, sizeof f), 0) << text;
    }
  }
}

GgufModel ModelWithLongArray(size_t count, size_t length) {
  GgufModel model = SimpleGgufModel();
  std::vector<std::string> tokens;
  for (size_t i = 0; i < count; ++i) tokens.push_back(std::string(length, '\x01'));
  model.kvs.push_back(GgufStrArray("tokenizer.long", tokens));
  return model;
}

TEST_F(GgufConvert, LongArraysAreLeftOutUnlessAllMetadata) {
  // 1,024 elements stay; 1,025 are left out and reported.
  GgufModel model = ModelWithLongArray(kGgufMetadataArrayLimit, 1);
  model.kvs.push_back(GgufI32Array("a.long", std::vector<int32_t>(kGgufMetadataArrayLimit + 1, 5)));
  const std::string in = WriteModel(model);
  ASSERT_TRUE(Convert(in).ok());
  Result<Checkpoint> out = Checkpoint::Open(out_);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(out->FindMetadata("tokenizer.long").has_value());
  EXPECT_FALSE(out->FindMetadata("a.long").has_value());
  ASSERT_EQ(report_.omitted.size(), 1u);
  EXPECT_EQ(report_.omitted[0].key, "a.long");
  EXPECT_EQ(report_.omitted[0].count, kGgufMetadataArrayLimit + 1);
  EXPECT_EQ(report_.omitted[0].element_type, "i32");
  GgufConvertOptions options;
  options.all_metadata = true;
  ASSERT_TRUE(Convert(in, options).ok());
  out = Checkpoint::Open(out_);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->FindMetadata("a.long")->size(), std::string(R"({"i32":[])").size() + 1025 * 2);
  EXPECT_TRUE(report_.omitted.empty());
}

TEST_F(GgufConvert, AllMetadataStillHoldsTheHeaderCap) {
  // 2,000 strings of 9,000 control bytes: 18 MB in the file, 108 MB once JSON-escaped
  // (\u0001 each), past the 100,000,000-byte header cap.
  const std::string in = WriteModel(ModelWithLongArray(2000, 9000));
  ASSERT_TRUE(Convert(in).ok());  // left out by default
  ASSERT_EQ(report_.omitted.size(), 1u);
  ::unlink(out_.c_str());
  GgufConvertOptions options;
  options.all_metadata = true;
  const Error error = Convert(in, options);
  EXPECT_EQ(error.code, ErrorCode::kHeaderTooLarge) << error.ToString();
  EXPECT_EQ(dir_.Entries(), std::vector<std::string>{"in.gguf"});
}

TEST_F(GgufConvert, ZeroElementTensorsConvert) {
  GgufModel model;
  model.tensors = {{"empty", 0, {0, 3}, {}, {}}, {"q", 2, {0}, {}, {}}};
  ASSERT_TRUE(Convert(WriteModel(model)).ok());
  Result<Checkpoint> out = Checkpoint::Open(out_);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(ShapeOf(*out->Find("empty")), (std::vector<uint64_t>{3, 0}));
  EXPECT_EQ(out->Find("q")->dtype, Dtype::kF32);
  EXPECT_TRUE(out->Find("q")->data.empty());
}

TEST_F(GgufConvert, NamesTheWriterRefusesAreRefused) {
  GgufModel model;
  model.tensors = {{"__metadata__", 0, {2}, {}, {}}};
  EXPECT_EQ(Convert(WriteModel(model)).code, ErrorCode::kInvalidTensorName);
  EXPECT_EQ(dir_.Entries(), std::vector<std::string>{"in.gguf"});
}

TEST_F(GgufConvert, AnInvalidGgufIsRefusedWithItsCode) {
  GgufModel model = SimpleGgufModel();
  model.trailing = "junk";
  EXPECT_EQ(Convert(WriteModel(model)).code, ErrorCode::kGgufTrailingBytes);
  EXPECT_EQ(dir_.Entries(), std::vector<std::string>{"in.gguf"});
}

// Split models.
GgufModel Part(uint16_t no, uint16_t count, int32_t total, std::vector<std::string> names) {
  GgufModel model;
  model.kvs = {GgufStr("general.architecture", "llama"), GgufU16("split.no", no),
               GgufU16("split.count", count), GgufI32("split.tensors.count", total)};
  for (const std::string& name : names) model.tensors.push_back({name, 0, {4}, {}, {}});
  return model;
}

class GgufConvertSplit : public GgufConvert {
 protected:
  void WriteSet() {
    WriteModel(Part(0, 3, 5, {"a", "b"}), "m-00001-of-00003.gguf");
    WriteModel(Part(1, 3, 5, {"c", "d"}), "m-00002-of-00003.gguf");
    WriteModel(Part(2, 3, 5, {"e"}), "m-00003-of-00003.gguf");
  }
  std::string out_dir_ = dir_.File("out");
};

TEST_F(GgufConvertSplit, ASplitModelBecomesAFolderWithAnIndex) {
  WriteSet();
  report_ = {};
  ASSERT_TRUE(ConvertGguf(dir_.File("m-00001-of-00003.gguf"), out_dir_, {}, &report_).ok());
  EXPECT_EQ(report_.written,
            (std::vector<std::string>{"model-00001-of-00003.safetensors",
                                      "model-00002-of-00003.safetensors",
                                      "model-00003-of-00003.safetensors",
                                      "model.safetensors.index.json"}));
  Result<CheckpointDir> folder = CheckpointDir::Open(out_dir_);
  ASSERT_TRUE(folder.ok()) << folder.error().ToString();
  EXPECT_EQ(folder->num_tensors(), 5u);
  EXPECT_EQ(folder->index_total_size(), 5u * 16);
  size_t shard = 9;
  ASSERT_NE(folder->Find("d", &shard), nullptr);
  EXPECT_EQ(folder->shards()[shard].name, "model-00002-of-00003.safetensors");
  EXPECT_EQ(folder->shards()[shard].checkpoint.FindMetadata("split.no"), R"({"u16":1})");
}

TEST_F(GgufConvertSplit, ARefusedPartLeavesNoFolder) {
  WriteSet();
  GgufModel bad = Part(2, 3, 5, {"e"});
  bad.tensors[0].type = 9;  // q8_1: no decoder
  bad.tensors[0].ne = {32};
  WriteModel(bad, "m-00003-of-00003.gguf");
  report_ = {};
  const Error error = ConvertGguf(dir_.File("m-00001-of-00003.gguf"), out_dir_, {}, &report_);
  EXPECT_EQ(error.code, ErrorCode::kGgufNotDequantizable);
  EXPECT_EQ(error.tensor, "e");
  struct stat info;
  EXPECT_NE(::stat(out_dir_.c_str(), &info), 0) << "the folder this call made is removed";
  // A folder that existed stays, and stays empty.
  ASSERT_EQ(::mkdir(out_dir_.c_str(), 0777), 0);
  EXPECT_FALSE(ConvertGguf(dir_.File("m-00001-of-00003.gguf"), out_dir_, {}, &report_).ok());
  EXPECT_EQ(::rmdir(out_dir_.c_str()), 0);
}

TEST_F(GgufConvertSplit, SignedSplitKeysAreASplitModelToo) {
  // CheckSplitSet reads split.no and split.count of any integer type; so does convert,
  // which would otherwise write the first part alone as if it were the whole model.
  for (int part = 0; part < 2; ++part) {
    GgufModel model;
    model.kvs = {GgufI32("split.no", part), GgufI32("split.count", 2),
                 GgufI32("split.tensors.count", 2)};
    std::string tensor = "t";
    tensor += std::to_string(part);
    model.tensors = {{tensor, 0, {4}, {}, {}}};
    std::string name = "s-0000";
    name += std::to_string(part + 1);
    name += "-of-00002.gguf";
    WriteModel(model, name);
  }
  report_ = {};
  ASSERT_TRUE(ConvertGguf(dir_.File("s-00001-of-00002.gguf"), out_dir_, {}, &report_).ok());
  EXPECT_EQ(report_.num_tensors, 2u);
  EXPECT_EQ(report_.written.size(), 3u);
  EXPECT_EQ(ConvertGguf(dir_.File("s-00002-of-00002.gguf"), out_, {}, &report_).code,
            ErrorCode::kGgufSplitMismatch);
}

TEST_F(GgufConvertSplit, ALaterPartAloneIsRefused) {
  WriteSet();
  report_ = {};
  const Error error = ConvertGguf(dir_.File("m-00002-of-00003.gguf"), out_, {}, &report_);
  EXPECT_EQ(error.code, ErrorCode::kGgufSplitMismatch);
  EXPECT_EQ(dir_.Entries().size(), 3u);
}

TEST_F(GgufConvertSplit, AMissingPartIsRefused) {
  WriteSet();
  ::unlink(dir_.File("m-00002-of-00003.gguf").c_str());
  report_ = {};
  EXPECT_EQ(ConvertGguf(dir_.File("m-00001-of-00003.gguf"), out_dir_, {}, &report_).code,
            ErrorCode::kMissingShard);
}

TEST(GgufDequantizeTensor, ChecksTypesAndSizes) {
  const gguf::GgmlType& q8_0 = *gguf::FindGgmlType(8);
  std::string blocks(34, '\0');
  blocks[1] = 0x3C;  // scale 1.0 (f16 0x3C00)
  blocks[2] = 5;
  std::vector<float> out(32);
  ASSERT_TRUE(DequantizeTensor(q8_0, std::as_bytes(std::span(blocks)), out).ok());
  EXPECT_EQ(out[0], 5.0f);
  std::vector<float> short_out(31);
  EXPECT_EQ(DequantizeTensor(q8_0, std::as_bytes(std::span(blocks)), short_out).code,
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(DequantizeTensor(*gguf::FindGgmlType(9), std::as_bytes(std::span(blocks)), out).code,
            ErrorCode::kGgufNotDequantizable);
  const std::vector<int32_t> ints = {1, 2};
  std::vector<float> two(2);
  EXPECT_EQ(DequantizeTensor(*gguf::FindGgmlType(26), std::as_bytes(std::span(ints)), two).code,
            ErrorCode::kGgufNotDequantizable);
  const std::vector<uint16_t> halves = {0x3C00, 0xC000};
  ASSERT_TRUE(DequantizeTensor(*gguf::FindGgmlType(1), std::as_bytes(std::span(halves)), two).ok());
  EXPECT_EQ(two, (std::vector<float>{1.0f, -2.0f}));
}

}  // namespace
}  // namespace stguard::testing
