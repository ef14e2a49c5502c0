// SPDX-License-Identifier: Apache-2.0
// The compact-entry fast path of the header parser must change nothing but speed: on every
// input, parsing with it and without it gives the same tensors or the same error.
#include <gtest/gtest.h>

#include <random>

#include "format/header_parser.h"

namespace stguard {
namespace {

// Describe renders everything ParseHeader produces, so that two results compare as text.
std::string Describe(std::string_view header, bool fast) {
  ParsedHeader parsed;
  const Error error = ParseHeader(header, 8, Options{}, &parsed, fast);
  if (!error.ok()) {
    return "error " + error.ToString();
  }
  std::string out = "ok";
  for (const TensorView& tensor : parsed.tensors) {
    out += "|" + std::string(tensor.name) + "," + std::string(DtypeName(tensor.dtype)) + ",[";
    for (uint64_t dim : tensor.shape) out += std::to_string(dim) + " ";
    out += "]," + std::to_string(tensor.begin) + "," + std::to_string(tensor.end) + "@" +
           std::to_string(tensor.header_offset);
  }
  for (uint32_t index : parsed.tensors_by_name) out += "#" + std::to_string(index);
  for (const MetadataEntry& entry : parsed.metadata) {
    out += "|m:" + std::string(entry.key) + "=" + std::string(entry.value);
  }
  return out;
}

void ExpectSameBothWays(std::string_view header) {
  ASSERT_EQ(Describe(header, true), Describe(header, false)) << header;
}

const char kCompact[] =
    R"({"__metadata__":{"format":"pt"},"a.weight":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},)"
    R"("b":{"dtype":"BF16","shape":[],"data_offsets":[24,26]},"c":{"dtype":"F4","shape":[4],"data_offsets":[26,28]},)"
    R"("":{"dtype":"U8","shape":[0,18446744073709551615],"data_offsets":[28,28]},)"
    R"("d":{"dtype":"I64","shape":[10],"data_offsets":[28,108]}})";

TEST(HeaderFastPathTest, CompactHeaderGivesTheSameResultWithAndWithoutTheFastPath) {
  ExpectSameBothWays(kCompact);
  EXPECT_EQ(Describe(kCompact, true).substr(0, 2), "ok");
}

// CompactEntriesRead parses a valid `header` and returns how many tensor entries the
// compact fast path read, after checking that the parse found `num_tensors` tensors.
size_t CompactEntriesRead(std::string_view header, const Options& options, bool fast,
                          size_t num_tensors) {
  ParsedHeader parsed;
  const Error error = ParseHeader(header, 8, options, &parsed, fast);
  EXPECT_TRUE(error.ok()) << error.ToString();
  EXPECT_EQ(parsed.tensors.size(), num_tensors);
  return parsed.compact_entries;
}

TEST(HeaderFastPathTest, CompactHeaderTakesTheFastPathForEveryCompactEntry) {
  // Five tensors; the fast path reads numbers of at most 19 digits, so the entry whose
  // dim is 2^64 - 1 (20 digits) is read token by token, like __metadata__.
  EXPECT_EQ(CompactEntriesRead(kCompact, Options{}, true, 5), 4u);
  EXPECT_EQ(CompactEntriesRead(kCompact, Options{}, false, 5), 0u);
}

TEST(HeaderFastPathTest, EntriesOutsideTheCompactFormGoTokenByToken) {
  // Whitespace, an escaped name and a non-ASCII name each send their entry down the general
  // path; the compact entries around them still take the fast path.
  const std::string header =
      R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
      R"("b": {"dtype":"F32","shape":[1],"data_offsets":[4,8]},)"
      R"("c\u0064":{"dtype":"F32","shape":[1],"data_offsets":[8,12]},)"
      R"("e":{"dtype":"F32","shape":[1],"data_offsets":[12,16]},)"
      "\"\xC3\xA9\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[16,20]},"
      R"("f":{"dtype":"F32","shape":[1],"data_offsets":[20,24]}})";
  EXPECT_EQ(CompactEntriesRead(header, Options{}, true, 6), 3u);
  ExpectSameBothWays(header);
  // The compact form nests three deep, so a depth limit below that turns it off.
  Options shallow;
  shallow.max_depth = 2;
  ParsedHeader parsed;
  EXPECT_EQ(ParseHeader(kCompact, 8, shallow, &parsed).code, ErrorCode::kDepthExceeded);
  EXPECT_EQ(parsed.compact_entries, 0u);
}

TEST(HeaderFastPathTest, EveryNearMissFallsBackToTheSameError) {
  for (std::string_view header : {
           R"({"a":{"dtype":"F32","shape":[01],"data_offsets":[0,4]}})",
           R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,5]}})",
           R"({"a":{"dtype":"F32","shape":[1.0],"data_offsets":[0,4]}})",
           R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})",
           R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}})",
           R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4,8]}})",
           R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"x":1}})",
           R"({"a":{"dtype":"F32","shape":[18446744073709551616],"data_offsets":[0,4]}})",
           R"({"a":{"dtype":"F32","shape":[10000000000000000000],"data_offsets":[0,4]}})",
           R"({"a":{"dtype":"F4","shape":[3],"data_offsets":[0,1]}})",
           R"({"a":{"dtype":"f32","shape":[1],"data_offsets":[0,4]}})",
           R"({"a":{"dtype":"","shape":[1],"data_offsets":[0,4]}})",
           R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"","shape":[1],"data_offsets":[4,8]}})",
           R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F3","shape":[1],"data_offsets":[4,8]}})",
           R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F16","shape":[2],"data_offsets":[4,8]}})",
           R"({"a":{"dtype":"F32","shape":[1099511627776,1099511627776,0],"data_offsets":[0,0]}})",
           R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
           R"({"__metadata__":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
           R"({"a\u0062":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
           "{\"a\xC3\xA9\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}",
           R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]} })",
           R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},})",
           R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]})",
           R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}x)",
       }) {
    ExpectSameBothWays(header);
  }
}

TEST(HeaderFastPathTest, RandomMutationsGiveTheSameResultBothWays) {
  // Mutations are biased towards the bytes the compact grammar cares about, so that many
  // of them are near misses of the fast path rather than plain JSON errors.
  const std::string alphabet = "{}[]\":,0123456789 \\u.-eFU8IB_adtypshe\x01\xC3\xA9";
  std::mt19937 random(20261129);
  const std::string base = kCompact;
  for (int trial = 0; trial < 30000; ++trial) {
    std::string header = base;
    const int num_edits = 1 + static_cast<int>(random() % 3);
    for (int edit = 0; edit < num_edits; ++edit) {
      const size_t at = random() % (header.size() + 1);
      const char c = alphabet[random() % alphabet.size()];
      switch (random() % 3) {
        case 0:
          if (at < header.size()) header[at] = c;
          break;
        case 1:
          header.insert(header.begin() + static_cast<std::ptrdiff_t>(at), c);
          break;
        default:
          if (at < header.size()) header.erase(at, 1);
      }
    }
    ExpectSameBothWays(header);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace stguard
