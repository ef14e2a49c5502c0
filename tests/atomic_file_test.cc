// SPDX-License-Identifier: Apache-2.0
// Nothing lost on write: whatever fails or dies while the writer runs, the destination
// holds the old file or the complete new one, and failures leave no temporary file.
//
// Three ways to interrupt: an injected errno at every system call in turn (fault hook), a
// SIGKILL at every system call in turn and at random times (forked children), and a real
// "disk full" from RLIMIT_FSIZE (a forked child ignoring SIGXFSZ gets EFBIG).
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "write/atomic_file.h"
#include "stguard/reader.h"
#include "stguard/writer.h"
#include "support/temp_dir.h"
#include "support/tensor_set.h"
#include "support/test_files.h"

namespace stguard {
namespace {

using testing::AsBytes;
using testing::FileWithHeader;
using testing::ReadFileBytes;
using testing::TempDir;
using testing::WriteFileBytes;

const char kName[] = "model.safetensors";
const char kOldContent[] = "the old file, which must survive every failed write";

// BigFile is a writer for a file of about 2.6 MB: a 1.5 MiB tensor that bypasses the
// write buffer and smaller ones that go through it, so one write makes several write(2)
// calls of both kinds.
struct BigFile {
  BigFile() {
    big.resize(3 << 19);
    for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 131 + 7);
    small_a.assign(600000, 'a');
    small_b.assign(500000, 'b');
    EXPECT_TRUE(writer.AddTensor("big", Dtype::kU8, {big.size()}, AsBytes(big)).ok());
    EXPECT_TRUE(writer.AddTensor("a", Dtype::kI16, {small_a.size() / 2}, AsBytes(small_a)).ok());
    EXPECT_TRUE(writer.AddTensor("b", Dtype::kU8, {small_b.size()}, AsBytes(small_b)).ok());
    EXPECT_TRUE(writer.AddMetadata("format", "test").ok());
    Result<std::string> bytes = writer.WriteToString();
    EXPECT_TRUE(bytes.ok());
    expected = *bytes;
  }
  std::string big;
  std::string small_a;
  std::string small_b;
  Writer writer;
  std::string expected;  // the complete new file
};

class HookGuard {
 public:
  explicit HookGuard(FileFaultHook hook) { SetFileFaultHookForTesting(std::move(hook)); }
  ~HookGuard() { SetFileFaultHookForTesting(nullptr); }
};

// RemoveTempFiles deletes what a killed writer left behind and returns how many there
// were; anything else but the destination fails the test.
int RemoveTempFiles(const TempDir& dir) {
  int count = 0;
  for (const std::string& name : dir.Entries()) {
    if (name == kName) continue;
    EXPECT_EQ(name.rfind(std::string(".") + kName + ".stguard-", 0), 0u) << name;
    unlink(dir.File(name).c_str());
    ++count;
  }
  return count;
}

TEST(AtomicFileTest, CommitWritesTheFileAndLeavesNothingElse) {
  TempDir dir;
  const std::string path = dir.File(kName);
  Result<std::unique_ptr<AtomicFile>> file = AtomicFile::Create(path);
  ASSERT_TRUE(file.ok()) << file.error().ToString();
  EXPECT_EQ((*file)->temp_path().rfind(dir.path() + "/." + kName + ".stguard-", 0), 0u);
  ASSERT_TRUE((*file)->Write(AsBytes("hello ")).ok());
  ASSERT_TRUE((*file)->Write(AsBytes("world")).ok());
  EXPECT_EQ((*file)->bytes_written(), 11u);
  // Nothing at the destination before the commit.
  EXPECT_EQ(access(path.c_str(), F_OK), -1);
  ASSERT_TRUE((*file)->Commit().ok());
  EXPECT_EQ(ReadFileBytes(path), "hello world");
  EXPECT_EQ(dir.Entries(), std::vector<std::string>{kName});
  // A committed file takes no more writes.
  EXPECT_FALSE((*file)->Write(AsBytes("x")).ok());
  EXPECT_FALSE((*file)->Commit().ok());
}

TEST(AtomicFileTest, DestroyingWithoutCommitRemovesTheTemporaryFile) {
  TempDir dir;
  const std::string path = dir.File(kName);
  ASSERT_TRUE(WriteFileBytes(path, kOldContent));
  {
    Result<std::unique_ptr<AtomicFile>> file = AtomicFile::Create(path);
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE((*file)->Write(AsBytes("partial")).ok());
    EXPECT_EQ(dir.Entries().size(), 2u);
  }
  EXPECT_EQ(ReadFileBytes(path), kOldContent);
  EXPECT_EQ(dir.Entries(), std::vector<std::string>{kName});
}

TEST(AtomicFileTest, KeepsThePermissionBitsOfTheFileItReplaces) {
  TempDir dir;
  const std::string path = dir.File(kName);
  ASSERT_TRUE(WriteFileBytes(path, kOldContent));
  ASSERT_EQ(chmod(path.c_str(), 0640), 0);
  Writer writer;
  ASSERT_TRUE(writer.WriteToFile(path).ok());
  struct stat status;
  ASSERT_EQ(stat(path.c_str(), &status), 0);
  EXPECT_EQ(status.st_mode & 07777, 0640u);
}

TEST(AtomicFileTest, ReplacesTheTargetOfASymbolicLinkNotTheLink) {
  TempDir dir;
  const std::string target = dir.File("target.safetensors");
  const std::string link = dir.File("link.safetensors");
  ASSERT_TRUE(WriteFileBytes(target, kOldContent));
  ASSERT_EQ(symlink("target.safetensors", link.c_str()), 0);
  Writer writer;
  ASSERT_TRUE(writer.WriteToFile(link).ok());
  struct stat status;
  ASSERT_EQ(lstat(link.c_str(), &status), 0);
  EXPECT_TRUE(S_ISLNK(status.st_mode));
  EXPECT_EQ(ReadFileBytes(target).size(), 16u);
}

TEST(AtomicFileTest, UnwritableDestinationsAreIoErrors) {
  TempDir dir;
  Writer writer;
  EXPECT_EQ(writer.WriteToFile(dir.File("no/such/dir/x")).code, ErrorCode::kIoError);
  EXPECT_EQ(writer.WriteToFile(dir.path()).code, ErrorCode::kNotARegularFile);
  EXPECT_EQ(writer.WriteToFile(dir.path() + "/").code, ErrorCode::kNotARegularFile);
  EXPECT_EQ(writer.WriteToFile("/dev/null").code, ErrorCode::kNotARegularFile);
  EXPECT_EQ(writer.WriteToFile("").code, ErrorCode::kIoError);
  EXPECT_TRUE(dir.Entries().empty());
}

TEST(AtomicFileTest, LongFileNamesStillGetATemporaryName) {
  TempDir dir;
  const std::string path = dir.File(std::string(250, 'n'));
  Writer writer;
  const Error error = writer.WriteToFile(path);
  EXPECT_TRUE(error.ok()) << error.ToString();
  EXPECT_EQ(dir.Entries(), std::vector<std::string>{std::string(250, 'n')});
}

// ---- injected failures at every system call

class FaultInjectionTest : public ::testing::TestWithParam<int> {};

TEST_P(FaultInjectionTest, EveryFailingCallLeavesTheOldFileOrTheNewOne) {
  const int injected_errno = GetParam();
  TempDir dir;
  const std::string path = dir.File(kName);
  BigFile file;
  std::vector<FileOp> ops_seen;
  bool reached_success = false;
  for (int k = 0; k < 100 && !reached_success; ++k) {
    SCOPED_TRACE("failing call " + std::to_string(k));
    ASSERT_TRUE(WriteFileBytes(path, kOldContent));
    int calls = 0;
    std::optional<FileOp> failed_op;
    Error error;
    {
      HookGuard guard([&](FileOp op) {
        if (calls++ != k) return 0;
        failed_op = op;
        return injected_errno;
      });
      error = file.writer.WriteToFile(path);
    }
    EXPECT_EQ(dir.Entries(), std::vector<std::string>{kName});
    if (!failed_op.has_value()) {
      EXPECT_TRUE(error.ok()) << error.ToString();
      EXPECT_TRUE(ReadFileBytes(path) == file.expected);
      reached_success = true;
      break;
    }
    ops_seen.push_back(*failed_op);
    EXPECT_EQ(error.code, ErrorCode::kIoError);
    EXPECT_NE(error.context.find(std::strerror(injected_errno)), std::string::npos)
        << error.ToString();
    if (*failed_op == FileOp::kSyncDir) {
      // The rename happened: the new file is complete, only its durability is in doubt.
      EXPECT_TRUE(ReadFileBytes(path) == file.expected);
    } else {
      EXPECT_EQ(ReadFileBytes(path), kOldContent);
    }
  }
  EXPECT_TRUE(reached_success);
  // create, at least three writes, fsync, close, rename, directory fsync.
  ASSERT_GE(ops_seen.size(), 8u);
  EXPECT_EQ(ops_seen.front(), FileOp::kCreate);
  EXPECT_EQ(ops_seen.back(), FileOp::kSyncDir);
  EXPECT_GE(std::count(ops_seen.begin(), ops_seen.end(), FileOp::kWrite), 3);
}

INSTANTIATE_TEST_SUITE_P(Errnos, FaultInjectionTest,
                         ::testing::Values(EIO, ENOSPC, EFBIG, EDQUOT),
                         [](const ::testing::TestParamInfo<int>& error) -> std::string {
                           switch (error.param) {
                             case EIO: return "EIO";
                             case ENOSPC: return "ENOSPC";
                             case EFBIG: return "EFBIG";
                             case EDQUOT: return "EDQUOT";
                             default: return "errno" + std::to_string(error.param);
                           }
                         });

TEST(TempNameTest, CreateRetriesWhenTheTemporaryNameIsTaken) {
  TempDir dir;
  int calls = 0;
  HookGuard guard([&](FileOp op) {
    return op == FileOp::kCreate && calls++ < 3 ? EEXIST : 0;
  });
  Writer writer;
  EXPECT_TRUE(writer.WriteToFile(dir.File(kName)).ok());
  EXPECT_EQ(calls, 4);
}

// ---- crashes

// KillChildAt forks a child that writes `file` to `path` and kills itself with SIGKILL at
// its k-th system call. Returns the child's wait status.
int KillChildAt(BigFile& file, const std::string& path, int k) {
  const pid_t pid = fork();
  if (pid == 0) {
    int calls = 0;
    SetFileFaultHookForTesting([&](FileOp) {
      if (calls++ == k) raise(SIGKILL);
      return 0;
    });
    const Error error = file.writer.WriteToFile(path);
    _exit(error.ok() ? 0 : 3);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

TEST(CrashTest, KilledAtEverySystemCallTheDestinationIsOldOrNew) {
  TempDir dir;
  const std::string path = dir.File(kName);
  BigFile file;
  int kills = 0;
  for (int k = 0; k < 100; ++k) {
    SCOPED_TRACE("killed at call " + std::to_string(k));
    ASSERT_TRUE(WriteFileBytes(path, kOldContent));
    const int status = KillChildAt(file, path, k);
    const std::string content = ReadFileBytes(path);
    EXPECT_TRUE(content == kOldContent || content == file.expected);
    EXPECT_LE(RemoveTempFiles(dir), 1);
    if (WIFEXITED(status)) {
      EXPECT_EQ(WEXITSTATUS(status), 0);
      EXPECT_TRUE(content == file.expected);
      break;
    }
    ASSERT_TRUE(WIFSIGNALED(status));
    ++kills;
  }
  EXPECT_GE(kills, 8);
}

TEST(CrashTest, KilledAtRandomTimesTheDestinationIsOldOrNew) {
  TempDir dir;
  const std::string path = dir.File(kName);
  // A 16 MiB tensor streamed in 64 KiB chunks: many writes, so kills land mid-stream.
  constexpr uint64_t kLen = 16 << 20;
  Writer writer;
  const uint64_t shape[] = {kLen / 4};
  ASSERT_TRUE(writer
                  .AddTensor("streamed", Dtype::kF32, shape, kLen,
                             [](ByteSink& sink) {
                               std::string chunk(64 << 10, '\x5a');
                               for (uint64_t done = 0; done < kLen; done += chunk.size()) {
                                 if (Error e = sink.Write(AsBytes(chunk)); !e.ok()) return e;
                               }
                               return Error{};
                             })
                  .ok());
  Result<uint64_t> new_size = writer.FileSize();
  ASSERT_TRUE(new_size.ok());

  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(writer.WriteToFile(path).ok());
  const auto full_write_us = std::chrono::duration_cast<std::chrono::microseconds>(
                                 std::chrono::steady_clock::now() - start)
                                 .count();
  std::mt19937 random(12345);
  std::uniform_int_distribution<long> delay_us(0, full_write_us + full_write_us / 4 + 100);
  int old_seen = 0;
  int new_seen = 0;
  for (int i = 0; i < 30; ++i) {
    ASSERT_TRUE(WriteFileBytes(path, kOldContent));
    const pid_t pid = fork();
    if (pid == 0) _exit(writer.WriteToFile(path).ok() ? 0 : 3);
    usleep(static_cast<useconds_t>(delay_us(random)));
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    const std::string content = ReadFileBytes(path);
    if (content == kOldContent) {
      ++old_seen;
    } else {
      // Only the complete new file is acceptable; check it without keeping a copy.
      ++new_seen;
      EXPECT_EQ(content.size(), *new_size);
      Result<Checkpoint> checkpoint = Checkpoint::FromBytes(content);
      ASSERT_TRUE(checkpoint.ok()) << checkpoint.error().ToString();
      ASSERT_EQ(checkpoint->num_tensors(), 1u);
      EXPECT_EQ(checkpoint->tensors()[0].data.size(), kLen);
    }
    EXPECT_LE(RemoveTempFiles(dir), 1);
  }
  EXPECT_EQ(old_seen + new_seen, 30);
}

// ---- a real full disk

TEST(DiskFullTest, FileSizeLimitLeavesTheOldFileAndNoTemporaryFile) {
  TempDir dir;
  const std::string path = dir.File(kName);
  ASSERT_TRUE(WriteFileBytes(path, kOldContent));
  BigFile file;
  const pid_t pid = fork();
  if (pid == 0) {
    // Past the limit, write(2) returns EFBIG instead of raising SIGXFSZ.
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit limit = {64 << 10, 64 << 10};
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0) _exit(10);
    const Error error = file.writer.WriteToFile(path);
    if (error.code != ErrorCode::kIoError) _exit(11);
    if (std::string(error.message) != "could not write the temporary file") _exit(12);
    if (error.context.find(std::strerror(EFBIG)) == std::string::npos) _exit(13);
    if (error.offset != 64 << 10) _exit(14);  // the write stopped exactly at the limit
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(ReadFileBytes(path), kOldContent);
  EXPECT_EQ(dir.Entries(), std::vector<std::string>{kName});
}

// ---- rewriting the file being read

TEST(RewriteInPlaceTest, TheMappingOfTheOldFileStaysValid) {
  TempDir dir;
  const std::string path = dir.File(kName);
  const std::string header =
      R"({"b":{"dtype":"U8","shape":[3],"data_offsets":[0,3]}, "a":{"dtype":"U8","shape":[2],"data_offsets":[3,5]}})";
  const std::string original = FileWithHeader(header, "BBBAA");
  ASSERT_TRUE(WriteFileBytes(path, original));

  Result<Checkpoint> checkpoint = Checkpoint::Open(path);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.error().ToString();
  ASSERT_TRUE(WriteCanonicalFile(*checkpoint, path).ok());

  // The old mapping still shows the old file, byte for byte.
  const std::span<const std::byte> mapped = checkpoint->bytes();
  EXPECT_EQ(std::string_view(reinterpret_cast<const char*>(mapped.data()), mapped.size()),
            original);
  // The file on disk is the canonical form, with the same tensors.
  const std::string rewritten = ReadFileBytes(path);
  EXPECT_EQ(rewritten.substr(rewritten.size() - 5), "AABBB");
  Result<Checkpoint> reopened = Checkpoint::Open(path);
  ASSERT_TRUE(reopened.ok()) << reopened.error().ToString();
  EXPECT_EQ(testing::DescribeDifference(testing::FromCheckpoint(*checkpoint), *reopened), "");
  Result<CanonicalDiff> diff = CompareToCanonical(*reopened);
  ASSERT_TRUE(diff.ok());
  EXPECT_TRUE(diff->canonical);
  EXPECT_EQ(dir.Entries(), std::vector<std::string>{kName});
}

TEST(RewriteInPlaceTest, ReleasingSourcePagesWritesTheSameBytes) {
  TempDir dir;
  const std::string path = dir.File(kName);
  // Two tensors larger than one copy chunk, at offsets that are not page-aligned.
  const uint64_t len = kCanonicalCopyChunkLen + 12345;
  std::string data(2 * len, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i % 251);
  const std::string header = "{\"b\":{\"dtype\":\"U8\",\"shape\":[" + std::to_string(len) +
                             "],\"data_offsets\":[0," + std::to_string(len) +
                             "]},\"a\":{\"dtype\":\"U8\",\"shape\":[" + std::to_string(len) +
                             "],\"data_offsets\":[" + std::to_string(len) + "," +
                             std::to_string(2 * len) + "]}}";
  ASSERT_TRUE(WriteFileBytes(path, FileWithHeader(header, data)));
  Result<Checkpoint> checkpoint = Checkpoint::Open(path);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.error().ToString();
  Result<std::string> expected = CanonicalBytes(*checkpoint);
  ASSERT_TRUE(expected.ok());
  CanonicalWriteOptions options;
  options.release_source_pages = true;
  ASSERT_TRUE(WriteCanonicalFile(*checkpoint, path, options).ok());
  EXPECT_TRUE(ReadFileBytes(path) == *expected);
  // The released pages read back from the (old, still mapped) file unchanged.
  EXPECT_TRUE(std::string_view(reinterpret_cast<const char*>(checkpoint->data().data()),
                               checkpoint->data().size()) == data);

  // Heap bytes survive release too (MADV_PAGEOUT keeps contents).
  const std::string heap_file = FileWithHeader(header, data);
  Result<Checkpoint> from_heap = Checkpoint::FromBytes(heap_file);
  ASSERT_TRUE(from_heap.ok());
  ASSERT_TRUE(WriteCanonicalFile(*from_heap, dir.File("heap"), options).ok());
  EXPECT_TRUE(ReadFileBytes(dir.File("heap")) == *expected);
  EXPECT_TRUE(heap_file.substr(heap_file.size() - data.size()) == data);
}

// RssFileKiB returns the process's resident file-backed memory ("RssFile" in
// /proc/self/status), or -1 when it cannot be read.
long RssFileKiB() {
  std::FILE* status = std::fopen("/proc/self/status", "r");
  if (status == nullptr) return -1;
  char line[256];
  long kib = -1;
  while (std::fgets(line, sizeof(line), status) != nullptr) {
    if (std::sscanf(line, "RssFile: %ld kB", &kib) == 1) break;
  }
  std::fclose(status);
  return kib;
}

TEST(RewriteInPlaceTest, CopyingAMappedCheckpointKeepsItsPagesOutOfMemory) {
  // 128 MiB of data read through the mapping. Without releasing pages, all of them would
  // stay resident until the checkpoint closes; with it, about one copy chunk remains.
  constexpr uint64_t kDataLen = uint64_t{128} << 20;
  TempDir dir;
  const std::string path = dir.File(kName);
  {
    const std::string header = "{\"t\":{\"dtype\":\"U8\",\"shape\":[" +
                               std::to_string(kDataLen) + "],\"data_offsets\":[0," +
                               std::to_string(kDataLen) + "]}}";
    std::FILE* file = std::fopen(path.c_str(), "wb");
    ASSERT_NE(file, nullptr);
    const std::string head = FileWithHeader(header);  // N not padded: not canonical
    std::fwrite(head.data(), 1, head.size(), file);
    const std::string chunk(1 << 20, '\x42');
    for (uint64_t done = 0; done < kDataLen; done += chunk.size()) {
      std::fwrite(chunk.data(), 1, chunk.size(), file);
    }
    ASSERT_EQ(std::fclose(file), 0);
  }
  Result<Checkpoint> checkpoint = Checkpoint::Open(path);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.error().ToString();
  const long before = RssFileKiB();
  if (before < 0) GTEST_SKIP() << "no RssFile in /proc/self/status";
  CanonicalWriteOptions options;
  options.release_source_pages = true;
  ASSERT_TRUE(WriteCanonicalFile(*checkpoint, dir.File("out"), options).ok());
  const long after = RssFileKiB();
  EXPECT_LT(after - before, 32 * 1024) << "resident file-backed KiB grew from " << before
                                       << " to " << after;
  struct stat out_status;
  ASSERT_EQ(stat(dir.File("out").c_str(), &out_status), 0);
  EXPECT_EQ(static_cast<uint64_t>(out_status.st_size), 8 + 72 + kDataLen);  // 69 + 3 spaces

  // The control: the same copy without releasing leaves the mapping resident, which is
  // what makes the check above meaningful on this kernel.
  ASSERT_TRUE(WriteCanonicalFile(*checkpoint, dir.File("out2")).ok());
  EXPECT_GT(RssFileKiB() - before, 96 * 1024);
}

// A placed range (write/placing_sink.h) is stored in any order through a mapping of the
// temporary file, between ordinary writes, from an offset that is not a page's.
TEST(AtomicFileTest, PlacedBytesLandBetweenWrites) {
  TempDir dir;
  const std::string path = dir.File(kName);
  Result<std::unique_ptr<AtomicFile>> file = AtomicFile::Create(path);
  ASSERT_TRUE(file.ok()) << file.error().ToString();
  ASSERT_TRUE((*file)->Write(AsBytes("head-")).ok());
  std::byte* at = nullptr;
  ASSERT_TRUE((*file)->BeginPlaced(10000, &at).ok());
  ASSERT_NE(at, nullptr);  // Linux, and the test's folder takes fallocate
  for (size_t i = 10000; i-- > 0;) at[i] = static_cast<std::byte>('a' + i % 26);
  (*file)->ReleasePlaced(0, 10000);  // the bytes stay: they are in the file
  ASSERT_TRUE((*file)->EndPlaced().ok());
  ASSERT_TRUE((*file)->Write(AsBytes("-tail")).ok());
  ASSERT_TRUE((*file)->Commit().ok());
  std::string want = "head-";
  for (size_t i = 0; i < 10000; ++i) want += static_cast<char>('a' + i % 26);
  EXPECT_EQ(ReadFileBytes(path), want + "-tail");
}

// The blocks are allocated before the range is mapped: a full disk is an error there
// (never SIGBUS on a store), the temporary file is removed and OUT keeps its content.
TEST(AtomicFileTest, PlacingOnAFullDiskFailsBeforeMapping) {
  TempDir dir;
  const std::string path = dir.File(kName);
  ASSERT_TRUE(WriteFileBytes(path, kOldContent));
  Result<std::unique_ptr<AtomicFile>> file = AtomicFile::Create(path);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->Write(AsBytes("head")).ok());
  std::byte* at = nullptr;
  {
    HookGuard hook([](FileOp op) { return op == FileOp::kWrite ? ENOSPC : 0; });
    Error error = (*file)->BeginPlaced(1 << 20, &at);
    EXPECT_EQ(error.code, ErrorCode::kIoError);
  }
  EXPECT_EQ(at, nullptr);
  EXPECT_FALSE((*file)->Commit().ok());
  EXPECT_EQ(ReadFileBytes(path), kOldContent);
  EXPECT_EQ(dir.Entries(), std::vector<std::string>{kName});
}

}  // namespace
}  // namespace stguard
