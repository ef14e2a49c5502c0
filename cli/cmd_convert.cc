// SPDX-License-Identifier: Apache-2.0
// stguard convert IN OUT --dtype BF16|F16|F32: rewrite the floating tensors of IN (F64,
// F32, F16, BF16) to the given dtype, round to nearest even, and write OUT canonically.
//
// Other tensors (integers, BOOL, the 8-bit and smaller float formats, C64) and the
// metadata are copied unchanged. The data is converted as it is streamed into a
// temporary file beside OUT, which replaces OUT only once complete and synced; peak
// memory does not depend on the data size, and OUT may be IN.
//
// stguard convert IN OUT [--key NAME]... [--drop-aliases] [--max-output-ratio N]: IN a
// PyTorch checkpoint (format detected from its bytes), OUT safetensors; IN a folder with
// pytorch_model.bin.index.json: OUT a folder of shards and model.safetensors.index.json
// (torch_checkpoint.h).
//
// Every conversion, of any format, returns a ConvertResult (convert_result.h) instead of
// printing: --json changes how the one result is printed, never what it is.
#include <sys/stat.h>

#include <cstdio>
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

constexpr char kConvertUsage[] =
    "usage: stguard convert IN.safetensors OUT|- --dtype BF16|F16|F32\n"
    "       stguard convert IN.bin|.pt|.pth|.ckpt OUT.safetensors [--key NAME]...\n"
    "                       [--drop-aliases] [--max-output-ratio N] [--dtype D]\n"
    "       stguard convert DIR OUTDIR [--drop-aliases] [--allow-external-symlinks]\n"
    "                       [--dtype D] (DIR: pytorch_model.bin[.index.json]; OUTDIR new\n"
    "                       or empty, created with its parents)\n"
    "       stguard convert IN.npy OUT.safetensors [--name NAME] [--dtype D]\n"
    "       stguard convert IN.npz OUT.safetensors [--dtype D]\n"
    "       stguard convert IN.gguf OUT.safetensors|OUTDIR [--dtype BF16|F16|F32]\n"
    "                       [--all-metadata]   (OUTDIR: a split model's first part)\n"
    "  --dtype BF16|F16|F32  the dtype floating tensors (F64, F32, F16, BF16) become\n"
    "  --key NAME            select root[NAME] as the state dict; repeat for deeper levels\n"
    "  --drop-aliases        keep one name per tied tensor (the first); list the others\n"
    "  --allow-external-symlinks  read shards in DIR that link out of it\n"
    "  --max-output-ratio N  refuse views asking for more than N x the file's size in\n"
    "                        output bytes (default 4; 0: no bound)\n"
    "  --name NAME           a .npy IN's tensor name (default: its file name without .npy)\n"
    "  --all-metadata        keep a GGUF IN's metadata arrays longer than 1024 elements\n"
    "  --json                one JSON result: IN's verdict, the files written, their tensors\n";

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
                PrintableText(out) + ": " + std::to_string(report.num_tensors) +
                    " tensors in " + std::to_string(report.written.size()) + " files (" +
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
  if (out == "-") {
    return ConvertUnusable(in, "a torch checkpoint converts to a file or folder, not to "
                               "standard output");
  }
  if (IsDirectory(in)) {
    if (!options.key_path.empty()) {
      return ConvertUnusable(in, "--key selects inside one checkpoint, not in a folder");
    }
    return ConvertTorchFolderTo(in, out, convert_options, json);
  }
  if (convert_options.allow_external_symlinks) {
    return ConvertUnusable(in, "--allow-external-symlinks applies to a folder, not one file");
  }
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
                PrintableText(out) + ": " + std::to_string(writer.num_tensors()) +
                    " tensors from a " + std::string(TorchFormatName(checkpoint->format())) +
                    " torch checkpoint");
  result.details = DroppedLines(dropped);
  return result;
}

