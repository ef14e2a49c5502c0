// SPDX-License-Identifier: Apache-2.0
#include "storage.h"

#include <cstring>
#include <new>
#include <utility>

namespace stguard::python {

Storage::Storage(std::unique_ptr<MappedFile> mapping, std::unique_ptr<std::byte[]> owned,
                 std::span<std::byte> memory, Checkpoint checkpoint)
    : mapping_(std::move(mapping)),
      owned_(std::move(owned)),
      memory_(memory),
      checkpoint_(std::move(checkpoint)) {}

Result<std::unique_ptr<Storage>> Storage::OpenFile(const std::string& path) {
  Result<std::unique_ptr<MappedFile>> mapping = MappedFile::Open(path, MapMode::kCopyOnWrite);
  if (!mapping.ok()) return mapping.error();
  const std::span<std::byte> memory = (*mapping)->mutable_bytes();
  // Validation reads the header pages only; the data pages stay untouched on disk.
  Result<Checkpoint> checkpoint = Checkpoint::FromBytes(std::span<const std::byte>(memory));
  if (!checkpoint.ok()) return checkpoint.error();
  return std::unique_ptr<Storage>(
      new Storage(std::move(*mapping), nullptr, memory, std::move(*checkpoint)));
}

Result<std::unique_ptr<Storage>> Storage::CopyBytes(std::span<const std::byte> bytes) {
  // operator new aligns to at least 16 bytes, so tensors aligned within the file are
  // aligned in memory too, as in a page-aligned mapping.
  std::unique_ptr<std::byte[]> owned(new (std::nothrow) std::byte[bytes.empty() ? 1 : bytes.size()]);
  if (owned == nullptr) {
    return Error{ErrorCode::kOutOfMemory, 0, "cannot allocate memory for a copy of the bytes"};
  }
  if (!bytes.empty()) std::memcpy(owned.get(), bytes.data(), bytes.size());
  const std::span<std::byte> memory(owned.get(), bytes.size());
  Result<Checkpoint> checkpoint = Checkpoint::FromBytes(std::span<const std::byte>(memory));
  if (!checkpoint.ok()) return checkpoint.error();
  return std::unique_ptr<Storage>(
      new Storage(nullptr, std::move(owned), memory, std::move(*checkpoint)));
}

}  // namespace stguard::python
