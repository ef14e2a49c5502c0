// SPDX-License-Identifier: Apache-2.0
// C API dtypes, conversion to F32, and a conversion's verdict compared with the command's.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <sys/stat.h>

#include "capi/capi_test_util.h"
#include "stguard/convert.h"
#include "stguard/dtype.h"
#include "stguard/stguard.h"
#include "stguard/stguard_check.h"
#include "stguard/stguard_torch.h"
#include "support/run_cli.h"
#include "support/temp_dir.h"
#include "support/test_files.h"

namespace stguard::testing {
namespace {

TEST(CapiTorchConvert, RefusesAnOutputThatIsTheInput) {
  TempDir dir;
  const std::string in = dir.File("m.pt");
  const std::string bytes =
      ReadFileBytes(std::string(STGUARD_CORPUS_DIR) + "/torch/valid/module_state_dict.zip.pt");
  ASSERT_TRUE(WriteFileBytes(in, bytes));
  stguard_error err{};
  EXPECT_EQ(stguard_torch_convert_file(in.c_str(), in.c_str(), nullptr, &err),
            STGUARD_INVALID_ARGUMENT);
  EXPECT_EQ(ReadFileBytes(in), bytes);
  const std::string out = dir.File("m.safetensors");
  EXPECT_EQ(stguard_torch_convert_file(in.c_str(), out.c_str(), nullptr, &err), STGUARD_OK);
  EXPECT_EQ(ReadFileBytes(in), bytes);
}

// JsonField is the text of `"name":` in one line of JSON: a string's content or a number,
// "" when the field is absent (the envelope's fields hold no escaped quotes here).
std::string JsonField(const std::string& json, const std::string& name) {
  const std::string key = "\"" + name + "\":";
  const size_t at = json.find(key);
  if (at == std::string::npos) return "";
  size_t start = at + key.size();
  const bool text = json[start] == '"';
  if (text) ++start;
  const size_t end = json.find_first_of(text ? "\"" : ",}", start);
  return json.substr(start, end - start);
}

// A conversion's verdict is the library's (ConvertReport::verdict): the C API reports the
// verdict, code and offset `stguard convert --json` prints, and the same exit status.
TEST(CapiConvertJudged, GivesTheCommandsVerdict) {
  TempDir dir;
  const std::string corpus = STGUARD_CORPUS_DIR;
  // A folder whose shard's pickle cannot be proven safe, though the reader's first error
  // is not one that runs code: refused by the shard's scan.
  const std::string folder = dir.File("folder");
  ASSERT_EQ(::mkdir(folder.c_str(), 0755), 0);
  ASSERT_TRUE(WriteFileBytes(
      folder + "/pytorch_model.bin",
      ReadFileBytes(corpus + "/torch/refuse/PickleBadArguments__build_setattr.pt")));
  const struct {
    std::string in;
    std::string verdict;
    std::string code;
  } cases[] = {
      {corpus + "/torch/refuse/PickleGlobalRefused__raw_os_system.pt", "refused",
       "PickleGlobalRefused"},
      {folder, "refused", "PickleBadArguments"},
      {corpus + "/torch/valid/training.zip.pt", "invalid", "NotAStateDict"},
      {corpus + "/torch/valid/dtypes.zip.pt", "valid", ""},
  };
  for (const auto& c : cases) {
    const std::string out = dir.File("out");
    const CliRun cli = RunCli("convert --json " + ShellQuoted(c.in) + " " + ShellQuoted(out),
                              Streams::kStdoutOnly);
    ASSERT_EQ(JsonField(cli.output, "verdict"), c.verdict) << c.in << cli.output;
    ASSERT_EQ(JsonField(cli.output, "code"), c.code) << c.in;
    std::error_code ignored;
    std::filesystem::remove_all(out, ignored);
    stguard_error err{};
    stguard_verdict verdict = STGUARD_VERDICT_ERROR;
    const stguard_code code = stguard_convert_judged(c.in.c_str(), out.c_str(),
                                                     STGUARD_NUM_DTYPES, nullptr, &verdict, &err);
    EXPECT_EQ(stguard_verdict_name(verdict), c.verdict) << c.in;
    EXPECT_EQ(stguard_verdict_exit_status(verdict), cli.status) << c.in;
    if (c.code.empty()) {
      EXPECT_EQ(code, STGUARD_OK) << err.message;
      continue;
    }
    EXPECT_EQ(err.code_name, c.code) << c.in;
    const std::string offset = JsonField(cli.output, "offset");
    EXPECT_EQ(offset.empty() ? "0" : offset, std::to_string(err.offset)) << c.in;
  }
}

TEST(CapiDtype, NamesAndBitsMatchTheCppTable) {
  for (Dtype dtype : kAllDtypes) {
    const auto c_dtype = static_cast<stguard_dtype>(dtype);
    ASSERT_NE(stguard_dtype_name(c_dtype), nullptr);
    EXPECT_EQ(std::string_view(stguard_dtype_name(c_dtype)), DtypeName(dtype));
    EXPECT_EQ(stguard_dtype_bits(c_dtype), DtypeBits(dtype));
    stguard_dtype parsed = STGUARD_NUM_DTYPES;
    const std::string_view name = DtypeName(dtype);
    EXPECT_EQ(stguard_dtype_from_name(name.data(), name.size(), &parsed, nullptr), STGUARD_OK);
    EXPECT_EQ(parsed, c_dtype);
  }
  EXPECT_STREQ(stguard_dtype_name(STGUARD_DTYPE_BF16), "BF16");
  EXPECT_EQ(stguard_dtype_bits(STGUARD_DTYPE_BF16), 16u);
  EXPECT_EQ(stguard_dtype_bits(STGUARD_DTYPE_F4), 4u);
}

TEST(CapiDtype, OutOfRangeValuesAndUnknownNamesAreRefused) {
  EXPECT_EQ(stguard_dtype_name(STGUARD_NUM_DTYPES), nullptr);
  EXPECT_EQ(stguard_dtype_name(static_cast<stguard_dtype>(-1)), nullptr);
  EXPECT_EQ(stguard_dtype_name(static_cast<stguard_dtype>(256)), nullptr);
  EXPECT_EQ(stguard_dtype_bits(STGUARD_NUM_DTYPES), 0u);
  EXPECT_EQ(stguard_dtype_bits(static_cast<stguard_dtype>(-7)), 0u);

  stguard_dtype dtype = STGUARD_DTYPE_U8;
  stguard_error err = PoisonedError();
  EXPECT_EQ(stguard_dtype_from_name("bf16", 4, &dtype, &err), STGUARD_INVALID_DTYPE);
  EXPECT_STREQ(err.message, "unknown dtype name: bf16");
  EXPECT_EQ(stguard_dtype_from_name("BF16\0", 5, &dtype, &err), STGUARD_INVALID_DTYPE);
  EXPECT_EQ(stguard_dtype_from_name("", 0, &dtype, &err), STGUARD_INVALID_DTYPE);
  EXPECT_EQ(stguard_dtype_from_name(nullptr, 0, &dtype, &err), STGUARD_INVALID_DTYPE);
  EXPECT_EQ(stguard_dtype_from_name(nullptr, 4, &dtype, &err), STGUARD_INVALID_ARGUMENT);
  EXPECT_EQ(stguard_dtype_from_name("BF16", 4, nullptr, &err), STGUARD_INVALID_ARGUMENT);
  EXPECT_EQ(dtype, STGUARD_DTYPE_U8) << "failures leave the output alone";
}

// A checkpoint with a BF16 [2,3], an F4 [4] and a C64 [1] tensor, held for a test.
class CapiConvert : public ::testing::Test {
 protected:
  void SetUp() override {
    // BF16 bit patterns of 1, -2, 0.5, 3.140625, -0, +inf.
    const uint16_t bf16[6] = {0x3F80, 0xC000, 0x3F00, 0x4049, 0x8000, 0x7F80};
    std::string data(reinterpret_cast<const char*>(bf16), sizeof(bf16));  // little-endian host
    data += std::string(2, '\x12');  // F4 [4]: 2 bytes
    data += std::string(8, '\0');    // C64 [1]
    file_ = FileWithHeader(
        R"({"w":{"dtype":"BF16","shape":[2,3],"data_offsets":[0,12]},)"
        R"("q":{"dtype":"F4","shape":[4],"data_offsets":[12,14]},)"
        R"("z":{"dtype":"C64","shape":[1],"data_offsets":[14,22]}})",
        data);
    ASSERT_EQ(stguard_checkpoint_from_buffer(file_.data(), file_.size(), &handle_, nullptr),
              STGUARD_OK);
  }
  void TearDown() override { stguard_checkpoint_close(handle_); }

