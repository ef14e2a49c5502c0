// SPDX-License-Identifier: Apache-2.0
// C API: opening and validating checkpoints, and looking up tensors and metadata.
//
// A handle owns the C++ Checkpoint and, built once at open, the stguard_tensor and
// stguard_metadata records that lookups return, so a lookup never allocates and its
// pointer lives exactly as long as the handle.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "capi/capi_common.h"
#include "stguard/reader.h"

struct stguard_checkpoint {
  stguard::Checkpoint checkpoint;
  std::vector<stguard_tensor> tensors;      // file order, as checkpoint.tensors()
  // Every tensor's dims, decoded from the compact TensorView::shape once at open, because
  // stguard_tensor::shape is a plain uint64_t array.
  std::vector<uint64_t> dims;
  std::vector<stguard_metadata> metadata;   // ascending key bytes, as checkpoint.metadata()
};

namespace stguard::capi {
namespace {

stguard_tensor ToCTensor(const Checkpoint& checkpoint, const TensorView& view,
                         const uint64_t* dims) {
  stguard_tensor tensor{};
  tensor.name = view.name.data();
  tensor.name_len = view.name.size();
  tensor.dtype = static_cast<stguard_dtype>(view.dtype);
  tensor.ndim = view.shape.size();
  tensor.shape = dims;
  tensor.num_elements = view.num_elements();
  tensor.data = view.data.data();
  tensor.byte_len = view.data.size();
  tensor.file_offset = 8 + checkpoint.header_len() + view.begin;
  tensor.is_aligned = view.is_aligned() ? 1 : 0;
  return tensor;
}

// Adopt wraps a validated checkpoint in a new handle, or reports why it could not.
stguard_code Adopt(Result<Checkpoint> result, stguard_checkpoint** out_checkpoint,
                   stguard_error* err) {
  if (!result.ok()) return FillError(err, result.error());
  std::unique_ptr<stguard_checkpoint> handle(
      new stguard_checkpoint{std::move(*result), {}, {}, {}});
  const Checkpoint& checkpoint = handle->checkpoint;
  size_t total_dims = 0;
  for (const TensorView& view : checkpoint.tensors()) total_dims += view.shape.size();
  handle->dims.reserve(total_dims);  // never reallocated below: the pointers stay valid
  handle->tensors.reserve(checkpoint.num_tensors());
  for (const TensorView& view : checkpoint.tensors()) {
    const size_t first = handle->dims.size();
    handle->dims.insert(handle->dims.end(), view.shape.begin(), view.shape.end());
    handle->tensors.push_back(ToCTensor(checkpoint, view, handle->dims.data() + first));
  }
  handle->metadata.reserve(checkpoint.metadata().size());
  for (const MetadataEntry& entry : checkpoint.metadata()) {
    handle->metadata.push_back(
        stguard_metadata{entry.key.data(), entry.key.size(), entry.value.data(),
                         entry.value.size()});
  }
  *out_checkpoint = handle.release();
  return STGUARD_OK;
}

// ToCppOptions maps C options (zero fields meaning the defaults) to Options.
Options ToCppOptions(const stguard_options* options) {
  Options cpp;
  if (options == nullptr) return cpp;
  if (options->max_header_len != 0) cpp.max_header_len = options->max_header_len;
  if (options->max_depth != 0) cpp.max_depth = options->max_depth;
  cpp.require_aligned_data = options->require_aligned_data != 0;
  return cpp;
}

// NameView turns a C pointer + length into a view, or says the pair is invalid (a NULL
// pointer with a nonzero length).
bool NameView(const char* name, size_t len, std::string_view* out) {
  if (name == nullptr) {
    *out = {};
    return len == 0;
  }
  *out = std::string_view(name, len);
  return true;
}

}  // namespace
}  // namespace stguard::capi

using stguard::capi::Fail;
using stguard::capi::Guarded;

extern "C" stguard_code stguard_checkpoint_open_with(const char* path,
                                                     const stguard_options* options,
                                                     stguard_checkpoint** out_checkpoint,
                                                     stguard_error* err) {
  if (out_checkpoint == nullptr) {
    return Fail(err, STGUARD_INVALID_ARGUMENT, "out_checkpoint is NULL");
  }
  *out_checkpoint = nullptr;
  if (path == nullptr) return Fail(err, STGUARD_INVALID_ARGUMENT, "path is NULL");
  return Guarded(err, [&] {
    return stguard::capi::Adopt(
        stguard::Checkpoint::Open(std::string(path), stguard::capi::ToCppOptions(options)),
        out_checkpoint, err);
  });
}

