// SPDX-License-Identifier: Apache-2.0
// The tar-header test torch.load applies first: number fields as tarfile.nti reads them
// (octal text, base-256), both checksums, near misses, and the file-level refusal.
#include "sniff/tar_probe.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "stguard/torch_checkpoint.h"

namespace stguard {
namespace {

using namespace std::string_literals;

std::span<const std::byte> Bytes(const std::string& s) {
  return std::as_bytes(std::span(s.data(), s.size()));
}

std::optional<int64_t> Number(const std::string& field) { return ParseTarNumber(Bytes(field)); }

TEST(TarProbeTest, ReadsOctalFieldsAsPythonIntDoes) {
  EXPECT_EQ(Number("0000644\0"s), 0644);
  EXPECT_EQ(Number("\0\0\0\0\0\0\0\0"s), 0);     // empty text reads as 0
  EXPECT_EQ(Number("   \0garbage"s), 0);         // text stops at the first NUL
  EXPECT_EQ(Number(" 17 \0"s), 017);             // surrounding spaces are stripped
  EXPECT_EQ(Number("\x1c" "17\x1f\0"s), 017);    // Python's whitespace includes 0x1c-0x1f
  EXPECT_EQ(Number("+17\0"s), 017);
  EXPECT_EQ(Number("-17\0"s), -017);
  EXPECT_EQ(Number("0o17\0"s), 017);
  EXPECT_EQ(Number("0O_17\0"s), 017);
  EXPECT_EQ(Number("1_7\0"s), 017);
  // What int(text, 8) refuses: tarfile raises InvalidHeaderError.
  for (const std::string& bad : {"8\0"s, "1 7\0"s, "_17\0"s, "17_\0"s, "1__7\0"s, "0o\0"s,
                                 "0o__7\0"s, "+ 7\0"s, "0x7\0"s, "7\xc3\xa9\0"s, "--7\0"s}) {
    EXPECT_FALSE(Number(bad).has_value()) << bad;
  }
}

TEST(TarProbeTest, ReadsBase256Fields) {
  EXPECT_EQ(Number("\x80\0\0\0\0\0\x01\x02"s), 0x0102);
  EXPECT_EQ(Number("\xff\xff\xff\xff\xff\xff\xff\xfe"s), -2);
  EXPECT_EQ(Number("\xff\0\0\0\0\0\0\0"s), -(int64_t{1} << 56));
}

// Header builds a 512-byte block (name "x", one byte `high` at 300) whose checksum field
// holds its unsigned sum (or signed, with `use_signed`) plus `delta`, printed by `format`.
std::string Header(const char* format, long long delta = 0, char high = 0,
                   bool use_signed = false) {
  std::string block(512, '\0');
  block[0] = 'x';
  block[300] = high;
  const long long base = 256 + 'x';
  const long long sum = use_signed ? base + static_cast<signed char>(high)
                                   : base + static_cast<unsigned char>(high);
  char text[32];
  const int len = std::snprintf(text, sizeof(text), format, sum + delta);
  block.replace(148, std::min(len, 8), text, std::min(len, 8));
  return block;
}

TEST(TarProbeTest, ChecksumAcceptedAsTarfileDoes) {
  EXPECT_TRUE(PassesTarHeaderTest(Bytes(Header("%06llo"))));       // as tarfile writes it
  EXPECT_TRUE(PassesTarHeaderTest(Bytes(Header("%07llo"))));
  EXPECT_TRUE(PassesTarHeaderTest(Bytes(Header(" %llo "))));
  EXPECT_TRUE(PassesTarHeaderTest(Bytes(Header("0o%llo"))));
  // A byte >= 0x80 makes the two sums differ: either one is accepted.
  EXPECT_TRUE(PassesTarHeaderTest(Bytes(Header("%06llo", 0, '\xf0'))));
  EXPECT_TRUE(PassesTarHeaderTest(Bytes(Header("%06llo", 0, '\xf0', true))));
  // Base-256 checksum.
  std::string block = Header("%06llo");
  const int sum = 256 + 'x';
  const std::string base256 =
      "\x80\0\0\0\0\0"s + static_cast<char>(sum >> 8) + static_cast<char>(sum & 0xff);
  block.replace(148, 8, base256);
  EXPECT_TRUE(PassesTarHeaderTest(Bytes(block)));
  // A block of NULs opens as an empty archive.
  EXPECT_TRUE(PassesTarHeaderTest(Bytes(std::string(512, '\0'))));
}

TEST(TarProbeTest, NearMissesAreNotTar) {
  EXPECT_FALSE(PassesTarHeaderTest(Bytes(Header("%06llo", 1))));
  EXPECT_FALSE(PassesTarHeaderTest(Bytes(Header("%06llo", -1))));
  std::string changed = Header("%06llo", 0, '\xf0');
  changed[300] = '\xf1';  // one byte changed after the checksum was written
  EXPECT_FALSE(PassesTarHeaderTest(Bytes(changed)));
  EXPECT_FALSE(PassesTarHeaderTest(Bytes(Header("%06llo8"))));           // not octal
  EXPECT_FALSE(PassesTarHeaderTest(Bytes(Header("%06llo").substr(0, 511))));  // short
  std::string zeros_then_one(512, '\0');
  zeros_then_one[511] = '\x01';
  EXPECT_FALSE(PassesTarHeaderTest(Bytes(zeros_then_one)));
}

TEST(TarProbeTest, TorchReaderRefusesTarShapedFilesWhateverElseTheyAre) {
  // A header whose name begins with a raw pickle's bytes, and the same with the checksum
  // off by one (an ordinary, if odd, pickle: RawPickle).
  std::string pickle = "\x80\x02}."s;
  std::string block(512, '\0');
  block.replace(0, pickle.size(), pickle);
  long long sum = 256;
  for (unsigned char c : pickle) sum += c;
  char text[32];
  std::snprintf(text, sizeof(text), "%06llo", sum);
  block.replace(148, 6, text);
  const TorchScanReport tar = ScanTorchBytes(Bytes(block));
  EXPECT_EQ(tar.error.code, ErrorCode::kTarAmbiguous);
  EXPECT_EQ(tar.error.offset, 0u);
  block[148 + 5] = static_cast<char>(block[148 + 5] + 1);
  EXPECT_NE(ScanTorchBytes(Bytes(block)).error.code, ErrorCode::kTarAmbiguous);
}

}  // namespace
}  // namespace stguard
