// SPDX-License-Identifier: Apache-2.0
// The C API of the GGUF reader (stguard/stguard_gguf.h) over stguard::gguf::GgufFile.
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "base/little_endian.h"
#include "capi/capi_common.h"
#include "stguard/gguf.h"
#include "stguard/gguf_convert.h"
#include "stguard/stguard_gguf.h"

struct stguard_gguf {
  stguard::gguf::GgufFile file;
  std::vector<stguard_gguf_metadata> metadata;  // file order, as file.metadata()
  std::vector<stguard_gguf_tensor> tensors;     // file order, as file.tensors()
};

namespace stguard::capi {
namespace {

stguard_gguf_metadata ToCMetadata(const gguf::MetadataEntry& entry) {
  stguard_gguf_metadata out{};
  out.key = entry.key.data();
  out.key_len = entry.key.size();
  out.type = static_cast<stguard_gguf_value_type>(entry.value.type);
  out.element_type = static_cast<stguard_gguf_value_type>(entry.value.element_type);
  out.count = entry.value.count;
  out.data = entry.value.bytes.data();
  out.data_len = entry.value.bytes.size();
  return out;
}

stguard_gguf_tensor ToCTensor(const gguf::TensorInfo& info) {
  stguard_gguf_tensor out{};
  out.name = info.name.data();
  out.name_len = info.name.size();
  out.type = info.type->id;
  out.type_name = info.type->name.data();  // the table's literals are NUL-terminated
  out.n_dims = info.n_dims;
  for (uint32_t d = 0; d < gguf::kMaxDims; ++d) out.ne[d] = info.ne[d];
  for (uint32_t d = 0; d < info.n_dims; ++d) out.shape[d] = info.ne[info.n_dims - 1 - d];
  out.file_offset = info.absolute_offset;
  out.byte_len = info.byte_size;
  out.data = info.byte_size == 0 ? nullptr : info.data.data();
  return out;
}

stguard_code Adopt(Result<gguf::GgufFile> result, stguard_gguf** out, stguard_error* err) {
  if (!result.ok()) return FillError(err, result.error());
  try {
    std::unique_ptr<stguard_gguf> handle(new stguard_gguf{std::move(*result), {}, {}});
    for (const gguf::MetadataEntry& entry : handle->file.metadata()) {
      handle->metadata.push_back(ToCMetadata(entry));
    }
    for (const gguf::TensorInfo& info : handle->file.tensors()) {
      handle->tensors.push_back(ToCTensor(info));
    }
    *out = handle.release();
    return STGUARD_OK;
  } catch (const std::bad_alloc&) {
    return FillError(err, Error{ErrorCode::kOutOfMemory, 0, "out of memory"});
  }
}

Error NullArgument() {
  return Error{ErrorCode::kInvalidArgument, 0, "a required pointer argument is NULL"};
}

}  // namespace
}  // namespace stguard::capi

using stguard::capi::Adopt;
using stguard::capi::FillError;
using stguard::capi::NullArgument;

