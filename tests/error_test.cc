// SPDX-License-Identifier: Apache-2.0
// The error code table stays in sync with the enum.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "stguard/error.h"

namespace stguard {
namespace {

TEST(ErrorTest, EveryCodeHasADistinctName) {
  std::set<std::string_view> names;
  for (int i = 0; i < static_cast<int>(ErrorCode::kNumErrorCodes); ++i) {
    const std::string_view name = ErrorCodeName(static_cast<ErrorCode>(i));
    EXPECT_FALSE(name.empty());
    EXPECT_NE(name, "Unknown") << i;
    EXPECT_TRUE(names.insert(name).second) << name;
  }
  EXPECT_EQ(ErrorCodeName(ErrorCode::kDuplicateKey), "DuplicateKey");
  EXPECT_EQ(ErrorCodeName(ErrorCode::kInvalidArgument), "InvalidArgument");
  EXPECT_EQ(ErrorCodeName(ErrorCode::kMisalignedData), "MisalignedData");
  EXPECT_EQ(ErrorCodeName(ErrorCode::kOutputTooLarge), "OutputTooLarge");
  EXPECT_EQ(ErrorCodeName(ErrorCode::kNumErrorCodes), "Unknown");
}

TEST(ErrorTest, ToStringHasCodeOffsetMessageContextAndTensor) {
  const Error error{ErrorCode::kTensorInvalidInfo, 42, "size differs", "expected 4", "w"};
  EXPECT_EQ(error.ToString(), "TensorInvalidInfo at byte 42: size differs: expected 4 (tensor 'w')");
  EXPECT_EQ(Error{}.ToString(), "Ok at byte 0: ");
}

Result<std::string> Failed() {
  return Error{ErrorCode::kDuplicateKey, 61, "duplicate key", {}, "w"};
}

TEST(ResultTest, ValueOrGivesTheValueOrTheFallback) {
  EXPECT_EQ(Result<std::string>(std::string("kept")).value_or("fallback"), "kept");
  EXPECT_EQ(Failed().value_or("fallback"), "fallback");
  const Result<int> failed = Error{ErrorCode::kIoError, 0, "no file"};
  EXPECT_EQ(failed.value_or(7), 7);
  const Result<int> ok = 3;
  EXPECT_EQ(ok.value_or(7), 3);
  EXPECT_EQ(*ok, 3);
  EXPECT_EQ(ok.value(), 3);
  EXPECT_TRUE(ok.error().ok());
}

// The value of a failed Result is never read as garbage: the process stops and says why,
// whatever the build type (these tests also run in Release builds, where NDEBUG is set).
TEST(ResultDeathTest, UsingTheValueOfAFailedResultAbortsWithTheError) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const char* expected = "stguard: value of a failed Result: DuplicateKey at byte 61: "
                         "duplicate key \\(tensor 'w'\\)";
  EXPECT_DEATH((void)Failed().value(), expected);
  EXPECT_DEATH({ Result<std::string> failed = Failed(); (void)failed.value(); }, expected);
  EXPECT_DEATH((void)Failed()->size(), expected);
  EXPECT_DEATH({ const Result<std::string> failed = Failed(); (void)*failed; }, expected);
}

}  // namespace
}  // namespace stguard
