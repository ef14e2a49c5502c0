// SPDX-License-Identifier: Apache-2.0
// Hostile environments: odd destinations, signals, files truncated while being read,
// memory limits, terminals and machine-readable output. Most tests run the real stguard
// command as a child process: killed by a signal or given an rlimit. Those that must act at
// a known moment run the tests' pausing CLI, the same command over the tests' build of the
// library, whose pause points are live (STGUARD_TEST_PAUSE_AT, src/base/test_pause.h),
// while the test truncates its input or signals it.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "stguard/checkpoint_dir.h"
#include "stguard/error.h"
#include "stguard/json_tokenizer.h"
#include "stguard/mapped_file.h"
#include "stguard/reader.h"
#include "stguard/tensor_stats.h"
#include "stguard/writer.h"
#include "support/temp_dir.h"
#include "support/test_files.h"
#include "write/atomic_file.h"

#if defined(__SANITIZE_ADDRESS__)
#define STGUARD_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STGUARD_TEST_ASAN 1
#endif
#endif

namespace stguard {
namespace {

using testing::FileWithHeader;
using testing::ReadFileBytes;
using testing::TempDir;
using testing::WriteFileBytes;

// ChildOptions says how to start the stguard child.
struct ChildOptions {
  std::string program = STGUARD_CLI_PATH;
  std::vector<std::string> env;    // "NAME=value" added to the environment
  rlim_t max_file_size = RLIM_INFINITY;
  rlim_t max_address_space = RLIM_INFINITY;
  std::string stdout_path;         // empty: a file in the test's folder
  bool append_stdout = false;
  bool read_stdout = true;         // false for a device that reads forever (/dev/full)
};

struct ChildResult {
  int exit_code = -1;  // when the child exited
  int signal = 0;      // when a signal ended it
  std::string out;
  std::string err;
};

class Cli {
 public:
  explicit Cli(const TempDir& dir) : out_(dir.File("cli.out")), err_(dir.File("cli.err")) {}

