// SPDX-License-Identifier: Apache-2.0
// The strict ZIP reader: torch's layout accepted (data descriptors, FB padding, ZIP64 end
// records, ZIP64 sizes), and each rule's violation refused with its own code and offset.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "byte_source/recording_source.h"
#include "stguard/mapped_file.h"
#include "support/test_files.h"
#include "support/temp_dir.h"
#include "torch/zip_records.h"
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
  uint16_t disk = 0;             // the central directory's disk number
  bool zip64_offset = false;     // header offset in a ZIP64 extra field (0xFFFFFFFF)
  uint16_t version_needed = 45;  // the central directory's "version needed to extract"
  int32_t local_flags = -1;      // the local header's flags (-1: the same as flags)
};

struct Built {
  std::string bytes;
  std::vector<uint64_t> header_offsets;
};

// `comment` is the end record's comment; `suffix` follows it without being counted.
Built Build(const std::vector<Entry>& entries, bool zip64_end = true, std::string prefix = "",
            std::string suffix = "", std::string comment = "") {
  Built out;
  std::string& s = out.bytes;
  s = prefix;
  std::vector<uint32_t> crcs;
  for (const Entry& e : entries) {
    const uint32_t crc = Crc32(0, std::as_bytes(std::span(e.data.data(), e.data.size())));
    crcs.push_back(crc);
    out.header_offsets.push_back(s.size());
    const std::string& local_name = e.local_name.empty() ? e.name : e.local_name;
    Put32(&s, 0x04034b50);
    Put16(&s, 45);
    Put16(&s, e.local_flags < 0 ? e.flags : static_cast<uint16_t>(e.local_flags));
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
    Put16(&s, e.version_needed);
    Put16(&s, e.flags);
    Put16(&s, e.method);
    Put32(&s, 0);
    Put32(&s, e.wrong_crc_in_cd ? crcs[i] ^ 1 : crcs[i]);
    const uint32_t size32 = e.zip64_sizes ? 0xFFFFFFFF : static_cast<uint32_t>(e.data.size());
    Put32(&s, size32);
    Put32(&s, size32);
    Put16(&s, static_cast<uint16_t>(e.name.size()));
    const uint16_t zip64_len = (e.zip64_sizes ? 16 : 0) + (e.zip64_offset ? 8 : 0);
    Put16(&s, zip64_len == 0 ? 0 : 4 + zip64_len);
    Put16(&s, 0);
    Put16(&s, e.disk);
    Put16(&s, 0);
    Put32(&s, 0);
    const uint64_t offset = out.header_offsets[i] + e.offset_delta;
    Put32(&s, e.zip64_offset ? 0xFFFFFFFF : static_cast<uint32_t>(offset));
    s += e.name;
    if (zip64_len != 0) {
      Put16(&s, 1);
      Put16(&s, zip64_len);
      if (e.zip64_sizes) {
        Put64(&s, e.data.size());
        Put64(&s, e.data.size());
      }
      if (e.zip64_offset) Put64(&s, offset);
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
  Put16(&s, static_cast<uint16_t>(comment.size()));
  s += comment;
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

TEST(ZipArchiveTest, RefusesAnEndRecordComment) {
  // torch's reader takes the last end signature it meets scanning back: a second end
  // record in the comment (its own comment length not reaching the end) would send it to
  // another central directory. No comment at all is accepted; any comment is refused.
  std::string hidden_end;
  Put32(&hidden_end, 0x06054b50);
  hidden_end.append(16, '\0');
  Put16(&hidden_end, 0);
  for (const std::string& comment : {hidden_end + "xy", std::string("x")}) {
    const Built built = Build(TorchLike(), true, "", "", comment);
    Result<ZipArchive> archive = OpenText(built.bytes);
    ASSERT_FALSE(archive.ok());
    EXPECT_EQ(archive.error().code, ErrorCode::kZipLayout);
    EXPECT_EQ(archive.error().offset, built.bytes.size() - comment.size());
  }
  EXPECT_EQ(CodeOf(Build(TorchLike(), true, "", "", "").bytes), ErrorCode::kOk);
}

TEST(ZipArchiveTest, RefusesNamesDifferingOnlyInCase) {
  for (const char* twin : {"archive/DATA.PKL", "archive/Data.pkl"}) {
    std::vector<Entry> entries = TorchLike();
    entries.push_back({twin, "x"});
    Result<ZipArchive> archive = OpenText(Build(entries).bytes);
    ASSERT_FALSE(archive.ok());
    EXPECT_EQ(archive.error().code, ErrorCode::kZipDuplicateName);
    EXPECT_NE(archive.error().context.find(twin), std::string::npos);
  }
  // Only ASCII case folds (as in torch's lookup): data/a beside data/b, or beside a name
  // differing in a non-ASCII letter, stays accepted.
  std::vector<Entry> entries = TorchLike();
  entries.push_back({"archive/data/a", "x"});
  entries.push_back({"archive/data/b", "y"});
  entries.push_back({"archive/data/\xc3\xa9", "z"});
  entries.push_back({"archive/data/\xc3\x89", "w"});
  EXPECT_EQ(CodeOf(Build(entries).bytes), ErrorCode::kOk);
  entries.push_back({"archive/data/A", "v"});
  EXPECT_EQ(CodeOf(Build(entries).bytes), ErrorCode::kZipDuplicateName);
}

TEST(ZipArchiveTest, Zip64OffsetsOnlyWhereTorchsReaderFollowsThem) {
  // torch's reader checks the 32-bit offset plus the 32-bit size before it reads ZIP64
  // values: an escaped offset beside a 32-bit size fails that check in a file under 4 GiB.
  std::vector<Entry> entries = TorchLike();
  entries[1].zip64_offset = true;
  Result<ZipArchive> archive = OpenText(Build(entries).bytes);
  ASSERT_FALSE(archive.ok());
  EXPECT_EQ(archive.error().code, ErrorCode::kZipFormat);
  EXPECT_NE(std::string(archive.error().message).find("0xFFFFFFFF"), std::string::npos);
  // With the sizes escaped too, that check is skipped and the ZIP64 values are used.
  entries[1].zip64_sizes = true;
  archive = OpenText(Build(entries).bytes);
  ASSERT_TRUE(archive.ok()) << archive.error().ToString();
  EXPECT_EQ(archive->Find("data/0")->header_offset, Build(TorchLike()).header_offsets[1]);
}

TEST(ZipArchiveTest, RefusesEntriesOnAnotherDisk) {
  // torch's reader refuses disk 0xFFFF even with a ZIP64 field.
  std::vector<Entry> entries = TorchLike();
  entries[1].disk = 0xFFFF;
  entries[1].zip64_sizes = true;
  EXPECT_EQ(CodeOf(Build(entries).bytes), ErrorCode::kZipUnsupported);
  entries[1].disk = 0;
  EXPECT_EQ(CodeOf(Build(entries).bytes), ErrorCode::kOk);
}

TEST(ZipArchiveTest, RefusesACentralDirectoryOf4GiB) {
  // torch's reader refuses a central directory of 4 GiB or more. A sparse file: ZIP64 end
  // records at the end whose directory fills the 4 GiB hole before them (no entry); only
  // the last page is read.
  testing::TempDir dir;
  const std::string path = dir.File("huge.pt");
  const uint64_t directory_len = uint64_t{1} << 32;
  std::string ends;
  Put32(&ends, 0x06064b50);
  Put64(&ends, 44);
  Put16(&ends, 45);
  Put16(&ends, 45);
  Put64(&ends, 0);
  Put64(&ends, 0);  // entries on this disk
  Put64(&ends, 0);  // entries
  Put64(&ends, directory_len);
  Put64(&ends, 0);  // directory offset
  Put32(&ends, 0x07064b50);
  Put32(&ends, 0);
  Put64(&ends, directory_len);
  Put32(&ends, 1);
  Put32(&ends, 0x06054b50);
  Put32(&ends, 0);
  Put32(&ends, 0);
  Put32(&ends, 0xFFFFFFFF);
  Put32(&ends, 0xFFFFFFFF);
  Put16(&ends, 0);
  const int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, ends.data(), ends.size(), static_cast<off_t>(directory_len)),
            static_cast<ssize_t>(ends.size()));
  ::close(fd);
  Result<std::unique_ptr<MappedFile>> file = MappedFile::Open(path);
  ASSERT_TRUE(file.ok()) << file.error().ToString();
  Result<ZipArchive> archive = ZipArchive::Open((*file)->bytes());
  ASSERT_FALSE(archive.ok());
  EXPECT_EQ(archive.error().code, ErrorCode::kZipUnsupported) << archive.error().ToString();
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

// The records torch.save writes, and their values (torch/zip_records.h).
ErrorCode RecordsCode(const std::vector<Entry>& entries, Error* error = nullptr) {
  const std::string bytes = Build(entries).bytes;
  Result<ZipArchive> archive = OpenText(bytes);
  if (!archive.ok()) return archive.error().code;
  const Error result = CheckTorchRecords(*archive);
  if (error != nullptr) *error = result;
  return result.code;
}

std::vector<Entry> Torch2Like() {
  std::vector<Entry> entries = TorchLike();
  entries.push_back({"archive/.format_version", "1"});
  entries.push_back({"archive/.storage_alignment", "64"});
  entries.push_back({"archive/byteorder", "little"});
  entries.push_back({"archive/.data/serialization_id",
                     "0123456789012345678901234567890123456789"});
  return entries;
}

TEST(TorchRecordsTest, AcceptsWhatTorchSaveWrites) {
  EXPECT_EQ(RecordsCode(TorchLike()), ErrorCode::kOk);
  EXPECT_EQ(RecordsCode(Torch2Like()), ErrorCode::kOk);
  std::vector<Entry> entries = TorchLike();
  entries[2].name = "archive/.data/version";  // the writer's other name for it
  EXPECT_EQ(RecordsCode(entries), ErrorCode::kOk);
  entries.push_back({"archive/version", "3\n"});
  EXPECT_EQ(RecordsCode(entries), ErrorCode::kOk);
}

TEST(TorchRecordsTest, RefusesRecordsTorchSaveNeverWrites) {
  for (const char* name : {"archive/constants.pkl", "archive/code/__torch__.py",
                           "archive/data/0/more", "archive/extra", "archive/DATA/1"}) {
    std::vector<Entry> entries = TorchLike();
    entries.push_back({name, "x"});
    Error error;
    EXPECT_EQ(RecordsCode(entries, &error), ErrorCode::kZipUnexpectedRecord) << name;
    EXPECT_EQ(error.context, name);
    EXPECT_EQ(error.offset, Build(entries).header_offsets.back());
  }
}

TEST(TorchRecordsTest, VersionsTorchReads) {
  for (const char* good : {"1\n", "3\n", "10\n"}) {
    std::vector<Entry> entries = TorchLike();
    entries[2].data = good;
    EXPECT_EQ(RecordsCode(entries), ErrorCode::kOk) << good;
  }
  for (const char* bad : {"0\n", "11\n", "99\n", "3", "03\n", "+3\n", " 3\n", "3abc",
                          "-1\n", "", "18446744073709551619\n"}) {
    std::vector<Entry> entries = TorchLike();
    entries[2].data = bad;
    Error error;
    EXPECT_EQ(RecordsCode(entries, &error), ErrorCode::kZipUnsupportedVersion) << bad;
    EXPECT_EQ(error.context.rfind("archive/version", 0), 0u);
  }
  std::vector<Entry> entries = TorchLike();
  entries.pop_back();
  EXPECT_EQ(RecordsCode(entries), ErrorCode::kZipMissingRecord);
  entries = TorchLike();
  entries.push_back({"archive/.data/version", "4\n"});
  EXPECT_EQ(RecordsCode(entries), ErrorCode::kZipUnsupportedVersion);  // two versions
}

TEST(TorchRecordsTest, FormatRecordValues) {
  auto with = [](const char* name, std::string value) {
    std::vector<Entry> entries = Torch2Like();
    for (Entry& e : entries) {
      if (e.name == name) e.data = value;
    }
    return RecordsCode(entries);
  };
  EXPECT_EQ(with("archive/byteorder", "big"), ErrorCode::kStorageMismatch);
  EXPECT_EQ(with("archive/byteorder", "little\n"), ErrorCode::kStorageMismatch);
  EXPECT_EQ(with("archive/byteorder", std::string(100, 'l')), ErrorCode::kStorageMismatch);
  EXPECT_EQ(with("archive/.format_version", "2"), ErrorCode::kZipUnsupportedVersion);
  EXPECT_EQ(with("archive/.storage_alignment", "4096"), ErrorCode::kOk);
  EXPECT_EQ(with("archive/.storage_alignment", "48"), ErrorCode::kZipUnsupportedVersion);
  EXPECT_EQ(with("archive/.storage_alignment", "0"), ErrorCode::kZipUnsupportedVersion);
  EXPECT_EQ(with("archive/.storage_alignment", "064"), ErrorCode::kZipUnsupportedVersion);
  EXPECT_EQ(with("archive/.data/serialization_id", "12ab"), ErrorCode::kZipUnsupportedVersion);
  EXPECT_EQ(with("archive/.data/serialization_id", std::string(65, '1')),
            ErrorCode::kZipUnsupportedVersion);
}

TEST(TorchRecordsTest, FormatRecordCrcIsChecked) {
  // "3\n" changed to "4\n" in place: the structure holds, the version is one torch
  // reads, but its CRC-32 fails, so torch refuses the archive.
  std::string bytes = Build(TorchLike()).bytes;
  const uint64_t at = OpenText(bytes)->Find("version")->data_offset;
  ASSERT_EQ(bytes[at], '3');
  bytes[at] = '4';
  Result<ZipArchive> archive = OpenText(bytes);
  ASSERT_TRUE(archive.ok()) << archive.error().ToString();
  const Error error = CheckTorchRecords(*archive);
  EXPECT_EQ(error.code, ErrorCode::kZipChecksum);
  EXPECT_EQ(error.offset, at);
}

}  // namespace
}  // namespace stguard

