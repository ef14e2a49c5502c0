// SPDX-License-Identifier: Apache-2.0
// The folder layer's one containment checker (folder/folder_util.h, containment.cc):
// where a name in a folder leads, confirmed on descriptors.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "folder/folder_util.h"
#include "support/temp_dir.h"
#include "support/test_files.h"

namespace stguard::folder {
namespace {

using testing::TempDir;
using testing::WriteFileBytes;

class ContainmentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(RealPath(dir_.path(), &real_));
    ASSERT_TRUE(WriteFileBytes(dir_.File("a.bin"), "a"));
    ASSERT_EQ(mkdir(dir_.File("sub").c_str(), 0755), 0);
    ASSERT_TRUE(WriteFileBytes(dir_.File("sub/b.bin"), "b"));
    ASSERT_TRUE(WriteFileBytes(outside_.File("secret.bin"), "s"));
  }
  void Link(const std::string& target, const std::string& name) {
    ASSERT_EQ(symlink(target.c_str(), dir_.File(name).c_str()), 0);
  }
  Placement In(const std::string& name) { return PlaceInFolder(real_, dir_.File(name)); }
  Placement Under(const std::string& name) { return PlaceUnderFolder(real_, dir_.File(name)); }

  TempDir dir_;
  TempDir outside_;
  std::string real_;
};

TEST_F(ContainmentTest, FilesAndLinksThatStayInside) {
  Link("a.bin", "to_a");
  Link("to_a", "to_to_a");  // a chain that never leaves the folder
  Link(dir_.File("a.bin"), "absolute_to_a");
  EXPECT_EQ(In("a.bin"), Placement::kInside);
  EXPECT_EQ(In("to_a"), Placement::kInside);
  EXPECT_EQ(In("to_to_a"), Placement::kInside);
  EXPECT_EQ(In("absolute_to_a"), Placement::kInside);
  // The walk reads below the folder: a link into a subfolder stays inside it.
  Link("sub/b.bin", "to_b");
  EXPECT_EQ(Under("to_b"), Placement::kInside);
  EXPECT_EQ(Under("sub/b.bin"), Placement::kInside);
}

TEST_F(ContainmentTest, LinksThatLeaveAreOutside) {
  Link(outside_.File("secret.bin"), "out");
  Link("sub/b.bin", "to_b");
  Link(outside_.path(), "linked_folder");
  EXPECT_EQ(In("out"), Placement::kOutside);
  EXPECT_EQ(Under("out"), Placement::kOutside);
  // Directly in the folder means directly: a shard must not sit in a subfolder.
  EXPECT_EQ(In("to_b"), Placement::kOutside);
  // Through a linked folder: the real path is elsewhere.
  EXPECT_EQ(In("linked_folder/secret.bin"), Placement::kOutside);
  EXPECT_EQ(Under("linked_folder/secret.bin"), Placement::kOutside);
  // A folder whose name merely starts like the root's is not below it.
  TempDir sibling_root;
  std::string real_sibling;
  ASSERT_TRUE(RealPath(sibling_root.path(), &real_sibling));
  ASSERT_EQ(mkdir((real_sibling + "x").c_str(), 0755), 0);
  ASSERT_TRUE(WriteFileBytes(real_sibling + "x/f.bin", "f"));
  ASSERT_EQ(symlink((real_sibling + "x/f.bin").c_str(), (real_sibling + "/near").c_str()), 0);
  EXPECT_EQ(PlaceUnderFolder(real_sibling, real_sibling + "/near"), Placement::kOutside);
  unlink((real_sibling + "/near").c_str());
  unlink((real_sibling + "x/f.bin").c_str());
  rmdir((real_sibling + "x").c_str());
}

TEST_F(ContainmentTest, DanglingLoopsAndContainErrors) {
  Link("nothing.bin", "dangling");
  Link("loop2", "loop1");
  Link("loop1", "loop2");
  Link(outside_.File("secret.bin"), "out");
  EXPECT_EQ(In("dangling"), Placement::kDangling);
  EXPECT_EQ(In("loop1"), Placement::kLoop);
  EXPECT_TRUE(ContainInFolder(dir_.path(), "a.bin").ok());
  EXPECT_TRUE(ContainInFolder(dir_.path(), "dangling").ok());  // the caller's open says so
  const Error out = ContainInFolder(dir_.path(), "out");
  EXPECT_EQ(out.code, ErrorCode::kUnsafeShardName);
  EXPECT_NE(std::string(out.message).find("--allow-external-symlinks"), std::string::npos);
  EXPECT_EQ(out.context, "file 'out'");
  EXPECT_EQ(ContainInFolder(dir_.path(), "loop1").code, ErrorCode::kUnsafeShardName);
}

}  // namespace
}  // namespace stguard::folder
