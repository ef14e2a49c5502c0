// SPDX-License-Identifier: Apache-2.0
// MappedFile's two modes: read-only, and copy-on-write, whose writes stay in this process
// and never reach the file (what the Python package hands to numpy and torch).
#include <gtest/gtest.h>

#include <cstddef>
#include <fstream>
#include <string>

#include "stguard/mapped_file.h"
#include "stguard/reader.h"
#include "support/temp_dir.h"
#include "support/test_files.h"

namespace stguard {
namespace {

using testing::ReadFileBytes;
using testing::TempDir;

std::string WriteText(const TempDir& dir, const std::string& text) {
  const std::string path = dir.File("f.bin");
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(MappedFileTest, ReadOnlyMappingHasNoWritableBytes) {
  TempDir dir;
  const std::string path = WriteText(dir, "hello");
  Result<std::unique_ptr<MappedFile>> mapping = MappedFile::Open(path);
  ASSERT_TRUE(mapping.ok());
  EXPECT_EQ((*mapping)->bytes().size(), 5u);
  EXPECT_TRUE((*mapping)->mutable_bytes().empty());
}

TEST(MappedFileTest, CopyOnWriteChangesMemoryNeverTheFile) {
  TempDir dir;
  const std::string path = WriteText(dir, "hello");
  Result<std::unique_ptr<MappedFile>> mapping = MappedFile::Open(path, MapMode::kCopyOnWrite);
  ASSERT_TRUE(mapping.ok());
  const std::span<std::byte> bytes = (*mapping)->mutable_bytes();
  ASSERT_EQ(bytes.size(), 5u);
  bytes[0] = std::byte{'J'};
  EXPECT_EQ(static_cast<char>((*mapping)->bytes()[0]), 'J');
  // A second mapping, and the file itself, still hold the original bytes.
  Result<std::unique_ptr<MappedFile>> other = MappedFile::Open(path, MapMode::kCopyOnWrite);
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(static_cast<char>((*other)->bytes()[0]), 'h');
  mapping->reset();
  EXPECT_EQ(ReadFileBytes(path), "hello");
}

TEST(MappedFileTest, CopyOnWriteRefusesWhatReadOnlyRefuses) {
  TempDir dir;
  EXPECT_EQ(MappedFile::Open(dir.File("absent"), MapMode::kCopyOnWrite).error().code,
            ErrorCode::kIoError);
  EXPECT_EQ(MappedFile::Open(dir.path(), MapMode::kCopyOnWrite).error().code,
            ErrorCode::kNotARegularFile);
  const std::string empty = WriteText(dir, "");
  Result<std::unique_ptr<MappedFile>> mapping = MappedFile::Open(empty, MapMode::kCopyOnWrite);
  ASSERT_TRUE(mapping.ok());
  EXPECT_TRUE((*mapping)->mutable_bytes().empty());
}

TEST(MappedFileTest, CheckpointValidatesACopyOnWriteMapping) {
  TempDir dir;
  const std::string header = R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}})";
  std::string file(8, '\0');
  file[0] = static_cast<char>(header.size());
  file += header + "xy";
  const std::string path = WriteText(dir, file);
  Result<std::unique_ptr<MappedFile>> mapping = MappedFile::Open(path, MapMode::kCopyOnWrite);
  ASSERT_TRUE(mapping.ok());
  Result<Checkpoint> checkpoint = Checkpoint::FromBytes((*mapping)->bytes());
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.error().ToString();
  (*mapping)->mutable_bytes()[8 + header.size()] = std::byte{'Q'};
  EXPECT_EQ(static_cast<char>(checkpoint->Find("a")->data[0]), 'Q');
  EXPECT_EQ(ReadFileBytes(path), file);
}

}  // namespace
}  // namespace stguard
