// SPDX-License-Identifier: Apache-2.0
// C API: the static scan of PyTorch files and their conversion (stguard/stguard_torch.h),
// over JudgePickleFile and ConvertTorchFile / ConvertTorchFolder: the verdict and its
// sentence come from the library, as `stguard scan` prints them, never re-derived here.
//
// A report owns the library's PickleFileReport and, built once when it is made, the C
// records its accessors return, so an accessor never allocates and its pointer lives
// exactly as long as the report.
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "capi/capi_common.h"
#include "capi/capi_torch_options.h"
#include "stguard/file_verdict.h"
#include "stguard/stguard_torch.h"
#include "stguard/torch_checkpoint.h"

struct stguard_torch_report {
  stguard::PickleFileReport report;
  std::string description;              // DescribeVerdict, NUL-terminated by std::string
  std::vector<uint64_t> dims;           // every tensor's shape, one after the other
  std::vector<stguard_torch_tensor> tensors;
  std::vector<stguard_torch_global> globals;
  std::vector<std::string> key_paths;   // KeyPathText of each path
};

namespace stguard::capi {
namespace {

// stguard_scan_verdict must mirror FileVerdict value for value: the C API converts by
// casting.
static_assert(static_cast<int>(STGUARD_SCAN_CLEAN) == static_cast<int>(FileVerdict::kClean));
static_assert(static_cast<int>(STGUARD_SCAN_NEEDS_KEY) == static_cast<int>(FileVerdict::kNeedsKey));
static_assert(static_cast<int>(STGUARD_SCAN_NAMES_CODE) ==
              static_cast<int>(FileVerdict::kNamesCode));
static_assert(static_cast<int>(STGUARD_SCAN_CANNOT_PROVE_SAFE) ==
              static_cast<int>(FileVerdict::kCannotProveSafe));

// IsReadFailure says whether a report's reason is no verdict on the file but a failure to
// read it at all (stguard/file_verdict.h: callers report those as I/O errors).
bool IsReadFailure(const Error& reason) {
  return reason.code == ErrorCode::kIoError || reason.code == ErrorCode::kNotARegularFile ||
         reason.code == ErrorCode::kOutOfMemory;
}

stguard_torch_tensor ToCTensor(const TorchTensor& tensor, const uint64_t* dims) {
  stguard_torch_tensor out{};
  out.name = tensor.name.data();
  out.name_len = tensor.name.size();
  out.dtype = static_cast<stguard_dtype>(tensor.dtype);
  out.ndim = tensor.shape.size();
  out.shape = dims;
  out.contiguous = tensor.contiguous ? 1 : 0;
  out.is_alias = tensor.alias_of.has_value() ? 1 : 0;
  out.alias_of = tensor.alias_of.value_or(0);
  out.offset = tensor.offset;
  return out;
}

// Adopt wraps a judged file in a new report, or reports why the file could not be read.
stguard_code Adopt(PickleFileReport judged, stguard_torch_report** out_report,
                   stguard_error* err) {
  if (IsReadFailure(judged.reason)) return FillError(err, judged.reason);
  auto handle = std::make_unique<stguard_torch_report>();
  handle->report = std::move(judged);
  const PickleFileReport& report = handle->report;
  handle->description = DescribeVerdict(report);
  size_t total_dims = 0;
  for (const TorchTensor& tensor : report.scan.tensors) total_dims += tensor.shape.size();
  handle->dims.reserve(total_dims);  // never reallocated below: the pointers stay valid
  for (const TorchTensor& tensor : report.scan.tensors) {
    const size_t first = handle->dims.size();
    handle->dims.insert(handle->dims.end(), tensor.shape.begin(), tensor.shape.end());
    handle->tensors.push_back(ToCTensor(tensor, handle->dims.data() + first));
  }
  for (const TorchGlobal& global : report.scan.globals) {
    handle->globals.push_back(stguard_torch_global{global.module.data(), global.module.size(),
                                                   global.name.data(), global.name.size(),
                                                   global.allowed ? 1 : 0, global.offset});
  }
  for (const std::vector<std::string>& path : report.key_paths) {
    handle->key_paths.push_back(KeyPathText(path));
  }
  *out_report = handle.release();
  return STGUARD_OK;
}

// ScanWith runs `judge` (which returns a PickleFileReport) under the options, after the
// argument checks every scan entry point shares.
template <typename Judge>
stguard_code ScanWith(const stguard_torch_options* options, stguard_torch_report** out_report,
                      stguard_error* err, Judge&& judge) {
  if (out_report == nullptr) return Fail(err, STGUARD_INVALID_ARGUMENT, "out_report is NULL");
  *out_report = nullptr;
  return Guarded(err, [&] {
    TorchOptions torch;
    TorchConvertOptions unused;
    if (!ReadTorchOptions(options, &torch, &unused, err)) return STGUARD_INVALID_ARGUMENT;
    return Adopt(judge(torch), out_report, err);
  });
}

}  // namespace

bool ReadTorchOptions(const stguard_torch_options* options, TorchOptions* torch,
                      TorchConvertOptions* convert, stguard_error* err) {
  if (options == nullptr) return true;
  if (options->num_keys > 0 && options->key_path == nullptr) {
    Fail(err, STGUARD_INVALID_ARGUMENT, "key_path is NULL but num_keys is not 0");
    return false;
  }
  for (size_t k = 0; k < options->num_keys; ++k) {
    if (options->key_path[k] == nullptr) {
      Fail(err, STGUARD_INVALID_ARGUMENT, "a key of key_path is NULL");
      return false;
    }
    torch->key_path.emplace_back(options->key_path[k]);
  }
  if (options->unbounded_output != 0) {
    torch->max_output_ratio = 0;  // the library's "no bound"
  } else if (options->max_output_ratio != 0) {
    torch->max_output_ratio = options->max_output_ratio;
  }
  convert->drop_aliases = options->drop_aliases != 0;
  convert->allow_external_symlinks = options->allow_external_symlinks != 0;
  return true;
}

}  // namespace stguard::capi

