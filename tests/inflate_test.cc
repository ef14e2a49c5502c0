// SPDX-License-Identifier: Apache-2.0
// The DEFLATE decoder's edge cases around its fast loop: overlapping matches at every short
// distance, output ending on the output buffer's boundaries, the declared-size limit,
// distances reaching before the first byte, bad codes, and every truncation of a stream.
// Streams are fixed-Huffman blocks written here bit by bit, with a plain byte loop as the
// reference output. (tests/npz/test_inflate_zlib.py compares with zlib on 20,000 streams.)
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "zip/inflate.h"
#include "zip/zip_archive.h"

namespace stguard {
namespace {

constexpr uint16_t kLengthBase[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,
                                      15, 17, 19, 23, 27, 31, 35, 43, 51,  59,
                                      67, 83, 99, 115, 131, 163, 195, 227, 258};
constexpr uint8_t kLengthExtra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                      2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
constexpr uint16_t kDistBase[30] = {1,    2,    3,    4,    5,    7,     9,     13,
                                    17,   25,   33,   49,   65,   97,    129,   193,
                                    257,  385,  513,  769,  1025, 1537,  2049,  3073,
                                    4097, 6145, 8193, 12289, 16385, 24577};
constexpr uint8_t kDistExtra[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                    6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};
// Where the decoder's output buffer hands a chunk over (window plus chunk).
constexpr size_t kBufferEdge = 32768 + kInflateChunkLen;

// FixedWriter writes one final fixed-Huffman block and keeps the output it stands for.
class FixedWriter {
 public:
  FixedWriter() { Bits(1, 1), Bits(1, 2); }
  void Literal(int value) {
    Symbol(value);
    expected.push_back(static_cast<std::byte>(value));
  }
  void Match(size_t len, size_t dist) {
    int l = 28;
    while (kLengthBase[l] > len) --l;
    Symbol(257 + l);
    Bits(static_cast<uint32_t>(len - kLengthBase[l]), kLengthExtra[l]);
    int d = 29;
    while (kDistBase[d] > dist) --d;
    Code(static_cast<uint32_t>(d), 5);
    Bits(static_cast<uint32_t>(dist - kDistBase[d]), kDistExtra[d]);
    if (dist > expected.size()) return;  // an invalid stream: no output stands for it
    for (size_t i = 0; i < len; ++i) expected.push_back(expected[expected.size() - dist]);
  }
  // Symbol writes a literal/length symbol's fixed code (RFC 1951 3.2.6).
  void Symbol(int sym) {
    if (sym < 144) Code(0x30 + sym, 8);
    else if (sym < 256) Code(0x190 + sym - 144, 9);
    else if (sym < 280) Code(sym - 256, 7);
    else Code(0xC0 + sym - 280, 8);
  }
  void Code(uint32_t code, int len) {  // most significant bit first
    for (int b = len - 1; b >= 0; --b) Bits((code >> b) & 1u, 1);
  }
  void Bits(uint32_t value, int n) {  // least significant bit first
    for (int b = 0; b < n; ++b, ++bit_) {
      if (bit_ % 8 == 0) bytes.push_back(std::byte{0});
      bytes.back() |= static_cast<std::byte>(((value >> b) & 1u) << (bit_ % 8));
    }
  }
  std::vector<std::byte> Finish() {
    Symbol(256);
    return bytes;
  }
  std::vector<std::byte> bytes, expected;

