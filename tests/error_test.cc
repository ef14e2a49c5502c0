// SPDX-License-Identifier: Apache-2.0
// Error codes: each has the name of its row in the one list; Error and Result.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "stguard/error.h"

namespace stguard {
namespace {

// CodeNamesInList reads the rows of stguard/error_codes.def as text, in file order.
std::vector<std::string> CodeNamesInList() {
  std::ifstream list(STGUARD_SOURCE_DIR "/include/stguard/error_codes.def");
  EXPECT_TRUE(list.good());
  const std::regex row(
      R"(^STGUARD_ERROR_CODE\((\w+), STGUARD_\w+, (true|false), (Valid|Invalid|Refused|Error)\)$)");
  std::vector<std::string> names;
  std::smatch match;
  for (std::string line; std::getline(list, line);) {
    if (std::regex_match(line, match, row)) names.push_back(match[1]);
  }
  return names;
}

TEST(ErrorTest, EachCodeHasTheNameOfItsRowInTheList) {
  const std::vector<std::string> names = CodeNamesInList();
  ASSERT_EQ(names.size(), static_cast<size_t>(ErrorCode::kNumErrorCodes));
  std::set<std::string_view> seen;
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(ErrorCodeName(static_cast<ErrorCode>(i)), names[i]) << "code " << i;
    EXPECT_TRUE(seen.insert(names[i]).second) << names[i];
  }
  EXPECT_EQ(ErrorCodeName(ErrorCode::kOk), "Ok");
  EXPECT_EQ(ErrorCodeName(ErrorCode::kDuplicateKey), "DuplicateKey");
  EXPECT_EQ(ErrorCodeName(ErrorCode::kOutputTooLarge), "OutputTooLarge");
  EXPECT_EQ(ErrorCodeName(ErrorCode::kNumErrorCodes), "Unknown");
}

// The enumerator and the name of a row agree (k<Name> is named "<Name>"), and so do its
// columns and what ErrorHasOffset and ErrorVerdict say.
TEST(ErrorTest, EachEnumeratorIsNamedAfterItself) {
#define STGUARD_ERROR_CODE(name, c_name, has_offset, verdict) \
  EXPECT_EQ(ErrorCodeName(ErrorCode::k##name), #name);           \
  EXPECT_EQ(ErrorHasOffset(ErrorCode::k##name), has_offset) << #name;  \
  EXPECT_EQ(ErrorVerdict(ErrorCode::k##name), Verdict::k##verdict) << #name;
#include "stguard/error_codes.def"
#undef STGUARD_ERROR_CODE
}

TEST(ErrorTest, ToStringHasCodeOffsetMessageContextAndTensor) {
  const Error error{ErrorCode::kTensorInvalidInfo, 42, "size differs", "expected 4", "w"};
  EXPECT_EQ(error.ToString(), "TensorInvalidInfo at byte 42: size differs: expected 4 (tensor 'w')");
  EXPECT_EQ(Error{}.ToString(), "Ok: ");
}

// An offset is shown only when it points into the input: a file that cannot be opened or
// an argument the caller gave has none ("IoError at byte 0" would send a reader to look
// at the file's first byte).
TEST(ErrorTest, ToStringShowsAnOffsetOnlyWhenItPointsIntoTheInput) {
  const Error io{ErrorCode::kIoError, 0, "cannot open file", "x: No such file or directory"};
  EXPECT_EQ(io.ToString(), "IoError: cannot open file: x: No such file or directory");
  EXPECT_FALSE(ErrorHasOffset(ErrorCode::kIoError));
  EXPECT_FALSE(ErrorHasOffset(ErrorCode::kNotARegularFile));
  EXPECT_FALSE(ErrorHasOffset(ErrorCode::kInvalidArgument));
  EXPECT_FALSE(ErrorHasOffset(ErrorCode::kOk));
  // Content errors keep theirs, byte 0 included: the first byte is where they were found.
  const Error header{ErrorCode::kHeaderTooLarge, 0, "header length N exceeds the maximum"};
  EXPECT_EQ(header.ToString(), "HeaderTooLarge at byte 0: header length N exceeds the maximum");
  EXPECT_TRUE(ErrorHasOffset(ErrorCode::kHeaderTooLarge));
  EXPECT_TRUE(ErrorHasOffset(ErrorCode::kPickleGlobalRefused));
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
