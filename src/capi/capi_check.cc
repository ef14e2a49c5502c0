// SPDX-License-Identifier: Apache-2.0
// C API: the verdict on any file or folder (stguard/stguard_check.h) over CheckPath. The
// verdict, its error and the envelope's JSON come from the library (stguard/verdict.h),
// as `stguard check` prints them; nothing is decided here.
//
// A result wraps one CheckResult and, built once when it is made, everything its accessors
// return (the envelope's JSON, the warnings, a folder's files as results of their own), so
// an accessor never allocates and its pointer lives exactly as long as the result.
#include <memory>
#include <string>
#include <vector>

#include "capi/capi_common.h"
#include "capi/capi_torch_options.h"
#include "stguard/stguard_check.h"
#include "stguard/verdict.h"

struct stguard_result {
  const stguard::CheckResult* result = nullptr;  // owned by `owned`, or by the parent
  std::unique_ptr<stguard::CheckResult> owned;   // the top result only
  std::string json;                              // EnvelopeJson
  std::vector<stguard_warning> warnings;
  std::vector<stguard_result> files;             // one per result->files, same order
};

namespace stguard::capi {
namespace {

// stguard_verdict must mirror Verdict value for value: the C API converts by casting.
static_assert(static_cast<int>(STGUARD_VERDICT_VALID) == static_cast<int>(Verdict::kValid));
static_assert(static_cast<int>(STGUARD_VERDICT_INVALID) == static_cast<int>(Verdict::kInvalid));
static_assert(static_cast<int>(STGUARD_VERDICT_REFUSED) == static_cast<int>(Verdict::kRefused));
static_assert(static_cast<int>(STGUARD_VERDICT_ERROR) == static_cast<int>(Verdict::kError));

bool IsValidVerdict(stguard_verdict verdict) {
  const auto value = static_cast<long long>(verdict);
  return value >= 0 && value < static_cast<long long>(STGUARD_NUM_VERDICTS);
}

// Fill builds the records of `handle` for `result` (which outlives the handle), and those
// of each of its files.
void Fill(const CheckResult& result, stguard_result* handle) {
  handle->result = &result;
  handle->json = EnvelopeJson(result);
  handle->warnings.reserve(result.warnings.size());
  for (const Warning& warning : result.warnings) {
    // WarningKindName's views are made from string literals, so data() is NUL-terminated.
    handle->warnings.push_back(stguard_warning{
        WarningKindName(warning.kind).data(), warning.file.c_str(), warning.tensor.data(),
        warning.tensor.size(), warning.message.c_str()});
  }
  handle->files.resize(result.files.size());  // sized once: the records never move
  for (size_t i = 0; i < result.files.size(); ++i) Fill(result.files[i], &handle->files[i]);
}

}  // namespace
}  // namespace stguard::capi

using stguard::capi::Fail;

extern "C" const char* stguard_verdict_name(stguard_verdict verdict) {
  if (!stguard::capi::IsValidVerdict(verdict)) verdict = STGUARD_VERDICT_ERROR;
  // VerdictName's views are made from string literals, so data() is NUL-terminated.
  return stguard::VerdictName(static_cast<stguard::Verdict>(verdict)).data();
}

extern "C" int stguard_verdict_exit_status(stguard_verdict verdict) {
  if (!stguard::capi::IsValidVerdict(verdict)) verdict = STGUARD_VERDICT_ERROR;
  return stguard::VerdictExitStatus(static_cast<stguard::Verdict>(verdict));
}

extern "C" stguard_verdict stguard_verdict_worse(stguard_verdict first, stguard_verdict second) {
  if (!stguard::capi::IsValidVerdict(first)) first = STGUARD_VERDICT_ERROR;
  if (!stguard::capi::IsValidVerdict(second)) second = STGUARD_VERDICT_ERROR;
  const stguard::Verdict worse = stguard::WorseVerdict(static_cast<stguard::Verdict>(first),
                                                      static_cast<stguard::Verdict>(second));
  return static_cast<stguard_verdict>(worse);
}

extern "C" const char* stguard_verdict_sentence(stguard_verdict verdict) {
  if (!stguard::capi::IsValidVerdict(verdict)) verdict = STGUARD_VERDICT_ERROR;
  // VerdictSentence's views are made from string literals, so data() is NUL-terminated.
  return stguard::VerdictSentence(static_cast<stguard::Verdict>(verdict)).data();
}