// LooksLikeTorch says whether `path` is a folder or a file whose bytes are a torch format.
bool LooksLikeTorch(const std::string& path) {
  if (IsDirectory(path)) return true;
  // A ZIP that is not PyTorch's still goes to the torch reader, whose errors say why.
  const Result<Format> format = SniffFile(path);
  return format.ok() && (IsPickleBearing(*format) || *format == Format::kZip);
}


}  // namespace

namespace {

// ConvertArguments is what `convert` was asked to do, its options read and checked.
struct ConvertArguments {
  std::string in;
  std::string out;
  std::string dtype_name;  // empty: IN is a torch checkpoint or folder
  bool has_max_output_ratio = false;
  std::string npy_name;  // --name: only for a .npy IN, which RunConvert hands on first
  bool all_metadata = false;  // only for a GGUF IN, which RunConvert hands on first
  TorchOptions torch_options;
  TorchConvertOptions convert_options;
};

// ParseConvertArguments reads the options and operands; a usage error is printed and its
// exit status returned.
std::optional<int> ParseConvertArguments(Args args, ConvertArguments* out) {
  std::string max_output_ratio;
  const Flag flags[] = {
      {"--drop-aliases", &out->convert_options.drop_aliases},
      {"--allow-external-symlinks", &out->convert_options.allow_external_symlinks},
      {"--all-metadata", &out->all_metadata}};
  const ValueOption values[] = {{.name = "--dtype", .value = &out->dtype_name},
                                {.name = "--key", .values = &out->torch_options.key_path},
                                {.name = "--name", .value = &out->npy_name},
                                {.name = "--max-output-ratio", .value = &max_output_ratio}};
  std::vector<std::string_view> files;
  if (auto stop = ParseArguments(args, {"convert", kConvertUsage, flags, values}, &files)) {
    return *stop;
  }
  if (files.size() != 2) {
    std::fputs(kConvertUsage, stderr);
    return kExitUsage;
  }
  out->in = std::string(files[0]);
  out->out = std::string(files[1]);
  out->has_max_output_ratio = !max_output_ratio.empty();
  if (out->has_max_output_ratio) {
    const std::optional<uint64_t> ratio = ParseCount(max_output_ratio);
    if (!ratio) {
      std::fprintf(stderr, "stguard convert: --max-output-ratio takes a count, not '%s'\n%s",
                   PrintableText(max_output_ratio).c_str(), kConvertUsage);
      return kExitUsage;
    }
    out->torch_options.max_output_ratio = *ratio;
  }
  return std::nullopt;
}

// TorchOnlyFlag names the first option given that only a torch input uses, or null.
const char* TorchOnlyFlag(const ConvertArguments& arguments) {
  if (!arguments.torch_options.key_path.empty()) return "--key";
  if (arguments.convert_options.drop_aliases) return "--drop-aliases";
  if (arguments.convert_options.allow_external_symlinks) return "--allow-external-symlinks";
  if (arguments.has_max_output_ratio) return "--max-output-ratio";
  return nullptr;
}

// TorchOnlyFlagUnusable is the result of a flag only a torch input uses, given for a
// safetensors IN.
ConvertResult TorchOnlyFlagUnusable(const std::string& in, const char* flag) {
  return ConvertUnusable(in, std::string(flag) + " applies to a PyTorch checkpoint or "
                                                 "folder, not to a safetensors IN");
}

// ConvertWithoutDtype converts a torch checkpoint or folder; IN that is neither is a usage
// error (a safetensors file, which needs --dtype) or invalid.
ConvertResult ConvertWithoutDtype(const ConvertArguments& arguments, bool json) {
  const std::string& in = arguments.in;
  if (!LooksLikeTorch(in)) {
    Result<std::unique_ptr<MappedFile>> file = MappedFile::Open(in);
    if (!file.ok()) return ConvertFailed(in, in, file.error(), Verdict::kError);
    // A valid safetensors IN without --dtype is a usage error (the option is missing);
    // any other bytes are not a checkpoint stguard can convert.
    if (Checkpoint::Open(in).ok()) {
      if (const char* flag = TorchOnlyFlag(arguments)) return TorchOnlyFlagUnusable(in, flag);
      return ConvertUnusable(in, "a safetensors IN needs --dtype", kConvertUsage);
    }
    return ConvertFailed(in, in,
                         Error{ErrorCode::kNotATorchCheckpoint, 0,
                               "neither a torch checkpoint nor a safetensors file"});
  }
  if (IsDirectory(in) && arguments.has_max_output_ratio) {
    // A folder's shards are converted with the default bound (ConvertTorchFolder).
    return ConvertUnusable(in, "--max-output-ratio applies to one checkpoint, not a folder");
  }
  return ConvertTorch(in, arguments.out, arguments.torch_options, arguments.convert_options,
                      json);
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
  if (to_stdout) {
    if (json) {
      return ConvertUnusable(in, "--json prints the result on standard output: OUT cannot "
                                 "be -");
    }
    if (const std::string refusal = StdoutRefusal(); !refusal.empty()) {
      return ConvertUnusable(in, refusal);
    }
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
                    std::to_string(checkpoint->num_tensors()) + " tensors converted to " +
                    std::string(DtypeName(target)));
  // The summary goes to stderr when the file itself goes to standard output.
  result.summary_on_stderr = to_stdout;
  return result;
}

// RunConvertRequest runs one conversion (progress shown unless `json`) and returns its
// outcome, for PrintConvertResult to print in either mode.
ConvertResult RunConvertRequest(Args args, bool json) {
  // A .npy, .npz or GGUF IN (told by its content) has its own options: npy_output.cc,
  // gguf_output.cc.
  if (!args.empty() && !IsOption(args[0])) {
    switch (SniffFile(std::string(args[0])).value_or(Format::kUnknown)) {
      case Format::kNpy: return ConvertNpy(args);
      case Format::kNpz: return ConvertNpz(args);
      case Format::kGguf: return ConvertGgufCommand(args);
      default: break;
    }
  }
  ConvertArguments arguments;
  if (std::optional<int> stop = ParseConvertArguments(args, &arguments)) {
    return ConvertStopped(*stop);
  }
  const std::string& in = arguments.in;
  if (arguments.all_metadata) {
    return ConvertUnusable(in, "--all-metadata applies to a GGUF IN (given as the first "
                               "argument)");
  }
  if (!arguments.npy_name.empty()) {
    return ConvertUnusable(in, "--name applies to a .npy IN (given as the first argument)");
  }
  std::optional<Dtype> target;
  if (!arguments.dtype_name.empty()) {
    target = ParseDtype(arguments.dtype_name);
    if (!target || !IsConversionTarget(*target)) {
      return ConvertUnusable(in, "--dtype must be BF16, F16 or F32, not '" +
                                     PrintableText(arguments.dtype_name) + "'");
    }
  }
  // --dtype applies to every input convert reads: a torch checkpoint's floating tensors
  // are converted as they are streamed.
  if (target && LooksLikeTorch(in)) arguments.convert_options.dtype = target;
  if (!target || LooksLikeTorch(in)) return ConvertWithoutDtype(arguments, json);
  if (const char* flag = TorchOnlyFlag(arguments)) return TorchOnlyFlagUnusable(in, flag);
  return ConvertSafetensors(in, arguments.out, *target, json);
}

}  // namespace

int RunConvert(Args args) {
  // --json applies to every input, so it is taken here, before the formats' own parsers.
  std::vector<std::string_view> rest;
  bool json = false;
  for (std::string_view arg : args) {
    if (arg == "--json") {
      json = true;
    } else {
      rest.push_back(arg);
    }
  }
  return PrintConvertResult(RunConvertRequest(rest, json), json);
}

}  // namespace stguard::cli
