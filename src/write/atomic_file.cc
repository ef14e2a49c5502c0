// SPDX-License-Identifier: Apache-2.0
// Crash-safe file replacement. The destination changes only through rename(2), which
// POSIX makes atomic: any reader, and any reboot, sees the old file or the new one.
#include "write/atomic_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dirent.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <system_error>

#include "base/test_pause.h"
#include "base/concat.h"

namespace stguard {
namespace {

// kMaxWriteLen caps one write(2) call; Linux transfers at most about 2 GiB per call anyway.
constexpr size_t kMaxWriteLen = size_t{1} << 30;
// kMaxCreateAttempts bounds the search for an unused temporary name.
constexpr int kMaxCreateAttempts = 100;
// kMaxBaseInTempName keeps the temporary name within NAME_MAX (255) for any destination.
constexpr size_t kMaxBaseInTempName = 64;

#ifdef STGUARD_TESTING_SEAMS
FileFaultHook& GlobalFaultHook() {
  static FileFaultHook hook;
  return hook;
}

// InjectedErrno asks the test hook whether `op` should fail, and with which errno.
int InjectedErrno(FileOp op) {
  const FileFaultHook& hook = GlobalFaultHook();
  return hook ? hook(op) : 0;
}
#else
// Without test seams no call is ever failed on purpose.
constexpr int InjectedErrno(FileOp /*op*/) { return 0; }
#endif

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
  return Concat({dir_prefix, ".", std::string_view(base).substr(0, kMaxBaseInTempName),
                 ".stguard-", std::to_string(getpid()), "-",
                 std::to_string(counter.fetch_add(1)), "-",
                 std::to_string(ticks % 1000000007), ".tmp"});
}

// kMaxLinkHops bounds how many symbolic links ResolveDestination follows (as the
// kernel's own limit, MAXSYMLINKS, bounds path resolution).
constexpr int kMaxLinkHops = 40;

// IsUnderProc says whether a resolved folder is /proc or inside it.
bool IsUnderProc(const std::string& real_dir) {
  return real_dir == "/proc" || real_dir.rfind("/proc/", 0) == 0;
}

// ResolveDestination follows `path` through symbolic links to the name that the write
// replaces: the file a link points to (not the link), and for a dangling link the name
// it points to, which is then created. It refuses a path that reaches its file only
// through a process's descriptor table (/dev/stdout, /dev/stderr, /dev/fd/N,
// /proc/self/fd/N): those links name an open descriptor, and renaming over their target
// would replace a file the user never named (the log that stdout is appended to).
Result<std::string> ResolveDestination(const std::string& path) {
  std::string current = path;
  for (int hop = 0; hop <= kMaxLinkHops; ++hop) {
    const size_t slash = current.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/"
                                                                          : current.substr(0, slash);
    // Owned at once: IsUnderProc may allocate, and its std::bad_alloc must not leak this.
    if (const std::unique_ptr<char, decltype(&std::free)> real_dir(
            realpath(dir.c_str(), nullptr), &std::free);
        real_dir != nullptr) {
      if (IsUnderProc(real_dir.get())) {
        Error error = IoError(
            "the output names a file only through a process's descriptor (like /dev/stdout); "
            "give - as the output to write to standard output",
            path, 0, 0);
        error.code = ErrorCode::kNotARegularFile;
        return error;
      }
    }  // else: the folder is missing or unreadable, and creating the file reports it
    struct stat link_status;
    if (lstat(current.c_str(), &link_status) != 0 || !S_ISLNK(link_status.st_mode)) {
      return current;  // a file, or a name still to be created
    }
    std::string target(PATH_MAX, '\0');
    const ssize_t len = readlink(current.c_str(), target.data(), target.size());
    if (len < 0) return IoError("could not read the symbolic link", current, errno, 0);
    target.resize(static_cast<size_t>(len));
    current = target.starts_with('/') || slash == std::string::npos
                  ? target
                  : current.substr(0, slash + 1) + target;
  }
  return IoError("too many levels of symbolic links in the output path", path, ELOOP, 0);
}

// CurrentUmask reads the process's umask without changing it (Linux 4.7+ reports it in
// /proc/self/status); elsewhere it sets and restores it, which is brief but not atomic.
mode_t CurrentUmask() {
  const int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    char text[4096];
    const ssize_t len = read(fd, text, sizeof(text) - 1);
    close(fd);
    if (len > 0) {
      text[len] = '\0';
      if (const char* field = std::strstr(text, "\nUmask:"); field != nullptr) {
        return static_cast<mode_t>(std::strtoul(field + 7, nullptr, 8) & 0777);
      }
    }
  }
  const mode_t mask = umask(077);
  umask(mask);
  return mask;
}

