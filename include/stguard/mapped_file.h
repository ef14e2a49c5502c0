// SPDX-License-Identifier: Apache-2.0
// stguard/mapped_file.h: a read-only memory mapping of a whole file, and pread access to
// the same file.
#ifndef STGUARD_MAPPED_FILE_H_
#define STGUARD_MAPPED_FILE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "stguard/byte_source.h"
#include "stguard/error.h"
#include "stguard/export.h"

namespace stguard {

// MapMode says whether the mapping may be written.
enum class MapMode : uint8_t {
  kReadOnly,     // PROT_READ: writing through the mapping faults
  kCopyOnWrite,  // PROT_READ|PROT_WRITE, MAP_PRIVATE: a write copies that page into
                 // private memory; the file never changes. For tensors handed to code
                 // that may write into them (numpy, torch), without reading any page early.
};

// MappedFile maps a regular file (MAP_PRIVATE, read-only unless MapMode says otherwise).
// Mapping, unlike reading, lets validation touch only the header's pages: the data pages
// of a 16 GB checkpoint are never read.
//
// TRUNCATION: a mapping is only as long-lived as the file's size. If another process
// truncates the file, touching a mapped page past the new end raises SIGBUS and kills the
// process. ReadAt reads with pread(2) instead and turns a file that shrank into kIoError;
// code that must survive files it does not control reads through ReadAt.
//
// A MappedFile is also the ByteSource of a local file (OpenUnmapped for one that is only
// read by ranges): the range readers take it where the mapped readers take bytes().
class STGUARD_API MappedFile final : public ByteSource {
 public:
  // Open maps `path`. A missing or unreadable path gives kIoError, a directory or other
  // non-regular file kNotARegularFile. A file whose size is 0 is read to its end instead
  // (files in /proc and /sys report size 0 but have content), up to kMaxUnsizedFileLen
  // bytes (more is kIoError).
  // With MapMode::kCopyOnWrite the mapping is writable and private (see MapMode).
  static Result<std::unique_ptr<MappedFile>> Open(const std::string& path,
                                                  MapMode mode = MapMode::kReadOnly);
  // OpenUnmapped opens `path` as Open does but maps nothing: bytes() is empty and only
  // ReadAt reads (up to size()). For reading a file's header without a mapping.
  static Result<std::unique_ptr<MappedFile>> OpenUnmapped(const std::string& path);
  // kMaxUnsizedFileLen caps what Open reads from a file that reports size 0.
  static constexpr size_t kMaxUnsizedFileLen = size_t{1} << 30;

  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile() override;

  std::span<const std::byte> bytes() const {
    return data_ == nullptr ? std::span<const std::byte>()
                            : std::span(data_, static_cast<size_t>(size_));
  }
  // mutable_bytes is the same memory, writable; empty unless opened with kCopyOnWrite.
  std::span<std::byte> mutable_bytes() const {
    if (!writable_ || data_ == nullptr) return {};
    return {const_cast<std::byte*>(data_), static_cast<size_t>(size_)};
  }
  uint64_t size() const override { return size_; }
  const std::string& path() const { return path_; }

  // ReadAt copies out.size() bytes from file offset `offset` with pread(2), never through
  // the mapping. A range past size() gives kIoError before anything is read; a file now
  // shorter than offset + out.size() gives kIoError naming the file ("the file shrank
  // while it was being read"), as does any read error.
  [[nodiscard]] Error ReadAt(uint64_t offset, std::span<std::byte> out) const override;

 private:
  static Result<std::unique_ptr<MappedFile>> OpenFile(const std::string& path, bool map,
                                                      MapMode mode);
  MappedFile(int fd, std::string path, const std::byte* data, uint64_t size, bool mapped,
             bool writable)
      : fd_(fd), path_(std::move(path)), data_(data), size_(size), mapped_(mapped),
        writable_(writable) {}

  int fd_;  // kept open for ReadAt
  std::string path_;
  const std::byte* data_;
  uint64_t size_;                // 64-bit: a file read by ranges may exceed size_t
  bool mapped_;                  // data_ is an mmap of size_ bytes (which fit in size_t)
  bool writable_;                // data_ may be written (copy-on-write or private copy)
  std::vector<std::byte> read_;  // the content of a file read rather than mapped
};

}  // namespace stguard

#endif  // STGUARD_MAPPED_FILE_H_