  pid_t Start(const std::vector<std::string>& args, const ChildOptions& options = {}) {
    stdout_path_ = options.stdout_path.empty() ? out_ : options.stdout_path;
    read_stdout_ = options.read_stdout;
    const pid_t pid = fork();
    if (pid == 0) {
      const int out_fd = open(stdout_path_.c_str(),
                              O_WRONLY | O_CREAT | (options.append_stdout ? O_APPEND : O_TRUNC),
                              0644);
      const int err_fd = open(err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (out_fd < 0 || err_fd < 0) _exit(120);
      dup2(out_fd, 1);
      dup2(err_fd, 2);
      for (const std::string& entry : options.env) putenv(const_cast<char*>(entry.c_str()));
      const rlimit fsize{options.max_file_size, options.max_file_size};
      if (options.max_file_size != RLIM_INFINITY) setrlimit(RLIMIT_FSIZE, &fsize);
      const rlimit as{options.max_address_space, options.max_address_space};
      if (options.max_address_space != RLIM_INFINITY) setrlimit(RLIMIT_AS, &as);
      std::vector<char*> argv;
      std::string program = options.program;
      argv.push_back(program.data());
      std::vector<std::string> copies = args;
      for (std::string& arg : copies) argv.push_back(arg.data());
      argv.push_back(nullptr);
      execv(program.c_str(), argv.data());
      _exit(121);
    }
    return pid;
  }

  ChildResult Wait(pid_t pid) {
    ChildResult result;
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
    if (read_stdout_) result.out = ReadFileBytes(stdout_path_);
    result.err = ReadFileBytes(err_);
    return result;
  }

  ChildResult Run(const std::vector<std::string>& args, const ChildOptions& options = {}) {
    return Wait(Start(args, options));
  }

 private:
  std::string out_;
  std::string err_;
  std::string stdout_path_;
  bool read_stdout_ = true;
};

// WaitForFile polls for `path` for up to 20 seconds (ASan builds start slowly).
bool WaitForFile(const std::string& path) {
  for (int i = 0; i < 20000; ++i) {
    if (access(path.c_str(), F_OK) == 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

std::vector<std::string> TempFilesIn(const TempDir& dir) {
  std::vector<std::string> found;
  for (const std::string& name : dir.Entries()) {
    if (name.find(".stguard-") != std::string::npos) found.push_back(name);
  }
  return found;
}

// SampleFile writes a small valid checkpoint: one F32 tensor of `count` elements.
std::string SampleFile(const TempDir& dir, const std::string& name, uint64_t count = 4) {
  const std::string header = R"({"w":{"dtype":"F32","shape":[)" + std::to_string(count) +
                             R"(],"data_offsets":[0,)" + std::to_string(count * 4) + "]}}";
  const std::string path = dir.File(name);
  EXPECT_TRUE(WriteFileBytes(path, FileWithHeader(header, std::string(count * 4, '\x01'))));
  return path;
}

// PausedAt starts the pausing CLI, which creates `marker` when it reaches `point` and waits
// until the test removes it.
ChildOptions PausedAt(const std::string& point, const std::string& marker) {
  ChildOptions options;
  options.program = STGUARD_PAUSING_CLI_PATH;
  options.env = {"STGUARD_TEST_PAUSE_AT=" + point, "STGUARD_TEST_PAUSE_FILE=" + marker};
  return options;
}

// ---- 1. Descriptor-named outputs and "-" ----

TEST(HostileOutputTest, DevStdoutDoesNotReplaceTheFileStdoutAppendsTo) {
  TempDir dir;
  const std::string in = SampleFile(dir, "in.safetensors");
  const std::string log = dir.File("app.log");
  ASSERT_TRUE(WriteFileBytes(log, "log\n"));
  struct stat before;
  ASSERT_EQ(stat(log.c_str(), &before), 0);
  Cli cli(dir);
  for (const char* out : {"/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"}) {
    ChildOptions options;
    options.stdout_path = log;
    options.append_stdout = true;
    const ChildResult result = cli.Run({"canon", in, out}, options);
    EXPECT_EQ(result.exit_code, 2) << out;
    EXPECT_NE(result.err.find("give - as the output"), std::string::npos) << result.err;
    struct stat after;
    ASSERT_EQ(stat(log.c_str(), &after), 0);
    EXPECT_EQ(after.st_ino, before.st_ino) << out;  // not replaced by a rename
    EXPECT_EQ(ReadFileBytes(log), "log\n") << out;
  }
  EXPECT_EQ(cli.Run({"convert", in, "/dev/stderr", "--dtype", "F16"}).exit_code, 2);
  EXPECT_TRUE(TempFilesIn(dir).empty());
}

TEST(HostileOutputTest, DashStreamsTheCanonicalFileToStdout) {
  TempDir dir;
  const std::string in = SampleFile(dir, "in.safetensors");
  Cli cli(dir);
  ChildOptions options;
  options.stdout_path = dir.File("streamed");
  ChildResult result = cli.Run({"canon", in, "-"}, options);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  ASSERT_EQ(cli.Run({"canon", in, dir.File("written")}).exit_code, 0);
  EXPECT_EQ(result.out, ReadFileBytes(dir.File("written")));

  options.stdout_path = dir.File("converted");
  result = cli.Run({"convert", in, "-", "--dtype", "BF16"}, options);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.err.find("1 of 1 tensor converted"), std::string::npos);  // not stdout
  const Result<Checkpoint> converted = Checkpoint::FromBytes(std::string_view(result.out));
  ASSERT_TRUE(converted.ok());
  EXPECT_EQ(converted->tensors()[0].dtype, Dtype::kBF16);
}

// A verdict that never reached standard output is not a success: a script that runs
// `stguard check --json x > report.json && use x` must not go on with no report.
TEST(HostileOutputTest, AVerdictStandardOutputCannotTakeIsNotSuccess) {
  TempDir dir;
  const std::string in = SampleFile(dir, "in.safetensors");
  const std::string bad = dir.File("bad.safetensors");
  ASSERT_TRUE(WriteFileBytes(bad, FileWithHeader(R"({"w":{"dtype":"F32","shape":[1]}})")));
  Cli cli(dir);
  ChildOptions full;
  full.stdout_path = "/dev/full";  // every write fails with ENOSPC
  full.read_stdout = false;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"check", in}, {"check", "--json", in}, {"check", in, in},
        {"inspect", "--json", in}, {"--version"}}) {
    const ChildResult result = cli.Run(args, full);
    EXPECT_EQ(result.exit_code, 2) << args[0] << " " << args.back();
    EXPECT_NE(result.err.find("IoError: the standard output could not be written"),
              std::string::npos) << result.err;
  }
  // An invalid file stays 1 (worse than an error); -q writes nothing, so nothing is lost.
  EXPECT_EQ(cli.Run({"check", bad}, full).exit_code, 1);
  EXPECT_EQ(cli.Run({"check", "-q", in}, full).exit_code, 0);
  const ChildResult written = cli.Run({"check", "--json", in});
  EXPECT_EQ(written.exit_code, 0) << written.err;
  EXPECT_TRUE(written.err.empty()) << written.err;
}

// ---- 2. Temporary file mode ----

TEST(HostileOutputTest, TemporaryFileIsPrivateUntilCommit) {
  TempDir dir;
  const mode_t old_mask = umask(022);
  Writer writer;
  const std::byte data[4] = {};
  ASSERT_TRUE(writer.AddTensor("x", Dtype::kU8, {4}, data).ok());
  for (const bool existing : {false, true}) {
    const std::string out = dir.File(existing ? "existing" : "new");
    if (existing) {
      ASSERT_TRUE(WriteFileBytes(out, "old"));
      ASSERT_EQ(chmod(out.c_str(), 0640), 0);
    }
    std::vector<mode_t> seen;
    SetFileFaultHookForTesting([&](FileOp op) {
      if (op != FileOp::kWrite) return 0;
      for (const std::string& name : TempFilesIn(dir)) {
        struct stat info;
        if (stat(dir.File(name).c_str(), &info) == 0) seen.push_back(info.st_mode & 07777);
      }
      return 0;
    });
    const Error error = writer.WriteToFile(out);
    SetFileFaultHookForTesting(nullptr);
    ASSERT_TRUE(error.ok()) << error.ToString();
    ASSERT_FALSE(seen.empty());
    for (mode_t mode : seen) EXPECT_EQ(mode, 0600u) << "while writing " << out;
    struct stat info;
    ASSERT_EQ(stat(out.c_str(), &info), 0);
    EXPECT_EQ(info.st_mode & 07777, existing ? 0640u : 0644u);
  }
  umask(old_mask);
}

// ---- 3. Signals, SIGXFSZ and leftovers ----

TEST(HostileSignalTest, InterruptedWritesRemoveTheirTemporaryFile) {
  for (const int signal_number : {SIGINT, SIGTERM, SIGHUP}) {
    TempDir dir;
    const std::string in = SampleFile(dir, "in.safetensors");
    const std::string out = dir.File("out.safetensors");
    ASSERT_TRUE(WriteFileBytes(out, "old"));
    const std::string marker = dir.File("paused");
    Cli cli(dir);
    const ChildOptions options = PausedAt("written", marker);
    const pid_t pid = cli.Start({"canon", in, out}, options);
    ASSERT_TRUE(WaitForFile(marker));
    EXPECT_EQ(TempFilesIn(dir).size(), 1u);  // the write is under way
    kill(pid, signal_number);
    const ChildResult result = cli.Wait(pid);
    EXPECT_EQ(result.signal, signal_number) << result.err;  // re-raised: the shell sees it
    EXPECT_TRUE(TempFilesIn(dir).empty()) << strsignal(signal_number);
    EXPECT_EQ(ReadFileBytes(out), "old");
  }
}

TEST(HostileSignalTest, FileSizeLimitIsReportedNotFatal) {
  TempDir dir;
  const std::string in = SampleFile(dir, "in.safetensors", 1024);
  Cli cli(dir);
  ChildOptions options;
  options.max_file_size = 1000;  // below the 4 KiB file; the command's own output is tiny
  for (const char* command : {"canon", "convert"}) {
    std::vector<std::string> args = {command, in, dir.File("out.safetensors")};
    if (std::string(command) == "convert") args.insert(args.end(), {"--dtype", "F16"});
    const ChildResult result = cli.Run(args, options);
    EXPECT_EQ(result.signal, 0) << command;
    EXPECT_EQ(result.exit_code, 2) << command;
    EXPECT_NE(result.err.find("File too large"), std::string::npos) << result.err;
    EXPECT_TRUE(TempFilesIn(dir).empty()) << command;
  }
}

TEST(HostileSignalTest, LeftoversOfKilledWritesAreNamed) {
  TempDir dir;
  const std::string in = SampleFile(dir, "in.safetensors");
  // PID 99999999 is above Linux's largest (4194304): no such process.
  const std::string leftover = dir.File(".out.safetensors.stguard-99999999-0-1.tmp");
  ASSERT_TRUE(WriteFileBytes(leftover, "partial"));
  ASSERT_TRUE(WriteFileBytes(dir.File(".other.stguard-99999999-0-1.tmp"), "x"));
  const std::vector<std::string> found = FindLeftoverTemporaryFiles(dir.File("out.safetensors"));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0], leftover);
  // A write in progress (this process is alive) is not a leftover.
  ASSERT_TRUE(WriteFileBytes(
      dir.File(".out.safetensors.stguard-" + std::to_string(getpid()) + "-0-1.tmp"), "x"));
  EXPECT_EQ(FindLeftoverTemporaryFiles(dir.File("out.safetensors")).size(), 1u);
  Cli cli(dir);
  const ChildResult result = cli.Run({"canon", in, dir.File("out.safetensors")});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_NE(result.err.find("note: " + leftover), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("safe to delete"), std::string::npos);
}