// The temporary files being written, for the signal handler. A fixed table of atomic
// pointers: the handler may only read it, and may run at any moment.
constexpr int kMaxTrackedTempFiles = 64;
std::atomic<const char*> g_temp_files[kMaxTrackedTempFiles];

void TrackTempFile(const char* temp_path) {
  for (std::atomic<const char*>& slot : g_temp_files) {
    const char* expected = nullptr;
    if (slot.compare_exchange_strong(expected, temp_path)) return;
  }
  // More than kMaxTrackedTempFiles writes at once: this one is not removed on a signal.
}

void UntrackTempFile(const char* temp_path) {
  for (std::atomic<const char*>& slot : g_temp_files) {
    const char* expected = temp_path;
    if (slot.compare_exchange_strong(expected, nullptr)) return;
  }
}

// RemoveTempFilesAndReraise is the handler for SIGINT, SIGTERM and SIGHUP: unlink(2) and
// raise(3) are async-signal-safe. SA_RESETHAND restored the default action, so the
// raised signal ends the process once the handler returns, with the status a shell
// expects (130 for Ctrl-C).
extern "C" void RemoveTempFilesAndReraise(int signal_number) {
  const int saved_errno = errno;
  for (std::atomic<const char*>& slot : g_temp_files) {
    if (const char* temp_path = slot.load(); temp_path != nullptr) unlink(temp_path);
  }
  raise(signal_number);
  errno = saved_errno;
}

}  // namespace

#ifdef STGUARD_TESTING_SEAMS
void SetFileFaultHookForTesting(FileFaultHook hook) { GlobalFaultHook() = std::move(hook); }
#endif

void RemoveTemporaryFilesOnSignals() {
  for (const int signal_number : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction current;
    if (sigaction(signal_number, nullptr, &current) != 0) continue;
    // A signal the process ignores (nohup ignores SIGHUP) stays ignored.
    if (current.sa_handler == SIG_IGN) continue;
    struct sigaction action {};
    action.sa_handler = RemoveTempFilesAndReraise;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESETHAND;
    sigaction(signal_number, &action, nullptr);
  }
  // Past RLIMIT_FSIZE the kernel sends SIGXFSZ, whose default action kills the process
  // silently with the temporary file in place; ignored, the write fails with EFBIG,
  // which is reported and cleaned up as any other write error.
  signal(SIGXFSZ, SIG_IGN);
}

AtomicFile::AtomicFile(int fd, std::string dest_path, std::string temp_path,
                       std::string dir_path)
    : fd_(fd),
      dest_path_(std::move(dest_path)),
      temp_path_(std::move(temp_path)),
      dir_path_(std::move(dir_path)) {}

AtomicFile::~AtomicFile() { Abort(); }