  std::string file_;
  stguard_checkpoint* handle_ = nullptr;
};

TEST_F(CapiConvert, Bf16DecodesExactlyIntoTheCallersBuffer) {
  const stguard_tensor* w = stguard_checkpoint_find_cstr(handle_, "w");
  ASSERT_NE(w, nullptr);
  std::vector<float> out(8, 42.0f);  // two floats more than needed: left alone
  ASSERT_EQ(stguard_tensor_to_f32(w, out.data(), out.size(), nullptr), STGUARD_OK);
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], -2.0f);
  EXPECT_EQ(out[2], 0.5f);
  EXPECT_EQ(out[3], 3.140625f);
  EXPECT_EQ(out[4], 0.0f);
  EXPECT_TRUE(std::signbit(out[4]));
  EXPECT_TRUE(std::isinf(out[5]));
  EXPECT_EQ(out[6], 42.0f);
  EXPECT_EQ(out[7], 42.0f);
}

TEST_F(CapiConvert, ATooSmallBufferIsRefusedAndUntouched) {
  const stguard_tensor* w = stguard_checkpoint_find_cstr(handle_, "w");
  std::vector<float> out(5, 42.0f);
  stguard_error err = PoisonedError();
  EXPECT_EQ(stguard_tensor_to_f32(w, out.data(), out.size(), &err), STGUARD_INVALID_ARGUMENT);
  EXPECT_STREQ(err.message, "output buffer too small: needs 6 floats, has room for 5");
  EXPECT_EQ(TensorOf(err), "w");
  for (float value : out) EXPECT_EQ(value, 42.0f);
  EXPECT_EQ(stguard_tensor_to_f32(w, nullptr, 0, &err), STGUARD_INVALID_ARGUMENT);
  EXPECT_EQ(stguard_tensor_to_f32(w, nullptr, 6, &err), STGUARD_INVALID_ARGUMENT);
  EXPECT_STREQ(err.message, "output buffer is NULL");
  EXPECT_EQ(stguard_tensor_to_f32(nullptr, out.data(), 6, &err), STGUARD_INVALID_ARGUMENT);
  EXPECT_STREQ(err.message, "tensor is NULL");
}

