// SPDX-License-Identifier: Apache-2.0
// `stguard convert IN.gguf` interrupted by a signal while its output is half-written
// leaves nothing half-written: the temporary file (or every staged shard of a split
// model) is removed, an existing OUT keeps its content, and the signal ends the process
// as it would have. The tests' pausing CLI holds the process at "written" (the first
// bytes are in a temporary output file) until the signal comes.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "support/gguf_encoder.h"
#include "support/temp_dir.h"

namespace stguard::testing {
namespace {

// StartPaused runs the pausing CLI with `args`, held at "written" until `marker` is removed.
pid_t StartPaused(const std::vector<std::string>& args, const std::string& marker,
                  const std::string& log) {
  const pid_t pid = fork();
  if (pid == 0) {
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) _exit(120);
    dup2(fd, 1);
    dup2(fd, 2);
    setenv("STGUARD_TEST_PAUSE_AT", "written", 1);
    setenv("STGUARD_TEST_PAUSE_FILE", marker.c_str(), 1);
    std::vector<std::string> copies = args;
    std::vector<char*> argv = {const_cast<char*>(STGUARD_PAUSING_CLI_PATH)};
    for (std::string& arg : copies) argv.push_back(arg.data());
    argv.push_back(nullptr);
    execv(STGUARD_PAUSING_CLI_PATH, argv.data());
    _exit(121);
  }
  return pid;
}

bool WaitForFile(const std::string& path) {
  for (int i = 0; i < 20000; ++i) {
    if (access(path.c_str(), F_OK) == 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

size_t TempFilesIn(const std::vector<std::string>& names) {
  size_t found = 0;
  for (const std::string& name : names) found += name.find(".stguard-") != std::string::npos;
  return found;
}

// KillWhenWritten starts `convert args`, waits until its first output bytes are written
// in `watched`, sends SIGTERM and returns the signal that ended it.
int KillWhenWritten(const TempDir& dir, const std::vector<std::string>& args,
                    const TempDir& watched, size_t* temp_files_seen) {
  const std::string marker = dir.File("paused");
  const pid_t pid = StartPaused(args, marker, dir.File("cli.log"));
  EXPECT_TRUE(WaitForFile(marker));
  *temp_files_seen = TempFilesIn(watched.Entries());
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

TEST(GgufConvertSignal, AnInterruptedConversionLeavesTheOldOutput) {
  TempDir dir;
  const std::string in = dir.File("model.gguf");
  ASSERT_TRUE(WriteFileBytes(in, Encode(SimpleGgufModel())));
  TempDir out_dir;
  const std::string out = out_dir.File("out.safetensors");
  ASSERT_TRUE(WriteFileBytes(out, "old"));
  size_t seen = 0;
  EXPECT_EQ(KillWhenWritten(dir, {"convert", in, out}, out_dir, &seen), SIGTERM);
  EXPECT_EQ(seen, 1u) << "the write was under way";
  EXPECT_EQ(out_dir.Entries(), std::vector<std::string>{"out.safetensors"});
  struct stat info;
  ASSERT_EQ(stat(out.c_str(), &info), 0);
  EXPECT_EQ(info.st_size, 3);
}

TEST(GgufConvertSignal, AnInterruptedSplitConversionLeavesNoShard) {
  TempDir dir;
  for (int part = 0; part < 2; ++part) {
    GgufModel model;
    model.kvs = {GgufU16("split.no", static_cast<uint16_t>(part)), GgufU16("split.count", 2),
                 GgufI32("split.tensors.count", 2)};
    // Names built by appending: g++ 12 warns (-Wrestrict, a false positive) on
    // literal + string + literal here.
    std::string tensor = "t";
    tensor += std::to_string(part);
    model.tensors = {{tensor, 0, {4}, {}, {}}};
    std::string name = "m-0000";
    name += std::to_string(part + 1);
    name += "-of-00002.gguf";
    ASSERT_TRUE(WriteFileBytes(dir.File(name), Encode(model)));
  }
  TempDir out_dir;
  size_t seen = 0;
  EXPECT_EQ(KillWhenWritten(dir, {"convert", dir.File("m-00001-of-00002.gguf"), out_dir.path()},
                            out_dir, &seen),
            SIGTERM);
  EXPECT_EQ(seen, 1u) << "the first shard was being written";
  EXPECT_TRUE(out_dir.Entries().empty());
}

}  // namespace
}  // namespace stguard::testing