// ---- 4. Links and owners ----

TEST(HostileOutputTest, DanglingLinkIsFollowedHardLinksSplitOwnerKept) {
  TempDir dir;
  Writer writer;
  const std::byte data[4] = {};
  ASSERT_TRUE(writer.AddTensor("x", Dtype::kU8, {4}, data).ok());
  const std::string target = dir.File("target.safetensors");
  const std::string link_path = dir.File("link.safetensors");
  ASSERT_EQ(symlink("target.safetensors", link_path.c_str()), 0);  // dangling
  ASSERT_TRUE(writer.WriteToFile(link_path).ok());
  struct stat info;
  ASSERT_EQ(lstat(link_path.c_str(), &info), 0);
  EXPECT_TRUE(S_ISLNK(info.st_mode));  // still a link
  EXPECT_TRUE(Checkpoint::Open(target).ok());  // and the file it names now exists

  const std::string other_name = dir.File("hard.safetensors");
  ASSERT_EQ(link(target.c_str(), other_name.c_str()), 0);
  const std::string before = ReadFileBytes(target);
  ASSERT_TRUE(writer.AddMetadata("k", "v").ok());
  ASSERT_TRUE(writer.WriteToFile(target).ok());
  EXPECT_EQ(ReadFileBytes(other_name), before);  // the other name keeps the old file
  EXPECT_NE(ReadFileBytes(target), before);

  if (geteuid() == 0) {  // only root may give a file to another owner
    ASSERT_EQ(chown(target.c_str(), 12345, 23456), 0);
    ASSERT_TRUE(writer.WriteToFile(target).ok());
    ASSERT_EQ(stat(target.c_str(), &info), 0);
    EXPECT_EQ(info.st_uid, 12345u);
    EXPECT_EQ(info.st_gid, 23456u);
  }
}

