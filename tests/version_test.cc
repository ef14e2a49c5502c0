// SPDX-License-Identifier: Apache-2.0
// stguard/version.h, generated from the CMake project version (`stguard --version`:
// tests/cli/version_cli_test.cc).
#include <gtest/gtest.h>

#include <string>

#include "stguard/version.h"

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

}  // namespace
}  // namespace stguard