 private:
  size_t bit_ = 0;
};

struct Inflated {
  Error error;
  std::vector<std::byte> out;
  size_t largest_chunk = 0;
};

Inflated InflateAll(const std::vector<std::byte>& stream, uint64_t expected_len) {
  Inflated r;
  r.error = Inflate(stream, 0, expected_len, [&](std::span<const std::byte> chunk) {
    r.out.insert(r.out.end(), chunk.begin(), chunk.end());
    r.largest_chunk = std::max(r.largest_chunk, chunk.size());
    return Error{};
  });
  return r;
}

// A run of random literals long enough that the matches after it decode in the fast loop.
void Prefix(FixedWriter& w, size_t n, std::mt19937& rng) {
  for (size_t i = 0; i < n; ++i) w.Literal(static_cast<int>(rng() % 256));
}

TEST(InflateTest, OverlappingMatchesAtEveryShortDistanceEqualAByteLoop) {
  std::mt19937 rng(1);
  FixedWriter w;
  Prefix(w, 40, rng);
  for (size_t dist = 1; dist <= 20; ++dist) {
    for (size_t len : {3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 64, 100, 257, 258}) {
      w.Match(len, dist);
      w.Literal(static_cast<int>(rng() % 256));  // a new byte, so each period differs
    }
  }
  Prefix(w, 64, rng);  // the last matches too are decoded with input to spare
  const std::vector<std::byte> stream = w.Finish();
  const Inflated r = InflateAll(stream, w.expected.size());
  ASSERT_TRUE(r.error.ok()) << r.error.message;
  EXPECT_EQ(r.out, w.expected);
}

TEST(InflateTest, RandomMatchesAcrossManyBufferFlushesEqualAByteLoop) {
  std::mt19937 rng(2);
  FixedWriter w;
  Prefix(w, 300, rng);
  while (w.expected.size() < 5 * kBufferEdge) {
    const size_t dist = 1 + rng() % std::min<size_t>(w.expected.size(), 32768);
    w.Match(3 + rng() % 256, rng() % 4 == 0 ? 1 + rng() % 9 : dist);
    if (rng() % 3 == 0) w.Literal(static_cast<int>(rng() % 256));
  }
  const std::vector<std::byte> stream = w.Finish();
  const Inflated r = InflateAll(stream, w.expected.size());
  ASSERT_TRUE(r.error.ok()) << r.error.message;
  EXPECT_EQ(r.out, w.expected);
  EXPECT_LE(r.largest_chunk, kBufferEdge + 258);
}

// Output of exactly n bytes: one literal and distance-1 matches, ending with a literal
// run so that the last symbols decode in both loops depending on n.
std::vector<std::byte> OutputOf(size_t n, FixedWriter& w) {
  w.Literal('x');
  while (w.expected.size() + 258 + 20 <= n) w.Match(258, 1);
  while (w.expected.size() + 3 + 20 <= n) w.Match(3, 1);
  while (w.expected.size() < n) w.Literal('y');
  return w.Finish();
}

TEST(InflateTest, StreamsEndingOnTheOutputBufferEdgesDecodeWhole) {
  for (size_t n : {kInflateChunkLen - 1, kInflateChunkLen, kInflateChunkLen + 1, kBufferEdge - 1,
                   kBufferEdge, kBufferEdge + 1, 2 * kBufferEdge - 32768,
                   2 * kBufferEdge - 32768 + 1}) {
    FixedWriter w;
    const std::vector<std::byte> stream = OutputOf(n, w);
    const Inflated r = InflateAll(stream, n);
    ASSERT_TRUE(r.error.ok()) << n << ": " << r.error.message;
    EXPECT_EQ(r.out, w.expected) << n;
  }
}

TEST(InflateTest, OutputBeyondTheDeclaredSizeIsRefusedBeforeTheSinkSeesIt) {
  FixedWriter w;
  const size_t n = kBufferEdge + 5000;
  const std::vector<std::byte> stream = OutputOf(n, w);
  for (uint64_t declared : {uint64_t{0}, uint64_t{1}, uint64_t{300}, uint64_t{kBufferEdge},
                            uint64_t{n - 1}}) {
    const Inflated r = InflateAll(stream, declared);
    ASSERT_FALSE(r.error.ok()) << declared;
    EXPECT_STREQ(r.error.message, "stream inflates past its declared size") << declared;
    EXPECT_LE(r.out.size(), declared);
  }
  const Inflated short_stream = InflateAll(stream, n + 1);
  EXPECT_STREQ(short_stream.error.message, kInflateShortMessage);
  EXPECT_TRUE(InflateAll(stream, n).error.ok());
}

// A match whose distance is `back` bytes beyond the output so far, followed by enough
// literals that it is decoded in the fast loop (tail = true) or at the stream's end.
std::vector<std::byte> MatchReaching(size_t written, size_t dist, bool tail) {
  std::mt19937 rng(3);
  FixedWriter w;
  Prefix(w, written, rng);
  w.Match(5, dist);
  if (tail) Prefix(w, 40, rng);
  return w.Finish();
}

TEST(InflateTest, ADistanceBeforeTheFirstByteIsRefusedInBothLoops) {
  for (bool tail : {false, true}) {
    for (size_t written : {1, 7, 100, 40000}) {
      const size_t far = std::min<size_t>(written, 32768);
      EXPECT_TRUE(InflateAll(MatchReaching(written, far, tail), UINT32_MAX).error.message ==
                  kInflateShortMessage) << written << tail;
      if (written >= 32768) continue;  // 32768 is the farthest a distance code reaches
      const Inflated r = InflateAll(MatchReaching(written, written + 1, tail), UINT32_MAX);
      EXPECT_STREQ(r.error.message, "distance reaches before the first byte") << written;
    }
  }
}

TEST(InflateTest, CodesNoTableHoldsAreRefusedInBothLoops) {
  for (bool tail : {false, true}) {
    std::mt19937 rng(4);
    FixedWriter bad_distance;
    Prefix(bad_distance, 20, rng);
    bad_distance.Symbol(257);
    bad_distance.Code(30, 5);  // distance codes 30 and 31 do not exist
    if (tail) Prefix(bad_distance, 40, rng);
    EXPECT_STREQ(InflateAll(bad_distance.Finish(), 1000).error.message, "invalid distance code");
    FixedWriter bad_length;
    Prefix(bad_length, 20, rng);
    bad_length.Symbol(286);  // nor do literal/length codes 286 and 287
    if (tail) Prefix(bad_length, 40, rng);
    EXPECT_STREQ(InflateAll(bad_length.Finish(), 1000).error.message, "invalid literal/length code");
  }
}

TEST(InflateTest, EveryTruncationOfASmallStreamIsRefused) {
  std::mt19937 rng(5);
  FixedWriter w;
  Prefix(w, 30, rng);
  for (size_t dist = 1; dist <= 9; ++dist) w.Match(3 + dist * 7, dist);
  Prefix(w, 12, rng);
  const std::vector<std::byte> stream = w.Finish();
  ASSERT_TRUE(InflateAll(stream, w.expected.size()).error.ok());
  for (size_t cut = 0; cut < stream.size(); ++cut) {
    const std::vector<std::byte> head(stream.begin(), stream.begin() + static_cast<long>(cut));
    const Inflated r = InflateAll(head, w.expected.size());
    EXPECT_FALSE(r.error.ok()) << "cut at " << cut;
    EXPECT_LE(r.error.offset, cut);
  }
  std::vector<std::byte> longer = stream;
  longer.push_back(std::byte{0});
  EXPECT_STREQ(InflateAll(longer, w.expected.size()).error.message, "bytes after the end of the stream");
}

TEST(InflateTest, Crc32MatchesTheBitwiseDefinitionAtEveryLengthAndAlignment) {
  std::vector<std::byte> data(300);
  std::mt19937 rng(6);
  for (std::byte& b : data) b = static_cast<std::byte>(rng());
  const auto bitwise = [](std::span<const std::byte> bytes) {
    uint32_t c = 0xFFFFFFFFu;
    for (std::byte b : bytes) {
      c ^= static_cast<uint32_t>(b);
      for (int k = 0; k < 8; ++k) c = (c & 1u) != 0 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    }
    return ~c;
  };
  const std::string check = "123456789";
  EXPECT_EQ(Crc32(0, std::as_bytes(std::span(check.data(), check.size()))), 0xCBF43926u);
  for (size_t start = 0; start < 16; ++start) {
    for (size_t len = 0; start + len <= data.size(); len += 1 + len / 8) {
      const std::span<const std::byte> part(data.data() + start, len);
      ASSERT_EQ(Crc32(0, part), bitwise(part)) << start << " " << len;
      const size_t half = len / 3;
      ASSERT_EQ(Crc32(Crc32(0, part.first(half)), part.subspan(half)), bitwise(part));
    }
  }
}

}  // namespace
}  // namespace stguard
