// SPDX-License-Identifier: Apache-2.0
// C API: the canonical writer.
//
// A thin handle over stguard::Writer. Two things are added for C callers: copies of the
// data given to stguard_writer_add_tensor_copy, which the handle owns; and stickiness for
// every failed add, allocation failure and NULL arguments included (the C++ Writer makes
// its own refusals stick, but an exception thrown while it stores a tensor leaves no
// trace in it), so that a write can never produce a file that silently lacks a tensor.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "capi/capi_common.h"
#include "stguard/writer.h"

struct stguard_writer {
  stguard::Writer writer;
  std::deque<std::vector<std::byte>> copies;  // data of stguard_writer_add_tensor_copy
  bool add_failed = false;
  stguard_error first_add_error{};  // meaningful when add_failed; returned by every write
};

namespace stguard::capi {
namespace {

// Sticky runs an add's body, which reports into a private error record, so that a
// failure is remembered for later writes even when the caller passed err = NULL.
template <typename Body>
stguard_code Sticky(stguard_writer* writer, stguard_error* err, Body&& body) noexcept {
  stguard_error local;
  const stguard_code code = Guarded(&local, [&] { return body(&local); });
  if (code == STGUARD_OK) return code;
  if (!writer->add_failed) {
    writer->add_failed = true;
    writer->first_add_error = local;
  }
  if (err != nullptr) *err = local;
  return code;
}

// TextView turns a C pointer + length into a view; false for a NULL pointer with a
// nonzero length.
bool TextView(const char* text, size_t len, std::string_view* out) {
  *out = text != nullptr ? std::string_view(text, len) : std::string_view();
  return text != nullptr || len == 0;
}

stguard_code AddTensor(stguard_writer* writer, const char* name, size_t name_len,
                       stguard_dtype dtype, const uint64_t* shape, size_t ndim,
                       const void* data, size_t byte_len, bool copy, stguard_error* err) {
  if (writer == nullptr) return Fail(err, STGUARD_INVALID_ARGUMENT, "writer is NULL");
  return Sticky(writer, err, [&](stguard_error* local) {
    std::string_view tensor;
    if (!TextView(name, name_len, &tensor)) {
      return Fail(local, STGUARD_INVALID_ARGUMENT, "name is NULL but name_len is not 0");
    }
    if (!IsValidDtype(dtype)) {
      return Fail(local, STGUARD_INVALID_ARGUMENT, "dtype is not a stguard_dtype value", {},
                  tensor);
    }
    if (shape == nullptr && ndim > 0) {
      return Fail(local, STGUARD_INVALID_ARGUMENT, "shape is NULL but ndim is not 0", {},
                  tensor);
    }
    if (data == nullptr && byte_len > 0) {
      return Fail(local, STGUARD_INVALID_ARGUMENT, "data is NULL but byte_len is not 0", {},
                  tensor);
    }
    std::span<const std::byte> bytes(static_cast<const std::byte*>(data), byte_len);
    if (copy) {
      writer->copies.emplace_back(bytes.begin(), bytes.end());
      bytes = writer->copies.back();
    }
    const Error error = writer->writer.AddTensor(tensor, static_cast<Dtype>(dtype),
                                                 std::span<const uint64_t>(shape, ndim), bytes);
    if (!error.ok()) {
      if (copy) writer->copies.pop_back();  // refused: the copy is not needed
      return FillError(local, error);
    }
    return STGUARD_OK;
  });
}

}  // namespace
}  // namespace stguard::capi

using stguard::capi::Fail;
using stguard::capi::Guarded;

extern "C" stguard_code stguard_writer_create(stguard_writer** out_writer, stguard_error* err) {
  if (out_writer == nullptr) return Fail(err, STGUARD_INVALID_ARGUMENT, "out_writer is NULL");
  *out_writer = nullptr;
  return Guarded(err, [&] {
    *out_writer = new stguard_writer;
    return STGUARD_OK;
  });
}

extern "C" void stguard_writer_free(stguard_writer* writer) { delete writer; }

extern "C" stguard_code stguard_writer_add_tensor(stguard_writer* writer, const char* name,
                                                  size_t name_len, stguard_dtype dtype,
                                                  const uint64_t* shape, size_t ndim,
                                                  const void* data, size_t byte_len,
                                                  stguard_error* err) {
  return stguard::capi::AddTensor(writer, name, name_len, dtype, shape, ndim, data, byte_len,
                                  /*copy=*/false, err);
}

extern "C" stguard_code stguard_writer_add_tensor_copy(stguard_writer* writer, const char* name,
                                                       size_t name_len, stguard_dtype dtype,
                                                       const uint64_t* shape, size_t ndim,
                                                       const void* data, size_t byte_len,
                                                       stguard_error* err) {
  return stguard::capi::AddTensor(writer, name, name_len, dtype, shape, ndim, data, byte_len,
                                  /*copy=*/true, err);
}

extern "C" stguard_code stguard_writer_add_metadata(stguard_writer* writer, const char* key,
                                                    size_t key_len, const char* value,
                                                    size_t value_len, stguard_error* err) {
  if (writer == nullptr) return Fail(err, STGUARD_INVALID_ARGUMENT, "writer is NULL");
  return stguard::capi::Sticky(writer, err, [&](stguard_error* local) {
    std::string_view key_text;
    std::string_view value_text;
    if (!stguard::capi::TextView(key, key_len, &key_text)) {
      return Fail(local, STGUARD_INVALID_ARGUMENT, "key is NULL but key_len is not 0");
    }
    if (!stguard::capi::TextView(value, value_len, &value_text)) {
      return Fail(local, STGUARD_INVALID_ARGUMENT, "value is NULL but value_len is not 0", {},
                  key_text);
    }
    const stguard::Error error = writer->writer.AddMetadata(key_text, value_text);
    if (!error.ok()) return stguard::capi::FillError(local, error);
    return STGUARD_OK;
  });
}

extern "C" size_t stguard_writer_num_tensors(const stguard_writer* writer) {
  return writer != nullptr ? writer->writer.num_tensors() : 0;
}

extern "C" stguard_code stguard_writer_write_file(const stguard_writer* writer, const char* path,
                                                  stguard_error* err) {
  if (writer == nullptr) return Fail(err, STGUARD_INVALID_ARGUMENT, "writer is NULL");
  if (path == nullptr) return Fail(err, STGUARD_INVALID_ARGUMENT, "path is NULL");
  if (writer->add_failed) {
    if (err != nullptr) *err = writer->first_add_error;
    return writer->first_add_error.code;
  }
  return Guarded(err, [&] {
    const stguard::Error error = writer->writer.WriteToFile(std::string(path));
    if (!error.ok()) return stguard::capi::FillError(err, error);
    return STGUARD_OK;
  });
}
