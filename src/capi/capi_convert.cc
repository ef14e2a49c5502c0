// SPDX-License-Identifier: Apache-2.0
// C API: dtype names and sizes, decoding tensors to F32 into the caller's buffer, and
// converting any file or folder to safetensors (one ConvertPath call).
#include <cstddef>
#include <cstdio>
#include <optional>
#include <span>
#include <string_view>

#include "capi/capi_common.h"
#include "capi/capi_torch_options.h"
#include "stguard/conversion.h"
#include "stguard/convert.h"
#include "stguard/dtype.h"
#include "stguard/stguard_torch.h"

namespace stguard::capi {
namespace {

// stguard_dtype must mirror Dtype value for value: the C API converts by casting.
#define STGUARD_SAME_DTYPE(name) \
  static_assert(static_cast<int>(STGUARD_DTYPE_##name) == static_cast<int>(Dtype::k##name), #name)
STGUARD_SAME_DTYPE(BOOL);
STGUARD_SAME_DTYPE(F4);
STGUARD_SAME_DTYPE(F6_E2M3);
STGUARD_SAME_DTYPE(F6_E3M2);
STGUARD_SAME_DTYPE(U8);
STGUARD_SAME_DTYPE(I8);
STGUARD_SAME_DTYPE(F8_E5M2);
STGUARD_SAME_DTYPE(F8_E4M3);
STGUARD_SAME_DTYPE(F8_E8M0);
STGUARD_SAME_DTYPE(F8_E4M3FNUZ);
STGUARD_SAME_DTYPE(F8_E5M2FNUZ);
STGUARD_SAME_DTYPE(I16);
STGUARD_SAME_DTYPE(U16);
STGUARD_SAME_DTYPE(F16);
STGUARD_SAME_DTYPE(BF16);
STGUARD_SAME_DTYPE(I32);
STGUARD_SAME_DTYPE(U32);
STGUARD_SAME_DTYPE(F32);
STGUARD_SAME_DTYPE(C64);
STGUARD_SAME_DTYPE(F64);
STGUARD_SAME_DTYPE(I64);
STGUARD_SAME_DTYPE(U64);
#undef STGUARD_SAME_DTYPE
static_assert(static_cast<int>(STGUARD_NUM_DTYPES) == kNumDtypes);

// DecodeInto converts `src` (a whole number of `dtype` elements) into the first
// elements of out[0..out_len): the checks shared by both conversion entry points.
stguard_code DecodeInto(stguard_dtype dtype, const void* src, size_t src_len, float* out,
                        size_t out_len, std::string_view tensor, stguard_error* err) {
  if (!IsValidDtype(dtype)) {
    return Fail(err, STGUARD_INVALID_ARGUMENT, "dtype is not a stguard_dtype value", {}, tensor);
  }
  const auto cpp_dtype = static_cast<Dtype>(dtype);
  if (!CanConvertToF32(cpp_dtype)) {
    return Fail(err, STGUARD_INVALID_ARGUMENT, "this dtype has no conversion to F32",
                DtypeName(cpp_dtype), tensor);
  }
  if (src == nullptr && src_len > 0) {
    return Fail(err, STGUARD_INVALID_ARGUMENT, "source is NULL", {}, tensor);
  }
  const size_t element_len = ElementSize(cpp_dtype);  // convertible dtypes are whole bytes
  if (src_len % element_len != 0) {
    return Fail(err, STGUARD_INVALID_ARGUMENT,
                "source length is not a whole number of elements", {}, tensor);
  }
  const size_t count = src_len / element_len;
  if (out_len < count) {
    char detail[96];  // formatted on the stack: reporting this must not allocate
    std::snprintf(detail, sizeof(detail), "needs %zu floats, has room for %zu", count, out_len);
    return Fail(err, STGUARD_INVALID_ARGUMENT, "output buffer too small", detail, tensor);
  }
  if (out == nullptr && count > 0) {
    return Fail(err, STGUARD_INVALID_ARGUMENT, "output buffer is NULL", {}, tensor);
  }
  return Guarded(err, [&] {
    const Error error = ConvertToF32(
        cpp_dtype, std::span<const std::byte>(static_cast<const std::byte*>(src), src_len),
        std::span<float>(out, count));
    if (!error.ok()) return FillError(err, error);
    return STGUARD_OK;
  });
}

}  // namespace
}  // namespace stguard::capi

using stguard::capi::Fail;

bool stguard::capi::IsValidDtype(stguard_dtype dtype) noexcept {
  const auto value = static_cast<long long>(dtype);
  return value >= 0 && value < static_cast<long long>(STGUARD_NUM_DTYPES);
}

extern "C" const char* stguard_dtype_name(stguard_dtype dtype) {
  if (!stguard::capi::IsValidDtype(dtype)) return nullptr;
  // DtypeName's views are made from string literals, so data() is NUL-terminated.
  return stguard::DtypeName(static_cast<stguard::Dtype>(dtype)).data();
}

extern "C" unsigned stguard_dtype_bits(stguard_dtype dtype) {
  if (!stguard::capi::IsValidDtype(dtype)) return 0;
  return stguard::DtypeBits(static_cast<stguard::Dtype>(dtype));
}

extern "C" stguard_code stguard_dtype_from_name(const char* name, size_t len,
                                                stguard_dtype* out_dtype, stguard_error* err) {
  if (out_dtype == nullptr) return Fail(err, STGUARD_INVALID_ARGUMENT, "out_dtype is NULL");
  if (name == nullptr && len > 0) {
    return Fail(err, STGUARD_INVALID_ARGUMENT, "name is NULL but len is not 0");
  }
  const std::string_view text = name != nullptr ? std::string_view(name, len) : std::string_view();
  const std::optional<stguard::Dtype> dtype = stguard::ParseDtype(text);
  if (!dtype) return Fail(err, STGUARD_INVALID_DTYPE, "unknown dtype name", text);
  *out_dtype = static_cast<stguard_dtype>(*dtype);
  return STGUARD_OK;
}

extern "C" stguard_code stguard_tensor_to_f32(const stguard_tensor* tensor, float* out,
                                              size_t out_len, stguard_error* err) {
  if (tensor == nullptr) return Fail(err, STGUARD_INVALID_ARGUMENT, "tensor is NULL");
  const std::string_view name =
      tensor->name != nullptr ? std::string_view(tensor->name, tensor->name_len)
                              : std::string_view();
  return stguard::capi::DecodeInto(tensor->dtype, tensor->data, tensor->byte_len, out, out_len,
                                   name, err);
}

extern "C" stguard_code stguard_convert_to_f32(stguard_dtype dtype, const void* src,
                                               size_t src_len, float* out, size_t out_len,
                                               stguard_error* err) {
  return stguard::capi::DecodeInto(dtype, src, src_len, out, out_len, {}, err);
}

extern "C" stguard_code stguard_convert(const char* in_path, const char* out_path,
                                        stguard_dtype dtype,
                                        const stguard_torch_options* options,
                                        stguard_error* err) {
  return stguard_convert_judged(in_path, out_path, dtype, options, nullptr, err);
}

extern "C" stguard_code stguard_convert_judged(const char* in_path, const char* out_path,
                                               stguard_dtype dtype,
                                               const stguard_torch_options* options,
                                               stguard_verdict* verdict, stguard_error* err) {
  // Until the library decides, a refusal of the arguments themselves: a usage error.
  if (verdict != nullptr) *verdict = STGUARD_VERDICT_ERROR;
  if (in_path == nullptr || out_path == nullptr) {
    return Fail(err, STGUARD_INVALID_ARGUMENT, "in_path or out_path is NULL");
  }
  if (dtype != STGUARD_NUM_DTYPES && !stguard::capi::IsValidDtype(dtype)) {
    return Fail(err, STGUARD_INVALID_ARGUMENT, "dtype is not a stguard_dtype value");
  }
  if (std::string_view(out_path) == "-") {
    return Fail(err, STGUARD_INVALID_ARGUMENT, "out_path \"-\" is not standard output here");
  }
  return stguard::capi::Guarded(err, [&] {
    stguard::TorchOptions torch;
    stguard::TorchConvertOptions convert;
    if (!stguard::capi::ReadTorchOptions(options, &torch, &convert, err)) {
      return STGUARD_INVALID_ARGUMENT;
    }
    stguard::ConvertOptions request;
    if (dtype != STGUARD_NUM_DTYPES) request.dtype = static_cast<stguard::Dtype>(dtype);
    request.key_path = torch.key_path;
    if (options != nullptr && (options->max_output_ratio != 0 || options->unbounded_output)) {
      request.max_output_ratio = torch.max_output_ratio;
    }
    request.drop_aliases = convert.drop_aliases;
    request.allow_external_symlinks = convert.allow_external_symlinks;
    stguard::ConvertReport report;
    const stguard::Error error = stguard::ConvertPath(in_path, out_path, request, &report);
    // stguard_verdict mirrors stguard::Verdict value for value (capi_check.cc checks it).
    if (verdict != nullptr) *verdict = static_cast<stguard_verdict>(report.verdict);
    return error.ok() ? STGUARD_OK : stguard::capi::FillError(err, error);
  });
}
