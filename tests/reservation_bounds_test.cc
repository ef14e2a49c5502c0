// SPDX-License-Identifier: Apache-2.0
// Memory bound for hostile header shapes: the lists that grow with the
// header never hold, nor reserve, more than ReservationBoundsFor allows, so no large list is
// copied while it grows; metadata is sorted in place with the right pairs and offsets.
#include <gtest/gtest.h>

#include <string>

#include "format/header_parser.h"
#include "format/metadata_list.h"
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
    const size_t rank = 1'500'000;  // 1.5 MB of varint dims: past the doubling limit
    const std::string header = DenseDimsHeader(rank);
    ParsedHeader parsed;
    ASSERT_TRUE(ParseHeader(header, 8, Options{}, &parsed, fast_path).ok());
    const ReservationBounds bounds = ReservationBoundsFor(header.size());
    EXPECT_EQ(parsed.dims.size(), rank);  // a 0 is one varint byte
    EXPECT_LE(parsed.dims.capacity(), bounds.max_dim_bytes);
    // The bound is tight: the densest shape uses almost all of it (a header of nothing
    // but dims would use all of it), so memory is what the dims take, not twice that.
    EXPECT_GT(parsed.dims.size(), bounds.max_dim_bytes * 99 / 100);
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
  EXPECT_LE(MetadataListBuilder::Capacity(parsed.metadata), bounds.max_metadata_entries);
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

// Shape keeps dims as varints: every value a dim can take survives the round trip, and
// the encoding takes no more bytes than the dims' decimal text.
TEST(CompactShape, VarintDimsRoundTrip) {
  const std::vector<uint64_t> dims = {0, 1, 127, 128, 16383, 16384, uint64_t{1} << 35,
                                      (uint64_t{1} << 63) + 5, UINT64_MAX};
  std::vector<uint8_t> encoded;
  for (uint64_t dim : dims) Shape::AppendVarint(dim, &encoded);
  const Shape shape = Shape::FromVarints(encoded, dims.size());
  EXPECT_EQ(shape.size(), dims.size());
  EXPECT_FALSE(shape.empty());
  EXPECT_EQ(shape.to_vector(), dims);
  EXPECT_TRUE(shape == std::span<const uint64_t>(dims));
  for (size_t i = 0; i < dims.size(); ++i) EXPECT_EQ(shape[i], dims[i]) << i;
  std::vector<uint64_t> other = dims;
  other.back() -= 1;
  EXPECT_FALSE(shape == std::span<const uint64_t>(other));
  other.pop_back();
  EXPECT_FALSE(shape == std::span<const uint64_t>(other));
  EXPECT_TRUE(Shape().empty());
  EXPECT_EQ(Shape().begin(), Shape().end());
  EXPECT_TRUE(Shape() == std::span<const uint64_t>());
}

TEST(CompactShape, ParsedShapesMatchTheirText) {
  const std::string header =
      R"({"a":{"dtype":"U8","shape":[0,18446744073709551615,7],"data_offsets":[0,0]},)"
      R"("s":{"dtype":"U8","shape":[],"data_offsets":[0,1]},)"
      R"("b":{ "dtype":"U8","shape":[ 2 , 130 ],"data_offsets":[1,261]}})";
  for (bool fast_path : {true, false}) {
    ParsedHeader parsed;
    ASSERT_TRUE(ParseHeader(header, 8, Options{}, &parsed, fast_path).ok());
    ASSERT_EQ(parsed.tensors.size(), 3u);
    EXPECT_EQ(parsed.tensors[0].shape, (std::vector<uint64_t>{0, UINT64_MAX, 7}));
    EXPECT_TRUE(parsed.tensors[1].shape.empty());
    EXPECT_EQ(parsed.tensors[2].shape, (std::vector<uint64_t>{2, 130}));
    EXPECT_LE(parsed.dims.size(), header.size() / 2);
  }
}

// Metadata strings without escapes are referred to in the header text, the others are
// unescaped into the list: order, lookup and duplicate reports must not tell them apart.
TEST(CompactMetadata, EscapedAndPlainKeysSortAndFindAlike) {
  const std::string header =
      R"({"__metadata__":{"b":"plain","\u0061c":"esc\"aped","a":"x","":"empty","\u00e9":""}})";
  ParsedHeader parsed;
  ASSERT_TRUE(ParseHeader(header, 8, Options{}, &parsed).ok());
  const MetadataList& list = parsed.metadata;
  ASSERT_EQ(list.size(), 5u);
  const std::vector<std::pair<std::string, std::string>> want = {
      {"", "empty"}, {"a", "x"}, {"ac", "esc\"aped"}, {"b", "plain"}, {"\xC3\xA9", ""}};
  size_t i = 0;
  for (const MetadataEntry& entry : list) {
    EXPECT_EQ(entry.key, want[i].first) << i;
    EXPECT_EQ(entry.value, want[i].second) << i;
    EXPECT_EQ(list.Find(want[i].first), want[i].second) << i;
    ++i;
  }
  EXPECT_EQ(i, 5u);
  EXPECT_FALSE(list.Find("ab").has_value());
  EXPECT_FALSE(list.Find("\xC3").has_value());
}

TEST(CompactMetadata, FirstRepeatInTheFileIsReportedWhateverItsEscapes) {
  // "b" (escaped first) repeats at the plain "b"; "a" repeats later: the "b" repeat is
  // the first a reader meets.
  const std::string header =
      R"({"__metadata__":{"a":"1","\u0062":"2","b":"3","\u0061":"4"}})";
  ParsedHeader parsed;
  const Error error = ParseHeader(header, 8, Options{}, &parsed);
  ASSERT_EQ(error.code, ErrorCode::kDuplicateKey);
  EXPECT_EQ(error.offset, 8 + header.find("\"b\""));
  EXPECT_EQ(error.context, "b");
  const std::string later = R"({"__metadata__":{"x":"1","\u0079":"2","y":"3","x":"4"}})";
  ParsedHeader other;
  const Error second = ParseHeader(later, 8, Options{}, &other);
  ASSERT_EQ(second.code, ErrorCode::kDuplicateKey);
  EXPECT_EQ(second.offset, 8 + later.find("\"y\""));
  // An escaped repeat of a plain key is reported where the escaped key stands.
  const std::string escaped_second = R"({"__metadata__":{"k":"1","z":"2","\u006b":"3"}})";
  ParsedHeader third;
  const Error error3 = ParseHeader(escaped_second, 8, Options{}, &third);
  ASSERT_EQ(error3.code, ErrorCode::kDuplicateKey);
  EXPECT_EQ(error3.offset, 8 + escaped_second.find("\"\\u006b\""));
}

}  // namespace
}  // namespace stguard
