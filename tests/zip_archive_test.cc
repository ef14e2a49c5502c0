// SPDX-License-Identifier: Apache-2.0
// The strict ZIP reader: torch's layout accepted (data descriptors, FB padding, ZIP64 end
// records, ZIP64 sizes), and each rule's violation refused with its own code and offset.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstring>
#include <string>
#include <vector>

#include "zip/zip_archive.h"

namespace stguard {
namespace {

void Put16(std::string* s, uint16_t v) {
  s->push_back(static_cast<char>(v & 0xFF));
  s->push_back(static_cast<char>(v >> 8));
}
void Put32(std::string* s, uint32_t v) {
  Put16(s, static_cast<uint16_t>(v & 0xFFFF));
  Put16(s, static_cast<uint16_t>(v >> 16));
}
void Put64(std::string* s, uint64_t v) {
  Put32(s, static_cast<uint32_t>(v));
  Put32(s, static_cast<uint32_t>(v >> 32));
}

// ZipBuilder writes archives the way torch's writer does, with knobs to break each rule.
struct Entry {
  std::string name;
  std::string data;
  std::string local_name;        // empty: same as name
  uint16_t method = 0;
  uint16_t flags = 0x0808;       // data descriptor + UTF-8, as torch
  bool wrong_crc_in_cd = false;
  bool zip64_sizes = false;      // sizes in ZIP64 extra fields (0xFFFFFFFF in the headers)
  int64_t offset_delta = 0;      // added to the central directory's header offset
};

struct Built {
  std::string bytes;
  std::vector<uint64_t> header_offsets;
};

Built Build(const std::vector<Entry>& entries, bool zip64_end = true, std::string prefix = "",
            std::string suffix = "") {
  Built out;
  std::string& s = out.bytes;
  s = prefix;
  std::vector<uint32_t> crcs;
  for (const Entry& e : entries) {
    const uint32_t crc = static_cast<uint32_t>(
        crc32(0, reinterpret_cast<const Bytef*>(e.data.data()), static_cast<uInt>(e.data.size())));
    crcs.push_back(crc);
    out.header_offsets.push_back(s.size());
    const std::string& local_name = e.local_name.empty() ? e.name : e.local_name;
    Put32(&s, 0x04034b50);
    Put16(&s, 45);
    Put16(&s, e.flags);
    Put16(&s, e.method);
    Put32(&s, 0);  // time, date
    const bool descriptor = (e.flags & 8) != 0;
    Put32(&s, descriptor ? 0 : crc);
    const uint32_t size32 = e.zip64_sizes ? 0xFFFFFFFF : static_cast<uint32_t>(e.data.size());
    Put32(&s, descriptor && !e.zip64_sizes ? 0 : size32);
    Put32(&s, descriptor && !e.zip64_sizes ? 0 : size32);
    Put16(&s, static_cast<uint16_t>(local_name.size()));
    // Extra: "FB" padding so the data starts on a 64-byte boundary, plus ZIP64 if asked.
    std::string extra;
    if (e.zip64_sizes) {
      Put16(&extra, 1);
      Put16(&extra, 16);
      Put64(&extra, descriptor ? 0 : e.data.size());
      Put64(&extra, descriptor ? 0 : e.data.size());
    }
    size_t unpadded = s.size() + 2 + local_name.size() + extra.size() + 4;
    const size_t pad = (64 - unpadded % 64) % 64;
    Put16(&extra, 0x4246);
    Put16(&extra, static_cast<uint16_t>(pad));
    extra.append(pad, 'Z');
    Put16(&s, static_cast<uint16_t>(extra.size()));
    s += local_name;
    s += extra;
    s += e.data;
    if (descriptor) {
      Put32(&s, 0x08074b50);
      Put32(&s, crc);
      if (e.zip64_sizes) {
        Put64(&s, e.data.size());
        Put64(&s, e.data.size());
      } else {
        Put32(&s, static_cast<uint32_t>(e.data.size()));
        Put32(&s, static_cast<uint32_t>(e.data.size()));
      }
    }
  }
  const uint64_t directory = s.size();
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    Put32(&s, 0x02014b50);
    Put16(&s, 45);
    Put16(&s, 45);
    Put16(&s, e.flags);
    Put16(&s, e.method);
    Put32(&s, 0);
    Put32(&s, e.wrong_crc_in_cd ? crcs[i] ^ 1 : crcs[i]);
    const uint32_t size32 = e.zip64_sizes ? 0xFFFFFFFF : static_cast<uint32_t>(e.data.size());
    Put32(&s, size32);
    Put32(&s, size32);
    Put16(&s, static_cast<uint16_t>(e.name.size()));
    Put16(&s, e.zip64_sizes ? 20 : 0);
    Put16(&s, 0);
    Put16(&s, 0);
    Put16(&s, 0);
    Put32(&s, 0);
    Put32(&s, static_cast<uint32_t>(out.header_offsets[i] + e.offset_delta));
    s += e.name;
    if (e.zip64_sizes) {
      Put16(&s, 1);
      Put16(&s, 16);
      Put64(&s, e.data.size());
      Put64(&s, e.data.size());
    }
  }
  const uint64_t directory_len = s.size() - directory;
  if (zip64_end) {
    const uint64_t record = s.size();
    Put32(&s, 0x06064b50);
    Put64(&s, 44);
    Put16(&s, 45);
    Put16(&s, 45);
    Put32(&s, 0);
    Put32(&s, 0);
    Put64(&s, entries.size());
    Put64(&s, entries.size());
    Put64(&s, directory_len);
    Put64(&s, directory);
    Put32(&s, 0x07064b50);
    Put32(&s, 0);
    Put64(&s, record);
    Put32(&s, 1);
  }
  Put32(&s, 0x06054b50);
  Put16(&s, 0);
  Put16(&s, 0);
  Put16(&s, static_cast<uint16_t>(entries.size()));
  Put16(&s, static_cast<uint16_t>(entries.size()));
  Put32(&s, static_cast<uint32_t>(directory_len));
  Put32(&s, static_cast<uint32_t>(directory));
  Put16(&s, 0);
  s += suffix;
  return out;
}

std::vector<Entry> TorchLike() {
  return {{"archive/data.pkl", std::string("\x80\x02}.", 4)},
          {"archive/data/0", std::string(24, '\x01')},
          {"archive/version", "3\n"}};
}

Result<ZipArchive> OpenText(const std::string& bytes) {
  return ZipArchive::Open(std::as_bytes(std::span(bytes.data(), bytes.size())));
}

ErrorCode CodeOf(const std::string& bytes) {
  Result<ZipArchive> archive = OpenText(bytes);
  return archive.ok() ? ErrorCode::kOk : archive.error().code;
}

TEST(ZipArchiveTest, AcceptsTorchLayoutAndVerifiesCrc) {
  const Built built = Build(TorchLike());
  Result<ZipArchive> archive = OpenText(built.bytes);
  ASSERT_TRUE(archive.ok()) << archive.error().ToString();
  EXPECT_EQ(archive->folder(), "archive");
  const ZipRecord* data = archive->Find("data/0");
  ASSERT_NE(data, nullptr);
  EXPECT_EQ(data->size, 24u);
  EXPECT_EQ(data->data_offset % 64, 0u);
  EXPECT_TRUE(archive->VerifyCrc(*data).ok());
  EXPECT_EQ(archive->Find("data/1"), nullptr);
}

TEST(ZipArchiveTest, AcceptsClassicEndRecordAndAnyFolderName) {
  std::vector<Entry> entries = TorchLike();
  for (Entry& e : entries) e.name.replace(0, 7, "my_model");
  Result<ZipArchive> archive = OpenText(Build(entries, /*zip64_end=*/false).bytes);
  ASSERT_TRUE(archive.ok()) << archive.error().ToString();
  EXPECT_EQ(archive->folder(), "my_model");
}

TEST(ZipArchiveTest, AcceptsZip64Sizes) {
  std::vector<Entry> entries = TorchLike();
  entries[1].zip64_sizes = true;
  Result<ZipArchive> archive = OpenText(Build(entries).bytes);
  ASSERT_TRUE(archive.ok()) << archive.error().ToString();
  EXPECT_EQ(archive->Find("data/0")->size, 24u);
}

TEST(ZipArchiveTest, AcceptsRecordsWithoutDataDescriptor) {
  std::vector<Entry> entries = TorchLike();
  for (Entry& e : entries) e.flags = 0;
  EXPECT_EQ(CodeOf(Build(entries).bytes), ErrorCode::kOk);
}

TEST(ZipArchiveTest, RefusesCompressedAndEncrypted) {
  std::vector<Entry> entries = TorchLike();
  entries[1].method = 8;
  EXPECT_EQ(CodeOf(Build(entries).bytes), ErrorCode::kZipUnsupported);
  entries = TorchLike();
  entries[1].flags |= 1;
  EXPECT_EQ(CodeOf(Build(entries).bytes), ErrorCode::kZipUnsupported);
}

TEST(ZipArchiveTest, RefusesLocalNameOtherThanCentralName) {
  std::vector<Entry> entries = TorchLike();
  entries[1].local_name = "archive/data/9";
  Result<ZipArchive> archive = OpenText(Build(entries).bytes);
  ASSERT_FALSE(archive.ok());
  EXPECT_EQ(archive.error().code, ErrorCode::kZipHeaderMismatch);
  EXPECT_EQ(archive.error().offset, Build(TorchLike()).header_offsets[1]);
}

TEST(ZipArchiveTest, RefusesDescriptorCrcOtherThanCentral) {
  std::vector<Entry> entries = TorchLike();
  entries[2].wrong_crc_in_cd = true;
  EXPECT_EQ(CodeOf(Build(entries).bytes), ErrorCode::kZipHeaderMismatch);
}

TEST(ZipArchiveTest, RefusesDuplicateNames) {
  std::vector<Entry> entries = TorchLike();
  entries[2].name = "archive/data.pkl";
  EXPECT_EQ(CodeOf(Build(entries).bytes), ErrorCode::kZipDuplicateName);
}

TEST(ZipArchiveTest, RefusesOverlapGapsAndGarbage) {
  std::vector<Entry> entries = TorchLike();
  entries[2].offset_delta = -static_cast<int64_t>(Build(TorchLike()).header_offsets[2] -
                                                  Build(TorchLike()).header_offsets[1]);
  EXPECT_EQ(CodeOf(Build(entries).bytes), ErrorCode::kZipLayout);  // two entries, one header
  std::string trailing = Build(TorchLike(), true, "", "junk").bytes;
  EXPECT_EQ(CodeOf(trailing), ErrorCode::kZipFormat);
  const std::string good = Build(TorchLike()).bytes;
  EXPECT_EQ(CodeOf(good.substr(0, good.size() - 1)), ErrorCode::kZipFormat);
  EXPECT_EQ(CodeOf(good.substr(0, good.size() / 2)), ErrorCode::kZipFormat);
}

TEST(ZipArchiveTest, RefusesLeadingBytes) {
  // Offsets shifted with the prefix: every record is in place, but bytes precede the first.
  std::vector<Entry> entries = TorchLike();
  const std::string bytes = Build(entries, true, std::string(64, 'J')).bytes;
  Result<ZipArchive> archive = OpenText(bytes);
  ASSERT_FALSE(archive.ok());
  EXPECT_EQ(archive.error().code, ErrorCode::kZipLayout);
  EXPECT_EQ(archive.error().offset, 0u);
}

TEST(ZipArchiveTest, RefusesTwoFoldersUnsafeNamesAndMissingPickle) {
  std::vector<Entry> entries = TorchLike();
  entries[2].name = "other/version";
  entries[2].local_name = "";
  EXPECT_EQ(CodeOf(Build(entries).bytes), ErrorCode::kZipBadName);
  entries = TorchLike();
  entries[2].name = "archive/../version";
  EXPECT_EQ(CodeOf(Build(entries).bytes), ErrorCode::kZipBadName);
  entries = TorchLike();
  entries[2].name = "version";
  EXPECT_EQ(CodeOf(Build(entries).bytes), ErrorCode::kZipBadName);
  entries = TorchLike();
  entries[0].name = "archive/data.pk";
  EXPECT_EQ(CodeOf(Build(entries).bytes), ErrorCode::kZipMissingRecord);
}

TEST(ZipArchiveTest, ChecksumMismatchIsFoundWhenRead) {
  std::string bytes = Build(TorchLike()).bytes;
  Result<ZipArchive> clean = OpenText(bytes);
  ASSERT_TRUE(clean.ok());
  const uint64_t at = clean->Find("data/0")->data_offset;
  bytes[at] = '\x02';  // same length, other bytes: the structure still holds
  Result<ZipArchive> archive = OpenText(bytes);
  ASSERT_TRUE(archive.ok());
  const Error error = archive->VerifyCrc(*archive->Find("data/0"));
  EXPECT_EQ(error.code, ErrorCode::kZipChecksum);
  EXPECT_EQ(error.offset, at);
}

}  // namespace
}  // namespace stguard