// ---- 5-8. Folder checks ----

std::string ShardBytes(const std::string& tensor, uint64_t len) {
  return FileWithHeader(R"({")" + tensor + R"(":{"dtype":"U8","shape":[)" + std::to_string(len) +
                            R"(],"data_offsets":[0,)" + std::to_string(len) + "]}}",
                        std::string(len, '\0'));
}

TEST(HostileFolderTest, EveryFileInTheFolderIsValidatedWhateverTheIndexSays) {
  TempDir dir;
  ASSERT_TRUE(WriteFileBytes(dir.File("model-00001-of-00001.safetensors"), ShardBytes("a", 4)));
  ASSERT_TRUE(WriteFileBytes(
      dir.File("model.safetensors.index.json"),
      R"({"metadata":{},"weight_map":{"a":"model-00001-of-00001.safetensors"}})"));
  Cli cli(dir);
  EXPECT_EQ(cli.Run({"check", dir.path()}).exit_code, 0);
  // The file a loader tries first, with a duplicate tensor name.
  ASSERT_TRUE(WriteFileBytes(
      dir.File("model.safetensors"),
      FileWithHeader(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
                     R"("a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})",
                     "xy")));
  const ChildResult result = cli.Run({"check", dir.path()});
  EXPECT_EQ(result.exit_code, 1) << result.out;
  EXPECT_NE(result.out.find("DuplicateKey"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("file 'model.safetensors'"), std::string::npos) << result.out;
}

TEST(HostileFolderTest, ManyHugeShardsAreCheckedWithoutHoldingThemMapped) {
  // 160 shards of 1 TiB each (sparse): mapping all at once needs 160 TiB of address
  // space, more than a 47-bit process has. Validation reads headers only.
  TempDir dir;
  constexpr uint64_t kShardLen = uint64_t{1} << 40;
  for (int i = 0; i < 160; ++i) {
    const std::string header = R"({"t)" + std::to_string(i) + R"(":{"dtype":"U8","shape":[)" +
                               std::to_string(kShardLen) + R"(],"data_offsets":[0,)" +
                               std::to_string(kShardLen) + "]}}";
    const std::string path = dir.File("s" + std::to_string(i) + ".safetensors");
    ASSERT_TRUE(WriteFileBytes(path, FileWithHeader(header)));
    ASSERT_EQ(truncate(path.c_str(), static_cast<off_t>(8 + header.size() + kShardLen)), 0);
  }
  Cli cli(dir);
  const ChildResult result = cli.Run({"check", dir.path()});
  EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
}

TEST(HostileFolderTest, WhatTheFolderAuthorMakesIsAVerdict) {
  TempDir dir;
  ASSERT_TRUE(WriteFileBytes(dir.File("model-1.safetensors"), ShardBytes("a", 1)));
  const std::string long_name = std::string(300, 'n') + ".safetensors";
  ASSERT_TRUE(WriteFileBytes(
      dir.File("model.safetensors.index.json"),
      R"({"metadata":{},"weight_map":{"a":"model-1.safetensors","b":")" + long_name + R"("}})"));
  Cli cli(dir);
  ChildResult result = cli.Run({"check", dir.path()});
  EXPECT_EQ(result.exit_code, 1) << result.out;
  EXPECT_NE(result.out.find("UnsafeShardName"), std::string::npos) << result.out;

  // A shard that is a symbolic link loop, named by the index and found by listing.
  ASSERT_EQ(symlink("loop.safetensors", dir.File("loop.safetensors").c_str()), 0);
  ASSERT_TRUE(WriteFileBytes(
      dir.File("model.safetensors.index.json"),
      R"({"metadata":{},"weight_map":{"a":"model-1.safetensors","b":"loop.safetensors"}})"));
  result = cli.Run({"check", dir.path()});
  EXPECT_EQ(result.exit_code, 1) << result.out;
  EXPECT_NE(result.out.find("loop"), std::string::npos) << result.out;
  ASSERT_TRUE(WriteFileBytes(dir.File("model.safetensors.index.json"),
                             R"({"metadata":{},"weight_map":{"a":"model-1.safetensors"}})"));
  result = cli.Run({"check", dir.path()});
  EXPECT_EQ(result.exit_code, 1) << result.out;  // the unlisted loop, found by listing
  ASSERT_EQ(unlink(dir.File("loop.safetensors").c_str()), 0);
  EXPECT_EQ(cli.Run({"check", dir.path()}).exit_code, 0);
}

TEST(HostileFolderTest, ConfigJsonLinkingOutOfTheFolderIsNotRead) {
  TempDir outside;
  ASSERT_TRUE(WriteFileBytes(outside.File("secret.json"),
                             R"({"api_token":"s3cret","api_token":"x"})"));
  TempDir dir;
  ASSERT_TRUE(WriteFileBytes(dir.File("model.safetensors"), ShardBytes("a", 1)));
  ASSERT_EQ(symlink(outside.File("secret.json").c_str(), dir.File("config.json").c_str()), 0);
  Cli cli(dir);
  const ChildResult result = cli.Run({"check", dir.path()});
  EXPECT_EQ(result.exit_code, 1) << result.out;
  EXPECT_NE(result.out.find("UnsafeShardName"), std::string::npos) << result.out;
  EXPECT_EQ(result.out.find("api_token"), std::string::npos) << result.out;  // never quoted
  // Allowed explicitly, it is read (and its duplicate key reported).
  const ChildResult allowed = cli.Run({"check", "--allow-external-symlinks", dir.path()});
  EXPECT_EQ(allowed.exit_code, 0) << allowed.out;
  EXPECT_NE(allowed.out.find("api_token"), std::string::npos) << allowed.out;
}

