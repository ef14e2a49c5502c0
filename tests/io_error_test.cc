// SPDX-License-Identifier: Apache-2.0
// stguard/io_error.h and stguard/plural.h: the one rule for "about reaching a file" (out of
// memory counted as each caller says) and the one count-and-noun of the messages.
#include <gtest/gtest.h>

#include "stguard/io_error.h"
#include "stguard/plural.h"

namespace stguard {
namespace {

Error Of(ErrorCode code) { return Error{code, 0, "m"}; }

TEST(IoErrorTest, ReachingAFileIsAnIoErrorWhateverTheCallerSaysOfMemory) {
  for (const OutOfMemoryIs rule : {OutOfMemoryIs::kIoError, OutOfMemoryIs::kNotIoError}) {
    EXPECT_TRUE(IsIoError(Of(ErrorCode::kIoError), rule));
    EXPECT_TRUE(IsIoError(Of(ErrorCode::kNotARegularFile), rule));
    // Reject: an error about the bytes read, and no error at all.
    EXPECT_FALSE(IsIoError(Of(ErrorCode::kHeaderTooLarge), rule));
    EXPECT_FALSE(IsIoError(Of(ErrorCode::kInvalidArgument), rule));
    EXPECT_FALSE(IsIoError(Error{}, rule));
  }
}

TEST(IoErrorTest, OutOfMemoryCountsOnlyWhereTheCallerSaysSo) {
  EXPECT_TRUE(IsIoError(Of(ErrorCode::kOutOfMemory), OutOfMemoryIs::kIoError));
  EXPECT_FALSE(IsIoError(Of(ErrorCode::kOutOfMemory), OutOfMemoryIs::kNotIoError));
}

TEST(PluralTest, AnSUnlessTheCountIsOne) {
  EXPECT_EQ(Plural(1, "tensor"), "1 tensor");
  EXPECT_EQ(Plural(0, "tensor"), "0 tensors");
  EXPECT_EQ(Plural(2, "header byte"), "2 header bytes");
  EXPECT_EQ(Plural(18446744073709551615ull, "file"), "18446744073709551615 files");
}

}  // namespace
}  // namespace stguard
