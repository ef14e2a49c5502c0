// SPDX-License-Identifier: Apache-2.0
// jsontestsuite_test.cc: JSONTestSuite (nst/JSONTestSuite, "Parsing JSON is a Minefield")
// against ValidateJson, with the expected verdict taken from each file's name.
//
//   y_*  valid JSON: must be accepted.
//   n_*  invalid JSON: must be rejected (cleanly: no crash, no hang).
//   i_*  implementation-defined. Our policy, file by file, is kImplementationDefined below:
//        - i_number_*: accepted. The tokenizer never converts numbers, so huge exponents,
//          overflowing and underflowing values are just well-formed text to it.
//        - i_structure_500_nested_arrays.json: accepted, 500 < kDefaultMaxDepth (1024).
//        - i_structure_UTF-8_BOM_empty_object.json: rejected, UnexpectedToken at byte 0. A
//          byte-order mark is not whitespace (RFC 8259 section 8.1 lets parsers refuse it).
//        - \u escapes of unpaired or reversed surrogates: rejected, LoneSurrogate.
//        - raw bytes that are not UTF-8 inside strings (overlong, encoded surrogates, beyond
//          U+10FFFF, ISO Latin-1, truncated, stray continuation): rejected, InvalidUtf8.
//        - UTF-16 text (with or without BOM): rejected, UnexpectedToken, since its first
//          bytes (FF FE, 00 '[' or '[' 00) start no JSON value.
//
// The full suite lives in the read-only shared folder beside the checkout; when it is absent
// that test is skipped, loudly. A handful of the files are also kept in corpus/json/ and run
// always.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "stguard/error.h"
#include "stguard/json_tokenizer.h"

