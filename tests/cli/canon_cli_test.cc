// SPDX-License-Identifier: Apache-2.0
// `stguard canon` on the command line: rewriting in place through the file's own mapping,
// a fixed point after, and the exit status of each failure class.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/run_cli.h"
#include "support/temp_dir.h"
#include "support/test_files.h"

namespace stguard::testing {
namespace {

TEST(CanonCliTest, RewritesInPlaceThroughTheMappingAndIsThenAFixedPoint) {
  TempDir dir;
  const std::string path = dir.File("model.safetensors");
  const std::string header = R"({"w": {"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}, )"
                             R"("__metadata__":{"format":"tinyllm"}})";
  const std::string data = Bytes({0, 0, 0x80, 0x3f, 0, 0, 0, 0x40, 0, 0, 0x40, 0x40, 0, 0,
                                  0x80, 0x40});
  ASSERT_TRUE(WriteFileBytes(path, FileWithHeader(header, data)));
  ASSERT_EQ(RunCli("canon " + ShellQuoted(path) + " " + ShellQuoted(path)).status, 0);
  const std::string canonical = ReadFileBytes(path);
  ASSERT_EQ(canonical.size(), 120u);
  EXPECT_EQ(canonical.substr(8, 93), kWorkedText);
  EXPECT_EQ(canonical.substr(104), data);
  EXPECT_EQ(dir.Entries(), std::vector<std::string>{"model.safetensors"});

  const std::string copy = dir.File("copy.safetensors");
  ASSERT_EQ(RunCli("canon " + ShellQuoted(path) + " " + ShellQuoted(copy)).status, 0);
  EXPECT_EQ(ReadFileBytes(copy), canonical);
}

TEST(CanonCliTest, ExitCodes) {
  TempDir dir;
  const std::string bad = dir.File("bad.safetensors");
  ASSERT_TRUE(WriteFileBytes(bad, FileWithHeader(R"({"a":1})")));
  const std::string out = dir.File("out.safetensors");
  ASSERT_TRUE(WriteFileBytes(out, "keep me"));
  EXPECT_EQ(RunCli("canon " + ShellQuoted(bad) + " " + ShellQuoted(out)).status, 1);           // invalid input
  EXPECT_EQ(ReadFileBytes(out), "keep me");
  EXPECT_EQ(RunCli("canon " + ShellQuoted(dir.File("missing")) + " " + ShellQuoted(out)).status, 2);  // I/O
  EXPECT_EQ(RunCli("canon " + ShellQuoted(bad)).status, 2);                                // usage
  EXPECT_EQ(RunCli("canon --bogus a b").status, 2);
  const std::string good = dir.File("good.safetensors");
  ASSERT_TRUE(WriteFileBytes(good, LengthPrefix(8) + "{}      "));
  EXPECT_EQ(RunCli("canon " + ShellQuoted(good) + " " + ShellQuoted(dir.File("no/such/dir/out"))).status, 2);
  EXPECT_EQ(ReadFileBytes(out), "keep me");
}

}  // namespace
}  // namespace stguard::testing