using stguard::capi::Fail;
using stguard::capi::FillError;
using stguard::capi::Guarded;

extern "C" const char* stguard_scan_verdict_name(stguard_scan_verdict verdict) {
  const auto value = static_cast<long long>(verdict);
  if (value < 0 || value >= static_cast<long long>(STGUARD_NUM_SCAN_VERDICTS)) return "unknown";
  // FileVerdictName's views are made from string literals, so data() is NUL-terminated.
  return stguard::FileVerdictName(static_cast<stguard::FileVerdict>(verdict)).data();
}

extern "C" stguard_code stguard_torch_scan_file(const char* path,
                                                const stguard_torch_options* options,
                                                stguard_torch_report** out_report,
                                                stguard_error* err) {
  if (path == nullptr) {
    if (out_report != nullptr) *out_report = nullptr;
    return Fail(err, STGUARD_INVALID_ARGUMENT, "path is NULL");
  }
  return stguard::capi::ScanWith(options, out_report, err, [&](const stguard::TorchOptions& o) {
    return stguard::JudgePickleFile(std::string(path), o);
  });
}

extern "C" stguard_code stguard_torch_scan_buffer(const void* data, size_t len,
                                                  const stguard_torch_options* options,
                                                  stguard_torch_report** out_report,
                                                  stguard_error* err) {
  if (data == nullptr && len > 0) {
    if (out_report != nullptr) *out_report = nullptr;
    return Fail(err, STGUARD_INVALID_ARGUMENT, "data is NULL but len is not 0");
  }
  const std::span<const std::byte> bytes(static_cast<const std::byte*>(data), len);
  return stguard::capi::ScanWith(options, out_report, err, [&](const stguard::TorchOptions& o) {
    return stguard::JudgePickleBytes(bytes, o);
  });
}

extern "C" void stguard_torch_report_free(stguard_torch_report* report) { delete report; }

extern "C" stguard_format stguard_torch_report_format(const stguard_torch_report* report) {
  if (report == nullptr) return STGUARD_FORMAT_UNKNOWN;
  return static_cast<stguard_format>(report->report.format);
}