// ---- 6. check --canonical without a canonical form ----

TEST(HostileCanonicalTest, NoCanonicalFormIsNotCanonical) {
  // Zero-size U8 tensors at offset 0 before a 16 TB-offset F64 tensor: the canonical
  // order puts the F64 first, so every "[0,0]" becomes "[N,N]" with 14-digit N and the
  // canonical header passes the 100,000,000-byte cap while the file's stays under it.
  TempDir dir;
  constexpr uint64_t kBig = 10000000000000;  // 10 TB, sparse
  std::string header = "{";
  header.reserve(80000000);
  for (int i = 0; header.size() < 72000000; ++i) {
    header += "\"" + std::to_string(i) + R"(":{"dtype":"U8","shape":[0],"data_offsets":[0,0]},)";
  }
  header += R"("big":{"dtype":"F64","shape":[)" + std::to_string(kBig / 8) +
            R"(],"data_offsets":[0,)" + std::to_string(kBig) + "]}}";
  const std::string path = dir.File("wide.safetensors");
  ASSERT_TRUE(WriteFileBytes(path, FileWithHeader(header)));
  ASSERT_EQ(truncate(path.c_str(), static_cast<off_t>(8 + header.size() + kBig)), 0);
  header = std::string();
  Cli cli(dir);
  ChildResult result = cli.Run({"check", "--canonical", path});
  EXPECT_EQ(result.exit_code, 1) << result.out << result.err;
  EXPECT_NE(result.out.find("no canonical form"), std::string::npos) << result.out;
  result = cli.Run({"check", "--canonical", "--json", path});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.out.find(R"("canonical":false,"canonical_reason":"no-canonical-form")"),
            std::string::npos)
      << result.out;
  EXPECT_TRUE(ValidateJson(result.out).ok());
  // Not canonical is a verdict: invalid, in the envelope as in the exit status.
  EXPECT_NE(result.out.find(R"("verdict":"invalid","code":"NotCanonical")"), std::string::npos)
      << result.out;
}

// ---- 9. Truncation while reading ----

// The command users get ignores the pause variables: its pause points compile to nothing.
TEST(HostileTruncationTest, TheShippedCommandHasNoPausePoints) {
  TempDir dir;
  const std::string in = SampleFile(dir, "in.safetensors");
  const std::string marker = dir.File("paused");
  Cli cli(dir);
  ChildOptions options = PausedAt("header", marker);
  options.program = STGUARD_CLI_PATH;
  const ChildResult result = cli.Run({"check", in}, options);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(access(marker.c_str(), F_OK), 0);
}

TEST(HostileTruncationTest, HeaderReadFromATruncatedFileIsAnIoError) {
  TempDir dir;
  // A header of several pages, so that reading it through a mapping would fault.
  std::string header = R"({"__metadata__":{"pad":")" + std::string(20000, 'p') + R"("},)";
  header += R"("w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})";
  const std::string in = dir.File("in.safetensors");
  ASSERT_TRUE(WriteFileBytes(in, FileWithHeader(header, std::string(16, '\0'))));
  const std::string marker = dir.File("paused");
  Cli cli(dir);
  const ChildOptions options = PausedAt("header", marker);
  const pid_t pid = cli.Start({"check", dir.File("ok.safetensors"), in}, options);
  ASSERT_TRUE(WaitForFile(marker));
  ASSERT_EQ(truncate(in.c_str(), 100), 0);
  unlink(marker.c_str());
  const ChildResult result = cli.Wait(pid);
  EXPECT_EQ(result.signal, 0);
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.out.find("shrank"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("ok.safetensors: error: IoError"), std::string::npos);  // earlier line kept
}