TEST_F(CapiConvert, DtypesWithoutAConversionAreRefused) {
  float out[8] = {0};
  stguard_error err = PoisonedError();
  EXPECT_EQ(stguard_tensor_to_f32(stguard_checkpoint_find_cstr(handle_, "q"), out, 8, &err),
            STGUARD_INVALID_ARGUMENT);
  EXPECT_STREQ(err.message, "this dtype has no conversion to F32: F4");
  EXPECT_EQ(TensorOf(err), "q");
  EXPECT_EQ(stguard_tensor_to_f32(stguard_checkpoint_find_cstr(handle_, "z"), out, 8, &err),
            STGUARD_INVALID_ARGUMENT);
  EXPECT_STREQ(err.message, "this dtype has no conversion to F32: C64");
}

TEST(CapiConvertBuffer, ConvertsAWholeNumberOfElements) {
  const uint16_t f16[3] = {0x3C00, 0xC000, 0x7BFF};  // 1, -2, 65504
  float out[3] = {0, 0, 0};
  ASSERT_EQ(stguard_convert_to_f32(STGUARD_DTYPE_F16, f16, sizeof(f16), out, 3, nullptr),
            STGUARD_OK);
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], -2.0f);
  EXPECT_EQ(out[2], 65504.0f);
  // Zero elements: nothing to do, NULL pointers allowed.
  EXPECT_EQ(stguard_convert_to_f32(STGUARD_DTYPE_F16, nullptr, 0, nullptr, 0, nullptr),
            STGUARD_OK);

  stguard_error err = PoisonedError();
  EXPECT_EQ(stguard_convert_to_f32(STGUARD_DTYPE_F16, f16, 5, out, 3, &err),
            STGUARD_INVALID_ARGUMENT);
  EXPECT_STREQ(err.message, "source length is not a whole number of elements");
  EXPECT_EQ(stguard_convert_to_f32(STGUARD_DTYPE_F16, f16, 6, out, 2, &err),
            STGUARD_INVALID_ARGUMENT);
  EXPECT_EQ(stguard_convert_to_f32(STGUARD_DTYPE_F16, nullptr, 6, out, 3, &err),
            STGUARD_INVALID_ARGUMENT);
  EXPECT_STREQ(err.message, "source is NULL");
  EXPECT_EQ(stguard_convert_to_f32(STGUARD_NUM_DTYPES, f16, 6, out, 3, &err),
            STGUARD_INVALID_ARGUMENT);
  EXPECT_STREQ(err.message, "dtype is not a stguard_dtype value");
}

}  // namespace
}  // namespace stguard::testing
