// SPDX-License-Identifier: Apache-2.0
// stguard/mapped_file.h: a read-only memory mapping of a whole file.
#ifndef STGUARD_MAPPED_FILE_H_
#define STGUARD_MAPPED_FILE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

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

// MappedFile maps a regular file (MAP_PRIVATE). Mapping, unlike reading, lets validation
// touch only the header's pages: the data pages of a 16 GB checkpoint are never read.
// A file truncated by another process while mapped makes later reads of the lost pages
// fault (SIGBUS), as for every mapping: map only files nobody is rewriting in place (the
// stguard writer replaces files by rename, which is safe).
class STGUARD_API MappedFile {
 public:
  // Open maps `path`. A missing or unreadable path gives kIoError, a directory or other
  // non-regular file kNotARegularFile. An empty file maps to an empty span (no mmap call,
  // since mmap rejects length 0).
  static Result<std::unique_ptr<MappedFile>> Open(const std::string& path,
                                                  MapMode mode = MapMode::kReadOnly);

  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::span<const std::byte> bytes() const { return {data_, size_}; }
  // mutable_bytes is the same memory, writable; empty unless opened with kCopyOnWrite.
  std::span<std::byte> mutable_bytes() const {
    if (!writable_) return {};
    return {const_cast<std::byte*>(data_), size_};
  }

 private:
  MappedFile(const std::byte* data, size_t size, bool writable)
      : data_(data), size_(size), writable_(writable) {}

  const std::byte* data_;
  size_t size_;
  bool writable_;
};

}  // namespace stguard

#endif  // STGUARD_MAPPED_FILE_H_