namespace stguard {
namespace {

namespace fs = std::filesystem;

constexpr char kSuiteDir[] = STGUARD_SHARED_DIR "/conformance/jsontestsuite/test_parsing";
constexpr char kCorpusDir[] = STGUARD_CORPUS_DIR "/json";

// The i_ policy: for each implementation-defined file, kOk (accept) or the error code.
const std::map<std::string, ErrorCode>& ImplementationDefined() {
  static const std::map<std::string, ErrorCode> kPolicy{
      {"i_number_double_huge_neg_exp.json", ErrorCode::kOk},
      {"i_number_huge_exp.json", ErrorCode::kOk},
      {"i_number_neg_int_huge_exp.json", ErrorCode::kOk},
      {"i_number_pos_double_huge_exp.json", ErrorCode::kOk},
      {"i_number_real_neg_overflow.json", ErrorCode::kOk},
      {"i_number_real_pos_overflow.json", ErrorCode::kOk},
      {"i_number_real_underflow.json", ErrorCode::kOk},
      {"i_number_too_big_neg_int.json", ErrorCode::kOk},
      {"i_number_too_big_pos_int.json", ErrorCode::kOk},
      {"i_number_very_big_negative_int.json", ErrorCode::kOk},
      {"i_object_key_lone_2nd_surrogate.json", ErrorCode::kLoneSurrogate},
      {"i_string_1st_surrogate_but_2nd_missing.json", ErrorCode::kLoneSurrogate},
      {"i_string_1st_valid_surrogate_2nd_invalid.json", ErrorCode::kLoneSurrogate},
      {"i_string_UTF-16LE_with_BOM.json", ErrorCode::kUnexpectedToken},
      {"i_string_UTF-8_invalid_sequence.json", ErrorCode::kInvalidUtf8},
      {"i_string_UTF8_surrogate_U+D800.json", ErrorCode::kInvalidUtf8},
      {"i_string_incomplete_surrogate_and_escape_valid.json", ErrorCode::kLoneSurrogate},
      {"i_string_incomplete_surrogate_pair.json", ErrorCode::kLoneSurrogate},
      {"i_string_incomplete_surrogates_escape_valid.json", ErrorCode::kLoneSurrogate},
      {"i_string_invalid_lonely_surrogate.json", ErrorCode::kLoneSurrogate},
      {"i_string_invalid_surrogate.json", ErrorCode::kLoneSurrogate},
      {"i_string_invalid_utf-8.json", ErrorCode::kInvalidUtf8},
      {"i_string_inverted_surrogates_U+1D11E.json", ErrorCode::kLoneSurrogate},
      {"i_string_iso_latin_1.json", ErrorCode::kInvalidUtf8},
      {"i_string_lone_second_surrogate.json", ErrorCode::kLoneSurrogate},
      {"i_string_lone_utf8_continuation_byte.json", ErrorCode::kInvalidUtf8},
      {"i_string_not_in_unicode_range.json", ErrorCode::kInvalidUtf8},
      {"i_string_overlong_sequence_2_bytes.json", ErrorCode::kInvalidUtf8},
      {"i_string_overlong_sequence_6_bytes.json", ErrorCode::kInvalidUtf8},
      {"i_string_overlong_sequence_6_bytes_null.json", ErrorCode::kInvalidUtf8},
      {"i_string_truncated-utf-8.json", ErrorCode::kInvalidUtf8},
      {"i_string_utf16BE_no_BOM.json", ErrorCode::kUnexpectedToken},
      {"i_string_utf16LE_no_BOM.json", ErrorCode::kUnexpectedToken},
      {"i_structure_500_nested_arrays.json", ErrorCode::kOk},
      {"i_structure_UTF-8_BOM_empty_object.json", ErrorCode::kUnexpectedToken},
  };
  return kPolicy;
}

std::string ReadBinaryFile(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

struct Counts {
  int accept = 0;                  // y_
  int reject = 0;                  // n_
  int implementation_defined = 0;  // i_
};

// CheckFolder runs every *.json file of `dir` and checks it against its verdict prefix.
Counts CheckFolder(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  Counts counts;
  for (const fs::path& path : files) {
    const std::string name = path.filename().string();
    const std::string contents = ReadBinaryFile(path);
    // An exact-size heap copy, so that ASan sees any read one past the end.
    const std::unique_ptr<char[]> copy(new char[contents.size()]);
    std::memcpy(copy.get(), contents.data(), contents.size());
    const std::string_view input(copy.get(), contents.size());
    const Error error = ValidateJson(input);
    SCOPED_TRACE(name + ": " + error.ToString());
    if (!error.ok()) {
      EXPECT_LE(error.offset, input.size()) << "an error offset must lie in the input";
    }
    if (name.starts_with("y_")) {
      ++counts.accept;
      EXPECT_TRUE(error.ok()) << "valid JSON was rejected";
    } else if (name.starts_with("n_")) {
      ++counts.reject;
      EXPECT_FALSE(error.ok()) << "invalid JSON was accepted";
    } else if (name.starts_with("i_")) {
      ++counts.implementation_defined;
      const auto policy = ImplementationDefined().find(name);
      if (policy == ImplementationDefined().end()) {
        ADD_FAILURE() << "no policy for this i_ file: add it to ImplementationDefined()";
        continue;
      }
      EXPECT_EQ(ErrorCodeName(error.code), ErrorCodeName(policy->second));
    } else {
      ADD_FAILURE() << "file name has no y_/n_/i_ verdict prefix";
    }
  }
  return counts;
}

TEST(JsonTestSuiteTest, EveryParsingCaseMatchesItsVerdict) {
  if (!fs::is_directory(kSuiteDir)) {
    GTEST_SKIP() << "JSONTestSuite conformance part SKIPPED: " << kSuiteDir
                 << " not found (it lives in the shared folder beside the checkout); only "
                    "the copies in corpus/json were checked";
  }
  const Counts counts = CheckFolder(kSuiteDir);
  // The vendored snapshot has exactly these numbers; a wrong or empty folder must fail.
  EXPECT_EQ(counts.accept, 95);
  EXPECT_EQ(counts.reject, 188);
  EXPECT_EQ(counts.implementation_defined, 35);
  EXPECT_EQ(ImplementationDefined().size(), 35u);
}

TEST(JsonTestSuiteTest, CorpusCopiesMatchTheirVerdicts) {
  ASSERT_TRUE(fs::is_directory(kCorpusDir)) << kCorpusDir;
  const Counts counts = CheckFolder(kCorpusDir);
  EXPECT_GE(counts.accept, 5);
  EXPECT_GE(counts.reject, 10);
  EXPECT_GE(counts.implementation_defined, 5);
}

}  // namespace
}  // namespace stguard
