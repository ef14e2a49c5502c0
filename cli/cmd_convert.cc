// SPDX-License-Identifier: Apache-2.0
// stguard convert IN OUT --dtype BF16|F16|F32: rewrite the floating tensors of IN (F64,
// F32, F16, BF16) to the given dtype, round to nearest even, and write OUT canonically.
//
// Other tensors (integers, BOOL, the 8-bit and smaller float formats, C64) and the
// metadata are copied unchanged. The data is converted as it is streamed into a
// temporary file beside OUT, which replaces OUT only once complete and synced; peak
// memory does not depend on the data size, and OUT may be IN. For every other input OUT
// must not be IN (CheckOutputIsNotInput): a usage error before anything is written.
//
// stguard convert IN OUT [--key NAME]... [--drop-aliases] [--max-output-ratio N]: IN a
// PyTorch checkpoint (format detected from its bytes), OUT safetensors; IN a folder with
// pytorch_model.bin.index.json: OUT a folder of shards and model.safetensors.index.json
// (torch_checkpoint.h). IN any other folder, a safetensors model folder, with --dtype: OUT
// a folder of the same shards converted and the index rewritten (stguard/conversion.h).
//
// The conversion, every format and OUT "-", is one library call (ConvertPath,
// stguard/conversion.h): it refuses an option that does not apply to IN's format (the
// library's rule, kConvertOptionRules) and decides the verdict of a failure.
//
// Every conversion, of any format, returns a ConvertResult (convert_result.h) instead of
// printing: --json changes how the one result is printed, never what it is.
#include <memory>
#include <string>
#include <vector>

#include "arguments.h"
#include "commands.h"
#include "convert_result.h"
#include "output.h"
#include "progress.h"
#include "stguard/conversion.h"
#include "stguard/formats.h"
#include "stguard/remote.h"
#include "stguard/verdict.h"

namespace stguard::cli {
namespace {

// Notes says, for a person, what the conversion left out: each alias dropped (stdout,
// "details") and each metadata array left out (stderr, "warnings").
void AddNotes(const ConvertReport& report, ConvertResult* result) {
  for (const TorchDroppedAlias& alias : report.dropped) {
    result->details.push_back("dropped alias '" + PrintableText(alias.dropped) +
                              "' (same tensor as '" + PrintableText(alias.kept) + "')");
  }
  for (const GgufOmittedKey& key : report.omitted) {
    result->warnings.push_back("stguard convert: note: metadata '" + PrintableText(key.key) +
                               "' (" + std::to_string(key.count) + " " + key.element_type +
                               " elements) left out of __metadata__; --all-metadata keeps it");
  }
}

// Failure prints the verdict the library decided where the conversion failed
// (ConvertReport::verdict): a request that cannot be done is a usage error; an error
// writing OUT is about OUT; otherwise the error that decided the verdict is about IN.
ConvertResult Failure(const CommandLine& line, const ConvertReport& report, const Error& error) {
  const std::string& in = line.operands[0];
  const std::string& out = line.operands[1];
  if (report.usage) return ConvertUnusable(in, report.input, PrintableText(error.context));
  ConvertResult result =
      ConvertFailed(in, report.input, report.about_output ? out : in, error, report.verdict);
  result.input.member = error.file;
  // A checkpoint whose tensors sit under a key is not refused: the line names the keys.
  if (report.needs_key) {
    result.failure_line = "stguard convert: " + PrintableText(in) + ": " +
                          PrintableText(error.context) + "\n";
  }
  return result;
}

// RunConvertRequest makes the one library call, which checks the options against IN's
// format and decides the verdict, with progress shown on a terminal unless --json.
ConvertResult RunConvertRequest(const CommandLine& line) {
  const std::string& in = line.operands[0];
  const std::string& out = line.operands[1];
  if (out == "-") {
    // Refused before the library runs: IN's format is told here, for the envelope only.
    const PathFormat input = FormatOfPath(in).value_or(PathFormat{});
    if (line.json) {
      return ConvertUnusable(in, input,
                             "--json prints the result on standard output: OUT cannot be -");
    }
    if (const std::string refusal = StdoutRefusal(); !refusal.empty()) {
      return ConvertUnusable(in, input, refusal);
    }
  } else {
    PrintLeftoverNotes("convert", out);
  }
  ConvertOptions options;
  options.dtype = line.dtype;
  options.key_path = line.keys;
  options.max_output_ratio = line.max_output_ratio;
  options.drop_aliases = line.drop_aliases;
  options.allow_external_symlinks = line.allow_external_symlinks;
  options.name = line.name;
  options.all_metadata = line.all_metadata;
  StdoutSink stdout_sink;
  options.stdout_sink = &stdout_sink;
  // The output's size is known only once it is planned: the bar shows bytes and rate.
  ProgressBar progress(/*total=*/0, ShowProgress(line.json, /*quiet=*/false));
  options.progress = [&progress](uint64_t bytes) { progress.Add(bytes); };
  ConvertReport report;
  const Error error = ConvertPath(in, out, options, &report);
  progress.Clear();
  if (!error.ok()) return Failure(line, report, error);
  ConvertResult result = Converted(in, report.input, out, report.num_tensors,
                                   PrintableText(out) + ": " + PrintableText(report.summary));
  AddNotes(report, &result);
  // The summary goes to stderr when the file itself goes to standard output.
  result.summary_on_stderr = out == "-";
  return result;
}

}  // namespace

int RunConvert(const CommandLine& line) {
  if (!IsRemoteInput(line.operands[0])) {
    return PrintConvertResult(RunConvertRequest(line), line.json);
  }
  // A URL is downloaded whole beside OUT (removed whatever happens), then converted as
  // that file; the result names the URL.
  const std::string& url = line.operands[0];
  const Result<std::unique_ptr<DownloadedFile>> file =
      DownloadedFile::Download(url, line.operands[1]);
  // A download that fails says nothing of the file: no verdict on it (exit 2).
  if (!file.ok()) {
    return PrintConvertResult(ConvertFailed(url, PathFormat{}, url, file.error(), Verdict::kError),
                              line.json);
  }
  CommandLine local = line;
  local.operands[0] = (*file)->path();
  ConvertResult result = RunConvertRequest(local);
  result.input.file = url;
  for (std::string* text : {&result.failure_line, &result.input.error.context}) {
    for (size_t at = 0; (at = text->find(local.operands[0], at)) != std::string::npos;) {
      text->replace(at, local.operands[0].size(), url);
      at += url.size();
    }
  }
  return PrintConvertResult(result, line.json);
}

}  // namespace stguard::cli