extern "C" {

int stguard_is_gguf(const void* prefix, size_t len) {
  if (prefix == nullptr) return 0;
  return stguard::gguf::LooksLikeGguf({static_cast<const std::byte*>(prefix), len}) ? 1 : 0;
}

stguard_code stguard_gguf_open(const char* path, stguard_gguf** out, stguard_error* err) {
  if (path == nullptr || out == nullptr) return FillError(err, NullArgument());
  *out = nullptr;
  try {
    return Adopt(stguard::gguf::GgufFile::Open(path), out, err);
  } catch (const std::bad_alloc&) {
    return FillError(err, stguard::Error{stguard::ErrorCode::kOutOfMemory, 0, "out of memory"});
  }
}

stguard_code stguard_gguf_from_buffer(const void* data, size_t len, stguard_gguf** out,
                                      stguard_error* err) {
  if ((data == nullptr && len != 0) || out == nullptr) return FillError(err, NullArgument());
  *out = nullptr;
  return Adopt(stguard::gguf::GgufFile::FromBytes({static_cast<const std::byte*>(data), len}),
               out, err);
}

void stguard_gguf_close(stguard_gguf* gguf) { delete gguf; }

uint32_t stguard_gguf_version(const stguard_gguf* gguf) { return gguf->file.version(); }
uint32_t stguard_gguf_alignment(const stguard_gguf* gguf) { return gguf->file.alignment(); }
uint64_t stguard_gguf_data_offset(const stguard_gguf* gguf) { return gguf->file.data_offset(); }

size_t stguard_gguf_num_metadata(const stguard_gguf* gguf) { return gguf->metadata.size(); }

const stguard_gguf_metadata* stguard_gguf_metadata_at(const stguard_gguf* gguf, size_t index) {
  return index < gguf->metadata.size() ? &gguf->metadata[index] : nullptr;
}

const stguard_gguf_metadata* stguard_gguf_find_metadata(const stguard_gguf* gguf,
                                                        const char* key, size_t key_len) {
  if (key == nullptr) return nullptr;
  const stguard::gguf::MetadataEntry* entry = gguf->file.FindKey({key, key_len});
  if (entry == nullptr) return nullptr;
  return &gguf->metadata[static_cast<size_t>(entry - gguf->file.metadata().data())];
}

int stguard_gguf_next_string(const stguard_gguf_metadata* entry, size_t* cursor,
                             const char** text, size_t* text_len) {
  if (entry == nullptr || cursor == nullptr || text == nullptr || text_len == nullptr ||
      entry->type != STGUARD_GGUF_ARRAY || entry->element_type != STGUARD_GGUF_STRING) {
    return 0;
  }
  // Validation proved that the elements fill data exactly; a cursor from elsewhere is
  // still bounds-checked before use.
  const auto* bytes = static_cast<const std::byte*>(entry->data);
  if (*cursor > entry->data_len || entry->data_len - *cursor < 8) return 0;
  const uint64_t length = stguard::LoadLittleEndian<uint64_t>(bytes + *cursor);
  if (length > entry->data_len - *cursor - 8) return 0;
  *text = reinterpret_cast<const char*>(bytes + *cursor + 8);
  *text_len = static_cast<size_t>(length);
  *cursor += 8 + static_cast<size_t>(length);
  return 1;
}

size_t stguard_gguf_num_tensors(const stguard_gguf* gguf) { return gguf->tensors.size(); }

const stguard_gguf_tensor* stguard_gguf_tensor_at(const stguard_gguf* gguf, size_t index) {
  return index < gguf->tensors.size() ? &gguf->tensors[index] : nullptr;
}

const stguard_gguf_tensor* stguard_gguf_find_tensor(const stguard_gguf* gguf, const char* name,
                                                    size_t name_len) {
  if (name == nullptr) return nullptr;
  const stguard::gguf::TensorInfo* info = gguf->file.FindTensor({name, name_len});
  if (info == nullptr) return nullptr;
  return &gguf->tensors[static_cast<size_t>(info - gguf->file.tensors().data())];
}

stguard_code stguard_gguf_dequantize(const stguard_gguf* gguf, size_t index, float* out,
                                     size_t out_len, stguard_error* err) {
  if (gguf == nullptr || (out == nullptr && out_len != 0)) return FillError(err, NullArgument());
  if (index >= gguf->file.tensors().size()) {
    return FillError(err, stguard::Error{stguard::ErrorCode::kInvalidArgument, 0,
                                         "tensor index past the end",
                                         std::to_string(index)});
  }
  const stguard::gguf::TensorInfo& info = gguf->file.tensors()[index];
  if (info.num_elements() != out_len) {
    return FillError(err, stguard::Error{stguard::ErrorCode::kInvalidArgument, 0,
                                         "out_len is not the tensor's element count",
                                         std::to_string(info.num_elements()) + " elements",
                                         std::string(info.name)});
  }
  stguard::Error error = stguard::DequantizeTensor(*info.type, info.data, {out, out_len});
  if (!error.ok()) {
    error.offset = info.info_offset;
    error.tensor = std::string(info.name);
    return FillError(err, error);
  }
  return STGUARD_OK;
}

}  // extern "C"
