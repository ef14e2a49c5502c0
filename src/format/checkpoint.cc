// SPDX-License-Identifier: Apache-2.0
// Checkpoint: runs the stages in order (length prefix, header schema with sizes, tiling)
// and assembles the validated view.
#include <algorithm>
#include <new>

#include "format/header_parser.h"
#include "format/length_prefix.h"
#include "stguard/mapped_file.h"
#include "stguard/reader.h"
#include "format/tiling.h"

namespace stguard {

uint64_t TensorView::num_elements() const {
  uint64_t count = 1;
  for (uint64_t dim : shape) count *= dim;  // validation proved every step fits
  return count;
}

// CheckpointBuilder is the one place that may fill a Checkpoint's private fields.
class CheckpointBuilder {
 public:
  // BuildNoThrow is Build with allocation failure turned into an Error, so that no
  // exception leaves the library.
  static Result<Checkpoint> BuildNoThrow(std::span<const std::byte> bytes,
                                         const Options& options,
                                         std::unique_ptr<MappedFile> mapping) {
    try {
      return Build(bytes, options, std::move(mapping));
    } catch (const std::bad_alloc&) {
      return Error{ErrorCode::kOutOfMemory, 0, "out of memory while validating the header"};
    }
  }

 private:
  static Result<Checkpoint> Build(std::span<const std::byte> bytes, const Options& options,
                                  std::unique_ptr<MappedFile> mapping);
};

Result<Checkpoint> CheckpointBuilder::Build(std::span<const std::byte> bytes,
                                            const Options& options,
                                            std::unique_ptr<MappedFile> mapping) {
  uint64_t header_len = 0;
  if (Error error = ReadLengthPrefix(bytes, options, &header_len); !error.ok()) return error;
  const std::string_view header(reinterpret_cast<const char*>(bytes.data()) + 8, header_len);

  ParsedHeader parsed;
  if (Error error = ParseHeader(header, 8, options, &parsed); !error.ok()) return error;

  const uint64_t data_start = 8 + header_len;
  const std::span<const std::byte> data = bytes.subspan(data_start);
  std::vector<uint32_t> file_order;
  if (Error error = CheckTiling(parsed.tensors, data_start, data.size(), &file_order);
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
    tensors[i].data = data.subspan(tensors[i].begin, tensors[i].end - tensors[i].begin);
  }

  Checkpoint checkpoint;
  checkpoint.mapping_ = std::move(mapping);
  checkpoint.bytes_ = bytes;
  checkpoint.header_len_ = header_len;
  checkpoint.has_metadata_object_ = parsed.has_metadata_object;
  checkpoint.tensors_ = std::move(parsed.tensors);
  checkpoint.by_name_ = std::move(parsed.tensors_by_name);
  // Moving the containers keeps their buffers, so the views made above stay valid.
  checkpoint.metadata_ = std::move(parsed.metadata);
  checkpoint.dims_ = std::move(parsed.dims);
  checkpoint.owned_strings_ =
      std::make_unique<std::deque<std::string>>(std::move(parsed.owned_strings));
  return checkpoint;
}

Checkpoint::Checkpoint() = default;
Checkpoint::Checkpoint(Checkpoint&&) noexcept = default;
Checkpoint& Checkpoint::operator=(Checkpoint&&) noexcept = default;
Checkpoint::~Checkpoint() = default;

Result<Checkpoint> Checkpoint::FromBytes(std::span<const std::byte> bytes,
                                         const Options& options) {
  return CheckpointBuilder::BuildNoThrow(bytes, options, nullptr);
}

Result<Checkpoint> Checkpoint::FromBytes(std::string_view bytes, const Options& options) {
  return FromBytes(std::as_bytes(std::span<const char>(bytes.data(), bytes.size())), options);
}

Result<Checkpoint> Checkpoint::Open(const std::string& path, const Options& options) {
  Result<std::unique_ptr<MappedFile>> mapping = MappedFile::Open(path);
  if (!mapping.ok()) return mapping.error();
  const std::span<const std::byte> bytes = (*mapping)->bytes();
  return CheckpointBuilder::BuildNoThrow(bytes, options, std::move(*mapping));
}

const TensorView* Checkpoint::Find(std::string_view name) const {
  const auto it = std::lower_bound(
      by_name_.begin(), by_name_.end(), name,
      [this](uint32_t index, std::string_view key) { return tensors_[index].name < key; });
  if (it == by_name_.end() || tensors_[*it].name != name) return nullptr;
  return &tensors_[*it];
}

const std::string_view* Checkpoint::FindMetadata(std::string_view key) const {
  const auto it = std::lower_bound(
      metadata_.begin(), metadata_.end(), key,
      [](const MetadataEntry& entry, std::string_view k) { return entry.key < k; });
  if (it == metadata_.end() || it->key != key) return nullptr;
  return &it->value;
}

std::string_view Checkpoint::header_text() const {
  return {reinterpret_cast<const char*>(bytes_.data()) + 8, header_len_};
}

}  // namespace stguard
