// SPDX-License-Identifier: Apache-2.0
// CheckSource: the same verdict as CheckFile for the same bytes on every corpus file, the
// per-format read budgets, and sources that fail or lie about their size.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "byte_source/npz_builder.h"
#include "byte_source/recording_source.h"
#include "byte_source/torch_zip_builder.h"
#include "stguard/byte_source.h"
#include "stguard/mapped_file.h"
#include "stguard/npy.h"
#include "stguard/npz.h"
#include "stguard/reader.h"
#include "stguard/sniff.h"
#include "stguard/verdict.h"
#include "stguard/gguf.h"
#include "support/gguf_encoder.h"
#include "support/sparse_checkpoint.h"
#include "support/temp_dir.h"
#include "support/test_files.h"

namespace stguard {
namespace {

using testing::RecordingSource;

std::vector<std::string> CorpusFiles() {
  std::vector<std::string> files;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(STGUARD_CORPUS_DIR)) {
    if (entry.is_regular_file()) files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::span<const std::byte> AsBytes(const std::string& text) {
  return std::as_bytes(std::span<const char>(text.data(), text.size()));
}

std::string Describe(const CheckResult& result) {
  return std::string(VerdictName(result.verdict)) + " " + std::string(FormatName(result.format)) +
         " " + std::string(ErrorCodeName(result.error.code)) + " @" +
         std::to_string(result.error.offset) + " [" + result.error.tensor + "] " +
         result.error.message;
}

// SkippedRemotely says whether a file's error (checked locally) can come from a check a
// remote source skips: a PyTorch storage record's local header, the tiling around it, or
// its CRC-32 (a ZIP's other records are read remotely too, with the same rules); an npz
// member's CRC-32 and a deflated member's stream past its .npy header (its local header and
// .npy header are read remotely too).
bool SkippedRemotely(const CheckResult& local) {
  if (local.format == Format::kNpz) {
    return local.error.code == ErrorCode::kZipChecksum ||
           local.error.code == ErrorCode::kDeflateData;
  }
  if (local.format != Format::kPytorchZip) return false;
  switch (local.error.code) {
    case ErrorCode::kZipFormat:
    case ErrorCode::kZipLayout:
    case ErrorCode::kZipHeaderMismatch:
    case ErrorCode::kZipChecksum:
      return true;
    default:
      return false;
  }
}

// NotesSkippedChecks says whether a remote result's notes name the checks it skipped: a
// PyTorch ZIP's storage records, an npz's members.
bool NotesSkippedChecks(const CheckResult& result) {
  return std::any_of(result.notes.begin(), result.notes.end(), [](const std::string& note) {
    return (note.find("storage record") != std::string::npos ||
            note.find("CRC-32s of") != std::string::npos) &&
           note.find("not read: the file is remote") != std::string::npos;
  });
}

void ExpectSameVerdict(const CheckResult& file, const CheckResult& source,
                       const std::string& path) {
  EXPECT_EQ(file.verdict, source.verdict) << path << "\n file:   " << Describe(file)
                                          << "\n source: " << Describe(source);
  EXPECT_EQ(file.format, source.format) << path;
  EXPECT_EQ(file.error.code, source.error.code) << path;
  EXPECT_EQ(file.error.offset, source.error.offset) << path;
  EXPECT_EQ(file.error.tensor, source.error.tensor) << path;
}

// ---- every corpus file: CheckSource == CheckFile ------------------------------------

TEST(CheckSourceTest, EqualsCheckFileOnEveryCorpusFile) {
  const std::vector<std::string> files = CorpusFiles();
  ASSERT_GT(files.size(), 1000u);
  size_t valid = 0;
  size_t skipped_remotely = 0;
  for (const std::string& path : files) {
    const CheckResult by_path = CheckFile(path);
    Result<std::unique_ptr<MappedFile>> file = MappedFile::OpenUnmapped(path);
    ASSERT_TRUE(file.ok()) << path;
    ExpectSameVerdict(by_path, CheckSource(**file, path), path);
    // Remote: the same verdict, but for the checks skipped (the notes say which).
    RecordingSource remote(**file, /*remote=*/true);
    const CheckResult by_range = CheckSource(remote, path);
    if (by_path.error.code == ErrorCode::kGgufNonZeroPadding) {
      // The padding is not read remotely: the file is valid there, or fails a later rule;
      // either way a note says the padding went unchecked.
      EXPECT_FALSE(by_range.notes.empty()) << path << "\n " << Describe(by_range);
      EXPECT_EQ(by_range.format, by_path.format) << path;
    } else if (SkippedRemotely(by_path) && NotesSkippedChecks(by_range)) {
      // A storage record's local header and CRC-32, an npz stored member's CRC-32, are not
      // read remotely: the file is valid there, or fails another rule; the note says what
      // went unchecked.
      ++skipped_remotely;
      EXPECT_EQ(by_range.format, by_path.format) << path;
    } else {
      ExpectSameVerdict(by_path, by_range, path);
    }
    valid += by_path.valid();
  }
  EXPECT_GT(valid, 50u);
  std::printf("%zu corpus files fail locally a check a remote read skips\n", skipped_remotely);
}

TEST(CheckSourceTest, MemorySourceEqualsCheckFile) {
  const std::string path = std::string(STGUARD_CORPUS_DIR) + "/sample.safetensors";
  const std::string bytes = testing::ReadFileBytes(path);
  const MemorySource source(AsBytes(bytes), "sample");
  const CheckResult result = CheckSource(source, "sample");
  ExpectSameVerdict(CheckFile(path), result, path);
  EXPECT_TRUE(result.valid());
  EXPECT_EQ(result.file, "sample");
}

// ---- request budgets ------------------------------------------------------------------

std::string SafetensorsFile(const std::string& header, size_t data_len) {
  return testing::FileWithHeader(header, std::string(data_len, '\0'));
}

TEST(CheckSourceBudgetTest, SafetensorsReadsPrefixAndHeaderOnly) {
  // A header longer than the first read: two reads, exactly 8 + N bytes.
  std::string header = R"({"__metadata__":{"pad":")" + std::string(2000, 'x') +
                       R"("},"a":{"dtype":"F32","shape":[256],"data_offsets":[0,1024]}})";
  const std::string bytes = SafetensorsFile(header, 1024);
  const MemorySource memory(AsBytes(bytes));
  RecordingSource source(memory);
  const CheckResult result = CheckSource(source, "big-header");
  ASSERT_TRUE(result.valid()) << Describe(result);
  EXPECT_LE(source.num_reads(), 3u);
  EXPECT_EQ(source.bytes_read(), 8 + header.size());
}

