// SPDX-License-Identifier: Apache-2.0
// Storage: one validated checkpoint and the memory that holds it, shared by every array
// and tensor made from it.
//
// The memory is either a private copy-on-write mapping of a file (MapMode::kCopyOnWrite:
// opening reads only the header pages, and writing into a tensor copies that one page
// instead of changing the file) or a private heap copy of bytes given by the caller.
// Python sees the whole memory through the buffer protocol, writable; numpy's frombuffer
// makes zero-copy arrays over it whose base is the Storage, so the memory lives exactly as
// long as the last array, tensor or handle that uses it.
#ifndef STGUARD_PYTHON_STORAGE_H_
#define STGUARD_PYTHON_STORAGE_H_

#include <cstddef>
#include <memory>
#include <span>
#include <string>

#include "stguard/error.h"
#include "stguard/mapped_file.h"
#include "stguard/reader.h"

namespace stguard::python {

class Storage {
 public:
  // OpenFile maps `path` copy-on-write and validates it. Needs no GIL.
  static Result<std::unique_ptr<Storage>> OpenFile(const std::string& path);
  // CopyBytes copies `bytes` into memory the Storage owns, then validates the copy. Needs
  // no GIL (the caller keeps `bytes` alive and unchanged during the call).
  static Result<std::unique_ptr<Storage>> CopyBytes(std::span<const std::byte> bytes);

  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  const Checkpoint& checkpoint() const { return checkpoint_; }
  // memory is every byte of the file, writable (private to this process).
  std::span<std::byte> memory() const { return memory_; }

 private:
  Storage(std::unique_ptr<MappedFile> mapping, std::unique_ptr<std::byte[]> owned,
          std::span<std::byte> memory, Checkpoint checkpoint);

  // Declared before checkpoint_, so destroyed after it: the checkpoint's views point here.
  std::unique_ptr<MappedFile> mapping_;
  std::unique_ptr<std::byte[]> owned_;
  std::span<std::byte> memory_;
  Checkpoint checkpoint_;
};

}  // namespace stguard::python

#endif  // STGUARD_PYTHON_STORAGE_H_
