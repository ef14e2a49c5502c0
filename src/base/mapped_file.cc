// SPDX-License-Identifier: Apache-2.0
// A read-only memory mapping of a whole file.
#include "stguard/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/out_of_memory.h"


namespace stguard {
namespace {

Error IoError(const char* message, const std::string& path, int err) {
  return Error{ErrorCode::kIoError, 0, message, path + ": " + std::strerror(err)};
}

// FileDescriptor closes its descriptor on every path out of Open.
struct FileDescriptor {
  int fd;
  ~FileDescriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

Result<std::unique_ptr<MappedFile>> MappedFile::Open(const std::string& path) {
  return CatchOutOfMemory("out of memory while mapping the file",
                          [&]() -> Result<std::unique_ptr<MappedFile>> {
    // O_NONBLOCK: opening a FIFO would otherwise wait for a writer forever. The fstat below
    // refuses anything but a regular file, for which the flag changes nothing.
    FileDescriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
    if (file.fd < 0) return IoError("cannot open file", path, errno);
    struct stat info;
    if (::fstat(file.fd, &info) != 0) return IoError("cannot stat file", path, errno);
    if (!S_ISREG(info.st_mode)) {
      return Error{ErrorCode::kNotARegularFile, 0, "not a regular file", path};
    }
    const auto size = static_cast<size_t>(info.st_size);
    if (size == 0) {
      return std::unique_ptr<MappedFile>(new MappedFile(nullptr, 0));
    }
    void* data = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, file.fd, 0);
    if (data == MAP_FAILED) return IoError("cannot map file", path, errno);
    // The mapping keeps the file's pages reachable after the descriptor closes.
    return std::unique_ptr<MappedFile>(new MappedFile(static_cast<const std::byte*>(data), size));
  });
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<std::byte*>(data_), size_);
}

}  // namespace stguard