TEST(CheckSourceBudgetTest, SixteenGigabyteSparseFileIsJudgedFromItsHeader) {
  testing::TempDir dir;
  const std::string path = dir.File("model.safetensors");
  std::vector<testing::ShapedTensor> tensors;
  for (int layer = 0; layer < 32; ++layer) {
    tensors.push_back({"layers." + std::to_string(layer) + ".weight", Dtype::kBF16,
                       {16384, 16384}});
  }
  ASSERT_TRUE(testing::WriteSparseCheckpoint(path, tensors, {}).ok());
  Result<std::unique_ptr<MappedFile>> file = MappedFile::OpenUnmapped(path);
  ASSERT_TRUE(file.ok());
  ASSERT_GT((*file)->size(), uint64_t{16} << 30);
  RecordingSource source(**file);
  CheckOptions options;
  options.list_contents = true;
  const CheckResult result = CheckSource(source, path, options);
  ASSERT_TRUE(result.valid()) << Describe(result);
  EXPECT_LE(source.num_reads(), 3u);
  EXPECT_LT(source.bytes_read(), uint64_t{1} << 20);
  EXPECT_EQ(source.bytes_read(), std::max<uint64_t>(512, 8 + result.summary.header_bytes));
  ASSERT_EQ(result.tensors.size(), 32u);
  // The last tensor's data ends at the end of the file, far above 4 GiB.
  EXPECT_EQ(result.tensors.back().end, (*file)->size());
  EXPECT_GT(result.tensors.back().begin, uint64_t{4} << 30);
}

// keep_reader hands a valid file's reader result to the caller (inspect describes it
// without reading the file again); off, or for an invalid file, nothing is kept.
TEST(CheckSourceTest, KeepReaderKeepsWhatTheReaderBuiltForAValidFileOnly) {
  const std::string corpus = std::string(STGUARD_CORPUS_DIR) + "/";
  CheckOptions keep;
  keep.keep_reader = true;
  const CheckResult safetensors = CheckFile(corpus + "valid/worked_example.safetensors", keep);
  ASSERT_TRUE(safetensors.valid()) << Describe(safetensors);
  ASSERT_NE(safetensors.checkpoint, nullptr);
  EXPECT_EQ(safetensors.checkpoint->num_tensors(), safetensors.summary.tensors);
  EXPECT_EQ(safetensors.checkpoint->header_len(), safetensors.summary.header_bytes);
  EXPECT_EQ(CheckFile(corpus + "valid/worked_example.safetensors").checkpoint, nullptr);

  testing::TempDir dir;
  ASSERT_TRUE(
      testing::WriteFileBytes(dir.File("m.gguf"), testing::Encode(testing::SimpleGgufModel())));
  const CheckResult gguf = CheckFile(dir.File("m.gguf"), keep);
  ASSERT_TRUE(gguf.valid()) << Describe(gguf);
  ASSERT_NE(gguf.gguf, nullptr);
  EXPECT_EQ(gguf.gguf->tensors().size(), gguf.summary.tensors);

  const CheckResult npy = CheckFile(corpus + "fuzz_npy/c8_v2.npy", keep);
  ASSERT_TRUE(npy.valid()) << Describe(npy);
  ASSERT_NE(npy.npy, nullptr);
  EXPECT_EQ(npy.npy->data_len, npy.summary.data_bytes);

  // An npz keeps its members (inspect then inflates no deflated member a second time).
  ASSERT_TRUE(testing::WriteFileBytes(
      dir.File("a.npz"), testing::BuildNpz({{"a", 10, {}}, {"b", 300, {}, true}}).Bytes()));
  const CheckResult npz = CheckFile(dir.File("a.npz"), keep);
  ASSERT_TRUE(npz.valid()) << Describe(npz);
  ASSERT_NE(npz.npz, nullptr);
  ASSERT_EQ(npz.npz->members.size(), 2u);
  EXPECT_TRUE(npz.npz->members[1].compressed);
  EXPECT_EQ(CheckFile(dir.File("a.npz")).npz, nullptr);

  // An invalid file keeps nothing: a safetensors header cut short.
  ASSERT_TRUE(testing::WriteFileBytes(dir.File("bad.safetensors"),
                                      std::string("\x40\0\0\0\0\0\0\0{", 9)));
  const CheckResult bad = CheckFile(dir.File("bad.safetensors"), keep);
  EXPECT_FALSE(bad.valid());
  EXPECT_EQ(bad.checkpoint, nullptr);
}

TEST(CheckSourceBudgetTest, NpyReadsAtMostTwice) {
  for (const std::string name : {"fuzz_npy/c8_v2.npy"}) {
    const std::string path = std::string(STGUARD_CORPUS_DIR) + "/" + name;
    Result<std::unique_ptr<MappedFile>> file = MappedFile::OpenUnmapped(path);
    ASSERT_TRUE(file.ok());
    RecordingSource source(**file);
    const CheckResult result = CheckSource(source, path);
    EXPECT_TRUE(result.valid()) << Describe(result);
    EXPECT_EQ(result.format, Format::kNpy);
    EXPECT_LE(source.num_reads(), 2u);
    EXPECT_LE(source.bytes_read(), 512u);
  }
  // A header longer than the sniff's first read: one more read, of the header's end.
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  dict += std::string(1024 - 10 - dict.size() - 1, ' ') + "\n";
  std::string bytes = std::string("\x93NUMPY\x01\x00", 8);
  bytes += static_cast<char>(dict.size() & 0xFF);
  bytes += static_cast<char>(dict.size() >> 8);
  bytes += dict + std::string(8, '\0');
  bytes += std::string(20000, '\0');  // data past the header: never read
  bytes.resize(1024 + 8);
  const MemorySource memory(AsBytes(bytes));
  RecordingSource source(memory);
  const CheckResult result = CheckSource(source, "long.npy");
  EXPECT_TRUE(result.valid()) << Describe(result);
  EXPECT_LE(source.num_reads(), 2u);
  EXPECT_EQ(source.bytes_read(), 1024u);
}

std::string GgufFileWithVocabulary(size_t num_tokens) {
  testing::GgufModel model = testing::SimpleGgufModel();
  std::vector<std::string> tokens;
  for (size_t i = 0; i < num_tokens; ++i) tokens.push_back("token" + std::to_string(i));
  model.kvs.push_back(testing::GgufStrArray("test.vocabulary", tokens));
  return testing::Encode(model);
}

// InfosEndOfValid bounds where a valid GGUF file's tensor infos end: its data section's
// start (the infos' end rounded up to the alignment).
uint64_t InfosEndOfValid(const std::string& bytes) {
  Result<gguf::GgufFile> file = gguf::GgufFile::FromBytes(AsBytes(bytes));
  EXPECT_TRUE(file.ok()) << file.error().message;
  return file.ok() ? file->data_offset() : 0;
}