extern "C" stguard_code stguard_check_path(const char* path,
                                           const stguard_check_options* options,
                                           stguard_result** out_result, stguard_error* err) {
  if (out_result == nullptr) return Fail(err, STGUARD_INVALID_ARGUMENT, "out_result is NULL");
  *out_result = nullptr;
  if (path == nullptr) return Fail(err, STGUARD_INVALID_ARGUMENT, "path is NULL");
  return stguard::capi::Guarded(err, [&] {
    stguard::CheckOptions check_options;
    if (options != nullptr) {
      stguard::TorchConvertOptions unused;
      if (!stguard::capi::ReadTorchOptions(options->torch, &check_options.torch, &unused,
                                           err)) {
        return STGUARD_INVALID_ARGUMENT;
      }
      check_options.require_aligned_data = options->require_aligned_data != 0;
      check_options.allow_external_symlinks = options->allow_external_symlinks != 0;
    }
    auto handle = std::make_unique<stguard_result>();
    handle->owned = std::make_unique<stguard::CheckResult>(
        stguard::CheckPath(std::string(path), check_options));
    stguard::capi::Fill(*handle->owned, handle.get());
    *out_result = handle.release();
    return STGUARD_OK;
  });
}

extern "C" void stguard_result_free(stguard_result* result) {
  // A file's result is owned by its folder's: only a top result (owned != null) is freed.
  if (result != nullptr && result->owned != nullptr) delete result;
}

extern "C" stguard_verdict stguard_result_verdict(const stguard_result* result) {
  if (result == nullptr) return STGUARD_VERDICT_ERROR;
  return static_cast<stguard_verdict>(result->result->verdict);
}

extern "C" stguard_format stguard_result_format(const stguard_result* result) {
  if (result == nullptr || result->result->is_folder) return STGUARD_FORMAT_UNKNOWN;
  return static_cast<stguard_format>(result->result->format);
}

extern "C" int stguard_result_is_folder(const stguard_result* result) {
  return result != nullptr && result->result->is_folder ? 1 : 0;
}

extern "C" const char* stguard_result_path(const stguard_result* result) {
  return result != nullptr ? result->result->file.c_str() : "";
}

extern "C" stguard_code stguard_result_error(const stguard_result* result,
                                             stguard_error* error) {
  if (result == nullptr) return Fail(error, STGUARD_INVALID_ARGUMENT, "result is NULL");
  const stguard::Error& cause = result->result->error;
  if (result->result->verdict == stguard::Verdict::kValid || cause.ok()) return STGUARD_OK;
  const stguard_code code = stguard::capi::FillError(error, cause);
  if (error != nullptr && stguard_result_offset_in_file(result) == 0) error->offset = 0;
  return code;
}

extern "C" int stguard_result_offset_in_file(const stguard_result* result) {
  // As the envelope shows it (one rule, in the library).
  return result != nullptr && stguard::ResultOffsetInFile(*result->result) ? 1 : 0;
}

extern "C" const char* stguard_result_member(const stguard_result* result) {
  return result != nullptr ? result->result->member.c_str() : "";
}

extern "C" const char* stguard_result_json(const stguard_result* result) {
  return result != nullptr ? result->json.c_str() : "";
}

extern "C" stguard_summary stguard_result_summary(const stguard_result* result) {
  stguard_summary summary{};
  if (result == nullptr) return summary;
  const stguard::CheckSummary& counts = result->result->summary;
  summary.tensors = counts.tensors;
  summary.data_bytes = counts.data_bytes;
  summary.header_bytes = counts.header_bytes;
  summary.shards = counts.shards;
  return summary;
}

extern "C" size_t stguard_result_num_files(const stguard_result* result) {
  return result != nullptr ? result->files.size() : 0;
}

extern "C" const stguard_result* stguard_result_file_at(const stguard_result* result,
                                                        size_t index) {
  if (result == nullptr || index >= result->files.size()) return nullptr;
  return &result->files[index];
}

extern "C" size_t stguard_result_num_warnings(const stguard_result* result) {
  return result != nullptr ? result->warnings.size() : 0;
}

extern "C" const stguard_warning* stguard_result_warning(const stguard_result* result,
                                                         size_t index) {
  if (result == nullptr || index >= result->warnings.size()) return nullptr;
  return &result->warnings[index];
}
