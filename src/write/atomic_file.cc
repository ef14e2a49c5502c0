// SPDX-License-Identifier: Apache-2.0
// Crash-safe file replacement. The destination changes only through rename(2), which
// POSIX makes atomic: any reader, and any reboot, sees the old file or the new one.
#include "write/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <system_error>

namespace stguard {
namespace {

// kMaxWriteLen caps one write(2) call; Linux transfers at most about 2 GiB per call anyway.
constexpr size_t kMaxWriteLen = size_t{1} << 30;
// kMaxCreateAttempts bounds the search for an unused temporary name.
constexpr int kMaxCreateAttempts = 100;
// kMaxBaseInTempName keeps the temporary name within NAME_MAX (255) for any destination.
constexpr size_t kMaxBaseInTempName = 64;

FileFaultHook& GlobalFaultHook() {
  static FileFaultHook hook;
  return hook;
}

// InjectedErrno asks the test hook whether `op` should fail, and with which errno.
int InjectedErrno(FileOp op) {
  const FileFaultHook& hook = GlobalFaultHook();
  return hook ? hook(op) : 0;
}

Error IoError(const char* message, const std::string& path, int err, uint64_t offset) {
  Error error;
  error.code = ErrorCode::kIoError;
  error.offset = offset;
  error.message = message;
  error.context = path;
  if (err != 0) error.context += ": " + std::generic_category().message(err);
  return error;
}

std::string TempName(const std::string& dir_prefix, const std::string& base) {
  static std::atomic<uint64_t> counter{0};
  const auto ticks = static_cast<uint64_t>(
      std::chrono::steady_clock::now().time_since_epoch().count());
  return dir_prefix + "." + base.substr(0, kMaxBaseInTempName) + ".stguard-" +
         std::to_string(getpid()) + "-" + std::to_string(counter.fetch_add(1)) + "-" +
         std::to_string(ticks % 1000000007) + ".tmp";
}

}  // namespace

void SetFileFaultHookForTesting(FileFaultHook hook) { GlobalFaultHook() = std::move(hook); }

AtomicFile::AtomicFile(int fd, std::string dest_path, std::string temp_path,
                       std::string dir_path)
    : fd_(fd),
      dest_path_(std::move(dest_path)),
      temp_path_(std::move(temp_path)),
      dir_path_(std::move(dir_path)) {}

AtomicFile::~AtomicFile() { Abort(); }

Result<std::unique_ptr<AtomicFile>> AtomicFile::Create(const std::string& path) {
  if (path.empty()) return IoError("empty output path", path, 0, 0);
  std::string dest = path;
  // Replace what a symbolic link points to, not the link: renaming over the link would
  // turn it into a regular file. A dangling link is replaced itself.
  struct stat link_status;
  if (lstat(dest.c_str(), &link_status) == 0 && S_ISLNK(link_status.st_mode)) {
    if (char* resolved = realpath(dest.c_str(), nullptr); resolved != nullptr) {
      dest = resolved;
      std::free(resolved);
    }
  }
  struct stat dest_status;
  const bool dest_exists = stat(dest.c_str(), &dest_status) == 0;
  if (dest_exists && !S_ISREG(dest_status.st_mode)) {
    // Never rename over a directory, device or FIFO: as root, "canon in /dev/null" would
    // otherwise replace the device node with a regular file.
    Error error = IoError("the output path exists and is not a regular file", path, 0, 0);
    error.code = ErrorCode::kNotARegularFile;
    return error;
  }
  const size_t slash = dest.rfind('/');
  const std::string dir_prefix = slash == std::string::npos ? "" : dest.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? dest : dest.substr(slash + 1);
  if (base.empty() || base == "." || base == "..") {
    return IoError("the output path names a directory", path, 0, 0);
  }
  std::string dir_path = slash == std::string::npos ? "." : dest.substr(0, slash);
  if (dir_path.empty()) dir_path = "/";

  for (int attempt = 0; attempt < kMaxCreateAttempts; ++attempt) {
    std::string temp_path = TempName(dir_prefix, base);
    int fd = -1;
    int err = InjectedErrno(FileOp::kCreate);
    if (err == 0) {
      // 0666 and the umask, as for any new file; O_EXCL: never reuse someone's file.
      fd = open(temp_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd < 0) err = errno;
    }
    if (fd < 0) {
      if (err == EEXIST || err == EINTR) continue;
      return IoError("could not create a temporary file beside the output", temp_path, err,
                     0);
    }
    if (dest_exists) {
      // Keep the destination's permission bits. Failing to is not worth losing the write.
      (void)fchmod(fd, dest_status.st_mode & 07777);
    }
    // The temporary file exists from here: if allocating its owner fails, remove it
    // before passing the failure on, or it would be left beside the destination.
    try {
      return std::unique_ptr<AtomicFile>(
          new AtomicFile(fd, std::move(dest), std::move(temp_path), std::move(dir_path)));
    } catch (...) {
      close(fd);
      unlink(temp_path.c_str());
      throw;
    }
  }
  return IoError("could not find an unused temporary file name", path, EEXIST, 0);
}

Error AtomicFile::Fail(Error error) {
  failure_ = error;
  Abort();
  return error;
}

void AtomicFile::Abort() {
  if (done_) return;
  done_ = true;
  if (fd_ >= 0) {
    close(fd_);
    fd_ = -1;
  }
  unlink(temp_path_.c_str());
  std::vector<std::byte>().swap(buffer_);
}

Error AtomicFile::WriteAll(const std::byte* data, size_t len) {
  while (len > 0) {
    const size_t chunk = len < kMaxWriteLen ? len : kMaxWriteLen;
    int err = InjectedErrno(FileOp::kWrite);
    ssize_t written = -1;
    if (err == 0) {
      written = ::write(fd_, data, chunk);
      if (written < 0) err = errno;
    }
    if (written < 0) {
      if (err == EINTR) continue;
      // ENOSPC (full disk), EDQUOT, EFBIG (RLIMIT_FSIZE or the file system's limit), EIO.
      return Fail(IoError("could not write the temporary file", temp_path_, err,
                          bytes_written_));
    }
    if (written == 0) {
      return Fail(IoError("write made no progress", temp_path_, 0, bytes_written_));
    }
    data += written;
    len -= static_cast<size_t>(written);
    bytes_written_ += static_cast<uint64_t>(written);
  }
  return Error{};
}

Error AtomicFile::Flush() {
  if (buffer_.empty()) return Error{};
  Error error = WriteAll(buffer_.data(), buffer_.size());
  buffer_.clear();
  return error;
}

Error AtomicFile::Write(std::span<const std::byte> bytes) {
  if (done_) {
    if (!failure_.ok()) return failure_;
    return IoError("write after the file was committed", dest_path_, 0, bytes_written());
  }
  if (bytes.size() >= kAtomicFileBufferLen) {
    if (Error error = Flush(); !error.ok()) return error;
    return WriteAll(bytes.data(), bytes.size());
  }
  if (buffer_.size() + bytes.size() > kAtomicFileBufferLen) {
    if (Error error = Flush(); !error.ok()) return error;
  }
  if (buffer_.capacity() == 0) buffer_.reserve(kAtomicFileBufferLen);
  buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
  return Error{};
}

Error AtomicFile::Commit() {
  if (done_) {
    if (!failure_.ok()) return failure_;
    return IoError("the file was already committed", dest_path_, 0, bytes_written());
  }
  if (Error error = Flush(); !error.ok()) return error;

  int err = InjectedErrno(FileOp::kSync);
  if (err == 0 && fsync(fd_) != 0) err = errno;
  if (err != 0) {
    return Fail(IoError("could not sync the temporary file", temp_path_, err,
                        bytes_written_));
  }
  // close can report a delayed write error (NFS, some FUSE file systems).
  err = InjectedErrno(FileOp::kClose);
  if (err == 0) {
    if (close(fd_) != 0) err = errno;
    fd_ = -1;
  }
  if (err != 0) {
    return Fail(IoError("could not close the temporary file", temp_path_, err,
                        bytes_written_));
  }
  err = InjectedErrno(FileOp::kRename);
  if (err == 0 && rename(temp_path_.c_str(), dest_path_.c_str()) != 0) err = errno;
  if (err != 0) {
    return Fail(IoError("could not rename the temporary file over the output", dest_path_,
                        err, bytes_written_));
  }
  done_ = true;  // the temporary name is gone: nothing left to clean up
  std::vector<std::byte>().swap(buffer_);

  // Make the rename itself durable. Some file systems cannot sync a directory (EINVAL);
  // there is nothing more to do on those.
  err = InjectedErrno(FileOp::kSyncDir);
  if (err == 0) {
    const int dir_fd = open(dir_path_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd < 0) {
      err = errno;
    } else {
      if (fsync(dir_fd) != 0 && errno != EINVAL) err = errno;
      close(dir_fd);
    }
  }
  if (err != 0) {
    return IoError("the output is complete but its directory could not be synced",
                   dir_path_, err, bytes_written_);
  }
  return Error{};
}

}  // namespace stguard
