// SPDX-License-Identifier: Apache-2.0
// The front door's library API (stguard/verdict.h): the verdict words and exit statuses,
// which errors are which verdict, the envelope's JSON fields, and CheckPath's dispatch by
// content for every format.
#include "stguard/verdict.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>

#include "byte_source/recording_source.h"
#include "stguard/mapped_file.h"
#include "support/temp_dir.h"
#include "support/test_files.h"

namespace stguard {
namespace {

using testing::ReadFileBytes;
using testing::TempDir;
using testing::WriteFileBytes;

const std::string kCorpus = std::string(STGUARD_CORPUS_DIR) + "/";

TEST(VerdictTest, WordsAndExitStatuses) {
  EXPECT_EQ(VerdictName(Verdict::kValid), "valid");
  EXPECT_EQ(VerdictName(Verdict::kInvalid), "invalid");
  EXPECT_EQ(VerdictName(Verdict::kRefused), "refused");
  EXPECT_EQ(VerdictName(Verdict::kError), "error");
  EXPECT_EQ(VerdictExitStatus(Verdict::kValid), 0);
  EXPECT_EQ(VerdictExitStatus(Verdict::kInvalid), 1);
  EXPECT_EQ(VerdictExitStatus(Verdict::kRefused), 1);
  EXPECT_EQ(VerdictExitStatus(Verdict::kError), 2);
}

TEST(VerdictTest, ErrorsToVerdicts) {
  EXPECT_EQ(VerdictForError(Error{}), Verdict::kValid);
  EXPECT_EQ(VerdictForError(Error{ErrorCode::kHeaderTooLarge}), Verdict::kInvalid);
  EXPECT_EQ(VerdictForError(Error{ErrorCode::kGgufTrailingBytes}), Verdict::kInvalid);
  EXPECT_EQ(VerdictForError(Error{ErrorCode::kPickleGlobalRefused}), Verdict::kRefused);
  EXPECT_EQ(VerdictForError(Error{ErrorCode::kNpyObjectArray}), Verdict::kRefused);
  EXPECT_EQ(VerdictForError(Error{ErrorCode::kIoError}), Verdict::kError);
  EXPECT_EQ(VerdictForError(Error{ErrorCode::kOutOfMemory}), Verdict::kError);
  EXPECT_EQ(VerdictForError(Error{ErrorCode::kInvalidArgument}), Verdict::kError);
}

TEST(VerdictTest, OffsetOnlyWhenItPointsIntoAFile) {
  // The HAS_OFFSET column of error_codes.def, the one rule every printer follows.
  EXPECT_TRUE(ErrorHasOffset(ErrorCode::kHeaderTooLarge));
  EXPECT_TRUE(ErrorHasOffset(ErrorCode::kShardMismatch));
  EXPECT_FALSE(ErrorHasOffset(ErrorCode::kIoError));
  EXPECT_FALSE(ErrorHasOffset(ErrorCode::kMissingShard));
  EXPECT_FALSE(ErrorHasOffset(ErrorCode::kLintError));
  EXPECT_FALSE(ErrorHasOffset(ErrorCode::kNotSafetensors));
  EXPECT_FALSE(ErrorHasOffset(ErrorCode::kOk));
  EXPECT_FALSE(ErrorHasOffset(ErrorCode::kNoSafetensorsInFolder));
  EXPECT_FALSE(ErrorHasOffset(ErrorCode::kNumErrorCodes));  // no row
}

// THE ORDER OF VERDICTS: refused, invalid, error, valid; the worst wins, the first on a
// tie.
TEST(VerdictTest, WorstVerdictWins) {
  EXPECT_EQ(WorseVerdict(Verdict::kError, Verdict::kRefused), Verdict::kRefused);
  EXPECT_EQ(WorseVerdict(Verdict::kRefused, Verdict::kError), Verdict::kRefused);
  EXPECT_EQ(WorseVerdict(Verdict::kError, Verdict::kInvalid), Verdict::kInvalid);
  EXPECT_EQ(WorseVerdict(Verdict::kInvalid, Verdict::kRefused), Verdict::kRefused);
  EXPECT_EQ(WorseVerdict(Verdict::kValid, Verdict::kError), Verdict::kError);
  EXPECT_EQ(WorseVerdict(Verdict::kValid, Verdict::kValid), Verdict::kValid);
  EXPECT_GT(VerdictRank(Verdict::kRefused), VerdictRank(Verdict::kInvalid));
  EXPECT_GT(VerdictRank(Verdict::kInvalid), VerdictRank(Verdict::kError));
  EXPECT_GT(VerdictRank(Verdict::kError), VerdictRank(Verdict::kValid));
}

// A folder: an unreadable file (error) does not hide an invalid one, nor an invalid one
// a refused one; the folder's own error comes first on a tie; the member is Error::file.
TEST(VerdictTest, FolderTakesTheWorstVerdict) {
  auto file = [](const char* name, Verdict verdict, ErrorCode code) {
    CheckResult member;
    member.file = name;
    member.verdict = verdict;
    member.error = Error{code, 7};
    return member;
  };
  CheckResult folder;
  folder.is_folder = true;
  folder.files = {file("a", Verdict::kError, ErrorCode::kIoError),
                  file("b", Verdict::kInvalid, ErrorCode::kNpyDescr),
                  file("c", Verdict::kRefused, ErrorCode::kPickleGlobalRefused),
                  file("d", Verdict::kInvalid, ErrorCode::kGgufTruncated)};
  DecideFolderVerdict(Error{}, &folder);
  EXPECT_EQ(folder.verdict, Verdict::kRefused);
  EXPECT_EQ(folder.member, "c");
  EXPECT_EQ(folder.error.file, "c");
  folder.files.erase(folder.files.begin() + 2);  // no refusal: the first invalid file
  DecideFolderVerdict(Error{}, &folder);
  EXPECT_EQ(folder.verdict, Verdict::kInvalid);
  EXPECT_EQ(folder.member, "b");
  // The folder's own invalid error (in the index) ties with b and comes first.
  DecideFolderVerdict(Error{ErrorCode::kShardMismatch, 3, "m", "", "", "x.index.json"},
                      &folder);
  EXPECT_EQ(folder.error.code, ErrorCode::kShardMismatch);
  EXPECT_EQ(folder.member, "x.index.json");
  folder.files.resize(1);  // only the unreadable file: error
  DecideFolderVerdict(Error{}, &folder);
  EXPECT_EQ(folder.verdict, Verdict::kError);
  folder.files.clear();
  DecideFolderVerdict(Error{}, &folder);
  EXPECT_EQ(folder.verdict, Verdict::kValid);
  EXPECT_TRUE(folder.member.empty());
}

TEST(VerdictTest, ResultOffsetOnlyInAFileOrANamedMember) {
  CheckResult file;
  file.verdict = Verdict::kInvalid;
  file.error = Error{ErrorCode::kHeaderTooLarge, 0};
  EXPECT_TRUE(ResultOffsetInFile(file));
  CheckResult folder = file;
  folder.is_folder = true;
  EXPECT_FALSE(ResultOffsetInFile(folder));  // the folder's own error: no file to point into
  folder.member = "b.safetensors";
  EXPECT_TRUE(ResultOffsetInFile(folder));
  CheckResult io = file;
  io.verdict = Verdict::kError;
  io.error = Error{ErrorCode::kIoError};
  EXPECT_FALSE(ResultOffsetInFile(io));
  CheckResult valid;
  valid.verdict = Verdict::kValid;
  EXPECT_FALSE(ResultOffsetInFile(valid));
}

TEST(VerdictTest, EnvelopeFields) {
  CheckResult valid;
  valid.file = "a.safetensors";
  valid.format = Format::kSafetensors;
  valid.verdict = Verdict::kValid;
  EXPECT_EQ(EnvelopeJson(valid), R"({"schema_version":2,"file":"a.safetensors",)"
                                  R"("format":"safetensors","verdict":"valid"})");
  CheckResult invalid = valid;
  invalid.verdict = Verdict::kInvalid;
  invalid.error = Error{ErrorCode::kInvalidShape, 42, "bad shape", "dims", "w"};
  EXPECT_EQ(EnvelopeJson(invalid),
            R"({"schema_version":2,"file":"a.safetensors","format":"safetensors",)"
            R"("verdict":"invalid","code":"InvalidShape","message":"bad shape: dims",)"
            R"("offset":42,"tensor":"w"})");
  CheckResult io = valid;
  io.verdict = Verdict::kError;
  io.error = Error{ErrorCode::kIoError, 0, "cannot open file"};
  EXPECT_EQ(EnvelopeJson(io).find("offset"), std::string::npos);
  // A folder shows an offset only with the member it is in.
  CheckResult folder = invalid;
  folder.is_folder = true;
  EXPECT_EQ(EnvelopeJson(folder).find("offset"), std::string::npos);
  EXPECT_NE(EnvelopeJson(folder).find(R"("format":"folder")"), std::string::npos);
  folder.member = "model.safetensors";
  EXPECT_NE(EnvelopeJson(folder).find(R"("offset":42,"member":"model.safetensors")"),
            std::string::npos);
  // Paths that are not UTF-8 stay valid JSON.
  valid.file = "a\xff";
  EXPECT_NE(EnvelopeJson(valid).find(R"("file":"a\\xff")"), std::string::npos);
}

TEST(VerdictTest, CheckPathDispatchesByContent) {
  TempDir dir;
  const std::string st = dir.File("weights.bin");  // a safetensors file, whatever its name
  ASSERT_TRUE(WriteFileBytes(st, ReadFileBytes(kCorpus + "valid/worked_example.safetensors")));
  CheckResult result = CheckPath(st);
  EXPECT_EQ(result.format, Format::kSafetensors);
  EXPECT_EQ(result.verdict, Verdict::kValid);
  EXPECT_EQ(result.summary.tensors, 1u);

  result = CheckPath(kCorpus + "torch/valid/dtypes.zip.pt");
  EXPECT_EQ(result.format, Format::kPytorchZip);
  EXPECT_EQ(result.verdict, Verdict::kValid);
  ASSERT_TRUE(result.pickle.has_value());
  EXPECT_EQ(result.pickle->scan.tensors.size(), 11u);

  // needs-key is valid, with a warning naming the key.
  result = CheckPath(kCorpus + "torch/valid/training.zip.pt");
  EXPECT_EQ(result.verdict, Verdict::kValid);
  ASSERT_EQ(result.warnings.size(), 1u);
  EXPECT_NE(result.warnings[0].message.find("--key state_dict"), std::string::npos);

  result = CheckPath(kCorpus + "torch/refuse/PickleGlobalRefused__raw_os_system.pt");
  EXPECT_EQ(result.format, Format::kPickle);
  EXPECT_EQ(result.verdict, Verdict::kRefused);
  EXPECT_EQ(result.error.code, ErrorCode::kPickleGlobalRefused);

  result = CheckPath(dir.File("absent"));
  EXPECT_EQ(result.verdict, Verdict::kError);
  EXPECT_EQ(result.error.code, ErrorCode::kIoError);
}

TEST(VerdictTest, TruncatedSafetensorsIsInvalidNotRefused) {
  TempDir dir;
  std::string bytes = ReadFileBytes(kCorpus + "valid/worked_example.safetensors");
  bytes.resize(bytes.size() - 1);
  ASSERT_TRUE(WriteFileBytes(dir.File("t"), bytes));
  const CheckResult result = CheckPath(dir.File("t"));
  EXPECT_EQ(result.verdict, Verdict::kInvalid);
  EXPECT_NE(result.error.code, ErrorCode::kOk);
}

TEST(VerdictTest, UsageErrorNamesTheFlag) {
  const CheckResult result = UsageError("m.bin", Format::kPytorchZip, "--canonical",
                                        "safetensors files");
  EXPECT_EQ(result.verdict, Verdict::kError);
  EXPECT_EQ(result.exit_status(), 2);
  EXPECT_EQ(result.error.context, "--canonical applies to safetensors files, not pytorch-zip");
}

TEST(VerdictTest, FolderExaminesEachFileOnce) {
  TempDir dir;
  ASSERT_TRUE(WriteFileBytes(dir.File("model.safetensors"),
                             ReadFileBytes(kCorpus + "valid/worked_example.safetensors")));
  ASSERT_TRUE(WriteFileBytes(dir.File("a.bin"), ReadFileBytes(kCorpus + "torch/valid/dtypes.zip.pt")));
  ASSERT_TRUE(WriteFileBytes(
      dir.File("b.bin"), ReadFileBytes(kCorpus + "torch/refuse/PickleGlobalRefused__raw_os_system.pt")));
  const CheckResult result = CheckPath(dir.path());
  EXPECT_TRUE(result.is_folder);
  EXPECT_EQ(result.verdict, Verdict::kRefused);
  EXPECT_EQ(result.member, "b.bin");
  ASSERT_EQ(result.files.size(), 2u);
  EXPECT_EQ(result.files[0].file, "a.bin");
  EXPECT_EQ(result.files[0].verdict, Verdict::kValid);
  EXPECT_EQ(result.files[1].verdict, Verdict::kRefused);
  // a.bin is a warning; b.bin, which decides, is not repeated as one.
  size_t pickle_warnings = 0;
  for (const Warning& warning : result.warnings) {
    if (warning.kind != WarningKind::kPickleFile) continue;
    ++pickle_warnings;
    EXPECT_EQ(warning.file, "a.bin");
  }
  EXPECT_EQ(pickle_warnings, 1u);
}

// A folder error raised inside a shard names the shard as the member (where its offset
// is); an error about the folder as a whole names none.
TEST(VerdictTest, ShardErrorNamesTheShardAsMember) {
  TempDir dir;
  ASSERT_TRUE(WriteFileBytes(dir.File("a.safetensors"),
                             ReadFileBytes(kCorpus + "valid/worked_example.safetensors")));
  // b.safetensors: a header length far over the bound (HeaderTooLarge at byte 0).
  ASSERT_TRUE(WriteFileBytes(dir.File("b.safetensors"), std::string("\xff\xff\xff\xff\xff\0\0\0{}", 10)));
  const CheckResult broken = CheckPath(dir.path());
  EXPECT_EQ(broken.verdict, Verdict::kInvalid);
  EXPECT_EQ(broken.error.code, ErrorCode::kHeaderTooLarge);
  EXPECT_EQ(broken.member, "b.safetensors");
  EXPECT_NE(EnvelopeJson(broken).find(R"("offset":0,"member":"b.safetensors")"),
            std::string::npos) << EnvelopeJson(broken);
  // Reject: a folder with no weights at all is the folder's own error, with no member.
  TempDir empty;
  ASSERT_TRUE(WriteFileBytes(empty.File("notes.txt"), "no weights"));
  const CheckResult none = CheckPath(empty.path());
  EXPECT_EQ(none.error.code, ErrorCode::kNoSafetensorsInFolder);
  EXPECT_EQ(none.member, "");
  EXPECT_EQ(EnvelopeJson(none).find("offset"), std::string::npos) << EnvelopeJson(none);
}

// A folder with no safetensors is told by its own code; one with a pickle (and no
// safetensors) is judged by that file instead.
TEST(VerdictTest, NoSafetensorsHasItsOwnCode) {
  TempDir empty;
  EXPECT_EQ(CheckPath(empty.path()).error.code, ErrorCode::kNoSafetensorsInFolder);
  EXPECT_EQ(ErrorCodeName(ErrorCode::kNoSafetensorsInFolder), "NoSafetensorsInFolder");
  TempDir torch_only;
  ASSERT_TRUE(WriteFileBytes(torch_only.File("pytorch_model.bin"),
                             ReadFileBytes(kCorpus + "torch/valid/dtypes.zip.pt")));
  const CheckResult result = CheckPath(torch_only.path());
  EXPECT_EQ(result.verdict, Verdict::kValid) << result.error.ToString();
  // Another folder error with the old code (a shard the index names is missing) is not
  // taken for "no safetensors": it stays the folder's verdict.
  TempDir missing;
  ASSERT_TRUE(WriteFileBytes(missing.File("model.safetensors.index.json"),
                             R"({"weight_map":{"w":"absent.safetensors"}})"));
  ASSERT_TRUE(WriteFileBytes(missing.File("pytorch_model.bin"),
                             ReadFileBytes(kCorpus + "torch/valid/dtypes.zip.pt")));
  const CheckResult absent = CheckPath(missing.path());
  EXPECT_EQ(absent.verdict, Verdict::kInvalid);
  EXPECT_EQ(absent.error.code, ErrorCode::kMissingShard);
}

// Refused outranks invalid: a malicious pickle beside a broken shard refuses the folder
// (the pickle scan runs even when the safetensors are invalid).
TEST(VerdictTest, RefusedPickleBesideABrokenShardIsRefused) {
  TempDir dir;
  ASSERT_TRUE(WriteFileBytes(dir.File("model.safetensors"), std::string("\xff\xff\xff\xff\xff\0\0\0{}", 10)));
  const CheckResult broken = CheckPath(dir.path());
  EXPECT_EQ(broken.verdict, Verdict::kInvalid);  // accept: a broken shard alone is invalid
  ASSERT_TRUE(WriteFileBytes(
      dir.File("pytorch_model.bin"),
      ReadFileBytes(kCorpus + "torch/refuse/PickleGlobalRefused__raw_os_system.pt")));
  const CheckResult refused = CheckPath(dir.path());
  EXPECT_EQ(refused.verdict, Verdict::kRefused);
  EXPECT_EQ(refused.error.code, ErrorCode::kPickleGlobalRefused);
  EXPECT_EQ(refused.member, "pytorch_model.bin");
  // Through an index file too (the folder is the index's).
  ASSERT_TRUE(WriteFileBytes(dir.File("model.safetensors.index.json"),
                             R"({"weight_map":{"w":"model.safetensors"}})"));
  EXPECT_EQ(CheckPath(dir.File("model.safetensors.index.json")).verdict, Verdict::kRefused);
}

// A remote read that leaves checks out says so on the verdict line and in `unchecked`
// (the page's and the command line's words); a local read of the same file, none.
TEST(VerdictTest, VerdictLineNamesWhatARemoteReadLeftUnchecked) {
  const std::string path = std::string(STGUARD_CORPUS_DIR) + "/torch/valid/dtypes.zip.pt";
  Result<std::unique_ptr<MappedFile>> file = MappedFile::OpenUnmapped(path);
  ASSERT_TRUE(file.ok());
  const testing::RecordingSource remote(**file, /*remote=*/true);
  const CheckResult far = CheckSource(remote, path);
  ASSERT_TRUE(far.valid());
  ASSERT_EQ(far.unchecked.size(), 1u);
  EXPECT_TRUE(far.unchecked[0].ends_with(" storage checksums")) << far.unchecked[0];
  EXPECT_EQ(VerdictLine(far), "valid (remote: " + far.unchecked[0] + " not read)");
  const CheckResult near = CheckSource(**file, path);
  EXPECT_TRUE(near.unchecked.empty());
  EXPECT_EQ(VerdictLine(near), "valid");
  CheckResult two = far;
  two.verdict = Verdict::kInvalid;
  two.unchecked.push_back("tensor padding");
  EXPECT_EQ(VerdictLine(two),
            "invalid (remote: " + far.unchecked[0] + ", tensor padding not read)");
}

}  // namespace
}  // namespace stguard
