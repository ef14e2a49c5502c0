// SPDX-License-Identifier: Apache-2.0
// GgufFile: runs the stages in file order (header, key/value section, tensor infos, data
// section) and keeps the views they return.
#include <algorithm>
#include <new>

#include "gguf/gguf_internal.h"
#include "stguard/mapped_file.h"

namespace stguard::gguf {

// GgufFileBuilder fills a GgufFile's private members (a friend of GgufFile).
struct GgufFileBuilder {
  static Error Validate(std::span<const std::byte> bytes, GgufFile* file) {
    file->bytes_ = bytes;
    GgufCursor cursor(bytes);
    GgufHeader header;
    if (Error error = ReadHeader(&cursor, &header); !error.ok()) return error;
    file->version_ = header.version;
    if (Error e = ReadMetadata(&cursor, header.num_key_values, &file->metadata_); !e.ok()) {
      return e;
    }
    if (Error e = SortUniqueKeys(file->metadata_, &file->keys_by_name_); !e.ok()) return e;
    if (Error e = FindAlignment(file->metadata_, &file->alignment_); !e.ok()) return e;
    if (Error e = ReadTensorInfos(&cursor, header.num_tensors, &file->tensors_); !e.ok()) {
      return e;
    }
    if (Error e = SortUniqueNames(file->tensors_, &file->tensors_by_name_); !e.ok()) return e;
    return CheckDataSection(bytes, cursor.position(), file->alignment_, &file->tensors_,
                            &file->data_offset_);
  }
};

namespace {

Result<GgufFile> Finish(Error error, GgufFile file) {
  if (!error.ok()) return error;
  return file;
}

}  // namespace

Result<GgufFile> GgufFile::FromBytes(std::span<const std::byte> bytes) {
  try {
    GgufFile file;
    Error error = GgufFileBuilder::Validate(bytes, &file);
    return Finish(std::move(error), std::move(file));
  } catch (const std::bad_alloc&) {
    return Error{ErrorCode::kOutOfMemory, 0, "out of memory while reading a GGUF file"};
  }
}

Result<GgufFile> GgufFile::Open(const std::string& path) {
  Result<std::unique_ptr<MappedFile>> mapped = MappedFile::Open(path);
  if (!mapped.ok()) return mapped.error();
  try {
    GgufFile file;
    const std::span<const std::byte> bytes = (*mapped)->bytes();
    file.file_ = std::move(*mapped);
    Error error = GgufFileBuilder::Validate(bytes, &file);
    return Finish(std::move(error), std::move(file));
  } catch (const std::bad_alloc&) {
    return Error{ErrorCode::kOutOfMemory, 0, "out of memory while reading a GGUF file"};
  }
}

GgufFile::GgufFile(GgufFile&&) noexcept = default;
GgufFile& GgufFile::operator=(GgufFile&&) noexcept = default;
GgufFile::~GgufFile() = default;

const MetadataEntry* GgufFile::FindKey(std::string_view key) const {
  auto it = std::lower_bound(keys_by_name_.begin(), keys_by_name_.end(), key,
                             [&](uint32_t i, std::string_view k) { return metadata_[i].key < k; });
  if (it == keys_by_name_.end() || metadata_[*it].key != key) return nullptr;
  return &metadata_[*it];
}

const TensorInfo* GgufFile::FindTensor(std::string_view name) const {
  auto it = std::lower_bound(tensors_by_name_.begin(), tensors_by_name_.end(), name,
                             [&](uint32_t i, std::string_view n) { return tensors_[i].name < n; });
  if (it == tensors_by_name_.end() || tensors_[*it].name != name) return nullptr;
  return &tensors_[*it];
}

}  // namespace stguard::gguf