extern "C" stguard_code stguard_checkpoint_open(const char* path,
                                                stguard_checkpoint** out_checkpoint,
                                                stguard_error* err) {
  return stguard_checkpoint_open_with(path, nullptr, out_checkpoint, err);
}

extern "C" stguard_code stguard_checkpoint_from_buffer_with(const void* data, size_t len,
                                                            const stguard_options* options,
                                                            stguard_checkpoint** out_checkpoint,
                                                            stguard_error* err) {
  if (out_checkpoint == nullptr) {
    return Fail(err, STGUARD_INVALID_ARGUMENT, "out_checkpoint is NULL");
  }
  *out_checkpoint = nullptr;
  if (data == nullptr && len > 0) {
    return Fail(err, STGUARD_INVALID_ARGUMENT, "data is NULL but len is not 0");
  }
  return Guarded(err, [&] {
    const std::span<const std::byte> bytes(static_cast<const std::byte*>(data), len);
    return stguard::capi::Adopt(
        stguard::Checkpoint::FromBytes(bytes, stguard::capi::ToCppOptions(options)),
        out_checkpoint, err);
  });
}

extern "C" stguard_code stguard_checkpoint_from_buffer(const void* data, size_t len,
                                                       stguard_checkpoint** out_checkpoint,
                                                       stguard_error* err) {
  return stguard_checkpoint_from_buffer_with(data, len, nullptr, out_checkpoint, err);
}

extern "C" void stguard_checkpoint_close(stguard_checkpoint* checkpoint) { delete checkpoint; }

extern "C" size_t stguard_checkpoint_num_tensors(const stguard_checkpoint* checkpoint) {
  return checkpoint != nullptr ? checkpoint->tensors.size() : 0;
}

extern "C" const stguard_tensor* stguard_checkpoint_tensor(const stguard_checkpoint* checkpoint,
                                                           size_t index) {
  if (checkpoint == nullptr || index >= checkpoint->tensors.size()) return nullptr;
  return &checkpoint->tensors[index];
}

extern "C" const stguard_tensor* stguard_checkpoint_find(const stguard_checkpoint* checkpoint,
                                                         const char* name, size_t name_len) {
  std::string_view key;
  if (checkpoint == nullptr || !stguard::capi::NameView(name, name_len, &key)) return nullptr;
  const stguard::TensorView* view = checkpoint->checkpoint.Find(key);  // allocates nothing
  if (view == nullptr) return nullptr;
  return &checkpoint->tensors[static_cast<size_t>(view - checkpoint->checkpoint.tensors().data())];
}

extern "C" const stguard_tensor* stguard_checkpoint_find_cstr(
    const stguard_checkpoint* checkpoint, const char* name) {
  if (name == nullptr) return nullptr;
  return stguard_checkpoint_find(checkpoint, name, std::char_traits<char>::length(name));
}

extern "C" size_t stguard_checkpoint_num_metadata(const stguard_checkpoint* checkpoint) {
  return checkpoint != nullptr ? checkpoint->metadata.size() : 0;
}

extern "C" const stguard_metadata* stguard_checkpoint_metadata(
    const stguard_checkpoint* checkpoint, size_t index) {
  if (checkpoint == nullptr || index >= checkpoint->metadata.size()) return nullptr;
  return &checkpoint->metadata[index];
}

extern "C" const stguard_metadata* stguard_checkpoint_find_metadata(
    const stguard_checkpoint* checkpoint, const char* key, size_t key_len) {
  std::string_view wanted;
  if (checkpoint == nullptr || !stguard::capi::NameView(key, key_len, &wanted)) return nullptr;
  // The entries are sorted by key bytes (Checkpoint::metadata), so binary search.
  const auto key_of = [](const stguard_metadata& entry) {
    return std::string_view(entry.key, entry.key_len);
  };
  const auto it = std::lower_bound(
      checkpoint->metadata.begin(), checkpoint->metadata.end(), wanted,
      [&](const stguard_metadata& entry, std::string_view k) { return key_of(entry) < k; });
  if (it == checkpoint->metadata.end() || key_of(*it) != wanted) return nullptr;
  return &*it;
}
