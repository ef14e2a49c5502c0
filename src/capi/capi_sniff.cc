// SPDX-License-Identifier: Apache-2.0
// C API: what a file is (stguard/stguard_check.h over stguard/sniff.h).
#include <span>
#include <string>

#include "capi/capi_common.h"
#include "stguard/sniff.h"
#include "stguard/stguard_check.h"

namespace stguard::capi {
namespace {

// stguard_format must mirror Format value for value: the C API converts by casting. Both
// are expanded from stguard/formats.def; the checks keep a hand edit of either honest.
#define STGUARD_FORMAT(Name, C_NAME, word, kind, hint, pickle, convert, inspect, scan) \
  static_assert(static_cast<int>(STGUARD_FORMAT_##C_NAME) == static_cast<int>(Format::k##Name), \
                "STGUARD_FORMAT_" #C_NAME " is not at " #Name "'s position in formats.def");
#include "stguard/formats.def"
#undef STGUARD_FORMAT
static_assert(static_cast<int>(STGUARD_NUM_FORMATS) == static_cast<int>(Format::kNumFormats),
              "stguard_format lacks a format of stguard::Format");

bool IsValidFormat(stguard_format format) {
  const auto value = static_cast<long long>(format);
  return value >= 0 && value < static_cast<long long>(STGUARD_NUM_FORMATS);
}

}  // namespace
}  // namespace stguard::capi

using stguard::capi::Fail;

extern "C" const char* stguard_format_name(stguard_format format) {
  if (!stguard::capi::IsValidFormat(format)) format = STGUARD_FORMAT_UNKNOWN;
  // FormatName's views are made from string literals, so data() is NUL-terminated.
  return stguard::FormatName(static_cast<stguard::Format>(format)).data();
}

extern "C" int stguard_format_is_pickle_bearing(stguard_format format) {
  if (!stguard::capi::IsValidFormat(format)) return 0;
  return stguard::IsPickleBearing(static_cast<stguard::Format>(format)) ? 1 : 0;
}

extern "C" stguard_format stguard_sniff_buffer(const void* data, size_t len) {
  if (data == nullptr) return STGUARD_FORMAT_UNKNOWN;
  // SniffFormat allocates a fixed amount; the guard keeps even that failure inside.
  stguard_format format = STGUARD_FORMAT_UNKNOWN;
  stguard::capi::Guarded(nullptr, [&] {
    format = static_cast<stguard_format>(
        stguard::SniffFormat(std::span(static_cast<const std::byte*>(data), len)));
    return STGUARD_OK;
  });
  return format;
}

extern "C" stguard_code stguard_sniff_file(const char* path, stguard_format* out_format,
                                           stguard_error* err) {
  if (out_format == nullptr) return Fail(err, STGUARD_INVALID_ARGUMENT, "out_format is NULL");
  *out_format = STGUARD_FORMAT_UNKNOWN;
  if (path == nullptr) return Fail(err, STGUARD_INVALID_ARGUMENT, "path is NULL");
  return stguard::capi::Guarded(err, [&] {
    const stguard::Result<stguard::Format> format = stguard::SniffFile(std::string(path));
    if (!format.ok()) return stguard::capi::FillError(err, format.error());
    *out_format = static_cast<stguard_format>(*format);
    return STGUARD_OK;
  });
}
