// SPDX-License-Identifier: Apache-2.0
// The verdict on pickle-bearing files (one rule, one vocabulary) and the bounded folder
// walk that finds them by content.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "stguard/file_verdict.h"
#include "stguard/folder_scan.h"
#include "support/temp_dir.h"
#include "support/test_files.h"

namespace stguard {
namespace {

using testing::ReadFileBytes;
using testing::TempDir;
using testing::WriteFileBytes;

const std::string kTorch = std::string(STGUARD_CORPUS_DIR) + "/torch/";
const std::string kSample = std::string(STGUARD_CORPUS_DIR) + "/sample.safetensors";

PickleFileReport JudgeText(std::string_view bytes) {
  return JudgePickleBytes(std::as_bytes(std::span(bytes.data(), bytes.size())));
}

TEST(FileVerdictTest, NamesAndFolderPolicy) {
  EXPECT_EQ(FileVerdictName(FileVerdict::kClean), "clean");
  EXPECT_EQ(FileVerdictName(FileVerdict::kNeedsKey), "needs-key");
  EXPECT_EQ(FileVerdictName(FileVerdict::kNamesCode), "names-code");
  EXPECT_EQ(FileVerdictName(FileVerdict::kCannotProveSafe), "cannot-prove-safe");
  EXPECT_FALSE(VerdictFailsFolder(FileVerdict::kClean));
  EXPECT_FALSE(VerdictFailsFolder(FileVerdict::kNeedsKey));
  EXPECT_TRUE(VerdictFailsFolder(FileVerdict::kNamesCode));
  EXPECT_TRUE(VerdictFailsFolder(FileVerdict::kCannotProveSafe));
}

TEST(FileVerdictTest, OneRuleFromScanOutcomeToVerdict) {
  auto decide = [](ErrorCode code, uint8_t opcode = 0) {
    return DecidePickleVerdict(Error{code, 0, "x"}, opcode);
  };
  EXPECT_EQ(decide(ErrorCode::kOk), FileVerdict::kClean);
  EXPECT_EQ(decide(ErrorCode::kRawPickle), FileVerdict::kClean);
  EXPECT_EQ(decide(ErrorCode::kNotAStateDict), FileVerdict::kNeedsKey);
  EXPECT_EQ(decide(ErrorCode::kPickleGlobalRefused), FileVerdict::kNamesCode);
  EXPECT_EQ(decide(ErrorCode::kPickleBadArguments), FileVerdict::kNamesCode);
  EXPECT_EQ(decide(ErrorCode::kPickleOpcodeRefused, 0x81), FileVerdict::kNamesCode);  // NEWOBJ
  EXPECT_EQ(decide(ErrorCode::kPickleOpcodeRefused, 'S'), FileVerdict::kCannotProveSafe);
  for (ErrorCode code : {ErrorCode::kZipUnsupported, ErrorCode::kPickleCorrupt,
                         ErrorCode::kNotATorchCheckpoint, ErrorCode::kTensorOutOfBounds,
                         ErrorCode::kZipChecksum}) {
    EXPECT_EQ(decide(code), FileVerdict::kCannotProveSafe) << ErrorCodeName(code);
  }
}

TEST(FileVerdictTest, CorpusFiles) {
  EXPECT_EQ(JudgePickleFile(kTorch + "valid/dtypes.zip.pt").verdict, FileVerdict::kClean);
  EXPECT_EQ(JudgePickleFile(kTorch + "valid/dtypes.legacy.pt").verdict, FileVerdict::kClean);
  EXPECT_EQ(JudgePickleFile(kTorch + "refuse/RawPickle__raw_clean_pickle.pt").verdict,
            FileVerdict::kClean);
  const PickleFileReport evil = JudgePickleFile(kTorch + "refuse/PickleGlobalRefused__zip_os_system.pt");
  EXPECT_EQ(evil.verdict, FileVerdict::kNamesCode);
  EXPECT_EQ(evil.reason.code, ErrorCode::kPickleGlobalRefused);
  EXPECT_EQ(JudgePickleFile(kTorch + "refuse/PickleOpcodeRefused__newobj.pt").verdict,
            FileVerdict::kNamesCode);
  const PickleFileReport deflated = JudgePickleFile(kTorch + "refuse/ZipUnsupported__deflated.pt");
  EXPECT_EQ(deflated.verdict, FileVerdict::kCannotProveSafe);
  EXPECT_EQ(deflated.format, Format::kPytorchZip);
  EXPECT_NE(DescribeVerdict(deflated).find("ZipUnsupported"), std::string::npos);
}

TEST(FileVerdictTest, NeedsKeyListsTheKeys) {
  const PickleFileReport training = JudgePickleFile(kTorch + "valid/training.zip.pt");
  EXPECT_EQ(training.verdict, FileVerdict::kNeedsKey);
  EXPECT_EQ(training.key_paths, (std::vector<std::vector<std::string>>{{"state_dict"}}));
  EXPECT_NE(DescribeVerdict(training).find("--key state_dict"), std::string::npos);
  const PickleFileReport nested = JudgePickleFile(kTorch + "valid/nested.zip.pt");
  EXPECT_EQ(nested.verdict, FileVerdict::kNeedsKey);
  ASSERT_FALSE(nested.key_paths.empty());
  EXPECT_EQ(nested.key_paths[0], (std::vector<std::string>{"module", "model"}));
  // With the key, the same file is clean.
  TorchOptions options;
  options.key_path = {"state_dict"};
  EXPECT_EQ(JudgePickleFile(kTorch + "valid/training.zip.pt", options).verdict,
            FileVerdict::kClean);
}

TEST(FileVerdictTest, BytesAfterABarePickleStopCannotBeProvenSafe) {
  // A bare pickle ending at its STOP is clean (accept); the same pickle followed by a
  // second one (picklescan's malicious6.pkl: a list, then a call) or by any byte is not:
  // pickle.load in a loop runs what follows.
  const std::string list = std::string("\x80\x02]", 3) + ".";
  EXPECT_EQ(JudgeText(list).verdict, FileVerdict::kClean);
  EXPECT_EQ(JudgeText(list).reason.code, ErrorCode::kRawPickle);
  const PickleFileReport stacked =
      JudgeText(list + std::string("\x80\x02", 2) + "cbuiltins\nprint\n(X\x01\0\0\0mtR.");
  EXPECT_EQ(stacked.verdict, FileVerdict::kCannotProveSafe);
  EXPECT_EQ(stacked.reason.code, ErrorCode::kTrailingContent);
  EXPECT_EQ(stacked.reason.offset, list.size());
  EXPECT_EQ(JudgeText(list + "\n").verdict, FileVerdict::kCannotProveSafe);
  // The legacy stream continues after STOP by design and stays readable; a pickle after
  // its last storage does not.
  EXPECT_EQ(JudgePickleFile(kTorch + "valid/training.legacy.pt").verdict, FileVerdict::kNeedsKey);
  EXPECT_EQ(JudgePickleFile(kTorch + "bypass/TrailingContent__legacy_then_pickle.pt").verdict,
            FileVerdict::kCannotProveSafe);
  // The library's converter refuses what the verdict refuses (one rule for every front).
  const std::string path = ::testing::TempDir() + "stacked.pkl";
  ASSERT_TRUE(WriteFileBytes(path, list + list));
  EXPECT_EQ(TorchCheckpoint::Open(path).error().code, ErrorCode::kTrailingContent);
}

TEST(FileVerdictTest, ProtocolZeroAndTarAreNeverClean) {
  // The reader reads only PROTO pickles; the walk still names the global a protocol-0
  // pickle imports, so os.system is reported as code, not as merely unreadable.
  const PickleFileReport p0 = JudgeText("cos\nsystem\n(S'touch marker'\ntR.");
  EXPECT_EQ(p0.format, Format::kPickle);
  EXPECT_EQ(p0.verdict, FileVerdict::kNamesCode);
  EXPECT_EQ(p0.reason.code, ErrorCode::kPickleGlobalRefused);
  EXPECT_EQ(p0.reason.context, "os.system");
  EXPECT_EQ(JudgeText("(S'x'\nios\nsystem\n.").verdict, FileVerdict::kNamesCode);  // INST
  // A harmless protocol-0 dict cannot be proven safe either: the reader does not read it.
  const PickleFileReport dict = JudgeText("(dp0\nS'a'\np1\nI1\ns.");
  EXPECT_EQ(dict.format, Format::kPickle);
  EXPECT_EQ(dict.verdict, FileVerdict::kCannotProveSafe);
  std::string tar(1536, '\0');
  std::memcpy(tar.data(), "storages", 8);
  std::memcpy(tar.data() + 148, "        ", 8);
  unsigned sum = 0;
  for (unsigned char c : tar.substr(0, 512)) sum += c;
  char field[8];
  std::snprintf(field, sizeof(field), "%06o", sum);
  std::memcpy(tar.data() + 148, field, 7);
  const PickleFileReport judged = JudgeText(tar);
  EXPECT_EQ(judged.format, Format::kTar);
  EXPECT_EQ(judged.verdict, FileVerdict::kCannotProveSafe);
}

// ---- the folder walk ------------------------------------------------------------------

void Copy(const std::string& from, const std::string& to) {
  ASSERT_TRUE(WriteFileBytes(to, ReadFileBytes(from))) << to;
}

std::vector<std::string> Names(const FolderScanReport& report) {
  std::vector<std::string> names;
  for (const FolderScanEntry& entry : report.files) names.push_back(entry.name);
  return names;
}

TEST(FolderScanTest, FindsPicklesByContentInSubfolders) {
  TempDir dir;
  Copy(kSample, dir.File("model.safetensors"));
  ASSERT_TRUE(WriteFileBytes(dir.File("config.json"), "{\"hidden_size\": 8}"));
  ASSERT_EQ(::mkdir(dir.File("original").c_str(), 0700), 0);
  ASSERT_EQ(::mkdir(dir.File("checkpoint-500").c_str(), 0700), 0);
  Copy(kTorch + "valid/dtypes.zip.pt", dir.File("original/consolidated.00.pth"));
  Copy(kTorch + "refuse/PickleGlobalRefused__zip_os_system.pt", dir.File("checkpoint-500/blob"));
  const FolderScanReport report = ScanFolderForPickles(dir.path());
  ASSERT_TRUE(report.error.ok()) << report.error.ToString();
  EXPECT_EQ(Names(report),
            (std::vector<std::string>{"checkpoint-500/blob", "original/consolidated.00.pth"}));
  const FolderScanEntry* failure = FirstFolderFailure(report);
  ASSERT_NE(failure, nullptr);
  EXPECT_EQ(failure->name, "checkpoint-500/blob");
  EXPECT_EQ(failure->report.verdict, FileVerdict::kNamesCode);
  // Accept: without the malicious file nothing fails the folder.
  ASSERT_EQ(::unlink(dir.File("checkpoint-500/blob").c_str()), 0);
  EXPECT_EQ(FirstFolderFailure(ScanFolderForPickles(dir.path())), nullptr);
}

TEST(FolderScanTest, BoundsOnDepthAndNames) {
  TempDir dir;
  std::string deep = dir.path();
  for (int level = 0; level < 3; ++level) {
    deep += "/d";
    ASSERT_EQ(::mkdir(deep.c_str(), 0700), 0);
  }
  FolderScanOptions options;
  options.max_depth = 3;
  EXPECT_TRUE(ScanFolderForPickles(dir.path(), options).error.ok());
  options.max_depth = 2;
  EXPECT_EQ(ScanFolderForPickles(dir.path(), options).error.code, ErrorCode::kFolderTooLarge);
  options = {};
  for (int k = 0; k < 5; ++k) ASSERT_TRUE(WriteFileBytes(dir.File("f" + std::to_string(k)), "x"));
  options.max_entries = 8;  // 5 files + 3 folders
  EXPECT_TRUE(ScanFolderForPickles(dir.path(), options).error.ok());
  options.max_entries = 7;
  EXPECT_EQ(ScanFolderForPickles(dir.path(), options).error.code, ErrorCode::kFolderTooLarge);
}

TEST(FolderScanTest, LinksAreNotFollowedOut) {
  TempDir outside;
  TempDir dir;
  Copy(kTorch + "refuse/PickleGlobalRefused__zip_os_system.pt", outside.File("evil.pt"));
  ASSERT_EQ(::symlink(outside.path().c_str(), dir.File("linked_folder").c_str()), 0);
  // A link to a folder out of this one is never walked, and reported unless allowed (a
  // loader given a subfolder would follow it).
  FolderScanReport linked = ScanFolderForPickles(dir.path());
  ASSERT_EQ(linked.files.size(), 1u);
  EXPECT_EQ(linked.files[0].name, "linked_folder");
  EXPECT_EQ(linked.files[0].report.reason.code, ErrorCode::kUnsafeShardName);
  FolderScanOptions allowed;
  allowed.allow_external_symlinks = true;
  EXPECT_TRUE(ScanFolderForPickles(dir.path(), allowed).files.empty());  // still not walked
  ASSERT_EQ(::unlink(dir.File("linked_folder").c_str()), 0);
  ASSERT_EQ(::symlink(outside.File("evil.pt").c_str(), dir.File("weights.pt").c_str()), 0);
  FolderScanReport report = ScanFolderForPickles(dir.path());
  ASSERT_EQ(report.files.size(), 1u);
  EXPECT_EQ(report.files[0].report.reason.code, ErrorCode::kUnsafeShardName);
  EXPECT_EQ(report.files[0].report.verdict, FileVerdict::kCannotProveSafe);
  FolderScanOptions options;
  options.allow_external_symlinks = true;
  report = ScanFolderForPickles(dir.path(), options);
  ASSERT_EQ(report.files.size(), 1u);
  EXPECT_EQ(report.files[0].report.verdict, FileVerdict::kNamesCode);
  // A link that stays inside is read without the option.
  Copy(kTorch + "valid/dtypes.zip.pt", dir.File("real.pt"));
  ASSERT_EQ(::unlink(dir.File("weights.pt").c_str()), 0);
  ASSERT_EQ(::symlink("real.pt", dir.File("weights.pt").c_str()), 0);
  report = ScanFolderForPickles(dir.path());
  ASSERT_EQ(report.files.size(), 2u);
  EXPECT_EQ(report.files[1].report.verdict, FileVerdict::kClean);
}

// A FIFO or device is never opened by the walk (a FIFO would block it), but a loader that
// opens it by name (torch.load("pytorch_model.bin")) reads whatever it delivers: the folder
// cannot be shown harmless, whether the name is there or a link inside leads to it.
TEST(FolderScanTest, FifosCannotBeProvenSafe) {
  TempDir dir;
  Copy(kSample, dir.File("model.safetensors"));
  ASSERT_TRUE(WriteFileBytes(dir.File("config.json"), "{\"hidden_size\": 8}"));
  EXPECT_EQ(FirstFolderFailure(ScanFolderByContent(dir.path())), nullptr);  // accept
  ASSERT_EQ(::mkfifo(dir.File("pytorch_model.bin").c_str(), 0600), 0);
  FolderScanReport report = ScanFolderByContent(dir.path());
  ASSERT_TRUE(report.error.ok()) << report.error.ToString();
  ASSERT_EQ(Names(report), std::vector<std::string>{"pytorch_model.bin"});
  EXPECT_EQ(report.files[0].report.verdict, FileVerdict::kCannotProveSafe);
  EXPECT_EQ(report.files[0].report.reason.code, ErrorCode::kUnsafeShardName);
  EXPECT_EQ(FirstFolderFailure(report), &report.files[0]);
  ASSERT_EQ(::rename(dir.File("pytorch_model.bin").c_str(), dir.File("pipe").c_str()), 0);
  ASSERT_EQ(::symlink("pipe", dir.File("weights.pt").c_str()), 0);
  report = ScanFolderForPickles(dir.path());
  EXPECT_EQ(Names(report), (std::vector<std::string>{"pipe", "weights.pt"}));
  for (const FolderScanEntry& entry : report.files) {
    EXPECT_EQ(entry.report.reason.code, ErrorCode::kUnsafeShardName) << entry.name;
  }
}

}  // namespace
}  // namespace stguard
