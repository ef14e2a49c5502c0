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
// IN's format is told by its bytes once, after the whole command line is read; an option
// that does not apply to it is a usage error naming the formats it applies to. OUT "-" is
// standard output for every format that writes one file: safetensors is streamed, the
// others are built in a private temporary folder and copied (their writers need a file
// to seek in), and a folder output refuses it.
//
// Every conversion, of any format, returns a ConvertResult (convert_result.h) instead of
// printing: --json changes how the one result is printed, never what it is.
#include <sys/stat.h>

#include <stdlib.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "arguments.h"
#include "commands.h"
#include "convert_result.h"
#include "gguf_output.h"
#include "npy_output.h"
#include "output.h"
#include "progress.h"
#include "stguard/checkpoint_dir.h"
#include "stguard/conversion.h"
#include "stguard/convert.h"
#include "stguard/file_verdict.h"
#include "stguard/mapped_file.h"
#include "stguard/reader.h"
#include "stguard/sniff.h"
#include "stguard/torch_checkpoint.h"
#include "stguard/verdict.h"
#include "stguard/writer.h"

namespace stguard::cli {
namespace {

bool IsDirectory(const std::string& path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

// DroppedLines says which names were dropped as aliases of a tensor that was kept.
std::vector<std::string> DroppedLines(const std::vector<TorchDroppedAlias>& dropped) {
  std::vector<std::string> lines;
  for (const TorchDroppedAlias& alias : dropped) {
    lines.push_back("dropped alias '" + PrintableText(alias.dropped) + "' (same tensor as '" +
                    PrintableText(alias.kept) + "')");
  }
  return lines;
}

// ConvertTorchFolderTo converts a folder of PyTorch shards into the folder OUT.
ConvertResult ConvertTorchFolderTo(const std::string& in, const std::string& out,
                                   const TorchConvertOptions& convert_options, bool json) {
  TorchFolderReport report;
  // The total is not known before the shards are read: the bar shows bytes and rate.
  ProgressBar progress(/*total=*/0, ShowProgress(json, /*quiet=*/false));
  TorchConvertOptions with_progress = convert_options;
  with_progress.progress = [&progress](uint64_t bytes) { progress.Add(bytes); };
  const Error error = ConvertTorchFolder(in, out, with_progress, &report);
  progress.Clear();
  if (!error.ok()) {
    // An error about OUTDIR (or a folder on its way) names it first; others name DIR.
    const bool about_out = IsIoError(error) && error.context.starts_with(out);
    if (IsIoError(error)) return ConvertFailed(in, about_out ? out : in, error);
    // A folder `check DIR` refuses (a shard that cannot be proven safe) is refused here too,
    // with check's reason, whatever the converter tripped on first.
    CheckOptions check;
    check.allow_external_symlinks = convert_options.allow_external_symlinks;
    const CheckResult folder = CheckPath(in, check);
    if (folder.verdict == Verdict::kRefused) {
      return ConvertFailed(in, in, folder.error, Verdict::kRefused);
    }
    return ConvertFailed(in, in, error);
  }
  ConvertResult result =
      Converted(in, out, report.num_tensors,
                PrintableText(out) + ": " + Plural(report.num_tensors, "tensor") + " in " +
                    Plural(report.written.size(), "file") + " (" +
                    std::to_string(report.total_size) + " data bytes)");
  result.details = DroppedLines(report.dropped);
  return result;
}

// TorchOpenFailed is the result for a PyTorch file the reader could not open. The error is
// the reader's; the verdict is the static scan's when it refuses the file (as `check`
// says: a pickle that cannot be proven safe is refused, whatever the reader tripped on).
// A checkpoint whose tensors sit under a key is not refused: the line names the keys.
ConvertResult TorchOpenFailed(const std::string& in, const TorchOptions& options,
                              const Error& error) {
  if (IsIoError(error)) return ConvertFailed(in, in, error);
  const PickleFileReport report = JudgePickleFile(in, options);
  if (VerdictForPickle(report) == Verdict::kRefused) {
    return ConvertFailed(in, in, error, Verdict::kRefused);
  }
  ConvertResult result = ConvertFailed(in, in, error);
  if (error.code == ErrorCode::kNotAStateDict && options.key_path.empty() &&
      report.verdict == FileVerdict::kNeedsKey && !report.key_paths.empty()) {
    result.failure_line =
        "stguard convert: " + PrintableText(in) + ": " + DescribeVerdict(report) + "\n";
  }
  return result;
}

ConvertResult ConvertTorch(const std::string& in, const std::string& out,
                           const TorchOptions& options,
                           const TorchConvertOptions& convert_options, bool json) {
  if (IsDirectory(in)) return ConvertTorchFolderTo(in, out, convert_options, json);
  Result<TorchCheckpoint> checkpoint = TorchCheckpoint::Open(in, options);
  if (!checkpoint.ok()) return TorchOpenFailed(in, options, checkpoint.error());
  Writer writer;
  std::vector<TorchDroppedAlias> dropped;
  if (Error error = AddTorchTensors(*checkpoint, convert_options, &writer, &dropped);
      !error.ok()) {
    return ConvertFailed(in, in, error);
  }
  PrintLeftoverNotes("convert", out);
  const Result<uint64_t> size = writer.FileSize();
  ProgressBar progress(size.ok() ? *size : 0, ShowProgress(json, /*quiet=*/false));
  writer.set_progress([&progress](uint64_t bytes) { progress.Add(bytes); });
  const Error written = writer.WriteToFile(out);
  progress.Clear();
  if (!written.ok()) {
    // A checksum failure surfaces while streaming; the output is untouched either way.
    return ConvertFailed(in, written.code == ErrorCode::kZipChecksum ? in : out, written);
  }
  ConvertResult result =
      Converted(in, out, writer.num_tensors(),
                PrintableText(out) + ": " + Plural(writer.num_tensors(), "tensor") +
                    " from a " + std::string(TorchFormatName(checkpoint->format())) +
                    " torch checkpoint");
  result.details = DroppedLines(dropped);
  return result;
}

// ConvertSafetensors rewrites IN's floating tensors to `target` into OUT (or "-").
ConvertResult ConvertSafetensors(const std::string& in, const std::string& out, Dtype target,
                                 bool json) {
  const Result<Checkpoint> checkpoint = Checkpoint::Open(in);
  if (!checkpoint.ok()) return ConvertFailed(in, in, checkpoint.error());
  // Streamed (WriteConverted*): the same bytes as AddConvertedCheckpoint and a Writer, in
  // memory that does not grow with the header's entries.
  size_t num_converted = 0;
  const bool to_stdout = out == "-";
  if (to_stdout) {  // --json and a terminal were refused by RunConvertRequest
    StdoutSink sink;
    if (Error error = WriteConverted(*checkpoint, target, sink, &num_converted); !error.ok()) {
      return ConvertFailed(in, "-", error, Verdict::kError);
    }
  } else {
    PrintLeftoverNotes("convert", out);
    // The output's size is known only once its header is planned: bytes and rate show.
    ProgressBar progress(/*total=*/0, ShowProgress(json, /*quiet=*/false));
    const Error error = WriteConvertedFile(*checkpoint, target, out, &num_converted,
                                           [&progress](uint64_t bytes) { progress.Add(bytes); });
    progress.Clear();
    if (!error.ok()) {
      // A valid checkpoint always converts, so any failure here is about reading IN or
      // writing OUT (no verdict on IN): the output is untouched either way.
      return ConvertFailed(in, out, error, Verdict::kError);
    }
  }
  ConvertResult result =
      Converted(in, out, checkpoint->num_tensors(),
                PrintableText(out) + ": " + std::to_string(num_converted) + " of " +
                    Plural(checkpoint->num_tensors(), "tensor") + " converted to " +
                    std::string(DtypeName(target)));
  // The summary goes to stderr when the file itself goes to standard output.
  result.summary_on_stderr = to_stdout;
  return result;
}

// IsTorchFolder says whether the folder IN holds PyTorch weights, which ConvertTorchFolder
// converts (pytorch_model.bin.index.json or pytorch_model.bin); any other folder is read
// as a safetensors model folder.
bool IsTorchFolder(const std::string& in) {
  struct stat info;
  // lstat: a link there, even dangling, is the PyTorch converter's to judge.
  return ::lstat((in + "/pytorch_model.bin.index.json").c_str(), &info) == 0 ||
         ::lstat((in + "/pytorch_model.bin").c_str(), &info) == 0;
}

// ConvertSafetensorsFolderTo converts the safetensors model folder IN to `target` into the
// folder OUT, shard by shard under the same names, the index rewritten.
// NothingToConvert adds to a folder's kNoSafetensorsInFolder that it holds no PyTorch
// weights either: the folder is neither kind convert takes.
Error NothingToConvert(Error error) {
  if (error.code == ErrorCode::kNoSafetensorsInFolder) {
    error.context += " (nor pytorch_model.bin or pytorch_model.bin.index.json)";
  }
  return error;
}

ConvertResult ConvertSafetensorsFolderTo(const CommandLine& line, const std::string& out) {
  const std::string& in = line.operands[0];
  if (line.drop_aliases || !line.keys.empty() || line.max_output_ratio) {
    return ConvertUnusable(in, "--key, --drop-aliases and --max-output-ratio apply to PyTorch, "
                               "not to a safetensors folder");
  }
  DirOptions options;
  options.allow_external_symlinks = line.allow_external_symlinks;
  if (!line.dtype) {
    // An invalid folder is invalid whatever was asked; a valid one needs --dtype.
    const Result<CheckpointDir> dir = CheckpointDir::Open(in, options);
    if (!dir.ok()) return ConvertFailed(in, in, NothingToConvert(dir.error()));
    return ConvertUnusable(in, "a safetensors folder IN needs --dtype BF16|F16|F32");
  }
  PrintLeftoverNotes("convert", out);
  ProgressBar progress(/*total=*/0, ShowProgress(line.json, /*quiet=*/false));
  SafetensorsFolderReport report;
  const Error error = ConvertSafetensorsFolder(
      in, out, *line.dtype, options, [&progress](uint64_t bytes) { progress.Add(bytes); },
      &report);
  progress.Clear();
  if (!error.ok()) {
    // An error about OUTDIR (or a folder on its way) names it first; others name DIR.
    const bool about_out = IsIoError(error) && error.context.starts_with(out);
    return ConvertFailed(in, about_out ? out : in, NothingToConvert(error));
  }
  return Converted(in, out, report.num_tensors,
                   PrintableText(out) + ": " + std::to_string(report.num_converted) + " of " +
                       Plural(report.num_tensors, "tensor") + " converted to " +
                       std::string(DtypeName(*line.dtype)) + " in " +
                       Plural(report.written.size(), "file") + " (" +
                       std::to_string(report.total_size) + " data bytes)");
}

// ConvertTo converts IN, whose format is `format` (FormatOfPath), to the path OUT.
ConvertResult ConvertTo(const CommandLine& line, PathFormat format, const std::string& out) {
  const std::string& in = line.operands[0];
  if (format.is_folder && !IsTorchFolder(in)) return ConvertSafetensorsFolderTo(line, out);
  if (format.is_folder || (format.set() & FormatsOfKind(Format::kPytorchZip)) != 0) {
    TorchOptions options;
    options.key_path = line.keys;
    if (line.max_output_ratio) options.max_output_ratio = *line.max_output_ratio;
    TorchConvertOptions convert_options;
    convert_options.dtype = line.dtype;
    convert_options.drop_aliases = line.drop_aliases;
    convert_options.allow_external_symlinks = line.allow_external_symlinks;
    return ConvertTorch(in, out, options, convert_options, line.json);
  }
  switch (format.format) {
    case Format::kNpy: return ConvertNpy(in, out, line.name, line.dtype, line.json);
    case Format::kNpz: return ConvertNpz(in, out, line.dtype, line.json);
    case Format::kGguf: return ConvertGgufFile(in, out, line.dtype, line.all_metadata);
    case Format::kSafetensors: {
      if (line.dtype) return ConvertSafetensors(in, out, *line.dtype, line.json);
      // An invalid file is invalid whatever was asked; a valid one needs --dtype.
      const Result<Checkpoint> checkpoint = Checkpoint::Open(in);
      if (!checkpoint.ok()) return ConvertFailed(in, in, checkpoint.error());
      return ConvertUnusable(in, "a safetensors IN needs --dtype BF16|F16|F32");
    }
    default: break;
  }
  Result<std::unique_ptr<MappedFile>> file = MappedFile::Open(in);
  if (!file.ok()) return ConvertFailed(in, in, file.error(), Verdict::kError);
  Error error{ErrorCode::kNotATorchCheckpoint, 0,
              "not a format stguard converts (safetensors, PyTorch, GGUF, .npy, .npz)"};
  return ConvertFailed(in, in, error);
}

// ReplaceText replaces every `from` in *text with `to`. It builds a new string: g++ 12's
// -Wrestrict misreads an in-place std::string::replace here (GCC bug 105329).
void ReplaceText(std::string_view from, std::string_view to, std::string* text) {
  if (from.empty()) return;
  std::string out;
  size_t start = 0;
  for (size_t at = text->find(from); at != std::string::npos; at = text->find(from, start)) {
    out.append(*text, start, at - start).append(to);
    start = at + from.size();
  }
  out.append(*text, start, std::string::npos);
  *text = std::move(out);
}

// CopyToStdout streams the file at `path` to standard output.
Error CopyToStdout(const std::string& path) {
  Result<std::unique_ptr<MappedFile>> file = MappedFile::Open(path);
  if (!file.ok()) return file.error();
  StdoutSink sink;
  return sink.Write((*file)->bytes());
}

// ConvertThroughTemporary converts IN into a file in a private temporary folder, then
// copies it to standard output: for the writers that seek in their output (GGUF, PyTorch,
// .npy, .npz). The temporary path never appears in what is printed: messages say "-".
ConvertResult ConvertThroughTemporary(const CommandLine& line, PathFormat format) {
  const std::string& in = line.operands[0];
  const char* tmpdir = std::getenv("TMPDIR");
  std::string folder = std::string(tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp") +
                       "/stguard-convert-XXXXXX";
  if (::mkdtemp(folder.data()) == nullptr) {
    Error error{ErrorCode::kIoError, 0, "cannot create a temporary folder for standard output"};
    error.context = std::strerror(errno);
    return ConvertFailed(in, "-", error, Verdict::kError);
  }
  const std::string temporary = folder + "/out.safetensors";
  ConvertResult result = ConvertTo(line, format, temporary);
  if (result.input.valid() && IsDirectory(temporary)) {
    result = ConvertUnusable(in, "a split GGUF model converts to a folder: OUT cannot be -");
  } else if (result.input.valid()) {
    if (Error error = CopyToStdout(temporary); !error.ok()) {
      result = ConvertFailed(in, "-", error, Verdict::kError);
    }
  }
  std::error_code ignored;
  std::filesystem::remove_all(folder, ignored);
  for (std::string* text : {&result.summary, &result.failure_line, &result.input.error.context,
                            &result.out}) {
    ReplaceText(temporary, "-", text);
  }
  for (std::string& warning : result.warnings) ReplaceText(temporary, "-", &warning);
  result.summary_on_stderr = true;
  return result;
}

// RunConvertRequest reads IN's format, checks the options against it, and runs the one
// conversion they ask for (progress shown unless --json).
ConvertResult RunConvertRequest(const CommandLine& line) {
  const std::string& in = line.operands[0];
  const std::string& out = line.operands[1];
  const Result<PathFormat> found = FormatOfPath(in);
  const PathFormat format = found.ok() ? *found : PathFormat{};  // the reader says why
  if (const std::string inapplicable =
          InapplicableOption(*FindCommand("convert"), line, format.set(), in);
      !inapplicable.empty()) {
    return ConvertUnusable(in, inapplicable);
  }
  // Only a safetensors file may be converted onto itself (crash-safely, as `canon IN IN`).
  const bool safetensors_file = !format.is_folder && format.format == Format::kSafetensors;
  if (out != "-" && !safetensors_file) {
    if (const Error same = CheckOutputIsNotInput(in, out); !same.ok()) {
      return ConvertUnusable(in, std::string(same.message) + ": " + PrintableText(same.context));
    }
  }
  if (out != "-") return ConvertTo(line, format, out);
  if (line.json) {
    return ConvertUnusable(in, "--json prints the result on standard output: OUT cannot be -");
  }
  if (format.is_folder) {
    return ConvertUnusable(in, "a folder converts to a folder: OUT cannot be -");
  }
  if (const std::string refusal = StdoutRefusal(); !refusal.empty()) {
    return ConvertUnusable(in, refusal);
  }
  // A safetensors IN is streamed; the other writers need a file.
  if (safetensors_file || format.set() == 0) {
    return ConvertTo(line, format, out);
  }
  return ConvertThroughTemporary(line, format);
}

}  // namespace

int RunConvert(const CommandLine& line) {
  return PrintConvertResult(RunConvertRequest(line), line.json);
}

}  // namespace stguard::cli
