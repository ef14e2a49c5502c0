// SPDX-License-Identifier: Apache-2.0
// Checkpoint: runs the stages in order (length prefix, header schema with sizes, tiling,
// and alignment when Options::require_aligned_data asks) and assembles the validated view.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <new>

#include "base/huge_pages.h"
#include "base/prefixed_source.h"
#include "base/test_pause.h"
#include "format/alignment.h"
#include "format/header_parser.h"
#include "format/length_prefix.h"
#include "format/open_with_head.h"
#include "stguard/mapped_file.h"
#include "stguard/reader.h"
#include "format/tiling.h"

namespace stguard {

uint64_t TensorView::num_elements() const {
  uint64_t count = 1;
  // Shape is a range of uint64_t decoded on the fly.
  for (uint64_t dim : shape) count *= dim;  // validation proved every step fits
  return count;
}

bool TensorView::is_aligned() const {
  return reinterpret_cast<uintptr_t>(data.data()) % DtypeAlignment(dtype) == 0;
}

// CheckpointBuilder is the one place that may fill a Checkpoint's private fields.
class CheckpointBuilder {
 public:
  // BuildNoThrow is Build with allocation failure turned into an Error, so that no
  // exception leaves the library.
  static Result<Checkpoint> BuildNoThrow(std::span<const std::byte> bytes,
                                         const Options& options) {
    try {
      uint64_t header_len = 0;
      if (Error error = ReadLengthPrefix(bytes, options, &header_len); !error.ok()) {
        return error;
      }
      return Build(bytes.first(8 + header_len), bytes.size(), options, {});
    } catch (const std::bad_alloc&) {
      return OutOfMemory();
    }
  }

  // OpenNoThrow is Checkpoint::Open (map_data) and Checkpoint::OpenHeader (!map_data).
  static Result<Checkpoint> OpenNoThrow(const std::string& path, const Options& options,
                                        bool map_data) {
    try {
      Result<std::unique_ptr<MappedFile>> file =
          map_data ? MappedFile::Open(path) : MappedFile::OpenUnmapped(path);
      if (!file.ok()) return file.error();
      return OpenFile(std::move(*file), options, map_data, {});
    } catch (const std::bad_alloc&) {
      return OutOfMemory();
    }
  }

  // OpenOpenedNoThrow is OpenCheckpointWithHead: `file` is kept for the data.
  static Result<Checkpoint> OpenOpenedNoThrow(std::unique_ptr<MappedFile> file,
                                              std::span<const std::byte> known_head,
                                              const Options& options) {
    try {
      return OpenFile(std::move(file), options, /*keep_file=*/true, known_head);
    } catch (const std::bad_alloc&) {
      return OutOfMemory();
    }
  }

  // OpenSourceNoThrow is Checkpoint::OpenHeader over a ByteSource.
  static Result<Checkpoint> OpenSourceNoThrow(const ByteSource& source, const Options& options) {
    try {
      return OpenSource(source, options);
    } catch (const std::bad_alloc&) {
      return OutOfMemory();
    }
  }

 private:
  static Error OutOfMemory() {
    return Error{ErrorCode::kOutOfMemory, 0, "out of memory while validating the header"};
  }

  // Sources says where a checkpoint's bytes live when they are not all one span.
  struct Sources {
    std::unique_ptr<MappedFile> mapping;      // the whole file, for the data spans
    std::unique_ptr<std::byte[]> head_copy;   // prefix and header, read by ranges
    uint64_t head_len = 0;
  };

