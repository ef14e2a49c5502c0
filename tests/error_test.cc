// SPDX-License-Identifier: Apache-2.0
// The error code table stays in sync with the enum.
#include <gtest/gtest.h>

#include <set>

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
}

TEST(ErrorTest, ToStringHasCodeOffsetMessageContextAndTensor) {
  const Error error{ErrorCode::kTensorInvalidInfo, 42, "size differs", "expected 4", "w"};
  EXPECT_EQ(error.ToString(), "TensorInvalidInfo at byte 42: size differs: expected 4 (tensor 'w')");
  EXPECT_EQ(Error{}.ToString(), "Ok at byte 0: ");
}

}  // namespace
}  // namespace stguard
