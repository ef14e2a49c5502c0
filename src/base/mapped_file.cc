// SPDX-License-Identifier: Apache-2.0
// A read-only memory mapping of a whole file.
#include "stguard/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <new>

#include "base/out_of_memory.h"
#include "base/test_reads.h"


namespace stguard {
namespace {

// PositionedRead is pread(2). Emscripten 3.1.6's pread hands its file systems only the
// low 32 bits of the offset (fd_pread drops offset_high), so a read past 2 GiB of a
// dropped file would fail (EINVAL) or read other bytes; its lseek takes all 64 bits.
// WebAssembly runs this single-threaded, so moving the shared file position is safe.
ssize_t PositionedRead(int fd, void* out, size_t length, off_t offset) {
#ifdef __EMSCRIPTEN__
  if (::lseek(fd, offset, SEEK_SET) < 0) return -1;
  return ::read(fd, out, length);
#else
  return ::pread(fd, out, length, offset);
#endif
}

Error IoError(const char* message, const std::string& path, int err) {
  return Error{ErrorCode::kIoError, 0, message, path + ": " + std::strerror(err)};
}

// FileDescriptor closes its descriptor on every path out of Open that does not keep it.
struct FileDescriptor {
  int fd;
  ~FileDescriptor() {
    if (fd >= 0) ::close(fd);
  }
  int Release() {
    const int kept = fd;
    fd = -1;
    return kept;
  }
};

// ReadToEnd reads a file that reports size 0 (/proc/self/status) until end of file.
Error ReadToEnd(int fd, const std::string& path, std::vector<std::byte>* out) {
  constexpr size_t kStep = 64 * 1024;
  for (;;) {
    if (out->size() >= MappedFile::kMaxUnsizedFileLen) {
      return Error{ErrorCode::kIoError, 0, "file without a size is larger than the cap", path};
    }
    const size_t old_size = out->size();
    out->resize(old_size + kStep);
    const ssize_t got = ::read(fd, out->data() + old_size, kStep);
    if (got < 0 && errno == EINTR) {
      out->resize(old_size);
      continue;
    }
    if (got < 0) return IoError("cannot read file", path, errno);
    out->resize(old_size + static_cast<size_t>(got));
    if (got == 0) return Error{};
  }
}

}  // namespace

Result<std::unique_ptr<MappedFile>> MappedFile::Open(const std::string& path, MapMode mode) {
  return CatchOutOfMemory("out of memory while mapping the file",
                          [&] { return OpenFile(path, /*map=*/true, mode); });
}

Result<std::unique_ptr<MappedFile>> MappedFile::OpenUnmapped(const std::string& path) {
  return CatchOutOfMemory("out of memory while opening the file",
                          [&] { return OpenFile(path, /*map=*/false, MapMode::kReadOnly); });
}

Result<std::unique_ptr<MappedFile>> MappedFile::OpenFile(const std::string& path, bool map,
                                                         MapMode mode) {
  // O_NONBLOCK: opening a FIFO would otherwise wait for a writer forever. The fstat below
  // refuses anything but a regular file, for which the flag changes nothing.
  FileDescriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
  if (file.fd < 0) return IoError("cannot open file", path, errno);
  struct stat info;
  if (::fstat(file.fd, &info) != 0) return IoError("cannot stat file", path, errno);
  if (!S_ISREG(info.st_mode)) {
    return Error{ErrorCode::kNotARegularFile, 0, "not a regular file", path};
  }
  const auto size = static_cast<uint64_t>(info.st_size);
  const bool writable = mode == MapMode::kCopyOnWrite;
  if (size == 0) {
    // The content read into memory is private to this object, so it may be written.
    std::unique_ptr<MappedFile> read(new MappedFile(-1, path, nullptr, 0, false, writable));
    try {
      if (Error error = ReadToEnd(file.fd, path, &read->read_); !error.ok()) return error;
    } catch (const std::bad_alloc&) {
      return Error{ErrorCode::kOutOfMemory, 0, "out of memory while reading the file", path};
    }
    read->data_ = read->read_.data();
    read->size_ = read->read_.size();
    RecordReadForTesting(path.c_str(), "slurp", 0, read->size_);
    return read;  // no descriptor kept: ReadAt copies from memory
  }
  if (!map) {
    return std::unique_ptr<MappedFile>(
        new MappedFile(file.Release(), path, nullptr, size, false, false));
  }
  // A 32-bit address space (WebAssembly) cannot map a file of 4 GiB or more: refuse it
  // rather than map a truncated length.
  if (size > std::numeric_limits<size_t>::max()) {
    return Error{ErrorCode::kIoError, 0, "the file is larger than this address space can map",
                 path};
  }
  // A private writable mapping of a read-only descriptor is allowed: writes go to private
  // copies of the pages, never to the file.
  const int protection = writable ? PROT_READ | PROT_WRITE : PROT_READ;
  void* data = ::mmap(nullptr, static_cast<size_t>(size), protection, MAP_PRIVATE, file.fd, 0);
  if (data == MAP_FAILED) return IoError("cannot map file", path, errno);
  RecordReadForTesting(path.c_str(), "map", 0, size);
  return std::unique_ptr<MappedFile>(new MappedFile(
      file.Release(), path, static_cast<const std::byte*>(data), size, true, writable));
}

MappedFile::~MappedFile() {
  if (mapped_) ::munmap(const_cast<std::byte*>(data_), static_cast<size_t>(size_));
  if (fd_ >= 0) ::close(fd_);
}

Error MappedFile::ReadAt(uint64_t offset, std::span<std::byte> out) const {
  if (Error error = SourceRangeError(size_, offset, out.size(), path_); !error.ok()) {
    return error;
  }
  if (fd_ < 0) {  // content already in memory
    if (!out.empty()) std::memcpy(out.data(), data_ + static_cast<size_t>(offset), out.size());
    return Error{};
  }
  RecordReadForTesting(path_.c_str(), "pread", offset, out.size());
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t got = PositionedRead(fd_, out.data() + done, out.size() - done,
                                       static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      Error error = IoError("cannot read file", path_, errno);
      error.offset = offset + done;
      return error;
    }
    if (got == 0) {
      return Error{ErrorCode::kIoError, offset + done,
                   "the file shrank while it was being read (truncated by another process?)",
                   path_};
    }
    done += static_cast<size_t>(got);
  }
  return Error{};
}

}  // namespace stguard
