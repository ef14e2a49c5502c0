// SPDX-License-Identifier: Apache-2.0
// Split GGUF models (name-0000N-of-0000M.gguf): the set is checked as one model
// (`stguard check` on the first part: tests/cli/check_cli_test.cc).
#include <string>

#include <gtest/gtest.h>

#include "stguard/gguf.h"
#include "support/gguf_encoder.h"
#include "support/gguf_fixtures.h"
#include "support/temp_dir.h"

namespace stguard::testing {
namespace {

using gguf::CheckSplitSet;
using gguf::SplitPartPath;

TEST(GgufSplitNames, PartPathsFollowLlamaCppNaming) {
  EXPECT_EQ(SplitPartPath("/x/m-00001-of-00003.gguf", 2), "/x/m-00002-of-00003.gguf");
  EXPECT_EQ(SplitPartPath("m-00002-of-00003.gguf", 1), "m-00001-of-00003.gguf");
  EXPECT_EQ(SplitPartPath("m.gguf", 1), "");
  EXPECT_EQ(SplitPartPath("m-0001-of-00003.gguf", 1), "");
  EXPECT_EQ(SplitPartPath("m-00001-of-00003.bin", 1), "");
}

TEST_F(GgufSplit, AValidSetIsOneModel) {
  WriteValidSet();
  Result<gguf::GgufSplitSet> set = CheckSplitSet(PartPath(1));
  ASSERT_TRUE(set.ok()) << set.error().ToString();
  EXPECT_EQ(set->parts.size(), 3u);
  EXPECT_EQ(set->num_tensors, 5u);
}

TEST_F(GgufSplit, AFileWithoutSplitKeysIsASetOfOne) {
  ASSERT_TRUE(WriteFileBytes(dir_.File("plain.gguf"), Encode(SimpleGgufModel())));
  Result<gguf::GgufSplitSet> set = CheckSplitSet(dir_.File("plain.gguf"));
  ASSERT_TRUE(set.ok());
  EXPECT_EQ(set->num_tensors, 2u);
}

TEST_F(GgufSplit, EveryPartMustBePresent) {
  WriteValidSet();
  std::remove(PartPath(3).c_str());
  EXPECT_EQ(Verdict(), ErrorCode::kMissingShard);
}

TEST_F(GgufSplit, SplitKeysMustAgree) {
  WriteValidSet();
  Write(2, SplitPart(2, 3, 5, {"c", "d"}));  // wrong index
  EXPECT_EQ(Verdict(), ErrorCode::kGgufSplitMismatch);
  Write(2, SplitPart(1, 4, 5, {"c", "d"}));  // wrong count
  EXPECT_EQ(Verdict(), ErrorCode::kGgufSplitMismatch);
  Write(2, SplitPart(1, 3, 6, {"c", "d"}));  // wrong total
  EXPECT_EQ(Verdict(), ErrorCode::kGgufSplitMismatch);
}

TEST_F(GgufSplit, TheTotalIsAsDeclared) {
  Write(1, SplitPart(0, 3, 6, {"a", "b"}));
  Write(2, SplitPart(1, 3, 6, {"c", "d"}));
  Write(3, SplitPart(2, 3, 6, {"e"}));
  EXPECT_EQ(Verdict(), ErrorCode::kGgufSplitMismatch);
}

TEST_F(GgufSplit, NoTensorInTwoParts) {
  WriteValidSet();
  Write(3, SplitPart(2, 3, 5, {"a"}));
  Result<gguf::GgufSplitSet> set = CheckSplitSet(PartPath(1));
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.error().code, ErrorCode::kTensorInTwoShards);
  EXPECT_EQ(set.error().tensor, "a");
}

TEST_F(GgufSplit, AnInvalidPartIsNamed) {
  WriteValidSet();
  GgufModel bad = SplitPart(1, 3, 5, {"c", "d"});
  bad.trailing = "x";
  Write(2, bad);
  Result<gguf::GgufSplitSet> set = CheckSplitSet(PartPath(1));
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.error().code, ErrorCode::kGgufTrailingBytes);
  EXPECT_NE(set.error().context.find("m-00002-of-00003.gguf"), std::string::npos);
}

}  // namespace
}  // namespace stguard::testing
