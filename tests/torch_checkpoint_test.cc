// SPDX-License-Identifier: Apache-2.0
// TorchCheckpoint on the corpus's real torch.save files: views gathered in row-major
// order, shared storages, aliases, the legacy stream, and lying files refused with their
// code. (tests/torch/test_torch_convert.py compares every fixture with torch.load.)
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "stguard/torch_checkpoint.h"
#include "support/temp_dir.h"
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
  options.key = "state_dict";
  Result<TorchCheckpoint> checkpoint = TorchCheckpoint::Open(path, options);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.error().ToString();
  EXPECT_NE(FindTensor(*checkpoint, "fc.weight"), nullptr);
  options.key = "epoch";
  EXPECT_EQ(TorchCheckpoint::Open(path, options).error().code, ErrorCode::kNotAStateDict);
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

// A contiguous tensor that is only a part of its storage still gets the whole record's
// CRC-32 checked, on its first read: a flipped byte outside the view is caught, and a
// clean storage streams every view exactly.
TEST(TorchCheckpointTest, PartialViewChecksTheWholeRecordInOnePass) {
  std::string bytes = testing::ReadFileBytes(kDir + "valid/shared_storage.zip.pt");
  Result<TorchCheckpoint> clean = TorchCheckpoint::FromBytes(
      std::as_bytes(std::span(bytes.data(), bytes.size())));
  ASSERT_TRUE(clean.ok());
  const TorchTensor* a = FindTensor(*clean, "a");  // shared[:10]: the first 10 elements
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(a->contiguous);
  const TorchStorage storage = clean->storages()[a->storage];
  ASSERT_GT(storage.byte_len, a->byte_len);
  std::vector<std::string> expected;
  for (size_t k = 0; k < clean->tensors().size(); ++k) {
    Result<std::string> data = clean->TensorBytes(k);
    ASSERT_TRUE(data.ok()) << data.error().ToString();
    expected.push_back(*data);
  }
  EXPECT_EQ(expected[0].size(), a->byte_len);
  bytes[storage.data_offset + storage.byte_len - 1] ^= 0x01;  // past a's view
  Result<TorchCheckpoint> corrupt = TorchCheckpoint::FromBytes(
      std::as_bytes(std::span(bytes.data(), bytes.size())));
  ASSERT_TRUE(corrupt.ok());
  const size_t a_index = static_cast<size_t>(a - clean->tensors().data());
  Result<std::string> data = corrupt->TensorBytes(a_index);
  ASSERT_FALSE(data.ok());
  EXPECT_EQ(data.error().code, ErrorCode::kZipChecksum);
  EXPECT_EQ(data.error().offset, storage.data_offset);
}

// A file truncated after it was opened: streaming reads with pread, so each tensor whose
// bytes are gone is a clean kIoError naming the file (never SIGBUS through the mapping).
TEST(TorchCheckpointTest, FileTruncatedWhileOpenIsAnIoError) {
  for (const char* name : {"dtypes.zip.pt", "views.zip.pt", "dtypes.legacy.pt",
                           "views.legacy.pt"}) {
    testing::TempDir dir;
    const std::string path = dir.File("model.pt");
    ASSERT_TRUE(testing::WriteFileBytes(path, testing::ReadFileBytes(kDir + "valid/" + name)));
    Result<TorchCheckpoint> checkpoint = TorchCheckpoint::Open(path);
    ASSERT_TRUE(checkpoint.ok()) << name << ": " << checkpoint.error().ToString();
    uint64_t first_data = UINT64_MAX;
    for (const TorchStorage& storage : checkpoint->storages()) {
      if (storage.byte_len > 0) first_data = std::min(first_data, storage.data_offset);
    }
    ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(first_data)), 0);
    size_t failed = 0;
    for (size_t k = 0; k < checkpoint->tensors().size(); ++k) {
      if (checkpoint->tensors()[k].byte_len == 0) continue;
      Result<std::string> data = checkpoint->TensorBytes(k);
      ASSERT_FALSE(data.ok()) << name << ": " << checkpoint->tensors()[k].name;
      EXPECT_EQ(data.error().code, ErrorCode::kIoError) << data.error().ToString();
      EXPECT_NE(data.error().ToString().find(path), std::string::npos)
          << data.error().ToString();
      ++failed;
    }
    EXPECT_GT(failed, 0u) << name;
    EXPECT_FALSE(ScanTorchFile(path).error.ok()) << name;  // the archive itself is cut
  }
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
