// SPDX-License-Identifier: Apache-2.0
// GgufFile: runs the stages in file order (header, key/value section, tensor infos, data
// section) and keeps the views they return, over a mapping, bytes, or a byte source read
// by growing prefixes (the same stages: see PREFIXES in gguf/gguf_cursor.h).
#include <algorithm>
#include <new>

#include "base/out_of_memory.h"
#include "base/source_read.h"
#include "gguf/gguf_internal.h"
#include "stguard/mapped_file.h"

namespace stguard::gguf {

// GgufFileBuilder fills a GgufFile's private members (a friend of GgufFile).
struct GgufFileBuilder {
  // ValidateHead runs the stages up to the tensor infos over `cursor`; *infos_end is where
  // they end. A cursor that needs_more() afterwards makes the result meaningless.
  static Error ValidateHead(GgufCursor* cursor, GgufFile* file, uint64_t* infos_end) {
    GgufHeader header;
    if (Error error = ReadHeader(cursor, &header); !error.ok()) return error;
    file->version_ = header.version;
    if (Error e = ReadMetadata(cursor, header.num_key_values, &file->metadata_); !e.ok()) {
      return e;
    }
    if (Error e = SortUniqueKeys(file->metadata_, &file->keys_by_name_); !e.ok()) return e;
    if (Error e = FindAlignment(file->metadata_, &file->alignment_); !e.ok()) return e;
    if (Error e = ReadTensorInfos(cursor, header.num_tensors, &file->tensors_); !e.ok()) {
      return e;
    }
    *infos_end = cursor->position();
    return SortUniqueNames(file->tensors_, &file->tensors_by_name_);
  }

  static Error Validate(std::span<const std::byte> bytes, GgufFile* file) {
    file->bytes_ = bytes;
    file->file_size_ = bytes.size();
    GgufCursor cursor(bytes);
    uint64_t infos_end = 0;
    if (Error error = ValidateHead(&cursor, file, &infos_end); !error.ok()) return error;
    const ZeroCheck zeros = [bytes](uint64_t begin, uint64_t end, std::string_view after) {
      return FirstNonZero(bytes.subspan(static_cast<size_t>(begin), static_cast<size_t>(end - begin)),
                          begin, after);
    };
    if (Error e = CheckDataSection(bytes.size(), infos_end, file->alignment_, &file->tensors_,
                                   &file->data_offset_, zeros);
        !e.ok()) {
      return e;
    }
    for (TensorInfo& tensor : file->tensors_) {
      tensor.data = bytes.subspan(static_cast<size_t>(tensor.absolute_offset),
                                  static_cast<size_t>(tensor.byte_size));
    }
    return {};
  }

  // NextPrefixLen is how long a prefix the next read makes: what the cursor needed, and at
  // least double what was read, growing by at most kMaxReadGrowth, within the file.
  static uint64_t NextPrefixLen(uint64_t have, uint64_t needed, uint64_t file_size) {
    const uint64_t grown = have + std::min(have, GgufFile::kMaxReadGrowth);
    return std::min(file_size, std::max(needed, grown));
  }

  // ValidateSource reads growing prefixes of `source` until the stages up to the tensor
  // infos decide, then checks the data section (its padding through the source unless the
  // source is remote).
  static Error ValidateSource(const ByteSource& source, GgufFile* file) {
    const uint64_t size = source.size();
    file->file_size_ = size;
    std::vector<std::byte>& prefix = file->owned_;
    uint64_t infos_end = 0;
    uint64_t want = std::min(size, GgufFile::kFirstReadLen);
    for (;;) {
      if (Error e = AppendRange(source, want, &prefix); !e.ok()) return e;
      file->metadata_.clear();
      file->tensors_.clear();
      file->keys_by_name_.clear();
      file->tensors_by_name_.clear();
      GgufCursor cursor(prefix, size);
      Error error = ValidateHead(&cursor, file, &infos_end);
      if (!cursor.needs_more()) {
        if (!error.ok()) return error;
        break;
      }
      want = NextPrefixLen(prefix.size(), cursor.needed(), size);
    }
    file->bytes_ = prefix;
    file->padding_checked_ = !source.remote();
    ZeroCheck zeros;
    if (file->padding_checked_) {
      zeros = [&source, &prefix](uint64_t begin, uint64_t end, std::string_view after) -> Error {
        // The part of the run inside the prefix already read (a small file's growing read
        // reaches its end) is checked there, not read again.
        if (begin < prefix.size()) {
          const uint64_t held = std::min<uint64_t>(end, prefix.size());
          const std::span<const std::byte> bytes(prefix);
          if (Error e = FirstNonZero(bytes.subspan(static_cast<size_t>(begin),
                                                   static_cast<size_t>(held - begin)),
                                     begin, after);
              !e.ok()) {
            return e;
          }
          begin = held;
        }
        std::vector<std::byte> run;  // read in chunks: an alignment may be large
        constexpr uint64_t kChunk = 64 * 1024;
        for (uint64_t at = begin; at < end; at += std::min(kChunk, end - at)) {
          if (Error e = ReadRange(source, at, std::min(kChunk, end - at), &run); !e.ok()) {
            return e;
          }
          if (Error e = FirstNonZero(run, at, after); !e.ok()) return e;
        }
        return {};
      };
    }
    return CheckDataSection(size, infos_end, file->alignment_, &file->tensors_,
                            &file->data_offset_, zeros);
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

Result<GgufFile> GgufFile::ReadSource(const ByteSource& source) {
  return CatchOutOfMemory("out of memory while reading a GGUF file", [&]() -> Result<GgufFile> {
    GgufFile file;
    Error error = GgufFileBuilder::ValidateSource(source, &file);
    return Finish(std::move(error), std::move(file));
  });
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
