// SPDX-License-Identifier: Apache-2.0
// stguard/version.h, generated from the CMake project version, and `stguard --version`.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <string>

#include "stguard/version.h"
#include "support/temp_dir.h"
#include "support/test_files.h"

namespace stguard {
namespace {

TEST(VersionTest, MacrosAndFunctionsAgreeWithTheProjectVersion) {
  // STGUARD_EXPECTED_VERSION is PROJECT_VERSION, passed by tests/CMakeLists.txt.
  EXPECT_STREQ(STGUARD_VERSION_STRING, STGUARD_EXPECTED_VERSION);
  EXPECT_EQ(std::to_string(STGUARD_VERSION_MAJOR) + "." + std::to_string(STGUARD_VERSION_MINOR) +
                "." + std::to_string(STGUARD_VERSION_PATCH),
            STGUARD_EXPECTED_VERSION);
  EXPECT_EQ(STGUARD_VERSION_NUMBER,
            STGUARD_VERSION_MAJOR * 10000 + STGUARD_VERSION_MINOR * 100 + STGUARD_VERSION_PATCH);
  EXPECT_STREQ(stguard_version_string(), STGUARD_EXPECTED_VERSION);
  EXPECT_EQ(stguard_version_number(), static_cast<unsigned>(STGUARD_VERSION_NUMBER));
  EXPECT_STREQ(VersionString(), STGUARD_EXPECTED_VERSION);
}

TEST(VersionTest, CliPrintsTheLibraryVersion) {
  testing::TempDir out_dir;
  const std::string out = out_dir.File("out.txt");
  const std::string command = std::string(STGUARD_CLI_PATH) + " --version >'" + out + "'";
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(testing::ReadFileBytes(out), "stguard " STGUARD_EXPECTED_VERSION "\n");
}

}  // namespace
}  // namespace stguard
