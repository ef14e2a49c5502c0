// SPDX-License-Identifier: Apache-2.0
// The one plain-name rule (src/base/plain_name.h): what shards named by an index and npz
// members may be called. Its users' tests (checkpoint_dir_test, zip_archive_test,
// torch folder conversion) check that each applies it.
#include "base/plain_name.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

namespace stguard {
namespace {

TEST(PlainNameTest, AcceptsNamesRealCheckpointsUse) {
  for (const std::string& name : std::initializer_list<std::string>{
           "model.safetensors", "model-00001-of-00002.safetensors", "pytorch_model.bin",
        "pytorch_model-00001-of-00003.bin", "a.npy", "x.npy.npy", ".hidden", "a.b.c",
        "\xc3\xa9t\xc3\xa9.safetensors", "with space.bin", "~tilde", std::string(255, 'a')}) {
    EXPECT_EQ(PlainNameProblem(name), nullptr) << name;
  }
}

TEST(PlainNameTest, RefusesNamesThatLeaveOrDisguiseTheirFolder) {
  const std::string with_nul("a\0b.bin", 7);
  for (const std::string name :
       {std::string(), std::string("."), std::string(".."), std::string("../a"),
        std::string("a..b"), std::string("a/.."), std::string("/etc/passwd"),
        std::string("sub/a.bin"), std::string("a\\b"), std::string("C:\\a"), with_nul,
        std::string("a\nb"), std::string("a\tb"), std::string("\x1b[31m"),
        std::string("a\x7f"), std::string(256, 'a')}) {
    EXPECT_NE(PlainNameProblem(name), nullptr) << name;
  }
}

TEST(PlainNameTest, SaysWhichRuleFailed) {
  EXPECT_STREQ(PlainNameProblem(std::string(256, 'a')),
               "name is longer than a file name may be (255 bytes)");
  EXPECT_STREQ(PlainNameProblem("a..b"), "name contains '..'");
  EXPECT_STREQ(PlainNameProblem("a\x7f"), "name contains a control character");
}

}  // namespace
}  // namespace stguard
