// SPDX-License-Identifier: Apache-2.0
// TorchCheckpoint on the corpus's real torch.save files: views gathered in row-major
// order, shared storages, aliases, the legacy stream, and lying files refused with their
// code. (tests/torch/test_torch_convert.py compares every fixture with torch.load.)
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <iterator>
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

// FileTestName names a test after its file: "views.zip.pt" gives "views_zip_pt".
std::string FileTestName(const ::testing::TestParamInfo<const char*>& file) {
  std::string name = file.param;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

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
                         ::testing::Values("views.zip.pt", "views.legacy.pt"), FileTestName);

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

// torch 2.x: tensors of dtypes with no legacy storage type are _rebuild_tensor_v3 views
// of an untyped storage (fixtures from tests/torch/make_torch2_fixtures.py).
class Torch2Test : public ::testing::TestWithParam<const char*> {};

TEST_P(Torch2Test, NewDtypesFromUntypedStorages) {
  Result<TorchCheckpoint> checkpoint = TorchCheckpoint::Open(kDir + "torch2/" + GetParam());
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.error().ToString();
  struct Expected {
    const char* name;
    Dtype dtype;
    std::vector<uint64_t> shape;
    std::string bytes;
  };
  const Expected expected[] = {
      {"fp8.e4m3", Dtype::kF8_E4M3, {3, 4}, std::string("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b", 12)},
      {"fp8.e4m3.t", Dtype::kF8_E4M3, {4, 3}, std::string("\x00\x04\x08\x01\x05\x09\x02\x06\x0a\x03\x07\x0b", 12)},
      {"fp8.e5m2", Dtype::kF8_E5M2, {6}, "defghi"},
      {"u16", Dtype::kU16, {2, 3}, std::string("\x01\x00\x02\x00\x03\x00\xfe\xff\xff\xff\x07\x00", 12)},
      {"u16.row1", Dtype::kU16, {3}, std::string("\xfe\xff\xff\xff\x07\x00", 6)},
      {"u32", Dtype::kU32, {2}, std::string("\x00\x28\x6b\xee\x05\x00\x00\x00", 8)},
      {"u64", Dtype::kU64, {}, std::string(8, '\xff')},
  };
  ASSERT_EQ(checkpoint->tensors().size(), std::size(expected));
  for (size_t k = 0; k < std::size(expected); ++k) {
    const TorchTensor& tensor = checkpoint->tensors()[k];
    EXPECT_EQ(tensor.name, expected[k].name);
    EXPECT_EQ(tensor.dtype, expected[k].dtype) << tensor.name;
    EXPECT_EQ(tensor.shape, expected[k].shape) << tensor.name;
    Result<std::string> bytes = checkpoint->TensorBytes(k);
    ASSERT_TRUE(bytes.ok()) << bytes.error().ToString();
    EXPECT_EQ(*bytes, expected[k].bytes) << tensor.name;
  }
  // The storages take their tensors' dtype, counted in its elements.
  EXPECT_EQ(checkpoint->storages()[2].dtype, Dtype::kU16);
  EXPECT_EQ(checkpoint->storages()[2].num_elements, 6u);
}

INSTANTIATE_TEST_SUITE_P(Formats, Torch2Test,
                         ::testing::Values("new_dtypes.zip.pt", "new_dtypes.legacy.pt"),
                         FileTestName);

TEST(TorchCheckpointTest, Torch2RefusalsNameTheirReason) {
  const struct {
    const char* file;
    ErrorCode code;
    const char* message;
  } cases[] = {
      {"PickleGlobalRefused__torch2_complex32.pt", ErrorCode::kPickleGlobalRefused,
       "torch dtype that safetensors has no dtype for"},
      {"PickleGlobalRefused__torch2_float4_legacy.pt", ErrorCode::kPickleGlobalRefused,
       "torch dtype that safetensors has no dtype for"},
      {"PickleGlobalRefused__torch2_v3_float32.pt", ErrorCode::kPickleGlobalRefused,
       "global not in the allowlist"},
      {"PickleBadArguments__torch2_v3_missing_dtype.pt", ErrorCode::kPickleBadArguments,
       "expected 7 or 8 arguments"},
      {"PickleBadArguments__torch2_v3_dtype_not_a_dtype.pt", ErrorCode::kPickleBadArguments,
       "expected (untyped storage"},
      {"PickleBadArguments__torch2_v3_metadata_dict.pt", ErrorCode::kPickleBadArguments,
       "expected (untyped storage"},
      {"PickleBadArguments__torch2_v3_typed_storage.pt", ErrorCode::kPickleBadArguments,
       "_rebuild_tensor_v3 on a typed storage"},
      {"PickleBadArguments__torch2_v2_untyped_storage.pt", ErrorCode::kPickleBadArguments,
       "_rebuild_tensor_v2 on an untyped storage"},
      {"StorageMismatch__torch2_v3_partial_element.pt", ErrorCode::kStorageMismatch,
       "not a whole number of elements"},
      {"StorageMismatch__torch2_v3_numel_is_bytes.pt", ErrorCode::kStorageMismatch,
       "not a whole number of elements"},
      {"StorageMismatch__torch2_v3_two_dtypes.pt", ErrorCode::kStorageMismatch,
       "one untyped storage viewed as two dtypes"},
      {"TensorOutOfBounds__torch2_v3_view_past_end.pt", ErrorCode::kTensorOutOfBounds,
       "past the end"},
  };
  for (const auto& c : cases) {
    const Result<TorchCheckpoint> checkpoint = TorchCheckpoint::Open(kDir + "refuse/" + c.file);
    ASSERT_FALSE(checkpoint.ok()) << c.file;
    EXPECT_EQ(checkpoint.error().code, c.code) << c.file << ": " << checkpoint.error().ToString();
    EXPECT_NE(checkpoint.error().ToString().find(c.message), std::string::npos)
        << c.file << ": " << checkpoint.error().ToString();
    EXPECT_GT(checkpoint.error().offset, 0u) << c.file;  // the opcode's absolute offset
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