TEST(HostileTruncationTest, DataReadersReportATruncatedFile) {
  const std::vector<std::vector<std::string>> commands = {
      {"inspect", "--stats"}, {"canon"}, {"convert"}};
  for (const auto& command : commands) {
    TempDir dir;
    const std::string in = SampleFile(dir, "in.safetensors", 1 << 16);  // 256 KiB of data
    const uint64_t header_end = 8 + (ReadFileBytes(in).size() - (uint64_t{1} << 18) - 8);
    const std::string marker = dir.File("paused");
    std::vector<std::string> args = command;
    args.push_back(in);
    if (command[0] != "inspect") args.push_back(dir.File("out.safetensors"));
    if (command[0] == "convert") args.insert(args.end(), {"--dtype", "F16"});
    Cli cli(dir);
    const ChildOptions options = PausedAt("data", marker);
    const pid_t pid = cli.Start(args, options);
    ASSERT_TRUE(WaitForFile(marker)) << command[0];
    ASSERT_EQ(truncate(in.c_str(), static_cast<off_t>(header_end)), 0);
    unlink(marker.c_str());
    const ChildResult result = cli.Wait(pid);
    EXPECT_EQ(result.signal, 0) << command[0];
    EXPECT_EQ(result.exit_code, 2) << command[0] << result.err;
    EXPECT_NE(result.err.find("shrank"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("in.safetensors"), std::string::npos) << result.err;
    EXPECT_TRUE(TempFilesIn(dir).empty()) << command[0];
    EXPECT_NE(access(dir.File("out.safetensors").c_str(), F_OK), 0) << command[0];
  }
}

// inspect --stats scans the data of the file whose header the check validated, against
// the size it had then: a file that grew between the check and the scan (its header read,
// then bytes appended) is an I/O error, not statistics of bytes no check looked at.
TEST(HostileTruncationTest, StatsRefuseAFileChangedAfterItsCheck) {
  TempDir dir;
  const std::string in = SampleFile(dir, "in.safetensors", 1 << 10);
  const std::string marker = dir.File("paused");
  Cli cli(dir);
  const pid_t pid = cli.Start({"inspect", "--stats", in}, PausedAt("header", marker));
  ASSERT_TRUE(WaitForFile(marker));
  const int fd = ::open(in.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "\0\0\0\0", 4), 4);
  ::close(fd);
  unlink(marker.c_str());
  const ChildResult result = cli.Wait(pid);
  EXPECT_EQ(result.signal, 0);
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_NE(result.err.find("changed after it was checked"), std::string::npos) << result.err;
  // Unchanged, the same file scans (the accept case of the same rule).
  EXPECT_EQ(cli.Run({"inspect", "--stats", SampleFile(dir, "same.safetensors", 1 << 10)})
                .exit_code,
            0);
}

// convert reads IN from the one file it opened to tell its format: a path replaced between
// that sniff and the conversion (renamed over) is not opened again, so the output is IN as
// it was sniffed, never a mix of two files' bytes. (Opened again, the sniffed head of the
// first file and the rest of the second fail to tile, or convert the second.)
TEST(HostileTruncationTest, ConvertReadsTheFileItSniffedWhenThePathIsReplaced) {
  TempDir dir;
  const std::string in = SampleFile(dir, "in.safetensors");
  Cli cli(dir);
  const std::string expected = dir.File("expected.safetensors");
  ASSERT_EQ(cli.Run({"convert", "--dtype", "F16", in, expected}).exit_code, 0);
  const std::string other = SampleFile(dir, "other.safetensors", 1 << 10);
  const std::string other_bytes = ReadFileBytes(other);
  const std::string marker = dir.File("paused");
  const std::string out = dir.File("out.safetensors");
  const pid_t pid =
      cli.Start({"convert", "--dtype", "F16", in, out}, PausedAt("sniffed", marker));
  ASSERT_TRUE(WaitForFile(marker));
  ASSERT_EQ(std::rename(other.c_str(), in.c_str()), 0);
  unlink(marker.c_str());
  const ChildResult result = cli.Wait(pid);
  EXPECT_EQ(result.signal, 0);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(ReadFileBytes(out), ReadFileBytes(expected));
  EXPECT_EQ(ReadFileBytes(in), other_bytes);  // the replacement is untouched
}

// ---- 10. Out of memory is exit 2, not a verdict ----

TEST(HostileMemoryTest, OutOfMemoryIsExitTwo) {
#ifdef STGUARD_TEST_ASAN
  GTEST_SKIP() << "AddressSanitizer reserves terabytes of address space: RLIMIT_AS cannot work";
#else
  // A 40 MB header: the mapping of the file (40 MB) and the copy of the header read into
  // memory (40 MB) need more than the 64 MB address-space limit allows.
  TempDir dir;
  std::string value;
  value.reserve(40000000);
  while (value.size() < 40000000) value += "\\u0041";
  const std::string in = dir.File("big.safetensors");
  ASSERT_TRUE(WriteFileBytes(in, FileWithHeader(R"({"__metadata__":{"k":")" + value + "\"}}")));
  value = std::string();
  Cli cli(dir);
  ChildOptions options;
  options.max_address_space = 64 << 20;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"check", in}, {"check", "--canonical", in}, {"inspect", in},
        {"inspect", "--json", in}, {"inspect", "--stats", in}}) {
    const ChildResult result = cli.Run(args, options);
    EXPECT_EQ(result.signal, 0) << args[0] << " " << args[1];
    EXPECT_EQ(result.exit_code, 2) << args[0] << " " << args[1] << result.out << result.err;
    EXPECT_NE((result.out + result.err).find("OutOfMemory"), std::string::npos)
        << result.out << result.err;
  }
  EXPECT_EQ(cli.Run({"check", in}).exit_code, 0);  // the file itself is valid
#endif
}

// ---- 12, 13. Terminals and JSON ----