TEST(CheckSourceBudgetTest, GgufReadsGrowingPrefixesOfItsHeaderOnly) {
  for (size_t num_tokens : {size_t{0}, size_t{20000}, size_t{300000}}) {
    const std::string bytes = GgufFileWithVocabulary(num_tokens) + std::string(1 << 20, '\0');
    const MemorySource memory(AsBytes(bytes));
    RecordingSource source(memory, /*remote=*/true);
    CheckOptions options;
    options.list_contents = true;
    const CheckResult result = CheckSource(source, "model.gguf", options);
    // The appended megabyte is trailing bytes: the verdict needs no byte of it.
    ASSERT_EQ(result.error.code, ErrorCode::kGgufTrailingBytes) << Describe(result);
    const uint64_t header = InfosEndOfValid(GgufFileWithVocabulary(num_tokens));
    std::printf("gguf, %zu-string array: data section at %llu, %zu reads, %llu bytes\n",
                num_tokens, static_cast<unsigned long long>(header), source.num_reads(),
                static_cast<unsigned long long>(source.bytes_read()));
    EXPECT_LE(source.num_reads(), 12u) << num_tokens;
    EXPECT_LE(source.bytes_read(),
              header + std::max(gguf::GgufFile::kFirstReadLen, gguf::GgufFile::kMaxReadGrowth))
        << num_tokens;
    EXPECT_LE(source.bytes_read(), std::max<uint64_t>(2 * header, gguf::GgufFile::kFirstReadLen));
  }
}

TEST(CheckSourceBudgetTest, GgufPaddingIsCheckedLocallyAndSkippedRemotelyWithANote) {
  std::string bytes = GgufFileWithVocabulary(10);
  // A non-zero padding byte after the last tensor (within the alignment).
  bytes.back() = '\x01';
  const MemorySource memory(AsBytes(bytes));
  RecordingSource local(memory, /*remote=*/false);
  const CheckResult checked = CheckSource(local, "x.gguf");
  RecordingSource remote(memory, /*remote=*/true);
  const CheckResult skipped = CheckSource(remote, "x.gguf");
  if (checked.error.code == ErrorCode::kGgufNonZeroPadding) {
    EXPECT_TRUE(skipped.valid()) << Describe(skipped);
    ASSERT_EQ(skipped.notes.size(), 1u);
    EXPECT_NE(skipped.notes[0].find("padding"), std::string::npos);
  } else {
    GTEST_SKIP() << "the model's last byte is tensor data: " << Describe(checked);
  }
  EXPECT_TRUE(checked.notes.empty());
}

// A file cut inside its last tensor's padding (ggml's full load refuses it) is decided by
// its size alone: the same refusal, at the same offset, locally and remotely, where no
// padding byte is read.
TEST(CheckSourceBudgetTest, GgufCutLastPaddingIsRefusedLocallyAndRemotely) {
  const std::string whole = GgufFileWithVocabulary(10);
  Result<gguf::GgufFile> parsed = gguf::GgufFile::FromBytes(AsBytes(whole));
  ASSERT_TRUE(parsed.ok()) << parsed.error().ToString();
  const gguf::TensorInfo& last = parsed->tensors().back();
  const uint64_t last_end = last.absolute_offset + last.byte_size;
  ASSERT_LT(last_end, whole.size()) << "the model's last tensor fills its padding";
  const std::string cut = whole.substr(0, last_end);
  const MemorySource memory(AsBytes(cut));
  RecordingSource local(memory, /*remote=*/false);
  const CheckResult checked = CheckSource(local, "x.gguf");
  RecordingSource remote(memory, /*remote=*/true);
  const CheckResult far = CheckSource(remote, "x.gguf");
  EXPECT_EQ(checked.error.code, ErrorCode::kGgufMissingPadding) << Describe(checked);
  EXPECT_EQ(checked.error.offset, last_end);
  ExpectSameVerdict(checked, far, "x.gguf");
  EXPECT_FALSE(far.notes.empty());  // the zeros of the padding between tensors went unread
  // The complete file stays valid both ways.
  const MemorySource full(AsBytes(whole));
  EXPECT_TRUE(CheckSource(full, "x.gguf").valid());
  RecordingSource full_remote(full, /*remote=*/true);
  EXPECT_TRUE(CheckSource(full_remote, "x.gguf").valid());
}

// The listing the page and the C API show (result.metadata): GGUF floats in FloatText's
// digits, the same as the CLI's text and --json.
TEST(CheckSourceTest, GgufFloatMetadataIsListedAsTheCliPrintsIt) {
  testing::GgufModel model;
  model.kvs = {testing::GgufF32("f.neg_zero", -0.0f), testing::GgufF64("d.one", 1.0),
               testing::GgufF32("f.tenth", 0.1f),
               testing::GgufF32("f.nan", std::numeric_limits<float>::quiet_NaN()),
               testing::GgufF64("d.minus_inf", -std::numeric_limits<double>::infinity())};
  const std::string bytes = testing::Encode(model);
  const MemorySource memory(AsBytes(bytes));
  CheckOptions options;
  options.list_contents = true;
  const CheckResult result = CheckSource(memory, "floats.gguf", options);
  ASSERT_TRUE(result.valid()) << Describe(result);
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"f.neg_zero", "-0.0"}, {"d.one", "1.0"}, {"f.tenth", "0.1"}, {"f.nan", "nan"},
      {"d.minus_inf", "-inf"}};
  EXPECT_EQ(result.metadata, expected);
}

// ---- failing and lying sources ---------------------------------------------------------

// Representative files of each format, valid and not.
std::vector<std::string> OnePerFormat() {
  std::vector<std::string> chosen;
  std::vector<Format> seen_valid;
  std::vector<Format> seen_invalid;
  for (const std::string& path : CorpusFiles()) {
    const CheckResult result = CheckFile(path);
    auto& seen = result.valid() ? seen_valid : seen_invalid;
    if (std::find(seen.begin(), seen.end(), result.format) != seen.end()) continue;
    seen.push_back(result.format);
    chosen.push_back(path);
  }
  return chosen;
}

TEST(CheckSourceFailureTest, AFailureAtEveryReadIsAnIoError) {
  for (const std::string& path : OnePerFormat()) {
    Result<std::unique_ptr<MappedFile>> file = MappedFile::OpenUnmapped(path);
    ASSERT_TRUE(file.ok());
    RecordingSource count(**file, /*remote=*/false);
    const CheckResult whole = CheckSource(count, path);
    const size_t total = count.num_reads();
    for (size_t k = 1; k <= total + 1; ++k) {
      RecordingSource failing(**file, /*remote=*/false);
      failing.FailFrom(k);
      const CheckResult result = CheckSource(failing, path);
      if (k <= total) {
        EXPECT_EQ(result.verdict, Verdict::kError) << path << " read " << k << ": "
                                                   << Describe(result);
        EXPECT_EQ(result.error.code, ErrorCode::kIoError) << path << " read " << k;
      } else {
        ExpectSameVerdict(whole, result, path);
      }
    }
  }
}