namespace stguard {
namespace {

Result<ZipArchive> OpenNpz(const std::string& bytes) {
  return ZipArchive::Open(std::as_bytes(std::span(bytes.data(), bytes.size())),
                          ZipFlavor::kNpz);
}

ErrorCode NpzCodeOf(const std::vector<Entry>& entries) {
  Result<ZipArchive> archive = OpenNpz(Build(entries).bytes);
  return archive.ok() ? ErrorCode::kOk : archive.error().code;
}

TEST(ZipArchiveNpzTest, AcceptsPlainNamesWithoutFolderOrDataPkl) {
  const std::vector<Entry> entries = {{"a.npy", "x"}, {"A.npy", "y"}};
  const Built built = Build(entries);  // the archive views these bytes: keep them alive
  Result<ZipArchive> archive = OpenNpz(built.bytes);
  ASSERT_TRUE(archive.ok()) << archive.error().ToString();
  ASSERT_NE(archive->Find("A.npy"), nullptr);  // case matters to numpy's keys
  EXPECT_TRUE(archive->VerifyCrc(*archive->Find("a.npy")).ok());
  // The torch flavor refuses the same archive (no folder) and folds case.
  EXPECT_EQ(CodeOf(Build(entries).bytes), ErrorCode::kZipBadName);
}

TEST(ZipArchiveNpzTest, RefusesNamesAnExtractorCouldPlaceElsewhere) {
  const std::vector<std::string> names = {"a/b.npy",   "../b.npy", "/b.npy",
                                          "a\\b.npy",  "a..b.npy", "",
                                          "a\x7f.npy", "a\nb.npy", std::string(252, 'a') + ".npy"};
  for (const std::string& name : names) {
    EXPECT_EQ(NpzCodeOf({{name, "x"}}), ErrorCode::kNpzMemberName) << name;
  }
  // The longest plain name (255 bytes) is a member like any other.
  EXPECT_EQ(NpzCodeOf({{std::string(251, 'a') + ".npy", "x"}}), ErrorCode::kOk);
  EXPECT_EQ(NpzCodeOf({{"a.npy", "x"}, {"a.npy", "y"}}), ErrorCode::kZipDuplicateName);
}

// NpzEntry is a member named `name` with `flags` (0: no UTF-8 flag, as zipfile writes an
// ASCII name; 0x800: flagged UTF-8).
Entry NpzEntry(std::string name, uint16_t flags) {
  Entry entry{std::move(name), "x"};
  entry.flags = flags;
  return entry;
}

TEST(ZipArchiveNpzTest, NamesAreWhatPythonsZipfileDecodes) {
  // ASCII names, flagged or not, and UTF-8 names flagged (zipfile flags every non-ASCII
  // name it writes) mean their bytes.
  EXPECT_EQ(NpzCodeOf({NpzEntry("a.npy", 0), NpzEntry("b.npy", 0x800)}), ErrorCode::kOk);
  EXPECT_EQ(NpzCodeOf({NpzEntry("\xc3\xa9.npy", 0x800)}), ErrorCode::kOk);
  // Unflagged, zipfile decodes them as cp437: "\xc3\xa9" is not "\u00e9" to numpy, and
  // 0x82 is a valid cp437 name.
  for (const char* name : {"\xc3\xa9.npy", "\x82.npy", "a\xff.npy"}) {
    EXPECT_EQ(NpzCodeOf({NpzEntry(name, 0)}), ErrorCode::kNpzMemberName) << name;
  }
  // Flagged, zipfile decodes them as strict UTF-8 and fails.
  for (const char* name : {"\xff.npy", "\xc3.npy", "\xed\xa0\x80.npy", "\xc0\xaf.npy"}) {
    EXPECT_EQ(NpzCodeOf({NpzEntry(name, 0x800)}), ErrorCode::kNpzMemberName) << name;
  }
  // torch's reader compares names as bytes: the torch flavor keeps them.
  std::vector<Entry> torch = TorchLike();
  for (Entry& entry : torch) entry.name.insert(0, "\xc3\xa9");
  EXPECT_EQ(CodeOf(Build(torch).bytes), ErrorCode::kOk);
}

TEST(ZipArchiveNpzTest, RefusesALocalHeaderWhoseNameOrFlagDiffers) {
  // zipfile.open decodes the local name with the local flag and compares it with the
  // central one: "\u00e9" flagged centrally, cp437 locally, is BadZipFile.
  Entry entry = NpzEntry("\xc3\xa9.npy", 0x800);
  entry.local_flags = 0;
  EXPECT_EQ(NpzCodeOf({entry}), ErrorCode::kZipHeaderMismatch);
  Entry renamed = NpzEntry("a.npy", 0);
  renamed.local_name = "b.npy";
  EXPECT_EQ(NpzCodeOf({renamed}), ErrorCode::kZipHeaderMismatch);
}

TEST(ZipArchiveNpzTest, RefusesAVersionNeededAbovePythonsZipfiles) {
  // zipfile reads the field's low byte (the high one is "reserved") and refuses above 63.
  for (const uint16_t version : {20, 45, 63, 0x0A3F, 0xFF00}) {
    Entry entry = NpzEntry("a.npy", 0);
    entry.version_needed = version;
    EXPECT_EQ(NpzCodeOf({entry}), ErrorCode::kOk) << version;
  }
  for (const uint16_t version : {64, 0xFF, 0x0A40}) {
    Entry entry = NpzEntry("a.npy", 0);
    entry.version_needed = version;
    EXPECT_EQ(NpzCodeOf({entry}), ErrorCode::kZipUnsupported) << version;
  }
  // torch's reader (miniz) ignores the field.
  std::vector<Entry> torch = TorchLike();
  for (Entry& entry : torch) entry.version_needed = 0xFF;
  EXPECT_EQ(CodeOf(Build(torch).bytes), ErrorCode::kOk);
}

TEST(ZipArchiveNpzTest, RefusesMethodsOtherThanStoredAndDeflate) {
  for (uint16_t method : {12, 14, 9, 93}) {
    std::vector<Entry> entries = {{"a.npy", "x"}};
    entries[0].method = method;
    EXPECT_EQ(NpzCodeOf(entries), ErrorCode::kZipUnsupported) << method;
  }
}

}  // namespace
}  // namespace stguard