TEST(HostileTextTest, C1AndBidiControlsAreEscaped) {
  EXPECT_EQ(PrintableText("a\u009b" "2J"), "a\\u{9b}2J");       // CSI
  EXPECT_EQ(PrintableText("\u009d" "0;t\u009c"), "\\u{9d}0;t\\u{9c}");  // OSC ... ST
  EXPECT_EQ(PrintableText("x\u202ey"), "x\\u{202e}y");
  EXPECT_EQ(PrintableText("\u2066\u2069\u200f\u061c"), "\\u{2066}\\u{2069}\\u{200f}\\u{61c}");
  EXPECT_EQ(PrintableText("bad\x9b"), "bad\\x9b");  // a lone C1 byte, not UTF-8
  EXPECT_EQ(PrintableText("\x1b[31m"), "\\x1b[31m");
  EXPECT_EQ(PrintableText("caf\u00e9 \u4e2d"), "caf\u00e9 \u4e2d");  // kept

  TempDir dir;
  const std::string in = dir.File("m.safetensors");
  ASSERT_TRUE(WriteFileBytes(
      in, FileWithHeader("{\"__metadata__\":{\"t\":\"\u009d0;pwned\u009c\"},"
                         "\"w\u202e\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}",
                         "x")));
  Cli cli(dir);
  const ChildResult result = cli.Run({"inspect", in});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.out.find("\u009d"), std::string::npos);
  EXPECT_EQ(result.out.find("\u202e"), std::string::npos);
  EXPECT_NE(result.out.find("\\u{9d}0;pwned\\u{9c}"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("w\\u{202e}"), std::string::npos) << result.out;
}

TEST(HostileTextTest, JsonStaysValidForPathsThatAreNotUtf8) {
  TempDir dir;
  const std::string in = SampleFile(dir, "bad\xff.safetensors");
  ASSERT_TRUE(WriteFileBytes(dir.File("w\xfe.bin"), "x"));
  Cli cli(dir);
  ChildResult result = cli.Run({"check", "--json", in});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_TRUE(ValidateJson(result.out).ok()) << result.out;
  EXPECT_NE(result.out.find("bad\\\\xff.safetensors"), std::string::npos) << result.out;
  result = cli.Run({"check", "--json", dir.path()});  // the folder: a warning names w\xfe.bin
  EXPECT_TRUE(ValidateJson(result.out).ok()) << result.out;
  EXPECT_NE(result.out.find("w\\\\xfe.bin"), std::string::npos) << result.out;
  result = cli.Run({"check", "--json", dir.File("missing\xff.safetensors")});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_TRUE(ValidateJson(result.out).ok()) << result.out;
  result = cli.Run({"inspect", "--json", in});
  EXPECT_TRUE(ValidateJson(result.out).ok()) << result.out;
  result = cli.Run({"inspect", "--stats", "--json", in});
  EXPECT_TRUE(ValidateJson(result.out).ok()) << result.out;
}

// ---- Smaller ----