  // OpenFile reads the head of the opened `file` by ranges, the first known_head.size()
  // bytes from known_head, and keeps `file` for the data when keep_file.
  static Result<Checkpoint> OpenFile(std::unique_ptr<MappedFile> file, const Options& options,
                                     bool keep_file, std::span<const std::byte> known_head);
  static Result<Checkpoint> OpenSource(const ByteSource& source, const Options& options);
  // ReadHead reads the 8-byte prefix, checks it, and reads the header after it: two reads,
  // 8 + N bytes. *out holds prefix and header, *out_len their length.
  static Error ReadHead(const ByteSource& source, const Options& options,
                        std::unique_ptr<std::byte[]>* out, uint64_t* out_len);
  // Build validates `head` (the 8-byte prefix and the N header bytes, N already checked)
  // of a file of `file_size` bytes. The data spans point into sources.mapping when there
  // is one, else into `head`'s own buffer (FromBytes), else nowhere (OpenHeader).
  static Result<Checkpoint> Build(std::span<const std::byte> head, uint64_t file_size,
                                  const Options& options, Sources sources,
                                  bool data_follows_head = true);
};

Result<Checkpoint> CheckpointBuilder::OpenFile(std::unique_ptr<MappedFile> file,
                                               const Options& options, bool keep_file,
                                               std::span<const std::byte> known_head) {
  // A head longer than the file is not this file's: read it all.
  if (known_head.size() > file->size()) known_head = {};
  const PrefixedSource head_source(*file, known_head);
  Sources sources;
  if (Error error = ReadHead(head_source, options, &sources.head_copy, &sources.head_len);
      !error.ok()) {
    return error;
  }
  const uint64_t file_size = file->size();
  const std::span<const std::byte> head(sources.head_copy.get(),
                                        static_cast<size_t>(sources.head_len));
  if (keep_file) sources.mapping = std::move(file);
  // Otherwise the file (and its descriptor) closes here.
  return Build(head, file_size, options, std::move(sources), /*data_follows_head=*/false);
}

Result<Checkpoint> CheckpointBuilder::OpenSource(const ByteSource& source,
                                                 const Options& options) {
  Sources sources;
  if (Error error = ReadHead(source, options, &sources.head_copy, &sources.head_len);
      !error.ok()) {
    return error;
  }
  const std::span<const std::byte> head(sources.head_copy.get(),
                                        static_cast<size_t>(sources.head_len));
  return Build(head, source.size(), options, std::move(sources), /*data_follows_head=*/false);
}

// ReadHead copies the prefix and the header with two reads of the source, never through a
// mapping: a file truncated by another process then gives a short read (kIoError) instead
// of SIGBUS, and the validated text cannot change under the parser. It is at most
// 8 + kMaxHeaderLen bytes, which fits in any address space's size_t.
Error CheckpointBuilder::ReadHead(const ByteSource& source, const Options& options,
                                  std::unique_ptr<std::byte[]>* out, uint64_t* out_len) {
  const uint64_t file_size = source.size();
  std::byte prefix[8] = {};
  const size_t prefix_len = file_size < 8 ? static_cast<size_t>(file_size) : 8;
  if (Error error = source.ReadAt(0, std::span(prefix, prefix_len)); !error.ok()) {
    return error;
  }
  uint64_t header_len = 0;
  if (Error error = ReadLengthPrefix(std::span<const std::byte>(prefix, prefix_len), file_size,
                                     options, &header_len);
      !error.ok()) {
    return error;
  }
  const auto head_len = static_cast<size_t>(8 + header_len);
  // Not value-initialised: every byte is written by the read below. Near the cap the
  // header is tens of MB filled once by the kernel's copy: huge pages turn its thousands
  // of 4 KiB page faults into tens (most of a header check's system time).
  out->reset(new std::byte[head_len]);
  AdviseHugePages(out->get(), head_len);
  std::memcpy(out->get(), prefix, 8);
  PauseForTestingAt("header");
  if (Error error = source.ReadAt(8, std::span(out->get() + 8, head_len - 8)); !error.ok()) {
    return error;
  }
  *out_len = head_len;
  return {};
}

Result<Checkpoint> CheckpointBuilder::Build(std::span<const std::byte> head, uint64_t file_size,
                                            const Options& options, Sources sources,
                                            bool data_follows_head) {
  const uint64_t header_len = head.size() - 8;
  const std::string_view header(reinterpret_cast<const char*>(head.data()) + 8, header_len);

  ParsedHeader parsed;
  if (Error error = ParseHeader(header, 8, options, &parsed); !error.ok()) return error;

  const uint64_t data_start = 8 + header_len;
  const uint64_t data_len = file_size - data_start;
  // Where the data bytes are: right after the head (FromBytes), in the mapping (Open), or
  // nowhere (OpenHeader, and a file kept unmapped: tensors get empty spans).
  std::span<const std::byte> bytes;
  const bool has_data =
      data_follows_head || (sources.mapping != nullptr && !sources.mapping->bytes().empty());
  if (data_follows_head) {
    bytes = std::span(head.data(), static_cast<size_t>(file_size));
  } else if (has_data) {
    bytes = sources.mapping->bytes();
  }
  const std::span<const std::byte> data =
      has_data ? bytes.subspan(static_cast<size_t>(data_start)) : bytes;
  std::vector<uint32_t> file_order;
  if (Error error = CheckTiling(parsed.tensors, data_start, data_len, &file_order);
      !error.ok()) {
    return error;
  }

  // Renumber the name index from header order to file order, then put the tensors
  // themselves in file order, in place: the vector is the largest allocation of a
  // validation, so it is never copied.
  std::vector<uint32_t> file_position(file_order.size());
  for (uint32_t i = 0; i < file_order.size(); ++i) file_position[file_order[i]] = i;
  for (uint32_t& index : parsed.tensors_by_name) index = file_position[index];
  std::vector<TensorView>& tensors = parsed.tensors;
  for (uint32_t i = 0; i < tensors.size(); ++i) {
    // Each swap puts one tensor at its final position, so this is O(n) swaps in all.
    while (file_position[i] != i) {
      const uint32_t target = file_position[i];
      std::swap(tensors[i], tensors[target]);
      std::swap(file_position[i], file_position[target]);
    }
    if (has_data) {
      tensors[i].data = data.subspan(tensors[i].begin, tensors[i].end - tensors[i].begin);
    }
  }
  if (options.require_aligned_data) {
    if (Error error = CheckAlignment(tensors, data_start); !error.ok()) return error;
  }

  Checkpoint checkpoint;
  checkpoint.mapping_ = std::move(sources.mapping);
  checkpoint.head_copy_ = std::move(sources.head_copy);
  checkpoint.head_ = head;
  checkpoint.bytes_ = bytes;
  checkpoint.file_size_ = file_size;
  checkpoint.header_len_ = header_len;
  checkpoint.has_metadata_object_ = parsed.has_metadata_object;
  checkpoint.tensors_ = std::move(parsed.tensors);
  checkpoint.by_name_ = std::move(parsed.tensors_by_name);
  // Moving the containers keeps their buffers, so the views made above stay valid.
  checkpoint.metadata_ = std::move(parsed.metadata);
  checkpoint.dims_ = std::move(parsed.dims);
  checkpoint.owned_strings_ = std::move(parsed.owned_strings);
  return checkpoint;
}

Checkpoint::Checkpoint() = default;
Checkpoint::Checkpoint(Checkpoint&&) noexcept = default;
Checkpoint& Checkpoint::operator=(Checkpoint&&) noexcept = default;
Checkpoint::~Checkpoint() = default;

Result<Checkpoint> Checkpoint::FromBytes(std::span<const std::byte> bytes,
                                         const Options& options) {
  return CheckpointBuilder::BuildNoThrow(bytes, options);
}

Result<Checkpoint> Checkpoint::FromBytes(std::string_view bytes, const Options& options) {
  return FromBytes(std::as_bytes(std::span<const char>(bytes.data(), bytes.size())), options);
}

Result<Checkpoint> Checkpoint::Open(const std::string& path, const Options& options) {
  return CheckpointBuilder::OpenNoThrow(path, options, /*map_data=*/true);
}

Result<Checkpoint> OpenCheckpointWithHead(std::unique_ptr<MappedFile> file,
                                          std::span<const std::byte> known_head,
                                          const Options& options) {
  return CheckpointBuilder::OpenOpenedNoThrow(std::move(file), known_head, options);
}

Result<Checkpoint> Checkpoint::OpenHeader(const std::string& path, const Options& options) {
  return CheckpointBuilder::OpenNoThrow(path, options, /*map_data=*/false);
}

Result<Checkpoint> Checkpoint::OpenHeader(const ByteSource& source, const Options& options) {
  return CheckpointBuilder::OpenSourceNoThrow(source, options);
}

Error Checkpoint::ReadData(uint64_t offset, std::span<std::byte> out) const {
  if (offset > file_size_ || out.size() > file_size_ - offset) {
    return Error{ErrorCode::kIoError, offset, "read past the end of the checkpoint"};
  }
  if (mapping_ != nullptr) {
    PauseForTestingAt("data");
    return mapping_->ReadAt(offset, out);
  }
  if (bytes_.empty()) {
    return Error{ErrorCode::kIoError, offset,
                 "the checkpoint was opened with OpenHeader and has no data"};
  }
  if (!out.empty()) std::memcpy(out.data(), bytes_.data() + offset, out.size());
  return Error{};
}

const TensorView* Checkpoint::Find(std::string_view name) const {
  const auto it = std::lower_bound(
      by_name_.begin(), by_name_.end(), name,
      [this](uint32_t index, std::string_view key) { return tensors_[index].name < key; });
  if (it == by_name_.end() || tensors_[*it].name != name) return nullptr;
  return &tensors_[*it];
}

std::string_view Checkpoint::header_text() const {
  // The header was read into head_, so its length fits in size_t (even where it is 32-bit).
  return {reinterpret_cast<const char*>(head_.data()) + 8, static_cast<size_t>(header_len_)};
}

}  // namespace stguard
