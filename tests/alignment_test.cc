// SPDX-License-Identifier: Apache-2.0
// Options::require_aligned_data, TensorView::is_aligned and DtypeAlignment on hand-built
// files (the random ones are in alignment_prop.cc; `stguard check --aligned` is in
// tests/cli/check_cli_test.cc).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "stguard/dtype.h"
#include "stguard/reader.h"
#include "support/temp_dir.h"
#include "support/test_files.h"

namespace stguard {
namespace {

using testing::FileWithHeader;
using testing::kAlignedHeader;
using testing::kMisalignedHeader;

// Aligned8 copies bytes to an 8-aligned address, like the page-aligned map of Open.
std::span<const std::byte> Aligned8(std::string_view bytes, std::vector<uint64_t>* storage) {
  storage->assign(bytes.size() / 8 + 1, 0);
  std::memcpy(storage->data(), bytes.data(), bytes.size());
  return {reinterpret_cast<const std::byte*>(storage->data()), bytes.size()};
}

TEST(AlignmentTest, HeadersAreMultiplesOfEight) {
  ASSERT_EQ(std::strlen(kMisalignedHeader) % 8, 0u);
  ASSERT_EQ(std::strlen(kAlignedHeader) % 8, 0u);
}

TEST(AlignmentTest, DtypeAlignmentIsTheElementSize) {
  EXPECT_EQ(DtypeAlignment(Dtype::kF64), 8u);
  EXPECT_EQ(DtypeAlignment(Dtype::kC64), 8u);
  EXPECT_EQ(DtypeAlignment(Dtype::kU64), 8u);
  EXPECT_EQ(DtypeAlignment(Dtype::kF32), 4u);
  EXPECT_EQ(DtypeAlignment(Dtype::kI32), 4u);
  EXPECT_EQ(DtypeAlignment(Dtype::kBF16), 2u);
  EXPECT_EQ(DtypeAlignment(Dtype::kU16), 2u);
  EXPECT_EQ(DtypeAlignment(Dtype::kF8_E4M3), 1u);
  EXPECT_EQ(DtypeAlignment(Dtype::kBOOL), 1u);
  EXPECT_EQ(DtypeAlignment(Dtype::kF4), 1u);
  EXPECT_EQ(DtypeAlignment(Dtype::kF6_E2M3), 1u);
}

TEST(AlignmentTest, MisalignedFileIsValidByDefaultAndRejectedOnRequest) {
  const std::string file = FileWithHeader(kMisalignedHeader, std::string(6, '\0'));
  std::vector<uint64_t> storage;
  const std::span<const std::byte> bytes = Aligned8(file, &storage);

  Result<Checkpoint> loose = Checkpoint::FromBytes(bytes);
  ASSERT_TRUE(loose.ok()) << loose.error().ToString();
  EXPECT_TRUE(loose->Find("a")->is_aligned());
  EXPECT_FALSE(loose->Find("w")->is_aligned());

  Options options;
  options.require_aligned_data = true;
  Result<Checkpoint> strict = Checkpoint::FromBytes(bytes, options);
  ASSERT_FALSE(strict.ok());
  EXPECT_EQ(strict.error().code, ErrorCode::kMisalignedData);
  EXPECT_EQ(strict.error().tensor, "w");
  EXPECT_EQ(strict.error().offset, 8 + std::string_view(kMisalignedHeader).find("\"w\""));
  const std::string data_start = std::to_string(8 + std::strlen(kMisalignedHeader) + 2);
  EXPECT_EQ(strict.error().context, "F32 data begins at byte " + data_start +
                                        ", not a multiple of 4");
}

TEST(AlignmentTest, AlignedFileIsAcceptedOnRequest) {
  const std::string file = FileWithHeader(kAlignedHeader, std::string(6, '\0'));
  std::vector<uint64_t> storage;
  Options options;
  options.require_aligned_data = true;
  Result<Checkpoint> strict = Checkpoint::FromBytes(Aligned8(file, &storage), options);
  ASSERT_TRUE(strict.ok()) << strict.error().ToString();
  for (const TensorView& tensor : strict->tensors()) EXPECT_TRUE(tensor.is_aligned());
}

TEST(AlignmentTest, IsAlignedLooksAtTheAddress) {
  // An aligned file in a buffer that starts one byte past an 8-aligned address: the file
  // offsets still pass require_aligned_data (a property of the file), the address does not.
  const std::string file = FileWithHeader(kAlignedHeader, std::string(6, '\0'));
  std::vector<uint64_t> storage(file.size() / 8 + 2);
  auto* base = reinterpret_cast<std::byte*>(storage.data()) + 1;
  std::memcpy(base, file.data(), file.size());
  Options options;
  options.require_aligned_data = true;
  Result<Checkpoint> checkpoint =
      Checkpoint::FromBytes(std::span<const std::byte>(base, file.size()), options);
  ASSERT_TRUE(checkpoint.ok());
  EXPECT_FALSE(checkpoint->Find("w")->is_aligned());
  EXPECT_TRUE(checkpoint->Find("a")->is_aligned());
}

TEST(AlignmentTest, OpenedFilesAreAlignedAsInTheFile) {
  testing::TempDir dir;
  ASSERT_TRUE(testing::WriteFileBytes(dir.File("aligned.safetensors"),
                                      FileWithHeader(kAlignedHeader, std::string(6, '\0'))));
  Options options;
  options.require_aligned_data = true;
  Result<Checkpoint> checkpoint = Checkpoint::Open(dir.File("aligned.safetensors"), options);
  ASSERT_TRUE(checkpoint.ok());
  EXPECT_TRUE(checkpoint->Find("w")->is_aligned());  // the map starts on a page
}


}  // namespace
}  // namespace stguard