namespace stguard {
namespace {

// ---- by ranges: OpenSource applies Open's rules ------------------------------------------

std::vector<std::string> ZipCorpusFiles() {
  std::vector<std::string> files;
  for (const char* dir : {"fuzz_zip", "fuzz_npz", "fuzz_torch_checkpoint", "torch"}) {
    const std::filesystem::path root = std::filesystem::path(STGUARD_CORPUS_DIR) / dir;
    if (!std::filesystem::exists(root)) continue;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
      if (entry.is_regular_file()) files.push_back(entry.path().string());
    }
  }
  return files;
}

std::string Describe(const Result<ZipArchive>& archive) {
  return archive.ok() ? "ok"
                      : std::string(ErrorCodeName(archive.error().code)) + " @" +
                            std::to_string(archive.error().offset) + " " +
                            archive.error().message;
}

void ExpectSameArchive(const Result<ZipArchive>& whole, const Result<ZipArchive>& ranged,
                       const std::string& what) {
  ASSERT_EQ(whole.ok(), ranged.ok()) << what << "\n whole: " << Describe(whole)
                                     << "\n ranged: " << Describe(ranged);
  if (!whole.ok()) {
    EXPECT_EQ(whole.error().code, ranged.error().code) << what << ": " << Describe(ranged);
    EXPECT_EQ(whole.error().offset, ranged.error().offset) << what << ": " << Describe(ranged);
    EXPECT_EQ(whole.error().tensor, ranged.error().tensor) << what;
    return;
  }
  ASSERT_EQ(whole->records().size(), ranged->records().size()) << what;
  for (size_t k = 0; k < whole->records().size(); ++k) {
    const ZipRecord& a = whole->records()[k];
    const ZipRecord& b = ranged->records()[k];
    EXPECT_EQ(a.name, b.name) << what;
    EXPECT_EQ(a.data_offset, b.data_offset) << what;
    EXPECT_EQ(a.crc32, b.crc32) << what;
    EXPECT_TRUE(b.local_checked) << what;
    Result<std::span<const std::byte>> bytes = ranged->RecordBytes(b);
    ASSERT_TRUE(bytes.ok()) << what;
    EXPECT_TRUE(std::equal(bytes->begin(), bytes->end(), whole->Data(a).begin(),
                           whole->Data(a).end()))
        << what << " " << a.name;
  }
}

TEST(ZipArchiveSourceTest, OpenSourceEqualsOpenOnEveryZipOfTheCorpus) {
  size_t opened = 0;
  for (const std::string& path : ZipCorpusFiles()) {
    const std::string bytes = testing::ReadFileBytes(path);
    const std::span<const std::byte> span = std::as_bytes(std::span(bytes.data(), bytes.size()));
    const MemorySource memory(span);
    testing::RecordingSource remote(memory, /*remote=*/true);
    for (const ZipFlavor flavor : {ZipFlavor::kTorch, ZipFlavor::kNpz}) {
      const Result<ZipArchive> whole = ZipArchive::Open(span, flavor);
      // Locally every record is read; remotely those the filter wants (here: all).
      ExpectSameArchive(whole, ZipArchive::OpenSource(memory, flavor, {}), path);
      uint64_t unchecked = 1;
      ExpectSameArchive(
          whole,
          ZipArchive::OpenSource(remote, flavor, [](std::string_view) { return true; },
                                 &unchecked),
          path + " (remote)");
      EXPECT_EQ(unchecked, 0u) << path;
      opened += whole.ok();
    }
  }
  EXPECT_GT(opened, 20u);
}

TEST(ZipArchiveSourceTest, RemoteSkipsTheRecordsNotWantedAndCountsThem) {
  const Built built = Build(TorchLike());
  const std::span<const std::byte> span =
      std::as_bytes(std::span(built.bytes.data(), built.bytes.size()));
  const MemorySource memory(span);
  testing::RecordingSource remote(memory, /*remote=*/true);
  uint64_t unchecked = 0;
  const auto storages_skipped = [](std::string_view path) { return !path.starts_with("data/"); };
  Result<ZipArchive> archive =
      ZipArchive::OpenSource(remote, ZipFlavor::kTorch, storages_skipped, &unchecked);
  ASSERT_TRUE(archive.ok()) << Describe(archive);
  EXPECT_EQ(unchecked, 1u);
  const ZipRecord* storage = archive->Find("data/0");
  ASSERT_NE(storage, nullptr);
  EXPECT_FALSE(storage->local_checked);
  EXPECT_EQ(archive->RecordBytes(*storage).error().code, ErrorCode::kInvalidArgument);
  EXPECT_TRUE(archive->VerifyCrc(*archive->Find("data.pkl")).ok());
  // Tail, directory, one run for data.pkl, one for the records after the storage.
  EXPECT_LE(remote.num_reads(), 4u);
  // The same filter on a local source reads everything.
  Result<ZipArchive> local =
      ZipArchive::OpenSource(memory, ZipFlavor::kTorch, storages_skipped, &unchecked);
  ASSERT_TRUE(local.ok());
  EXPECT_EQ(unchecked, 0u);
  EXPECT_TRUE(local->Find("data/0")->local_checked);
}

TEST(ZipArchiveSourceTest, RemoteStillRefusesARecordClaimedInsideASkippedStorage) {
  std::vector<Entry> entries = TorchLike();
  // version's entry claims its header 40 bytes into data/0's record (inside its name):
  // less room than data/0's header, name, data and descriptor need, which the central
  // directory alone shows, so the remote read refuses it as the local one does.
  const Built plain = Build(entries);
  entries[2].offset_delta =
      static_cast<int64_t>(plain.header_offsets[1] + 40) -
      static_cast<int64_t>(plain.header_offsets[2]);
  const Built built = Build(entries);
  const std::span<const std::byte> span =
      std::as_bytes(std::span(built.bytes.data(), built.bytes.size()));
  const MemorySource memory(span);
  testing::RecordingSource remote(memory, /*remote=*/true);
  const Result<ZipArchive> whole = ZipArchive::Open(span);
  ASSERT_FALSE(whole.ok());
  EXPECT_EQ(whole.error().code, ErrorCode::kZipLayout) << Describe(whole);
  uint64_t unchecked = 0;
  const Result<ZipArchive> ranged = ZipArchive::OpenSource(
      remote, ZipFlavor::kTorch,
      [](std::string_view path) { return !path.starts_with("data/"); }, &unchecked);
  ASSERT_FALSE(ranged.ok());
  EXPECT_EQ(unchecked, 1u);
  EXPECT_EQ(ranged.error().code, whole.error().code) << Describe(ranged);
  EXPECT_EQ(ranged.error().offset, whole.error().offset) << Describe(ranged);
  EXPECT_EQ(ranged.error().message, whole.error().message) << Describe(ranged);
}

}  // namespace
}  // namespace stguard