extern "C" stguard_scan_verdict stguard_torch_report_verdict(const stguard_torch_report* report) {
  if (report == nullptr) return STGUARD_SCAN_CANNOT_PROVE_SAFE;
  return static_cast<stguard_scan_verdict>(report->report.verdict);
}

extern "C" stguard_code stguard_torch_report_reason(const stguard_torch_report* report,
                                                    stguard_error* reason) {
  if (report == nullptr) return Fail(reason, STGUARD_INVALID_ARGUMENT, "report is NULL");
  if (report->report.reason.ok()) return STGUARD_OK;
  return FillError(reason, report->report.reason);
}

extern "C" const char* stguard_torch_report_description(const stguard_torch_report* report) {
  return report != nullptr ? report->description.c_str() : "";
}

extern "C" size_t stguard_torch_report_num_tensors(const stguard_torch_report* report) {
  return report != nullptr ? report->tensors.size() : 0;
}

extern "C" const stguard_torch_tensor* stguard_torch_report_tensor(
    const stguard_torch_report* report, size_t index) {
  if (report == nullptr || index >= report->tensors.size()) return nullptr;
  return &report->tensors[index];
}

extern "C" size_t stguard_torch_report_num_globals(const stguard_torch_report* report) {
  return report != nullptr ? report->globals.size() : 0;
}

extern "C" const stguard_torch_global* stguard_torch_report_global(
    const stguard_torch_report* report, size_t index) {
  if (report == nullptr || index >= report->globals.size()) return nullptr;
  return &report->globals[index];
}

extern "C" size_t stguard_torch_report_num_key_paths(const stguard_torch_report* report) {
  return report != nullptr ? report->key_paths.size() : 0;
}

extern "C" const char* stguard_torch_report_key_path(const stguard_torch_report* report,
                                                     size_t index) {
  if (report == nullptr || index >= report->key_paths.size()) return nullptr;
  return report->key_paths[index].c_str();
}

extern "C" stguard_code stguard_torch_convert_file(const char* in_path, const char* out_path,
                                                   const stguard_torch_options* options,
                                                   stguard_error* err) {
  if (in_path == nullptr || out_path == nullptr) {
    return Fail(err, STGUARD_INVALID_ARGUMENT, "in_path or out_path is NULL");
  }
  return Guarded(err, [&] {
    stguard::TorchOptions torch;
    stguard::TorchConvertOptions convert;
    if (!stguard::capi::ReadTorchOptions(options, &torch, &convert, err)) {
      return STGUARD_INVALID_ARGUMENT;
    }
    if (convert.allow_external_symlinks) {
      return Fail(err, STGUARD_INVALID_ARGUMENT,
                  "allow_external_symlinks applies to a folder, not one file");
    }
    std::vector<stguard::TorchDroppedAlias> dropped;
    const stguard::Error error =
        stguard::ConvertTorchFile(std::string(in_path), std::string(out_path), torch, convert,
                                  &dropped);
    return error.ok() ? STGUARD_OK : FillError(err, error);
  });
}

extern "C" stguard_code stguard_torch_convert_folder(const char* in_dir, const char* out_dir,
                                                     const stguard_torch_options* options,
                                                     stguard_error* err) {
  if (in_dir == nullptr || out_dir == nullptr) {
    return Fail(err, STGUARD_INVALID_ARGUMENT, "in_dir or out_dir is NULL");
  }
  if (options != nullptr && (options->num_keys != 0 || options->max_output_ratio != 0 ||
                             options->unbounded_output != 0)) {
    return Fail(err, STGUARD_INVALID_ARGUMENT,
                "key_path and the output bound apply to one checkpoint, not a folder");
  }
  return Guarded(err, [&] {
    stguard::TorchOptions unused;
    stguard::TorchConvertOptions convert;
    if (!stguard::capi::ReadTorchOptions(options, &unused, &convert, err)) {
      return STGUARD_INVALID_ARGUMENT;
    }
    stguard::TorchFolderReport report;
    const stguard::Error error =
        stguard::ConvertTorchFolder(std::string(in_dir), std::string(out_dir), convert, &report);
    return error.ok() ? STGUARD_OK : FillError(err, error);
  });
}