TEST(CheckSourceFailureTest, ASizeLargerThanTheBytesNeverCrashes) {
  for (const std::string& path : OnePerFormat()) {
    Result<std::unique_ptr<MappedFile>> file = MappedFile::OpenUnmapped(path);
    ASSERT_TRUE(file.ok());
    for (uint64_t extra : {uint64_t{1}, uint64_t{4096}, uint64_t{5} << 30}) {
      RecordingSource lying(**file, /*remote=*/false);
      lying.ClaimSize((*file)->size() + extra);
      const CheckResult result = CheckSource(lying, path);
      // A read past the real bytes comes back short: kIoError, never taken for data.
      // A reader that never reached them judges the file it was told of.
      if (result.verdict == Verdict::kError) {
        EXPECT_TRUE(result.error.code == ErrorCode::kIoError ||
                    result.error.code == ErrorCode::kOutOfMemory)
            << path << ": " << Describe(result);
      }
      EXPECT_NE(result.verdict, Verdict::kValid) << path << " claimed +" << extra;
    }
  }
}

TEST(CheckSourceFailureTest, AFileThatShrinksAfterOpeningIsAnIoError) {
  testing::TempDir dir;
  const std::string path = dir.File("shrinks.safetensors");
  const std::string bytes = SafetensorsFile(
      R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 8);
  ASSERT_TRUE(testing::WriteFileBytes(path, bytes));
  Result<std::unique_ptr<MappedFile>> file = MappedFile::OpenUnmapped(path);
  ASSERT_TRUE(file.ok());
  ASSERT_EQ(::truncate(path.c_str(), 20), 0);
  const CheckResult result = CheckSource(**file, path);
  EXPECT_EQ(result.verdict, Verdict::kError) << Describe(result);
  EXPECT_EQ(result.error.code, ErrorCode::kIoError);
}

// ---- the sources' own bounds -----------------------------------------------------------

TEST(ByteSourceTest, MemorySourceReadsInsideAndRefusesOutside) {
  const std::string text = "0123456789";
  const MemorySource source(AsBytes(text), "digits");
  std::byte out[4];
  ASSERT_TRUE(source.ReadAt(6, out).ok());
  EXPECT_EQ(static_cast<char>(out[0]), '6');
  EXPECT_EQ(source.ReadAt(7, out).code, ErrorCode::kIoError);
  // Offsets that would wrap a 64-bit sum, and offsets above 4 GiB: refused, not wrapped.
  EXPECT_EQ(source.ReadAt(UINT64_MAX - 1, out).code, ErrorCode::kIoError);
  EXPECT_EQ(source.ReadAt(uint64_t{1} << 32, out).code, ErrorCode::kIoError);
  EXPECT_TRUE(source.ReadAt(10, std::span<std::byte>()).ok());
}

TEST(ByteSourceTest, SourceRangeErrorComparesBySubtraction) {
  EXPECT_TRUE(SourceRangeError(100, 100, 0, "x").ok());
  EXPECT_TRUE(SourceRangeError(100, 0, 100, "x").ok());
  EXPECT_FALSE(SourceRangeError(100, 1, 100, "x").ok());
  EXPECT_FALSE(SourceRangeError(100, 101, 0, "x").ok());
  EXPECT_FALSE(SourceRangeError(UINT64_MAX, 2, UINT64_MAX - 1, "x").ok());
  EXPECT_TRUE(SourceRangeError(UINT64_MAX, 1, UINT64_MAX - 1, "x").ok());
}

TEST(ByteSourceTest, FileSourceReadsAboveFourGibibytes) {
  testing::TempDir dir;
  const std::string path = dir.File("sparse");
  const uint64_t marker_at = (uint64_t{5} << 30) + 3;
  {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(marker_at + 100)), 0);
    ASSERT_EQ(::pwrite(fd, "MARK", 4, static_cast<off_t>(marker_at)), 4);
    ::close(fd);
  }
  Result<std::unique_ptr<MappedFile>> file = MappedFile::OpenUnmapped(path);
  ASSERT_TRUE(file.ok());
  const ByteSource& source = **file;
  std::byte out[4];
  ASSERT_TRUE(source.ReadAt(marker_at, out).ok());
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(out), 4), "MARK");
  // Past the end, by one byte and by a wrap: refused before any read.
  EXPECT_EQ(source.ReadAt(marker_at + 97, out).code, ErrorCode::kIoError);
  EXPECT_EQ(source.ReadAt(UINT64_MAX - 2, out).code, ErrorCode::kIoError);
}

TEST(ByteSourceTest, SniffSourceEqualsSniffFormatOnEveryCorpusFile) {
  for (const std::string& path : CorpusFiles()) {
    const std::string bytes = testing::ReadFileBytes(path);
    const MemorySource memory(AsBytes(bytes));
    RecordingSource source(memory);
    const Result<Format> sniffed = SniffSource(source);
    ASSERT_TRUE(sniffed.ok()) << path;
    EXPECT_EQ(*sniffed, SniffFormat(AsBytes(bytes))) << path;
  }
}

// ---- contents ---------------------------------------------------------------------------

TEST(ContentsTest, SafetensorsTensorsAndMetadataAreListedWithAbsoluteOffsets) {
  const std::string header =
      R"({"__metadata__":{"format":"pt"},"b":{"dtype":"F16","shape":[2,1],"data_offsets":[0,4]},)"
      R"("a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})";
  const std::string bytes = SafetensorsFile(header, 8);
  const MemorySource source(AsBytes(bytes));
  CheckOptions options;
  options.list_contents = true;
  const CheckResult result = CheckSource(source, "x", options);
  ASSERT_TRUE(result.valid()) << Describe(result);
  ASSERT_EQ(result.tensors.size(), 2u);
  EXPECT_EQ(result.tensors[0].name, "b");
  EXPECT_EQ(result.tensors[0].dtype, "F16");
  EXPECT_EQ(result.tensors[0].shape, (std::vector<uint64_t>{2, 1}));
  EXPECT_EQ(result.tensors[0].begin, 8 + header.size());
  EXPECT_EQ(result.tensors[1].end, bytes.size());
  ASSERT_EQ(result.metadata.size(), 1u);
  EXPECT_EQ(result.metadata[0], (std::pair<std::string, std::string>("format", "pt")));
  // Without list_contents nothing is listed.
  EXPECT_TRUE(CheckSource(source, "x").tensors.empty());
}

