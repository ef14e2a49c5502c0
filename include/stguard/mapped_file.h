// SPDX-License-Identifier: Apache-2.0
// stguard/mapped_file.h: a read-only memory mapping of a whole file.
#ifndef STGUARD_MAPPED_FILE_H_
#define STGUARD_MAPPED_FILE_H_

#include <cstddef>
#include <memory>
#include <span>
#include <string>

#include "stguard/error.h"
#include "stguard/export.h"

namespace stguard {

// MappedFile maps a regular file read-only. Mapping, unlike reading, lets validation touch
// only the header's pages: the data pages of a 16 GB checkpoint are never read.
class STGUARD_API MappedFile {
 public:
  // Open maps `path`. A missing or unreadable path gives kIoError, a directory or other
  // non-regular file kNotARegularFile. An empty file maps to an empty span (no mmap call,
  // since mmap rejects length 0).
  static Result<std::unique_ptr<MappedFile>> Open(const std::string& path);

  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::span<const std::byte> bytes() const { return {data_, size_}; }

 private:
  MappedFile(const std::byte* data, size_t size) : data_(data), size_(size) {}

  const std::byte* data_;
  size_t size_;
};

}  // namespace stguard

#endif  // STGUARD_MAPPED_FILE_H_
