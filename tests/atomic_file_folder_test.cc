// SPDX-License-Identifier: Apache-2.0
// AtomicFile::CreateInFolder: names stguard chooses in an output folder are created and
// renamed through the folder's descriptor; a link planted at the name is never written
// through; Finish then Publish stages several files before any appears.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "support/temp_dir.h"
#include "support/test_files.h"
#include "write/atomic_file.h"

namespace stguard {
namespace {

using testing::ReadFileBytes;
using testing::TempDir;
using testing::WriteFileBytes;

class OpenFolder {
 public:
  explicit OpenFolder(const std::string& path)
      : fd_(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {}
  ~OpenFolder() { if (fd_ >= 0) ::close(fd_); }
  int fd() const { return fd_; }
 private:
  int fd_;
};

Error WriteText(AtomicFile& file, std::string_view text) {
  return file.Write(std::as_bytes(std::span(text.data(), text.size())));
}

TEST(AtomicFileInFolderTest, CreatesAndCommitsInTheFolder) {
  TempDir dir;
  OpenFolder folder(dir.path());
  Result<std::unique_ptr<AtomicFile>> file = AtomicFile::CreateInFolder(folder.fd(), dir.path(), "a.bin");
  ASSERT_TRUE(file.ok()) << file.error().ToString();
  ASSERT_TRUE(WriteText(**file, "hello").ok());
  ASSERT_TRUE((*file)->Commit().ok());
  EXPECT_EQ(ReadFileBytes(dir.File("a.bin")), "hello");
  EXPECT_EQ(dir.Entries(), (std::vector<std::string>{"a.bin"}));
}

TEST(AtomicFileInFolderTest, LinkAtTheNameIsRefusedAndUntouched) {
  TempDir dir;
  TempDir outside;
  ASSERT_TRUE(WriteFileBytes(outside.File("victim"), "keep"));
  ASSERT_EQ(::symlink(outside.File("victim").c_str(), dir.File("a.bin").c_str()), 0);
  ASSERT_EQ(::symlink(outside.File("absent").c_str(), dir.File("b.bin").c_str()), 0);
  OpenFolder folder(dir.path());
  for (const char* name : {"a.bin", "b.bin"}) {
    Result<std::unique_ptr<AtomicFile>> file = AtomicFile::CreateInFolder(folder.fd(), dir.path(), name);
    ASSERT_FALSE(file.ok()) << name;
    EXPECT_EQ(file.error().code, ErrorCode::kNotARegularFile);
  }
  EXPECT_EQ(ReadFileBytes(outside.File("victim")), "keep");
  EXPECT_EQ(outside.Entries(), (std::vector<std::string>{"victim"}));
  EXPECT_EQ(dir.Entries(), (std::vector<std::string>{"a.bin", "b.bin"}));
  // Names with a folder part are refused: the file must be in the folder itself.
  EXPECT_FALSE(AtomicFile::CreateInFolder(folder.fd(), dir.path(), "../x").ok());
}

TEST(AtomicFileInFolderTest, FinishStagesWithoutReplacing) {
  TempDir dir;
  ASSERT_TRUE(WriteFileBytes(dir.File("a.bin"), "old"));
  OpenFolder folder(dir.path());
  {
    Result<std::unique_ptr<AtomicFile>> file = AtomicFile::CreateInFolder(folder.fd(), dir.path(), "a.bin");
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE(WriteText(**file, "new").ok());
    ASSERT_TRUE((*file)->Finish().ok());
    EXPECT_EQ(ReadFileBytes(dir.File("a.bin")), "old");  // staged, not published
    EXPECT_EQ(dir.Entries().size(), 2u);
  }  // dropped unpublished: the temporary file goes, the user's file stays
  EXPECT_EQ(dir.Entries(), (std::vector<std::string>{"a.bin"}));
  EXPECT_EQ(ReadFileBytes(dir.File("a.bin")), "old");
  Result<std::unique_ptr<AtomicFile>> file = AtomicFile::CreateInFolder(folder.fd(), dir.path(), "a.bin");
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE(WriteText(**file, "new").ok());
  ASSERT_TRUE((*file)->Finish().ok());
  EXPECT_FALSE(WriteText(**file, "more").ok());  // finished: no more writes
  ASSERT_TRUE((*file)->Publish().ok());
  EXPECT_EQ(ReadFileBytes(dir.File("a.bin")), "new");
  EXPECT_EQ(dir.Entries(), (std::vector<std::string>{"a.bin"}));
}

}  // namespace
}  // namespace stguard