TEST(ContentsTest, NpyListsItsArrayAndHeaderKeys) {
  const std::string path = std::string(STGUARD_CORPUS_DIR) + "/fuzz_npy/c8_v2.npy";
  CheckOptions options;
  options.list_contents = true;
  const CheckResult result = CheckFile(path, options);
  ASSERT_TRUE(result.valid()) << Describe(result);
  ASSERT_EQ(result.tensors.size(), 1u);
  ASSERT_EQ(result.metadata.size(), 3u);
  EXPECT_EQ(result.metadata[0].first, "descr");
  EXPECT_EQ(result.tensors[0].dtype, result.metadata[0].second);
  EXPECT_EQ(result.tensors[0].end, testing::ReadFileBytes(path).size());
}

TEST(ContentsTest, JsonEscapesNamesFromTheFile) {
  CheckResult result;
  result.tensors.push_back({"<script>\"x\"</script>", "F32", {2, 3}, 8, 32, 24});
  result.metadata.emplace_back("k\n", "v\\");
  result.notes.push_back("a note");
  std::string json;
  AppendContentsJson(result, &json);
  EXPECT_EQ(json,
            R"("tensors":[{"name":"<script>\"x\"</script>","dtype":"F32","shape":[2,3],)"
            R"("begin":8,"end":32,"bytes":24}],"metadata":[["k\n","v\\"]],"notes":["a note"])");
  CheckResult empty;
  json.clear();
  AppendContentsJson(empty, &json);
  EXPECT_EQ(json, R"("tensors":[],"metadata":[],"notes":[])");
}

}  // namespace
}  // namespace stguard

namespace stguard {
namespace {

// Prints what each format's largest valid corpus file costs remotely (reads, bytes, file
// size), for SECURITY.md's budget table; safetensors and npy are held to their budgets.
TEST(CheckSourceBudgetTest, ReportsReadsPerFormatOnTheCorpus) {
  std::vector<std::pair<Format, std::string>> largest;
  for (const std::string& path : CorpusFiles()) {
    const CheckResult result = CheckFile(path);
    if (!result.valid()) continue;
    auto it = std::find_if(largest.begin(), largest.end(),
                           [&](const auto& entry) { return entry.first == result.format; });
    if (it == largest.end()) {
      largest.emplace_back(result.format, path);
    } else if (std::filesystem::file_size(path) > std::filesystem::file_size(it->second)) {
      it->second = path;
    }
  }
  std::vector<Format> seen;
  for (const auto& [format, path] : largest) {
    Result<std::unique_ptr<MappedFile>> file = MappedFile::OpenUnmapped(path);
    ASSERT_TRUE(file.ok());
    RecordingSource source(**file, /*remote=*/true);
    const CheckResult result = CheckSource(source, path);
    ASSERT_TRUE(result.valid()) << path;
    seen.push_back(format);
    std::printf("%-14s reads %2zu bytes %8llu of %8llu  %s\n",
                std::string(FormatName(result.format)).c_str(), source.num_reads(),
                static_cast<unsigned long long>(source.bytes_read()),
                static_cast<unsigned long long>((*file)->size()), path.c_str());
    if (result.format == Format::kSafetensors) {
      EXPECT_LE(source.num_reads(), 2u) << path;
      EXPECT_LE(source.bytes_read(), std::max<uint64_t>(512, 8 + result.summary.header_bytes));
    }
    if (result.format == Format::kNpy) {
      EXPECT_LE(source.num_reads(), 2u) << path;
    }
  }
  EXPECT_GE(seen.size(), 4u);
}

}  // namespace
}  // namespace stguard

