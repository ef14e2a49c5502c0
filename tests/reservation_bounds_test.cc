// SPDX-License-Identifier: Apache-2.0
// Memory bound for hostile header shapes (issue 12, item 11): the lists that grow with the
// header never hold, nor reserve, more than ReservationBoundsFor allows, so no large list is
// copied while it grows; metadata is sorted in place with the right pairs and offsets.
#include <gtest/gtest.h>

#include <string>

#include "format/header_parser.h"
#include "stguard/reader.h"

namespace stguard {
namespace {

// The densest shape a header can hold: one tensor with `rank` zero dims (2 bytes each).
std::string DenseDimsHeader(size_t rank) {
  std::string header = "{\"a\":{\"dtype\":\"U8\",\"shape\":[";
  for (size_t i = 0; i < rank; ++i) header += i == 0 ? "0" : ",0";
  return header + "],\"data_offsets\":[0,0]}}";
}

// `count` metadata entries with distinct keys, in descending key order, value = key + "v".
std::string MetadataHeader(size_t count) {
  std::string header = "{\"__metadata__\":{";
  for (size_t i = count; i-- > 0;) {
    char key[32];
    std::snprintf(key, sizeof key, "%08zx", i);
    if (i + 1 != count) header += ",";
    header += "\"" + std::string(key) + "\":\"" + key + "v\"";
  }
  return header + "}}";
}

TEST(ReservationBounds, DimsOfTheDensestShapeFitTheirBoundWithoutSlack) {
  for (bool fast_path : {true, false}) {
    const size_t rank = 300'000;  // 2.4 MB of dims: past the doubling limit
    const std::string header = DenseDimsHeader(rank);
    ParsedHeader parsed;
    ASSERT_TRUE(ParseHeader(header, 8, Options{}, &parsed, fast_path).ok());
    const ReservationBounds bounds = ReservationBoundsFor(header.size());
    EXPECT_EQ(parsed.dims.size(), rank);
    EXPECT_LE(parsed.dims.capacity(), bounds.max_dims);
    // The bound is tight: the densest shape uses almost all of it (a header of nothing
    // but dims would use all of it), so memory is what the dims take, not twice that.
    EXPECT_GT(parsed.dims.size(), bounds.max_dims * 99 / 100);
  }
}

TEST(ReservationBounds, DimsOfATypicalHeaderKeepDoublingCapacity) {
  const std::string header = DenseDimsHeader(3);
  ParsedHeader parsed;
  ASSERT_TRUE(ParseHeader(header, 8, Options{}, &parsed).ok());
  EXPECT_EQ(parsed.dims.size(), 3u);
  EXPECT_LE(parsed.dims.capacity(), 16u);  // a small list doubles; it never takes the bound
}

TEST(ReservationBounds, MetadataFitsItsBoundAndIsSortedInPlace) {
  const size_t count = 100'000;  // 3.2 MB of entries: past the doubling limit
  const std::string header = MetadataHeader(count);
  ParsedHeader parsed;
  ASSERT_TRUE(ParseHeader(header, 8, Options{}, &parsed).ok());
  const ReservationBounds bounds = ReservationBoundsFor(header.size());
  ASSERT_EQ(parsed.metadata.size(), count);
  EXPECT_LE(parsed.metadata.capacity(), bounds.max_metadata_entries);
  for (size_t i = 0; i < count; ++i) {
    char key[32];
    std::snprintf(key, sizeof key, "%08zx", i);
    ASSERT_EQ(parsed.metadata[i].key, key);
    ASSERT_EQ(parsed.metadata[i].value, std::string(key) + "v");
  }
}

TEST(ReservationBounds, MetadataBoundHoldsForTheSmallestEntries) {
  // `"":""` is the smallest entry: six bytes with its separator.
  const std::string header = "{\"__metadata__\":{\"\":\"\"}}";
  EXPECT_GE(ReservationBoundsFor(header.size()).max_metadata_entries, 1u);
  ParsedHeader parsed;
  ASSERT_TRUE(ParseHeader(header, 8, Options{}, &parsed).ok());
  EXPECT_EQ(parsed.metadata.size(), 1u);
}

TEST(ReservationBounds, DuplicateMetadataKeyOffsetIsTheSecondKey) {
  const std::string header = "{\"__metadata__\":{\"b\":\"1\",\"a\":\"2\",\"b\":\"3\"}}";
  ParsedHeader parsed;
  const Error error = ParseHeader(header, 8, Options{}, &parsed);
  ASSERT_EQ(error.code, ErrorCode::kDuplicateKey);
  EXPECT_EQ(error.offset, 8 + header.rfind("\"b\""));
  ParsedHeader accepted;
  const std::string distinct = "{\"__metadata__\":{\"b\":\"1\",\"a\":\"2\",\"c\":\"3\"}}";
  ASSERT_TRUE(ParseHeader(distinct, 8, Options{}, &accepted).ok());
  EXPECT_EQ(accepted.metadata[0].value, "2");
  EXPECT_EQ(accepted.metadata[1].value, "1");
}

}  // namespace
}  // namespace stguard
