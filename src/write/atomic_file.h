// SPDX-License-Identifier: Apache-2.0
// Crash-safe file replacement: write a temporary file beside the destination, fsync it,
// rename it over the destination, fsync the directory.
#ifndef STGUARD_SRC_WRITE_ATOMIC_FILE_H_
#define STGUARD_SRC_WRITE_ATOMIC_FILE_H_

#include <sys/stat.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "stguard/error.h"
#include "stguard/writer.h"
#include "write/placing_sink.h"

namespace stguard {

// FileOp names each system call that AtomicFile makes and that can fail.
enum class FileOp : uint8_t {
  kCreate,   // open(O_CREAT | O_EXCL) of the temporary file
  kWrite,    // one write(2)
  kChmod,    // fchmod of the temporary file to its final mode
  kSync,     // fsync of the temporary file
  kClose,    // close of the temporary file
  kRename,   // rename over the destination
  kSyncDir,  // fsync of the directory
};

#ifdef STGUARD_TESTING_SEAMS
// FileFaultHook runs before each FileOp. Returning a nonzero errno value makes that call
// fail with it, without making the call. The hook may also kill the process, to test what
// a crash at that point leaves behind. One hook for the whole process, not thread-safe.
// An empty hook (the default) injects nothing. It exists only in the tests' build of the
// library (stguard_internal), never in what is installed.
using FileFaultHook = std::function<int(FileOp op)>;
void SetFileFaultHookForTesting(FileFaultHook hook);
#endif

// kAtomicFileBufferLen is the size of the write buffer. Writes this long or longer skip
// the buffer.
inline constexpr size_t kAtomicFileBufferLen = size_t{1} << 20;

// AtomicFile is a ByteSink that replaces `path` only when Commit succeeds. It is also a
// PlacingSink: a placed range is a shared mapping of the temporary file.
class AtomicFile final : public ByteSink, public PlacingSink {
 public:
  // Create opens a new temporary file, mode 0600, in the directory of `path` (after
  // following `path` if it is a symbolic link, dangling or not). Commit gives it the
  // destination's mode and owner if the destination exists, else 0666 minus the umask.
  // Fails with kIoError when the directory cannot take a new file, and with
  // kNotARegularFile when the destination exists but is a directory, device or other
  // non-regular file (renaming over it would replace it), or when `path` reaches its file
  // only through a descriptor (/dev/stdout, /dev/fd/N, /proc/PID/fd/N). The temporary
  // file is registered for RemoveTemporaryFilesOnSignals until Commit or Abort.
  static Result<std::unique_ptr<AtomicFile>> Create(const std::string& path);

  // CreateInFolder opens a new temporary file in the folder open as `dir_fd` (a
  // descriptor of a directory; `dir_path` is its path, for messages and the signal
  // handler), to become the entry `name` of that folder. Nothing is resolved through a
  // path: the temporary file is created relative to `dir_fd` with O_EXCL and O_NOFOLLOW,
  // and Commit (or Publish) renames it with renameat(2) within the folder, which replaces
  // the entry itself. So a symbolic link planted in the folder is never written through.
  // Fails with kNotARegularFile when `name` exists and is not a regular file (a link, a
  // folder, a device): the caller chose the name and must not replace what it did not
  // expect. `name` must be a plain file name (no '/'). `dir_fd` must stay open until the
  // file is committed or aborted.
  static Result<std::unique_ptr<AtomicFile>> CreateInFolder(int dir_fd,
                                                            const std::string& dir_path,
                                                            const std::string& name);

  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  // The destructor aborts unless Commit succeeded.
  ~AtomicFile() override;

  // Write appends bytes. After the first failure the temporary file is already removed,
  // and every later Write or Commit returns that failure.
  Error Write(std::span<const std::byte> bytes) override;

  // PlacingSink (write/placing_sink.h).
  Error BeginPlaced(uint64_t len, std::byte** at) override;
  void ReleasePlaced(uint64_t offset, uint64_t len) override;
  void PreparePlaced(uint64_t offset, uint64_t len) override;
  Error EndPlaced() override;

  // Commit flushes, fsyncs and closes the temporary file, renames it over the destination
  // and fsyncs the directory. If anything before the rename fails, the destination is
  // untouched and the temporary file removed. A failure to sync the directory after the
  // rename is reported, but the destination then already holds the complete new file.
  Error Commit();

  // Finish does what Commit does before the rename (flush, mode, owner, fsync, close), and
  // Publish the rename and the folder's sync: a caller writing several files finishes all
  // of them before publishing any, so that a failure leaves every destination untouched.
  // Commit is Finish then Publish. After a failed Finish the temporary file is removed.
  Error Finish();
  Error Publish();

  // Abort closes and removes the temporary file; the destination is untouched.
  void Abort();

  const std::string& temp_path() const { return temp_path_; }
  const std::string& dest_path() const { return dest_path_; }
  uint64_t bytes_written() const { return bytes_written_ + buffer_.size(); }

 private:
  AtomicFile(int fd, std::string dest_path, std::string temp_path, std::string dir_path);

  // SetFinalMode gives the file the destination's mode and owner when it exists (`dest`
  // is its status), else 0666 minus the umask.
  void SetFinalMode(const struct stat* dest);
  // RemoveTemporary unlinks the temporary file (relative to dir_fd_ when there is one).
  void RemoveTemporary();

  void AdvisePlaced(uint64_t offset, uint64_t len, int advice);
  Error Flush();
  Error WriteAll(const std::byte* data, size_t len);
  // Fail records `error` as the sticky failure, aborts, and returns it.
  Error Fail(Error error);

  int fd_;
  // In a folder opened by the caller (CreateInFolder): its descriptor (not owned), and the
  // entries' names in it. -1: the paths are used.
  int dir_fd_ = -1;
  std::string dest_name_;
  std::string temp_name_;
  bool finished_ = false;  // Finish succeeded: the temporary file is closed and complete
  std::string dest_path_;
  std::string temp_path_;
  std::string dir_path_;
  std::vector<std::byte> buffer_;
  uint64_t bytes_written_ = 0;  // bytes handed to write(2) successfully
  bool done_ = false;           // committed or aborted
  std::byte* map_ = nullptr;    // a placed range's mapping (BeginPlaced), from a page start
  size_t map_len_ = 0;
  size_t map_skip_ = 0;         // from the mapping's start to the placed bytes
  uint64_t placed_len_ = 0;
  mode_t final_mode_ = 0600;    // given at Commit: the destination's, or 0666 & ~umask
  bool keep_owner_ = false;     // the destination existed: give its owner back
  uid_t owner_ = 0;
  gid_t group_ = 0;
  Error failure_;
};

}  // namespace stguard

#endif  // STGUARD_SRC_WRITE_ATOMIC_FILE_H_