Result<std::unique_ptr<AtomicFile>> AtomicFile::Create(const std::string& path) {
  if (path.empty()) return IoError("empty output path", path, 0, 0);
  Result<std::string> resolved = ResolveDestination(path);
  if (!resolved.ok()) return resolved.error();
  std::string dest = std::move(*resolved);
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
  // The folder to sync after the rename: "/" for "/x", "." for a bare name.
  std::string dir_path = slash == std::string::npos ? std::string(".")
                         : slash == 0               ? std::string("/")
                                                    : dest.substr(0, slash);

  for (int attempt = 0; attempt < kMaxCreateAttempts; ++attempt) {
    std::string temp_path = TempName(dir_prefix, base);
    int fd = -1;
    int err = InjectedErrno(FileOp::kCreate);
    if (err == 0) {
      // 0600 whatever the umask: only the owner can open the file while the data goes
      // in. Commit gives it its final mode just before the rename. O_EXCL: never reuse
      // someone's file.
      fd = open(temp_path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
      if (fd < 0) err = errno;
    }
    if (fd < 0) {
      if (err == EEXIST || err == EINTR) continue;
      return IoError("could not create a temporary file beside the output", temp_path, err,
                     0);
    }
    // The temporary file exists from here: if allocating its owner fails, remove it
    // before passing the failure on, or it would be left beside the destination.
    std::unique_ptr<AtomicFile> file;
    try {
      file.reset(new AtomicFile(fd, std::move(dest), std::move(temp_path), std::move(dir_path)));
    } catch (...) {
      close(fd);
      unlink(temp_path.c_str());
      throw;
    }
    file->SetFinalMode(dest_exists ? &dest_status : nullptr);
    TrackTempFile(file->temp_path_.c_str());
    return file;
  }
  return IoError("could not find an unused temporary file name", path, EEXIST, 0);
}

void AtomicFile::SetFinalMode(const struct stat* dest) {
  if (dest != nullptr) {
    final_mode_ = dest->st_mode & 07777;
    keep_owner_ = true;
    owner_ = dest->st_uid;
    group_ = dest->st_gid;
  } else {
    final_mode_ = 0666 & ~CurrentUmask();  // as open(0666) would have made it
  }
}

Result<std::unique_ptr<AtomicFile>> AtomicFile::CreateInFolder(int dir_fd,
                                                               const std::string& dir_path,
                                                               const std::string& name) {
  const std::string dest_path = dir_path + "/" + name;
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos) {
    return IoError("not a plain file name in the output folder", dest_path, 0, 0);
  }
  struct stat dest_status;
  const bool dest_exists = fstatat(dir_fd, name.c_str(), &dest_status, AT_SYMLINK_NOFOLLOW) == 0;
  if (dest_exists && !S_ISREG(dest_status.st_mode)) {
    Error error = IoError(S_ISLNK(dest_status.st_mode)
                              ? "the output folder already holds a symbolic link of this name"
                              : "the output folder already holds a non-file of this name",
                          dest_path, 0, 0);
    error.code = ErrorCode::kNotARegularFile;
    return error;
  }
  for (int attempt = 0; attempt < kMaxCreateAttempts; ++attempt) {
    std::string temp_name = TempName("", name);
    int fd = -1;
    int err = InjectedErrno(FileOp::kCreate);
    if (err == 0) {
      fd = openat(dir_fd, temp_name.c_str(),
                  O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
      if (fd < 0) err = errno;
    }
    if (fd < 0) {
      if (err == EEXIST || err == EINTR) continue;
      return IoError("could not create a temporary file in the output folder",
                     dir_path + "/" + temp_name, err, 0);
    }
    std::unique_ptr<AtomicFile> file;
    try {
      file.reset(new AtomicFile(fd, dest_path, dir_path + "/" + temp_name, dir_path));
      file->dir_fd_ = dir_fd;
      file->dest_name_ = name;
      file->temp_name_ = std::move(temp_name);
    } catch (...) {
      close(fd);
      unlinkat(dir_fd, temp_name.c_str(), 0);
      throw;
    }
    file->SetFinalMode(dest_exists ? &dest_status : nullptr);
    TrackTempFile(file->temp_path_.c_str());
    return file;
  }
  return IoError("could not find an unused temporary file name", dest_path, EEXIST, 0);
}

void AtomicFile::RemoveTemporary() {
  if (dir_fd_ >= 0) {
    unlinkat(dir_fd_, temp_name_.c_str(), 0);
  } else {
    unlink(temp_path_.c_str());
  }
}

Error AtomicFile::Fail(Error error) {
  failure_ = error;
  Abort();
  return error;
}

void AtomicFile::Abort() {
  if (done_) return;
  done_ = true;
#if defined(__linux__) && !defined(__EMSCRIPTEN__)
  if (map_ != nullptr) munmap(map_, map_len_);
  map_ = nullptr;
#endif
  if (fd_ >= 0) {
    close(fd_);
    fd_ = -1;
  }
  RemoveTemporary();
  UntrackTempFile(temp_path_.c_str());  // after the unlink: a signal in between is harmless
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
    PauseForTestingAt("written");
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
  if (done_ || finished_) {
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

// A placed range: the file is extended over it with its blocks allocated (fallocate), so
// that a full disk fails here rather than as SIGBUS on a store into the mapping, then
// mapped shared and writable (the temporary file is opened read-write for this). A file
// system without fallocate, or a platform without such mappings, places nothing: the
// producer writes in order instead.
Error AtomicFile::BeginPlaced(uint64_t len, std::byte** at) {
  *at = nullptr;
  if (done_ || finished_ || map_ != nullptr) {
    if (!failure_.ok()) return failure_;
    return IoError("a placed write out of turn", dest_path_, 0, bytes_written());
  }
#if !defined(__linux__) || defined(__EMSCRIPTEN__)  // fallocate and these mappings: Linux
  (void)len;
  return Error{};
#else
  if (Error error = Flush(); !error.ok()) return error;
  if (len == 0) return Error{};
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint64_t start = bytes_written_ / page * page;
  const uint64_t map_len = bytes_written_ - start + len;
  if (map_len > SIZE_MAX || bytes_written_ + len > static_cast<uint64_t>(INT64_MAX)) {
    return Error{};  // too large to map here: written in order instead
  }
  int err = InjectedErrno(FileOp::kWrite);
  if (err == 0 && fallocate(fd_, 0, static_cast<off_t>(bytes_written_),
                            static_cast<off_t>(len)) != 0) {
    err = errno;
    if (err == EOPNOTSUPP || err == ENOSYS) return Error{};
  }
  if (err != 0) {
    return Fail(IoError("could not extend the temporary file", temp_path_, err,
                        bytes_written_));
  }
  void* map = mmap(nullptr, static_cast<size_t>(map_len), PROT_READ | PROT_WRITE, MAP_SHARED,
                   fd_, static_cast<off_t>(start));
  if (map == MAP_FAILED) {
    // Give the blocks back, so that writing in order continues from the same size.
    if (ftruncate(fd_, static_cast<off_t>(bytes_written_)) != 0) {
      return Fail(IoError("could not shrink the temporary file", temp_path_, errno,
                          bytes_written_));
    }
    return Error{};
  }
  map_ = static_cast<std::byte*>(map);
  map_len_ = static_cast<size_t>(map_len);
  map_skip_ = static_cast<size_t>(bytes_written_ - start);
  placed_len_ = len;
  *at = map_ + map_skip_;
  return Error{};
#endif
}

// AdvisePlaced applies `advice` to the whole pages of the mapping that hold any of
// [offset, offset + len) of the placed bytes. A page shared with a neighbouring range
// is included: dropping it only costs a fault (the data is in the file's page cache).
void AtomicFile::AdvisePlaced(uint64_t offset, uint64_t len, int advice) {
#if defined(__linux__) && !defined(__EMSCRIPTEN__)
  if (map_ == nullptr || offset >= placed_len_) return;
  len = std::min(len, placed_len_ - offset);
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint64_t from = (map_skip_ + offset) / page * page;
  const uint64_t to = std::min<uint64_t>((map_skip_ + offset + len + page - 1) / page * page,
                                         map_len_);
  madvise(map_ + from, static_cast<size_t>(to - from), advice);
#else
  (void)offset;
  (void)len;
  (void)advice;
#endif
}

void AtomicFile::ReleasePlaced(uint64_t offset, uint64_t len) {
#if defined(__linux__) && !defined(__EMSCRIPTEN__)
  AdvisePlaced(offset, len, MADV_DONTNEED);
#endif
}

void AtomicFile::PreparePlaced(uint64_t offset, uint64_t len) {
#if defined(MADV_POPULATE_WRITE)  // Linux 5.14; older kernels refuse it (EINVAL): faults
  AdvisePlaced(offset, len, MADV_POPULATE_WRITE);
#else
  (void)offset;
  (void)len;
#endif
}

Error AtomicFile::EndPlaced() {
#if defined(__linux__) && !defined(__EMSCRIPTEN__)
  if (map_ == nullptr) return IoError("no placed write to end", dest_path_, 0, bytes_written());
  munmap(map_, map_len_);
  map_ = nullptr;
  bytes_written_ += placed_len_;
  placed_len_ = 0;
  // write(2) goes on from the file's offset, which the mapping did not move.
  if (lseek(fd_, static_cast<off_t>(bytes_written_), SEEK_SET) < 0) {
    return Fail(IoError("could not seek in the temporary file", temp_path_, errno,
                        bytes_written_));
  }
  return Error{};
#else
  return IoError("no placed write to end", dest_path_, 0, bytes_written());
#endif
}

Error AtomicFile::Commit() {
  if (Error error = Finish(); !error.ok()) return error;
  return Publish();
}

Error AtomicFile::Finish() {
  if (done_ || finished_) {
    if (!failure_.ok()) return failure_;
    return IoError("the file was already committed", dest_path_, 0, bytes_written());
  }
  if (Error error = Flush(); !error.ok()) return error;

  // The final owner and mode, only now that the data is in place (see Create). chown
  // first: it clears the set-user-ID and set-group-ID bits that chmod then restores.
  // Only root may give a file away, and only to groups one belongs to; when that is not
  // allowed, the new file belongs to whoever wrote it, as with any new file.
  if (keep_owner_) (void)!fchown(fd_, owner_, group_);
  int err = InjectedErrno(FileOp::kChmod);
  if (err == 0 && fchmod(fd_, final_mode_) != 0) err = errno;
  if (err != 0) {
    return Fail(IoError("could not set the temporary file's mode", temp_path_, err,
                        bytes_written_));
  }
  err = InjectedErrno(FileOp::kSync);
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
  finished_ = true;
  return Error{};
}

Error AtomicFile::Publish() {
  if (done_ || !finished_) {
    if (!failure_.ok()) return failure_;
    return IoError(done_ ? "the file was already committed" : "the file was not finished",
                   dest_path_, 0, bytes_written());
  }
  int err = InjectedErrno(FileOp::kRename);
  if (err == 0) {
    const int renamed = dir_fd_ >= 0 ? renameat(dir_fd_, temp_name_.c_str(), dir_fd_,
                                                dest_name_.c_str())
                                     : rename(temp_path_.c_str(), dest_path_.c_str());
    if (renamed != 0) err = errno;
  }
  if (err != 0) {
    return Fail(IoError("could not rename the temporary file over the output", dest_path_,
                        err, bytes_written_));
  }
  done_ = true;  // the temporary name is gone: nothing left to clean up
  UntrackTempFile(temp_path_.c_str());
  std::vector<std::byte>().swap(buffer_);

  // Make the rename itself durable. Some file systems cannot sync a directory (EINVAL);
  // there is nothing more to do on those.
  err = InjectedErrno(FileOp::kSyncDir);
  if (err == 0 && dir_fd_ >= 0) {
    if (fsync(dir_fd_) != 0 && errno != EINVAL) err = errno;
  } else if (err == 0) {
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

std::vector<std::string> FindLeftoverTemporaryFiles(const std::string& path) {
  std::vector<std::string> leftovers;
  Result<std::string> resolved = ResolveDestination(path);
  if (!resolved.ok()) return leftovers;
  const std::string& dest = *resolved;
  const size_t slash = dest.rfind('/');
  const std::string dir_prefix = slash == std::string::npos ? "" : dest.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? dest : dest.substr(slash + 1);
  const std::string dir = dir_prefix.empty() ? "." : dir_prefix;
  // The names TempName makes for this destination: ".BASE.stguard-PID-COUNTER-TICKS.tmp".
  const std::string prefix =
      Concat({".", std::string_view(base).substr(0, kMaxBaseInTempName), ".stguard-"});
  DIR* folder = opendir(dir.c_str());
  if (folder == nullptr) return leftovers;
  while (const dirent* entry = readdir(folder)) {
    const std::string_view name = entry->d_name;
    if (!name.starts_with(prefix) || !name.ends_with(".tmp")) continue;
    const std::string pid_text(name.substr(prefix.size()));
    char* end = nullptr;
    const long pid = std::strtol(pid_text.c_str(), &end, 10);
    if (end == pid_text.c_str() || *end != '-' || pid <= 0) continue;
    // A file whose writer still runs is a write in progress, not a leftover.
    if (pid <= INT_MAX && (kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH)) continue;
    leftovers.push_back(dir_prefix + std::string(name));
  }
  closedir(folder);
  std::sort(leftovers.begin(), leftovers.end());
  return leftovers;
}

}  // namespace stguard