TEST(HostileCliTest, OptionsEndAtDoubleDashAndUnknownOnesAreEscaped) {
  TempDir dir;
  SampleFile(dir, "-x");
  Cli cli(dir);
  ChildResult result = cli.Run({"check", "--", dir.path() + "/-x"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  ASSERT_EQ(chdir(dir.path().c_str()), 0);
  result = cli.Run({"check", "--", "-x"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(cli.Run({"inspect", "--", "-x"}).exit_code, 0);
  EXPECT_EQ(cli.Run({"canon", "--", "-x", "-y"}).exit_code, 0);
  EXPECT_EQ(cli.Run({"check", "-x"}).exit_code, 2);  // without "--", an option
  ASSERT_EQ(chdir("/"), 0);
  result = cli.Run({"check", "-\x1b]0;title\x07"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.err.find('\x1b'), std::string::npos);
  EXPECT_NE(result.err.find("\\x1b]0;title\\x07"), std::string::npos) << result.err;
  for (const char* command : {"check", "inspect", "canon", "convert", "json"}) {
    result = cli.Run({command, "--help"});
    EXPECT_EQ(result.exit_code, 0) << command;
    EXPECT_NE(result.out.find("usage: stguard"), std::string::npos) << command;
  }
}

// Every subcommand walks its arguments with one parser (cli/arguments.cc), so each one
// must answer --help, escape an unknown option and end its options at "--".
TEST(HostileCliTest, EverySubcommandParsesOptionsTheSameWay) {
  TempDir dir;
  SampleFile(dir, "-x");
  Cli cli(dir);
  const std::vector<std::vector<std::string>> commands = {
      {"check"}, {"inspect"}, {"inspect", "--stats"}, {"json"}, {"canon"},
      {"convert"}, {"lint"},  {"scan"}};
  for (const std::vector<std::string>& command : commands) {
    const std::string name = command.size() == 1 ? command[0] : command[0] + " " + command[1];
    std::vector<std::string> args = command;
    args.push_back("--help");
    ChildResult result = cli.Run(args);
    EXPECT_EQ(result.exit_code, 0) << name;
    EXPECT_NE(result.out.find("usage: stguard"), std::string::npos) << name;

    args = command;
    args.push_back("--\x1b[2J");
    result = cli.Run(args);
    EXPECT_EQ(result.exit_code, 2) << name;
    EXPECT_EQ(result.err.find('\x1b'), std::string::npos) << name;
    EXPECT_NE(result.err.find("unknown option '--\\x1b[2J'"), std::string::npos)
        << name << ": " << result.err;

    // After "--", "-x" is a file: whatever the command then says, it is not about options.
    args = command;
    if (command[0] == "convert") args.insert(args.end(), {"--dtype", "F32"});
    args.push_back("--");
    args.push_back(dir.File("-x"));
    if (command[0] == "canon" || command[0] == "convert") args.push_back(dir.File("out"));
    result = cli.Run(args);
    EXPECT_EQ(result.err.find("option"), std::string::npos) << name << ": " << result.err;
    EXPECT_EQ(result.err.find("usage"), std::string::npos) << name << ": " << result.err;
  }
  // Options that take a value refuse to go without one, whatever follows.
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"lint", dir.File("-x"), "--config"},
           {"lint", "--config=", dir.File("-x")},
           {"scan", dir.File("-x"), "--key"},
           {"convert", dir.File("-x"), dir.File("out"), "--key"},
           {"convert", "--dtype=", dir.File("-x"), dir.File("out")},
           {"convert", dir.File("-x"), dir.File("out"), "--max-output-ratio"}}) {
    const ChildResult result = cli.Run(args);
    EXPECT_EQ(result.exit_code, 2) << args[0];
    EXPECT_NE(result.err.find("needs a value"), std::string::npos) << result.err;
  }
}

TEST(HostileCliTest, FilesThatReportSizeZeroAreReadToTheEnd) {
  const Result<std::unique_ptr<MappedFile>> status = MappedFile::Open("/proc/self/status");
  ASSERT_TRUE(status.ok());
  const std::string_view text(reinterpret_cast<const char*>((*status)->bytes().data()),
                              (*status)->bytes().size());
  EXPECT_NE(text.find("Name:"), std::string_view::npos);
  TempDir dir;
  Cli cli(dir);
  ChildResult result = cli.Run({"json", "/proc/self/status"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.out.find("UnexpectedEnd"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("InvalidLiteral"), std::string::npos) << result.out;
}


TEST(HostileStatsTest, HugeF64ValuesHaveAFiniteMean) {
  std::string bytes(16, '\0');
  const double big = 1.7e308;
  std::memcpy(bytes.data(), &big, 8);
  std::memcpy(bytes.data() + 8, &big, 8);
  const std::string file = FileWithHeader(
      R"({"x":{"dtype":"F64","shape":[2],"data_offsets":[0,16]}})", bytes);
  const Result<Checkpoint> checkpoint = Checkpoint::FromBytes(std::string_view(file));
  ASSERT_TRUE(checkpoint.ok());
  const TensorStats stats = ComputeTensorStats(checkpoint->tensors()[0]);
  EXPECT_DOUBLE_EQ(stats.mean, 1.7e308);
  const Result<TensorStats> copied = ComputeTensorStats(*checkpoint, checkpoint->tensors()[0]);
  ASSERT_TRUE(copied.ok());
  EXPECT_DOUBLE_EQ(copied->mean, 1.7e308);
  // Mixed signs and magnitudes still agree with the plain mean when nothing overflows.
  const double values[4] = {-1.7e308, 1.7e308, 1.0, 3.0};
  std::string mixed(reinterpret_cast<const char*>(values), sizeof(values));
  const std::string file2 = FileWithHeader(
      R"({"x":{"dtype":"F64","shape":[4],"data_offsets":[0,32]}})", mixed);
  const Result<Checkpoint> checkpoint2 = Checkpoint::FromBytes(std::string_view(file2));
  ASSERT_TRUE(checkpoint2.ok());
  EXPECT_TRUE(std::isfinite(ComputeTensorStats(checkpoint2->tensors()[0]).mean));
}

TEST(HostileFolderTest, CodeRunningFormatsAreFlagged) {
  TempDir dir;
  for (const char* name : {"a.pth.tar", "b.pkl", "c.pickle", "d.joblib", "e.pt2", "f.h5",
                           "g.keras", "h.pkl.gz", "i.bin.gz", "notes.txt.gz", "plain.npy"}) {
    ASSERT_TRUE(WriteFileBytes(dir.File(name), "x"));
  }
  // .npy with an object dtype, and one with a plain dtype.
  const std::string object_header = "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }";
  const std::string float_header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }";
  auto npy = [](const std::string& header) {
    std::string out = "\x93NUMPY\x01";
    out += '\0';
    out += static_cast<char>(header.size());
    out += '\0';
    return out + header + std::string(8, '\0');
  };
  ASSERT_TRUE(WriteFileBytes(dir.File("obj.npy"), npy(object_header)));
  ASSERT_TRUE(WriteFileBytes(dir.File("plain.npy"), npy(float_header)));
  const ModelFolderReport report = CheckModelFolder(dir.path(), nullptr);
  EXPECT_TRUE(report.error.ok()) << report.error.ToString();
  std::vector<std::string> flagged;
  for (const Warning& warning : report.warnings) flagged.push_back(warning.file);
  EXPECT_EQ(flagged, (std::vector<std::string>{"a.pth.tar", "b.pkl", "c.pickle", "d.joblib",
                                               "e.pt2", "f.h5", "g.keras", "h.pkl.gz",
                                               "i.bin.gz", "obj.npy"}));
  for (const Warning& warning : report.warnings) {
    if (warning.file == "obj.npy") {
      EXPECT_NE(warning.message.find("may contain pickles"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace stguard
