// SPDX-License-Identifier: Apache-2.0
// `stguard --version` prints the version of the library it runs with.
#include <gtest/gtest.h>

#include <string>

#include "support/run_cli.h"

namespace stguard::testing {
namespace {

TEST(VersionTest, CliPrintsTheLibraryVersion) {
  const CliRun run = RunCli("--version", Streams::kStdoutOnly);
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_EQ(run.output, "stguard " STGUARD_EXPECTED_VERSION "\n");
}

}  // namespace
}  // namespace stguard::testing