namespace stguard {
namespace {

// ---- PyTorch ZIP by ranges -------------------------------------------------------------

TEST(CheckSourceZipTest, TheBuilderWritesAValidCheckpoint) {
  const std::string bytes = testing::BuildTorchZip(16).Bytes();
  testing::TempDir dir;
  const std::string path = dir.File("small.bin");
  ASSERT_TRUE(testing::WriteFileBytes(path, bytes));
  const CheckResult result = CheckFile(path);
  ASSERT_TRUE(result.valid()) << Describe(result);
  EXPECT_EQ(result.format, Format::kPytorchZip);
  EXPECT_EQ(result.summary.tensors, 1u);
}

// The sniff's first read (a tar block) and its read of a ZIP's tail (an end record and the
// comment it may have, and a ZIP64 locator), which the ZIP reader's reads then come from.
constexpr uint64_t kSniffTailLen = 22 + 0xFFFF + 20;

struct RemoteRun {
  CheckResult result;
  size_t reads = 0;
  uint64_t bytes = 0;
};

RemoteRun CheckRemotely(const ByteSource& inner, const std::string& name) {
  RecordingSource source(inner, /*remote=*/true);
  CheckResult result = CheckSource(source, name);
  return {std::move(result), source.num_reads(), source.bytes_read()};
}

// CheckSparseRemotely writes `pieces` (a ZIP the test builders laid out) as the sparse file
// `path` and checks it through a remote recording source.
RemoteRun CheckSparseRemotely(const testing::TorchZipPieces& pieces, const std::string& path) {
  if (!pieces.WriteSparse(path)) {
    ADD_FAILURE() << "cannot write " << path;
    return {};
  }
  Result<std::unique_ptr<MappedFile>> file = MappedFile::OpenUnmapped(path);
  if (!file.ok()) {
    ADD_FAILURE() << "cannot open " << path;
    return {};
  }
  return CheckRemotely(**file, path);
}

TEST(CheckSourceBudgetTest, TorchZipFromTheCorpusReadsAtMostFourTimes) {
  const std::string path = std::string(STGUARD_CORPUS_DIR) + "/torch/valid/dtypes.zip.pt";
  Result<std::unique_ptr<MappedFile>> file = MappedFile::OpenUnmapped(path);
  ASSERT_TRUE(file.ok());
  const RemoteRun remote = CheckRemotely(**file, path);
  ASSERT_TRUE(remote.result.valid()) << Describe(remote.result);
  std::printf("pytorch-zip %s: %zu reads, %llu bytes of %llu\n", path.c_str(), remote.reads,
              static_cast<unsigned long long>(remote.bytes),
              static_cast<unsigned long long>((*file)->size()));
  // The sniff's two reads (first block, tail) hold all the reader needs of a small file.
  EXPECT_LE(remote.reads, 4u);
  ASSERT_EQ(remote.result.notes.size(), 1u);
  EXPECT_NE(remote.result.notes[0].find("storage record"),
            std::string::npos);
  // Locally everything is read and checked: no note.
  EXPECT_TRUE(CheckSource(**file, path).notes.empty());
}

TEST(CheckSourceBudgetTest, TorchZipOfHalfAGigabyteCostsWhatAFourMegabyteOneDoes) {
  testing::TempDir dir;
  std::vector<RemoteRun> runs;
  for (const uint32_t elements : {uint32_t{1} << 20, uint32_t{1} << 27}) {
    const testing::TorchZipPieces zip = testing::BuildTorchZip(elements);
    RemoteRun run =
        CheckSparseRemotely(zip, dir.File("model" + std::to_string(elements) + ".bin"));
    ASSERT_TRUE(run.result.valid()) << Describe(run.result);
    EXPECT_EQ(run.result.summary.tensors, 1u);
    ASSERT_EQ(run.result.notes.size(), 1u);
    EXPECT_NE(run.result.notes[0].find("of 1 storage record not read: the file is remote"),
              std::string::npos)
        << run.result.notes[0];
    std::printf("pytorch-zip of %llu bytes: %zu reads, %llu bytes (data.pkl %llu, directory "
                "%llu)\n",
                static_cast<unsigned long long>(zip.size), run.reads,
                static_cast<unsigned long long>(run.bytes),
                static_cast<unsigned long long>(zip.data_pkl_len),
                static_cast<unsigned long long>(zip.directory_len));
    // Sniff: first block, tail, central directory; then data.pkl's run (past the first
    // block). The format records at the end are in the sniff's tail.
    EXPECT_LE(run.reads, 4u);
    EXPECT_LE(run.bytes, 512 + kSniffTailLen + zip.directory_len + zip.data_pkl_len + 4096);
    runs.push_back(std::move(run));
  }
  // What a remote check costs does not depend on the storages' size.
  EXPECT_EQ(runs[0].reads, runs[1].reads);
  EXPECT_EQ(runs[0].bytes, runs[1].bytes);
}

TEST(CheckSourceBudgetTest, TorchZipWithALargePickleReadsItInOneMoreRead) {
  // A 40 KB tensor name: data.pkl runs far past the sniff's first 512 bytes.
  const testing::TorchZipPieces zip =
      testing::BuildTorchZip(uint32_t{1} << 24, "_rebuild_tensor_v2", std::string(40000, 'n'));
  testing::TempDir dir;
  const RemoteRun run = CheckSparseRemotely(zip, dir.File("model.bin"));
  ASSERT_TRUE(run.result.valid()) << Describe(run.result);
  std::printf("pytorch-zip of %llu bytes, data.pkl %llu: %zu reads, %llu bytes\n",
              static_cast<unsigned long long>(zip.size),
              static_cast<unsigned long long>(zip.data_pkl_len), run.reads,
              static_cast<unsigned long long>(run.bytes));
  EXPECT_LE(run.reads, 4u);
  EXPECT_LE(run.bytes, 512 + kSniffTailLen + zip.directory_len + zip.data_pkl_len + 4096);
}

TEST(CheckSourceBudgetTest, TorchZipWhoseDirectoryIsLargerThanTheSniffsTailReadsAtMostSixTimes) {
  // A 65,500-byte storage key: the central directory alone outgrows the sniff's tail read.
  const testing::TorchZipPieces zip = testing::BuildTorchZip(
      uint32_t{1} << 24, "_rebuild_tensor_v2", "w", std::string(65500, '7'));
  ASSERT_GT(zip.directory_len, kSniffTailLen);
  testing::TempDir dir;
  const RemoteRun run = CheckSparseRemotely(zip, dir.File("model.bin"));
  ASSERT_TRUE(run.result.valid()) << Describe(run.result);
  std::printf("pytorch-zip of %llu bytes, directory %llu: %zu reads, %llu bytes\n",
              static_cast<unsigned long long>(zip.size),
              static_cast<unsigned long long>(zip.directory_len), run.reads,
              static_cast<unsigned long long>(run.bytes));
  EXPECT_LE(run.reads, 6u);
  EXPECT_LE(run.bytes, 512 + kSniffTailLen + 65536 + zip.directory_len + zip.data_pkl_len +
                           2 * 4096 + 65500);
}

// Patch32 overwrites four little-endian bytes of `bytes` at `at`.
void Patch32(std::string* bytes, size_t at, uint32_t value) {
  for (int k = 0; k < 4; ++k) (*bytes)[at + k] = static_cast<char>((value >> (8 * k)) & 0xFF);
}

// LocalAndRemote checks `bytes` as a local file and through a remote source.
std::pair<CheckResult, CheckResult> LocalAndRemote(const std::string& bytes) {
  testing::TempDir dir;
  const std::string path = dir.File("x.bin");
  EXPECT_TRUE(testing::WriteFileBytes(path, bytes));
  const MemorySource memory(AsBytes(bytes));
  return {CheckFile(path), CheckRemotely(memory, "x.bin").result};
}

TEST(CheckSourceZipTest, ARefusedGlobalInDataPklIsRefusedRemotelyToo) {
  const auto [local, remote] =
      LocalAndRemote(testing::BuildTorchZip(16, "_rebuild_and_run").Bytes());
  EXPECT_EQ(local.verdict, Verdict::kRefused) << Describe(local);
  EXPECT_EQ(local.error.code, ErrorCode::kPickleGlobalRefused) << Describe(local);
  ExpectSameVerdict(local, remote, "refused global");
  ASSERT_TRUE(remote.pickle.has_value());
  const std::vector<TorchGlobal>& globals = remote.pickle->scan.globals;
  EXPECT_TRUE(std::any_of(globals.begin(), globals.end(), [](const TorchGlobal& global) {
    return global.name == "_rebuild_and_run" && !global.allowed;
  }));
}

TEST(CheckSourceZipTest, AnEntryPointingOutsideTheFileIsTheSameErrorRemotely) {
  std::string bytes = testing::BuildTorchZip(16).Bytes();
  // The central directory's entry for data/0 (the name's second occurrence): its local
  // header offset, the entry's last field before the name.
  const size_t name = bytes.find("archive/data/0", bytes.find("archive/data/0") + 1);
  ASSERT_NE(name, std::string::npos);
  Patch32(&bytes, name - 4, 0x7FFFFF00);
  const auto [local, remote] = LocalAndRemote(bytes);
  EXPECT_EQ(local.error.code, ErrorCode::kZipFormat) << Describe(local);
  ExpectSameVerdict(local, remote, "entry outside the file");
  // And a central directory said to start past the end records.
  std::string moved = testing::BuildTorchZip(16).Bytes();
  Patch32(&moved, moved.size() - 22 + 16, static_cast<uint32_t>(moved.size()));
  const auto [moved_local, moved_remote] = LocalAndRemote(moved);
  EXPECT_FALSE(moved_local.valid());
  ExpectSameVerdict(moved_local, moved_remote, "directory outside the file");
}

TEST(CheckSourceZipTest, AStorageLocalHeaderIsCheckedLocallyAndSkippedRemotelyWithANote) {
  std::string bytes = testing::BuildTorchZip(16).Bytes();
  // data/0's local header says method 8 (deflate): the central directory says stored.
  const size_t name = bytes.find("archive/data/0");
  ASSERT_NE(name, std::string::npos);
  bytes[name - 30 + 8] = 8;
  const auto [local, remote] = LocalAndRemote(bytes);
  EXPECT_EQ(local.error.code, ErrorCode::kZipHeaderMismatch) << Describe(local);
  EXPECT_TRUE(remote.valid()) << Describe(remote);
  ASSERT_EQ(remote.notes.size(), 1u);
  EXPECT_NE(remote.notes[0].find("not read: the file is remote"), std::string::npos);
  // data.pkl's local header is read remotely: the same change there is refused there too.
  std::string pkl = testing::BuildTorchZip(16).Bytes();
  pkl[8] = 8;
  const auto [pkl_local, pkl_remote] = LocalAndRemote(pkl);
  EXPECT_EQ(pkl_local.error.code, ErrorCode::kZipHeaderMismatch) << Describe(pkl_local);
  ExpectSameVerdict(pkl_local, pkl_remote, "data.pkl's local header");
}

TEST(CheckSourceZipTest, AStorageCrcIsCheckedLocallyAndSkippedRemotely) {
  testing::TorchZipPieces zip = testing::BuildTorchZip(16);
  std::string bytes = zip.Bytes();
  // One byte of the storage's data (after its header, name and padding): its CRC fails.
  const size_t name = bytes.find("archive/data/0");
  const size_t data = (name + 14 + 4 + 63) / 64 * 64;
  bytes[data] = 1;
  const MemorySource memory(AsBytes(bytes));
  const CheckResult local = CheckSource(memory, "x.bin");
  EXPECT_EQ(local.error.code, ErrorCode::kZipChecksum) << Describe(local);
  const RemoteRun remote = CheckRemotely(memory, "x.bin");
  EXPECT_TRUE(remote.result.valid()) << Describe(remote.result);
  EXPECT_EQ(remote.result.notes.size(), 1u);
}

// ---- npz by ranges -------------------------------------------------------------------

bool NotesStoredMembersUnread(const CheckResult& result) {
  return std::any_of(result.notes.begin(), result.notes.end(), [](const std::string& note) {
    return note.find("CRC-32s of") != std::string::npos &&
           note.find("not read: the file is remote") != std::string::npos;
  });
}

TEST(CheckSourceNpzTest, AValidNpzIsValidLocallyAndRemotelyWithTheSameSummary) {
  const std::string bytes =
      testing::BuildNpz({{"a", 10, {}}, {"b", 300, {}}, {"c", 0, {}}}).Bytes();
  const auto [local, remote] = LocalAndRemote(bytes);
  ASSERT_TRUE(local.valid()) << Describe(local);
  ExpectSameVerdict(local, remote, "valid npz");
  EXPECT_EQ(remote.format, Format::kNpz);
  EXPECT_EQ(remote.summary.tensors, 3u);
  EXPECT_EQ(remote.summary.data_bytes, local.summary.data_bytes);
  EXPECT_EQ(remote.summary.data_bytes, 310u * 4);
  EXPECT_TRUE(local.notes.empty());
  ASSERT_EQ(remote.notes.size(), 1u);
  EXPECT_NE(remote.notes[0].find("CRC-32s of 3 members not read: the file is remote"),
            std::string::npos)
      << remote.notes[0];
  // A local source (not a file path) keeps every check, and says nothing is skipped.
  const MemorySource memory(AsBytes(bytes));
  const CheckResult source = CheckSource(memory, "x.npz");
  ExpectSameVerdict(local, source, "local source");
  EXPECT_TRUE(source.notes.empty());
}

TEST(CheckSourceNpzTest, TwoMembersAnsweringOneKeyAreRefusedLocallyAndRemotely) {
  // np.savez(f, x=A, **{"x.npy": B}) writes x.npy and x.npy.npy: numpy's keys are x and
  // x.npy, and NpzFile["x.npy"] finds the member x.npy (A) first. Either order, and chains.
  const std::vector<std::vector<std::string>> refused = {
      {"x", "x.npy"}, {"x.npy", "x"}, {"a", "x.npy.npy", "x.npy"}};
  for (const std::vector<std::string>& keys : refused) {
    std::vector<testing::NpzArray> arrays;
    for (const std::string& key : keys) arrays.push_back({key, 2, {}});
    const std::string bytes = testing::BuildNpz(arrays).Bytes();
    const auto [local, remote] = LocalAndRemote(bytes);
    EXPECT_EQ(local.error.code, ErrorCode::kZipDuplicateName) << Describe(local);
    ExpectSameVerdict(local, remote, keys[0] + " and " + keys[1]);
  }
  // One key each: x.npy alone (key "x.npy"), or x.npy beside x.npy.npy.npy (keys x and
  // x.npy.npy, which is no member's name).
  for (const std::vector<std::string>& keys :
       std::vector<std::vector<std::string>>{{"x.npy"}, {"x", "x.npy.npy"}}) {
    std::vector<testing::NpzArray> arrays;
    for (const std::string& key : keys) arrays.push_back({key, 2, {}});
    const auto [local, remote] = LocalAndRemote(testing::BuildNpz(arrays).Bytes());
    EXPECT_TRUE(local.valid()) << Describe(local);
    ExpectSameVerdict(local, remote, keys[0]);
  }
}

TEST(CheckSourceNpzTest, AnArchiveWithoutMembersIsAValidNpzOfNoArray) {
  // What np.savez(f) writes: an end record alone, which np.load opens as an npz.
  const std::string bytes = testing::BuildNpz({}).Bytes();
  ASSERT_EQ(bytes.substr(0, 4), "PK\x05\x06");
  const auto [local, remote] = LocalAndRemote(bytes);
  ASSERT_TRUE(local.valid()) << Describe(local);
  EXPECT_EQ(local.format, Format::kNpz);
  EXPECT_EQ(local.summary.tensors, 0u);
  ExpectSameVerdict(local, remote, "empty npz");
  // Anything after the end record is no empty archive.
  const auto [trailing, trailing_remote] = LocalAndRemote(bytes + '\0');
  EXPECT_EQ(trailing.verdict, Verdict::kInvalid) << Describe(trailing);
  ExpectSameVerdict(trailing, trailing_remote, "empty npz with a trailing byte");
}

TEST(CheckSourceNpzTest, ABadNpyHeaderInAMemberIsTheSameErrorRemotely) {
  // The second member is an object array: loading it would unpickle.
  std::string object = testing::npz_detail::NpyHeader(4);
  object.replace(object.find("<f4"), 3, "|O8");
  const std::string bytes =
      testing::BuildNpz({{"a", 10, {}}, {"obj", 0, object}}).Bytes();
  const auto [local, remote] = LocalAndRemote(bytes);
  EXPECT_EQ(local.error.code, ErrorCode::kNpyObjectArray) << Describe(local);
  EXPECT_EQ(local.error.tensor, "obj");
  ExpectSameVerdict(local, remote, "object array member");
  // A truncated preamble: the member's .npy ends inside its magic.
  const std::string short_bytes =
      testing::BuildNpz({{"a", 0, "\x93NUM"}}).Bytes();
  const auto [short_local, short_remote] = LocalAndRemote(short_bytes);
  EXPECT_FALSE(short_local.valid()) << Describe(short_local);
  ExpectSameVerdict(short_local, short_remote, "short member");
}

TEST(CheckSourceNpzTest, AStoredMemberCrcIsCheckedLocallyAndSkippedRemotelyWithANote) {
  std::string bytes = testing::BuildNpz({{"a", 16, {}}}).Bytes();
  const size_t data = bytes.find("\n", bytes.find("NUMPY")) + 1;  // the array's first byte
  bytes[data] = 1;
  const auto [local, remote] = LocalAndRemote(bytes);
  EXPECT_EQ(local.error.code, ErrorCode::kZipChecksum) << Describe(local);
  const MemorySource memory(AsBytes(bytes));
  ExpectSameVerdict(local, CheckSource(memory, "x.npz"), "local source");
  EXPECT_TRUE(remote.valid()) << Describe(remote);
  EXPECT_TRUE(NotesStoredMembersUnread(remote));
}

TEST(CheckSourceNpzTest, AMemberLocalHeaderIsCheckedRemotelyToo) {
  // The second member's local header says method 8 (deflate): the central directory says
  // stored. Unlike a PyTorch storage record's, an npz member's local header is read remotely.
  std::string bytes = testing::BuildNpz({{"a", 4, {}}, {"b", 4, {}}}).Bytes();
  const size_t name = bytes.find("b.npy");
  ASSERT_NE(name, std::string::npos);
  bytes[name - 30 + 8] = 8;
  const auto [local, remote] = LocalAndRemote(bytes);
  EXPECT_EQ(local.error.code, ErrorCode::kZipHeaderMismatch) << Describe(local);
  ExpectSameVerdict(local, remote, "member local header");
}

TEST(CheckSourceNpzTest, ADeflatedMemberIsInflatedRemotelyOnlyToItsHeader) {
  // 4 MiB of zeros as DEFLATE stored blocks of 4 KiB: about 4 MiB compressed.
  const std::string bytes =
      testing::BuildNpz({{"small", 8, {}, true}, {"big", 1 << 20, {}, true}}).Bytes();
  const auto [local, remote] = LocalAndRemote(bytes);
  ASSERT_TRUE(local.valid()) << Describe(local);
  ExpectSameVerdict(local, remote, "deflated npz");
  EXPECT_EQ(remote.summary.data_bytes, local.summary.data_bytes);
  // Only "big" is read to its header alone: "small" is shorter than a header's room.
  ASSERT_EQ(remote.notes.size(), 1u);
  EXPECT_NE(remote.notes[0].find("CRC-32s of 1 member not read"), std::string::npos)
      << remote.notes[0];
  const MemorySource memory(AsBytes(bytes));
  const RemoteRun run = CheckRemotely(memory, "x.npz");
  std::printf("deflated npz of %zu bytes: %zu reads, %llu bytes\n", bytes.size(), run.reads,
              static_cast<unsigned long long>(run.bytes));
  // The sniff, "big"'s local header block, and 16 KiB of its stream.
  EXPECT_LE(run.bytes, kSniffTailLen + 4096 + (16 << 10) + 4096);
  EXPECT_LE(run.reads, 5u);
  EXPECT_TRUE(CheckSource(memory, "x.npz").notes.empty());
}

TEST(CheckSourceNpzTest, ABadDeflateStreamIsTheSameErrorRemotelyWhenBeforeTheHeader) {
  const std::string good =
      testing::BuildNpz({{"big", 1 << 18, {}, true}}).Bytes();
  const size_t stream = good.find("big.npy") + 7;  // its first block's header
  // The first block's NLEN is not LEN's complement: found before the header comes out.
  std::string early = good;
  early[stream + 3] = static_cast<char>(early[stream + 3] ^ 1);
  const auto [early_local, early_remote] = LocalAndRemote(early);
  EXPECT_EQ(early_local.error.code, ErrorCode::kDeflateData) << Describe(early_local);
  ExpectSameVerdict(early_local, early_remote, "bad first block");
  // The fourth block's NLEN (from output byte 12,288): past the header's room, checked
  // locally, skipped remotely (noted).
  std::string late = good;
  const size_t fourth = stream + 3 * (5 + testing::npz_detail::kStoredBlockLen);
  late[fourth + 3] = static_cast<char>(late[fourth + 3] ^ 1);
  const auto [late_local, late_remote] = LocalAndRemote(late);
  EXPECT_EQ(late_local.error.code, ErrorCode::kDeflateData) << Describe(late_local);
  EXPECT_TRUE(late_remote.valid()) << Describe(late_remote);
  EXPECT_TRUE(NotesStoredMembersUnread(late_remote));
}

TEST(CheckSourceBudgetTest, NpzOfLargeStoredMembersCostsWhatASmallOneDoes) {
  testing::TempDir dir;
  std::vector<RemoteRun> runs;
  for (const uint64_t elements : {uint64_t{1} << 20, uint64_t{1} << 26}) {
    const testing::TorchZipPieces npz =
        testing::BuildNpz({{"w1", elements, {}}, {"w2", elements, {}}, {"w3", elements, {}}});
    RemoteRun run =
        CheckSparseRemotely(npz, dir.File("arrays" + std::to_string(elements) + ".npz"));
    ASSERT_TRUE(run.result.valid()) << Describe(run.result);
    EXPECT_EQ(run.result.summary.tensors, 3u);
    EXPECT_EQ(run.result.summary.data_bytes, 3 * elements * 4);
    std::printf("npz of %llu bytes: %zu reads, %llu bytes\n",
                static_cast<unsigned long long>(npz.size), run.reads,
                static_cast<unsigned long long>(run.bytes));
    // The sniff (first block; tail with the directory), then per member one 4 KiB block
    // from its local header, which holds its .npy header too (the first member's is in
    // the first block).
    EXPECT_LE(run.reads, 2u + 3);
    EXPECT_LE(run.bytes, kSniffTailLen + 3 * 4096);
    runs.push_back(std::move(run));
  }
  // What a remote check costs does not depend on the arrays' size.
  EXPECT_EQ(runs[0].reads, runs[1].reads);
  EXPECT_EQ(runs[0].bytes, runs[1].bytes);
}

}  // namespace
}  // namespace stguard
