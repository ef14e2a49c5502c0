// SPDX-License-Identifier: Apache-2.0
// TorchCheckpoint on the corpus's real torch.save files: views gathered in row-major
// order, shared storages, aliases, the legacy stream, and lying files refused with their
// code. (tests/torch/test_torch_convert.py compares every fixture with torch.load.)
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "stguard/torch_checkpoint.h"
#include "support/test_files.h"

namespace stguard {
namespace {

const std::string kDir = std::string(STGUARD_CORPUS_DIR) + "/torch/";

const TorchTensor* FindTensor(const TorchCheckpoint& checkpoint, std::string_view name) {
  for (const TorchTensor& tensor : checkpoint.tensors()) {
    if (tensor.name == name) return &tensor;
  }
  return nullptr;
}

std::vector<float> Floats(const TorchCheckpoint& checkpoint, std::string_view name) {
  const TorchTensor* tensor = FindTensor(checkpoint, name);
  EXPECT_NE(tensor, nullptr) << name;
  if (tensor == nullptr) return {};
  Result<std::string> bytes =
      checkpoint.TensorBytes(static_cast<size_t>(tensor - checkpoint.tensors().data()));
  EXPECT_TRUE(bytes.ok()) << bytes.error().ToString();
  std::vector<float> out(bytes->size() / 4);
  std::memcpy(out.data(), bytes->data(), bytes->size());
  return out;
}

class TorchViewsTest : public ::testing::TestWithParam<const char*> {};

TEST_P(TorchViewsTest, GathersStridedViewsRowMajor) {
  Result<TorchCheckpoint> checkpoint = TorchCheckpoint::Open(kDir + "valid/" + GetParam());
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.error().ToString();
  // base = arange(60).reshape(3, 4, 5); transposed = base[0].t(); stepped = base[:, ::2, 1::3]
  const TorchTensor* transposed = FindTensor(*checkpoint, "transposed");
  ASSERT_NE(transposed, nullptr);
  EXPECT_FALSE(transposed->contiguous);
  EXPECT_EQ(transposed->shape, (std::vector<uint64_t>{5, 4}));
  const std::vector<float> t = Floats(*checkpoint, "transposed");
  EXPECT_EQ(std::vector<float>(t.begin(), t.begin() + 6),
            (std::vector<float>{0, 5, 10, 15, 1, 6}));
  EXPECT_EQ(Floats(*checkpoint, "stepped"),
            (std::vector<float>{1, 4, 11, 14, 21, 24, 31, 34, 41, 44, 51, 54}));
  EXPECT_EQ(Floats(*checkpoint, "col"), (std::vector<float>{13, 33, 53}));
  EXPECT_EQ(Floats(*checkpoint, "expanded"),
            (std::vector<float>{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2}));
  EXPECT_TRUE(FindTensor(*checkpoint, "row")->contiguous);
}

INSTANTIATE_TEST_SUITE_P(Formats, TorchViewsTest,
                         ::testing::Values("views.zip.pt", "views.legacy.pt"));

TEST(TorchCheckpointTest, FormatsAndAliases) {
  Result<TorchCheckpoint> zip = TorchCheckpoint::Open(kDir + "valid/tied.zip.pt");
  ASSERT_TRUE(zip.ok()) << zip.error().ToString();
  EXPECT_EQ(zip->format(), TorchFormat::kZip);
  const TorchTensor* head = FindTensor(*zip, "lm_head.weight");
  ASSERT_NE(head, nullptr);
  ASSERT_TRUE(head->alias_of.has_value());
  EXPECT_EQ(zip->tensors()[*head->alias_of].name, "embed.weight");
  EXPECT_FALSE(FindTensor(*zip, "other")->alias_of.has_value());
  Result<TorchCheckpoint> legacy = TorchCheckpoint::Open(kDir + "valid/shared_storage.legacy.pt");
  ASSERT_TRUE(legacy.ok()) << legacy.error().ToString();
  EXPECT_EQ(legacy->format(), TorchFormat::kLegacy);
  EXPECT_EQ(legacy->storages().size(), 1u);
  EXPECT_EQ(legacy->tensors().size(), 3u);  // three views of one storage, none an alias
  for (const TorchTensor& tensor : legacy->tensors()) EXPECT_FALSE(tensor.alias_of);
}

TEST(TorchCheckpointTest, KeySelectsNestedStateDict) {
  const std::string path = kDir + "valid/training.zip.pt";
  EXPECT_EQ(TorchCheckpoint::Open(path).error().code, ErrorCode::kNotAStateDict);
  TorchOptions options;
  options.key_path = {"state_dict"};
  Result<TorchCheckpoint> checkpoint = TorchCheckpoint::Open(path, options);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.error().ToString();
  EXPECT_NE(FindTensor(*checkpoint, "fc.weight"), nullptr);
  options.key_path = {"epoch"};
  EXPECT_EQ(TorchCheckpoint::Open(path, options).error().code, ErrorCode::kNotAStateDict);
}

TEST(TorchCheckpointTest, KeyPathFollowsEachLevel) {
  const std::string path = kDir + "valid/nested.zip.pt";
  TorchOptions options;
  options.key_path = {"module", "model"};
  Result<TorchCheckpoint> checkpoint = TorchCheckpoint::Open(path, options);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.error().ToString();
  EXPECT_NE(FindTensor(*checkpoint, "fc.weight"), nullptr);
  options.key_path = {"module"};  // a dict of dicts, not of tensors
  EXPECT_EQ(TorchCheckpoint::Open(path, options).error().code, ErrorCode::kNotAStateDict);
  options.key_path = {"step", "model"};  // root["step"] is an int
  const Error error = TorchCheckpoint::Open(path, options).error();
  EXPECT_EQ(error.code, ErrorCode::kNotAStateDict);
  EXPECT_EQ(error.context, "step");
  options.key_path = {"module", "nope"};
  EXPECT_EQ(TorchCheckpoint::Open(path, options).error().context, "module / nope");
}

TEST(TorchCheckpointTest, OutputIsBoundedByTheInputSize) {
  // One element expanded to 2,000,000 (stride 0): 8 MB of output from a 747-byte file.
  const std::string expanded = kDir + "refuse/OutputTooLarge__expand_stride0.pt";
  const Error error = TorchCheckpoint::Open(expanded).error();
  EXPECT_EQ(error.code, ErrorCode::kOutputTooLarge) << error.ToString();
  EXPECT_EQ(error.tensor, "w");
  EXPECT_EQ(ScanTorchFile(expanded).error.code, ErrorCode::kOutputTooLarge);
  TorchOptions unbounded;
  unbounded.max_output_ratio = 0;
  Result<TorchCheckpoint> trusted = TorchCheckpoint::Open(expanded, unbounded);
  ASSERT_TRUE(trusted.ok()) << trusted.error().ToString();
  EXPECT_EQ(trusted->tensors()[0].byte_len, 8'000'000u);
  // Tied weights (two names, one storage) and an expanded buffer stay within the default.
  EXPECT_TRUE(TorchCheckpoint::Open(kDir + "valid/tied.zip.pt").ok());
  EXPECT_TRUE(TorchCheckpoint::Open(kDir + "valid/views.legacy.pt").ok());
  // The ratio decides: 40 overlapping windows of one 64 KiB storage (2.6 MB of output from
  // 68.5 KB) pass at 30x and fail at 20x, the 1 MiB allowance included.
  const std::string windows = kDir + "refuse/OutputTooLarge__overlapping_windows.pt";
  TorchOptions ratio;
  ratio.max_output_ratio = 30;
  EXPECT_TRUE(TorchCheckpoint::Open(windows, ratio).ok());
  ratio.max_output_ratio = 20;
  EXPECT_EQ(TorchCheckpoint::Open(windows, ratio).error().code, ErrorCode::kOutputTooLarge);
}

TEST(TorchCheckpointTest, CorruptStorageFailsItsCrcWhileStreaming) {
  std::string bytes = testing::ReadFileBytes(kDir + "valid/dtypes.zip.pt");
  Result<TorchCheckpoint> clean = TorchCheckpoint::FromBytes(
      std::as_bytes(std::span(bytes.data(), bytes.size())));
  ASSERT_TRUE(clean.ok());
  const TorchStorage storage = clean->storages()[0];
  bytes[storage.data_offset] ^= 0x40;
  Result<TorchCheckpoint> checkpoint = TorchCheckpoint::FromBytes(
      std::as_bytes(std::span(bytes.data(), bytes.size())));
  ASSERT_TRUE(checkpoint.ok());  // structure intact: the CRC is checked when data is read
  Result<std::string> data = checkpoint->TensorBytes(0);
  ASSERT_FALSE(data.ok());
  EXPECT_EQ(data.error().code, ErrorCode::kZipChecksum);
  EXPECT_EQ(data.error().offset, storage.data_offset);
  EXPECT_EQ(ScanTorchBytes(std::as_bytes(std::span(bytes.data(), bytes.size()))).error.code,
            ErrorCode::kZipChecksum);
}

TEST(TorchCheckpointTest, RefusalsCarryTheirCode) {
  const std::pair<const char*, ErrorCode> cases[] = {
      {"PickleGlobalRefused__zip_os_system.pt", ErrorCode::kPickleGlobalRefused},
      {"PickleGlobalRefused__legacy_eval.pt", ErrorCode::kPickleGlobalRefused},
      {"RawPickle__raw_clean_pickle.pt", ErrorCode::kRawPickle},
      {"TensorOutOfBounds__view_past_end.pt", ErrorCode::kTensorOutOfBounds},
      {"StorageMismatch__numel_mismatch.pt", ErrorCode::kStorageMismatch},
      {"ZipMissingRecord__missing_record.pt", ErrorCode::kZipMissingRecord},
      {"LegacyHeader__legacy_big_endian.pt", ErrorCode::kLegacyHeader},
  };
  for (const auto& [name, code] : cases) {
    const Result<TorchCheckpoint> checkpoint = TorchCheckpoint::Open(kDir + "refuse/" + name);
    ASSERT_FALSE(checkpoint.ok()) << name;
    EXPECT_EQ(checkpoint.error().code, code) << name << ": " << checkpoint.error().ToString();
  }
  const TorchScanReport report = ScanTorchFile(kDir + "refuse/PickleGlobalRefused__zip_os_system.pt");
  ASSERT_FALSE(report.globals.empty());
  EXPECT_FALSE(report.globals.back().allowed);
  EXPECT_EQ(report.globals.back().offset, report.error.offset);
}

}  // namespace
}  // namespace stguard
