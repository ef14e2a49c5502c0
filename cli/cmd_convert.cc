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
#include <sys/stat.h>

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "arguments.h"
#include "commands.h"
#include "convert_json.h"
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

void PrintDropped(const std::vector<TorchDroppedAlias>& dropped) {
  for (const TorchDroppedAlias& alias : dropped) {
    PrintLine("dropped alias '" + PrintableText(alias.dropped) + "' (same tensor as '" +
              PrintableText(alias.kept) + "')");
  }
}

int ConvertTorch(const std::string& in, const std::string& out, const TorchOptions& options,
                 const TorchConvertOptions& convert_options) {
  if (out == "-") {
    std::fputs("stguard convert: a torch checkpoint converts to a file or folder, not to "
               "standard output\n", stderr);
    return kExitUsage;
  }
  if (IsDirectory(in)) {
    if (!options.key_path.empty()) {
      std::fputs("stguard convert: --key selects inside one checkpoint, not in a folder\n",
                 stderr);
      return kExitUsage;
    }
    TorchFolderReport report;
    // The total is not known before the shards are read: the bar shows bytes and rate.
    ProgressBar progress(/*total=*/0, ShowProgress(/*json=*/false, /*quiet=*/false));
    TorchConvertOptions with_progress = convert_options;
    with_progress.progress = [&progress](uint64_t bytes) { progress.Add(bytes); };
    const Error error = ConvertTorchFolder(in, out, with_progress, &report);
    progress.Clear();
    if (!error.ok()) {
      // An error about OUTDIR (or a folder on its way) names it first; others name DIR.
      const bool about_out = IsIoError(error) && error.context.starts_with(out);
      PrintFileError("convert", about_out ? out : in, error);
      return IsIoError(error) ? kExitUsage : kExitInvalid;
    }
    PrintDropped(report.dropped);
    PrintLine(PrintableText(out) + ": " + std::to_string(report.num_tensors) + " tensors in " +
              std::to_string(report.written.size()) + " files (" +
              std::to_string(report.total_size) + " data bytes)");
    return kExitOk;
  }
  if (convert_options.allow_external_symlinks) {
    std::fputs("stguard convert: --allow-external-symlinks applies to a folder, not one file\n",
               stderr);
    return kExitUsage;
  }
  Result<TorchCheckpoint> checkpoint = TorchCheckpoint::Open(in, options);
  if (!checkpoint.ok() && checkpoint.error().code == ErrorCode::kNotAStateDict &&
      options.key_path.empty()) {
    // Not refused: the tensors sit under a key. Say which keys lead to them.
    const PickleFileReport report = JudgePickleFile(in, options);
    if (report.verdict == FileVerdict::kNeedsKey && !report.key_paths.empty()) {
      PrintErrorLine("stguard convert: " + PrintableText(in) + ": " + DescribeVerdict(report));
      return kExitInvalid;
    }
  }
  if (!checkpoint.ok()) {
    PrintFileError("convert", in, checkpoint.error());
    return IsIoError(checkpoint.error()) ? kExitUsage : kExitInvalid;
  }
  Writer writer;
  std::vector<TorchDroppedAlias> dropped;
  if (Error error = AddTorchTensors(*checkpoint, convert_options, &writer, &dropped);
      !error.ok()) {
    PrintFileError("convert", in, error);
    return kExitInvalid;
  }
  PrintLeftoverNotes("convert", out);
  const Result<uint64_t> size = writer.FileSize();
  ProgressBar progress(size.ok() ? *size : 0, ShowProgress(/*json=*/false, /*quiet=*/false));
  writer.set_progress([&progress](uint64_t bytes) { progress.Add(bytes); });
  const Error written = writer.WriteToFile(out);
  progress.Clear();
  if (const Error& error = written; !error.ok()) {
    // A checksum failure surfaces while streaming; the output is untouched either way.
    PrintFileError("convert", error.code == ErrorCode::kZipChecksum ? in : out, error);
    return IsIoError(error) ? kExitUsage : kExitInvalid;
  }
  PrintDropped(dropped);
  PrintLine(PrintableText(out) + ": " + std::to_string(writer.num_tensors()) +
            " tensors from a " + std::string(TorchFormatName(checkpoint->format())) +
            " torch checkpoint");
  return kExitOk;
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

// ConvertWithoutDtype converts a torch checkpoint or folder; IN that is neither is a usage
// error (a safetensors file, which needs --dtype) or invalid.
int ConvertWithoutDtype(const ConvertArguments& arguments) {
  const std::string& in = arguments.in;
  if (!LooksLikeTorch(in)) {
    Result<std::unique_ptr<MappedFile>> file = MappedFile::Open(in);
    if (!file.ok()) {
      PrintFileError("convert", in, file.error());
      return kExitUsage;
    }
    // A valid safetensors IN without --dtype is a usage error (the option is missing);
    // any other bytes are not a checkpoint stguard can convert.
    if (Checkpoint::Open(in).ok()) {
      if (const char* flag = TorchOnlyFlag(arguments)) {
        std::fprintf(stderr,
                     "stguard convert: %s applies to a PyTorch checkpoint or folder, not to a "
                     "safetensors IN\n", flag);
      } else {
        std::fprintf(stderr, "stguard convert: a safetensors IN needs --dtype\n%s",
                     kConvertUsage);
      }
      return kExitUsage;
    }
    PrintFileError("convert", in,
                   Error{ErrorCode::kNotATorchCheckpoint, 0,
                         "neither a torch checkpoint nor a safetensors file"});
    return kExitInvalid;
  }
  if (IsDirectory(in) && arguments.has_max_output_ratio) {
    // A folder's shards are converted with the default bound (ConvertTorchFolder).
    std::fputs("stguard convert: --max-output-ratio applies to one checkpoint, not a "
               "folder\n", stderr);
    return kExitUsage;
  }
  return ConvertTorch(in, arguments.out, arguments.torch_options, arguments.convert_options);
}

// ConvertSafetensors rewrites IN's floating tensors to `target` into OUT (or "-").
int ConvertSafetensors(const std::string& in, const std::string& out, Dtype target) {
  const Result<Checkpoint> checkpoint = Checkpoint::Open(in);
  if (!checkpoint.ok()) {
    PrintFileError("convert", in, checkpoint.error());
    return IsIoError(checkpoint.error()) ? kExitUsage : kExitInvalid;
  }
  // Streamed (WriteConverted*): the same bytes as AddConvertedCheckpoint and a Writer, in
  // memory that does not grow with the header's entries.
  size_t num_converted = 0;
  const bool to_stdout = out == "-";
  if (to_stdout) {
    if (const std::string refusal = StdoutRefusal(); !refusal.empty()) {
      std::fputs(("stguard convert: " + refusal + "\n").c_str(), stderr);
      return kExitUsage;
    }
    StdoutSink sink;
    if (Error error = WriteConverted(*checkpoint, target, sink, &num_converted); !error.ok()) {
      PrintFileError("convert", "-", error);
      return kExitUsage;
    }
  } else {
    PrintLeftoverNotes("convert", out);
    // The output's size is known only once its header is planned: bytes and rate show.
    ProgressBar progress(/*total=*/0, ShowProgress(/*json=*/false, /*quiet=*/false));
    const Error error = WriteConvertedFile(*checkpoint, target, out, &num_converted,
                                           [&progress](uint64_t bytes) { progress.Add(bytes); });
    progress.Clear();
    if (!error.ok()) {
      // A valid checkpoint always converts, so any failure here is about reading IN or
      // writing OUT: the output is untouched either way.
      PrintFileError("convert", out, error);
      return kExitUsage;
    }
  }
  // The summary goes to stderr when the file itself goes to standard output.
  (to_stdout ? PrintErrorLine : PrintLine)(
      PrintableText(out) + ": " + std::to_string(num_converted) + " of " +
      std::to_string(checkpoint->num_tensors()) + " tensors converted to " +
      std::string(DtypeName(target)));
  return kExitOk;
}

// RunConvertText runs one conversion and prints its outcome for a person.
int RunConvertText(Args args) {
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
  if (std::optional<int> stop = ParseConvertArguments(args, &arguments)) return *stop;
  if (arguments.all_metadata) {
    std::fputs("stguard convert: --all-metadata applies to a GGUF IN (given as the first "
               "argument)\n", stderr);
    return kExitUsage;
  }
  if (!arguments.npy_name.empty()) {
    std::fputs("stguard convert: --name applies to a .npy IN (given as the first argument)\n",
               stderr);
    return kExitUsage;
  }
  std::optional<Dtype> target;
  if (!arguments.dtype_name.empty()) {
    target = ParseDtype(arguments.dtype_name);
    if (!target || !IsConversionTarget(*target)) {
      std::fprintf(stderr, "stguard convert: --dtype must be BF16, F16 or F32, not '%s'\n",
                   PrintableText(arguments.dtype_name).c_str());
      return kExitUsage;
    }
  }
  // --dtype applies to every input convert reads: a torch checkpoint's floating tensors
  // are converted as they are streamed.
  if (target && LooksLikeTorch(arguments.in)) arguments.convert_options.dtype = target;
  if (!target || LooksLikeTorch(arguments.in)) return ConvertWithoutDtype(arguments);
  if (const char* flag = TorchOnlyFlag(arguments)) {
    std::fprintf(stderr,
                 "stguard convert: %s applies to a PyTorch checkpoint or folder, not to a "
                 "safetensors IN\n", flag);
    return kExitUsage;
  }
  return ConvertSafetensors(arguments.in, arguments.out, *target);
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
  return json ? ConvertWithJson(rest, RunConvertText) : RunConvertText(args);
}

}  // namespace stguard::cli
