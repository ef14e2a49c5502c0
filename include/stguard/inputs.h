// SPDX-License-Identifier: Apache-2.0
// One input's whole result for `check`, `scan` and `lint`, composed by the library (the
// verdict, the exit class, the JSON objects and the text lines), and the runner that
// judges many inputs on a pool of threads and delivers their results in input order.
// Front ends (the CLI, Python) print what they are given; they decide nothing.
//
// THREADS. CheckInput, ScanInput and LintInput may run concurrently on different inputs:
// every reader they use keeps its state in the call (no static mutable state), so
// RunInputs can call them from `jobs` threads at once. The callbacks given to RunInputs
// (deliver) run on the calling thread only, one at a time, in input order.
//
// BOUND. RunInputs holds at most kPendingPerJob * jobs results that are judged but not yet
// delivered (a slow input does not let the others pile up), plus the inputs themselves.
#ifndef STGUARD_INPUTS_H_
#define STGUARD_INPUTS_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "stguard/error.h"
#include "stguard/export.h"
#include "stguard/lint.h"
#include "stguard/torch_checkpoint.h"
#include "stguard/verdict.h"

namespace stguard {

// OutputOptions: how an input's result is written.
struct OutputOptions {
  bool json = false;   // one JSON object per line (the envelope, then the command's fields)
  bool quiet = false;  // check: write nothing for a valid input
};

// InputFinding is one file of an input that is not valid (for SARIF and summaries).
struct InputFinding {
  std::string file;      // the path given, or for a file inside a folder that path + "/" + name
  Verdict verdict = Verdict::kError;
  Error error;
  bool has_offset = false;  // error.offset is a byte of `file` (ResultOffsetInFile)
};

// InputReport is everything one input produced.
struct InputReport {
  Verdict verdict = Verdict::kValid;   // the worst of the input's verdicts
  std::vector<std::string> lines;      // for standard output: JSON objects or text lines
  std::vector<std::string> errors;     // for standard error (text mode only)
  std::vector<InputFinding> findings;  // each file that is not valid, in order
  int exit_status() const { return VerdictExitStatus(verdict); }
};

// CheckInput is `stguard check` on one path: CheckPath's verdict and its JSON (envelope,
// "ok", "error", the summary counts, the canonical comparison, warnings) or text line.
STGUARD_API InputReport CheckInput(const std::string& path, const CheckOptions& options,
                                   const OutputOptions& output);

// ScanInputOptions is what `stguard scan` is asked.
struct ScanInputOptions {
  TorchOptions torch;                    // --key, --max-output-ratio
  bool allow_external_symlinks = false;  // read a folder's files through links out of it
  bool require_convertible = false;      // a safe file that would not convert is invalid
};

// ScanInput is `stguard scan` on one path: a pickle-bearing file's static report (format,
// verdict, globals, storages, tensors), an .npy or .npz file's "is there a pickle", or
// every pickle-bearing file of a folder (one object or block of lines per file).
STGUARD_API InputReport ScanInput(const std::string& path, const ScanInputOptions& options,
                                  const OutputOptions& output);

// LintInput is `stguard lint` on one path: CheckPath first (a folder that check refuses is
// never "ok"), then the lint rules (stguard/lint.h) and their findings. A valid file of a
// format lint does not read is a usage error (verdict error, kInvalidArgument).
STGUARD_API InputReport LintInput(const std::string& path, const LintOptions& options,
                                  const OutputOptions& output);

// The text and JSON forms of a result, shared by every command that prints one.
// ResultLine renders "PATH: valid: DETAIL" or "PATH: VERDICT: WHY".
STGUARD_API std::string ResultLine(const CheckResult& result);
// WarningLine renders "PATH: warning: KIND: FILE[ (tensor 'T')]: MESSAGE".
STGUARD_API std::string WarningLine(const std::string& path, const Warning& warning);
// AppendResultJson appends the envelope's fields, then "ok", and when not valid the
// "error" object (code, offset, message, context, tensor), with no braces.
STGUARD_API void AppendResultJson(const CheckResult& result, std::string* out);
// AppendErrorJson appends {"code":..,"offset":..,"message":..,"context":..,"tensor":..};
// the offset only when `has_offset`.
STGUARD_API void AppendErrorJson(const Error& error, bool has_offset, std::string* out);
// ErrorText is error.ToString() for a line that already names `path` (a context that
// begins with "PATH: " is shown without it).
STGUARD_API std::string ErrorText(std::string_view path, Error error);

// kPendingPerJob: RunInputs keeps at most this many results per job judged ahead of the
// one being delivered.
inline constexpr size_t kPendingPerJob = 4;
// kMaxJobs bounds the threads one run starts, whatever it is asked.
inline constexpr unsigned kMaxJobs = 256;

// DefaultJobs is one job per core (std::thread::hardware_concurrency, at least 1).
STGUARD_API unsigned DefaultJobs();

// RunSummary counts one run's inputs by verdict.
struct RunSummary {
  uint64_t inputs = 0;
  uint64_t valid = 0;
  uint64_t invalid = 0;
  uint64_t refused = 0;
  uint64_t errors = 0;
  double seconds = 0;
  Verdict worst = Verdict::kValid;  // THE ORDER OF VERDICTS (stguard/verdict.h)
  int exit_status() const { return VerdictExitStatus(worst); }
};

// SummaryLine renders "10,010 files: 10,000 valid, 10 refused, 0 errors; 1.4 s" (invalid
// named when there are some).
STGUARD_API std::string SummaryLine(const RunSummary& summary);

// RunInputs judges inputs[0..n) with `judge` on min(jobs, n, kMaxJobs) threads (jobs 0:
// DefaultJobs()) and calls `deliver(i, report)` on the calling thread for i = 0, 1, ... in
// order, each as soon as the reports 0..i are all ready. `judge` must not throw (the
// per-input functions above never do; an exception escaping it ends the process). An
// exception from `deliver` stops the run: the workers finish the inputs they hold, then
// it propagates to the caller.
STGUARD_API RunSummary RunInputs(
    std::span<const std::string> inputs, unsigned jobs,
    const std::function<InputReport(const std::string& input)>& judge,
    const std::function<void(size_t index, InputReport& report)>& deliver);

// SARIF. SarifLog returns a SARIF 2.1.0 log of one run of `tool_version`: a rule per
// error code (its name, and its description from stguard/error_codes.def), one result per
// finding, with the file's URI (a relative path stays relative, percent-encoded),
// region.startLine 1 and region.byteOffset when the error has an offset.
STGUARD_API std::string SarifLog(std::span<const InputFinding> findings,
                                 std::string_view tool_version);

// WriteSarifFile writes SarifLog(findings, tool_version) to `path` crash-safely (a whole
// file or none, stguard/writer.h's rules), refusing (kInvalidArgument) when `path` is one
// of `inputs` (CheckOutputIsNotInput: the same file by any name).
[[nodiscard]] STGUARD_API Error WriteSarifFile(const std::string& path,
                                               std::span<const std::string> inputs,
                                               std::span<const InputFinding> findings,
                                               std::string_view tool_version);

// ErrorCodeHelp returns the description of `code` written above its row in
// stguard/error_codes.def ("the path names a directory, device or other non-file").
STGUARD_API std::string_view ErrorCodeHelp(ErrorCode code);

}  // namespace stguard

#endif  // STGUARD_INPUTS_H_
