// SPDX-License-Identifier: Apache-2.0
// ConvertPath: the one conversion entry. IN's format is told by its bytes once; its adapter
// runs; OUT "-" is standard output for every single-file format; OUT that is IN is refused
// before anything is written (stguard/conversion.h).
#include <sys/stat.h>

#include <stdlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "base/prefixed_source.h"
#include "base/test_pause.h"
#include "convert/checkpoint_sources.h"
#include "convert/conversion_verdict.h"
#include "convert/pipeline.h"
#include "format/open_with_head.h"
#include "stguard/conversion.h"
#include "stguard/file_verdict.h"
#include "stguard/gguf.h"
#include "stguard/io_error.h"
#include "stguard/mapped_file.h"
#include "stguard/npy_convert.h"
#include "stguard/plural.h"
#include "stguard/reader.h"
#include "sniff/sniff_source.h"
#include "torch/torch_sources.h"
#include "write/gguf_sources.h"

namespace stguard {
namespace {

// Usage is an error the request makes, whatever IN holds: nothing is judged about IN.
Error Usage(ConvertReport* report, std::string sentence) {
  report->usage = true;
  return Error{ErrorCode::kInvalidArgument, 0, "the conversion cannot be done as asked",
               std::move(sentence)};
}

// Failed records whether `error` is about writing OUT: an I/O error that names it.
Error Failed(Error error, const std::string& out, ConvertReport* report) {
  report->about_output =
      IsIoError(error, OutOfMemoryIs::kIoError) && error.context.starts_with(out);
  return error;
}

// SniffedInput is IN as the sniff left it: the file it opened (unmapped; null for a folder,
// a ZIP and a path that could not be opened) and the first bytes it read.
struct SniffedInput {
  std::unique_ptr<MappedFile> file;
  std::vector<std::byte> head;
};

std::string DtypeText(const ConvertOptions& options) {
  return std::string(DtypeName(*options.dtype));
}

// SafetensorsFile converts a safetensors file through the pipeline as streamed sources
// (CheckpointSources): its header's entries are what a hostile file makes numerous, so
// they are streamed from the checkpoint, never listed (StreamedSources says why).
// The checkpoint reads from the file the sniff opened, after the head the sniff read
// (SniffedInput): IN is opened once, its bytes read once, all from one file.
Error SafetensorsFile(const std::string& in, SniffedInput& sniffed, const std::string& out,
                      const ConvertOptions& options, ConvertReport* report) {
  if (sniffed.file == nullptr) {
    Result<std::unique_ptr<MappedFile>> file = MappedFile::OpenUnmapped(in);
    if (!file.ok()) return file.error();
    sniffed.file = std::move(*file);
  }
  const Result<Checkpoint> checkpoint =
      OpenCheckpointWithHead(std::move(sniffed.file), sniffed.head);
  if (!checkpoint.ok()) return checkpoint.error();
  // An invalid file is invalid whatever was asked; a valid one needs --dtype.
  if (!options.dtype) return Usage(report, "a safetensors IN needs --dtype BF16|F16|F32");
  CheckpointSources sources(*checkpoint);
  const ConversionPlan plan{options.dtype, options.progress};
  ConvertedFile done;
  const Error error = out == "-" ? ConvertToSink(sources, plan, *options.stdout_sink, &done)
                                 : Convert(sources, plan, out, &done);
  // A valid checkpoint always converts: a failure is about reading IN or writing OUT.
  if (!error.ok()) {
    report->about_output = true;
    return error;
  }
  report->num_tensors = done.num_tensors;
  report->num_converted = done.num_converted;
  report->summary = std::to_string(done.num_converted) + " of " +
                    Plural(report->num_tensors, "tensor") + " converted to " +
                    DtypeText(options);
  return {};
}

Error TorchFile(const std::string& in, const std::string& out, const ConvertOptions& options,
                ConvertReport* report) {
  TorchOptions torch;
  torch.key_path = options.key_path;
  if (options.max_output_ratio) torch.max_output_ratio = *options.max_output_ratio;
  Result<TorchCheckpoint> checkpoint = TorchCheckpoint::Open(in, torch);
  if (!checkpoint.ok()) {
    Error error = checkpoint.error();
    if (error.code == ErrorCode::kNotAStateDict && options.key_path.empty()) {
      // As `check` says it: the keys that lead to the tensors.
      const PickleFileReport verdict = JudgePickleFile(in, torch);
      if (verdict.verdict == FileVerdict::kNeedsKey && !verdict.key_paths.empty()) {
        error.context = DescribeVerdict(verdict);
        report->needs_key = true;
      }
    }
    return error;
  }
  ConvertedFile done;
  const ConversionPlan plan{options.dtype, options.progress};
  if (Error error = Convert(TorchSources(*checkpoint, options.drop_aliases, &report->dropped),
                            plan, out, &done);
      !error.ok()) {
    // Reading IN was checked when it opened: an I/O error now is writing OUT's. A CRC-32
    // failure, found as the data streams, is about IN.
    report->about_output = IsIoError(error, OutOfMemoryIs::kIoError);
    return error;
  }
  report->num_tensors = done.num_tensors;
  report->num_converted = done.num_converted;
  report->summary = Plural(done.num_tensors, "tensor") + " from a " +
                    std::string(TorchFormatName(checkpoint->format())) + " torch checkpoint";
  return {};
}

// FolderSummary ends a folder's summary: its files and data bytes.
std::string FolderSummary(const ConvertReport& report) {
  return " in " + Plural(report.written.size(), "file") + " (" +
         std::to_string(report.total_size) + " data bytes)";
}

Error TorchFolder(const std::string& in, const std::string& out, const ConvertOptions& options,
                  ConvertReport* report) {
  TorchConvertOptions convert;
  convert.drop_aliases = options.drop_aliases;
  convert.allow_external_symlinks = options.allow_external_symlinks;
  convert.dtype = options.dtype;
  convert.progress = options.progress;
  TorchFolderReport done;
  if (Error error = ConvertTorchFolder(in, out, convert, &done); !error.ok()) {
    return Failed(error, out, report);
  }
  report->written = std::move(done.written);
  report->num_tensors = done.num_tensors;
  report->num_converted = done.num_converted;
  report->total_size = done.total_size;
  report->dropped = std::move(done.dropped);
  report->summary = Plural(report->num_tensors, "tensor") + FolderSummary(*report);
  return {};
}

// NothingToConvert adds to a folder's kNoSafetensorsInFolder that it holds no PyTorch
// weights either: the folder is neither kind convert takes.
Error NothingToConvert(Error error) {
  if (error.code == ErrorCode::kNoSafetensorsInFolder) {
    error.context += " (nor pytorch_model.bin or pytorch_model.bin.index.json)";
  }
  return error;
}

Error SafetensorsFolder(const std::string& in, const std::string& out,
                        const ConvertOptions& options, ConvertReport* report) {
  // The option rule lets --drop-aliases reach every folder; only a PyTorch one has aliases.
  if (options.drop_aliases) {
    return Usage(report, "--drop-aliases applies to a PyTorch folder, not to a safetensors "
                         "folder");
  }
  DirOptions dir_options;
  dir_options.allow_external_symlinks = options.allow_external_symlinks;
  if (!options.dtype) {
    // An invalid folder is invalid whatever was asked; a valid one needs --dtype.
    const Result<CheckpointDir> dir = CheckpointDir::Open(in, dir_options);
    if (!dir.ok()) return NothingToConvert(dir.error());
    return Usage(report, "a safetensors folder IN needs --dtype BF16|F16|F32");
  }
  SafetensorsFolderReport done;
  if (Error error = ConvertSafetensorsFolder(in, out, *options.dtype, dir_options,
                                             options.progress, &done);
      !error.ok()) {
    return Failed(NothingToConvert(error), out, report);
  }
  report->written = std::move(done.written);
  report->num_tensors = done.num_tensors;
  report->num_converted = done.num_converted;
  report->total_size = done.total_size;
  report->summary = std::to_string(done.num_converted) + " of " +
                    Plural(done.num_tensors, "tensor") + " converted to " +
                    DtypeText(options) + FolderSummary(*report);
  return {};
}

Error NpyFile(const std::string& in, const std::string& out, const ConvertOptions& options,
              ConvertReport* report) {
  std::string name = options.name;
  if (name.empty()) {
    name = std::filesystem::path(in).filename().string();
    if (name.size() > 4 && name.ends_with(".npy")) name.resize(name.size() - 4);
  }
  size_t converted = 0;
  if (Error error =
          NpyArrayToSafetensors(in, out, name, options.dtype, options.progress, &converted);
      !error.ok()) {
    return Failed(error, out, report);
  }
  report->num_tensors = 1;
  report->num_converted = converted;
  report->summary = "1 tensor ('" + name + "') from an npy array";
  return {};
}

Error NpzFile(const std::string& in, const std::string& out, const ConvertOptions& options,
              ConvertReport* report) {
  if (Error error = NpzToSafetensors(in, out, options.dtype, &report->num_tensors,
                                     options.progress, &report->num_converted);
      !error.ok()) {
    return Failed(error, out, report);
  }
  report->summary = Plural(report->num_tensors, "tensor") + " from an npz archive";
  return {};
}

// GgufSingle converts one GGUF file that is no part of a split model through the
// pipeline: its sources (write/gguf_sources.h), the target dtype by the one decorator.
Error GgufSingle(const gguf::GgufFile& file, const std::string& in, const std::string& out,
                 const GgufConvertOptions& gguf, const ConvertOptions& options,
                 GgufConvertReport* done) {
  Result<std::unique_ptr<MappedFile>> data = MappedFile::OpenUnmapped(in);
  if (!data.ok()) return data.error();
  Result<GgufSourceSet> set = GgufSources(file, **data, gguf, done);
  if (!set.ok()) return set.error();
  ConvertedFile written;
  return Convert(std::move(set->sources), ConversionPlan{options.dtype, options.progress}, out,
                 &written);
}

Error GgufFile(const std::string& in, const std::string& out, const ConvertOptions& options,
               ConvertReport* report) {
  GgufConvertOptions gguf;
  gguf.all_metadata = options.all_metadata;
  gguf.dtype = options.dtype;
  GgufConvertReport done;
  Result<gguf::GgufFile> file = gguf::GgufFile::Open(in);
  if (!file.ok()) return file.error();
  // A split model's part: the whole set converts into a folder, a later part is refused.
  const Error error = file->FindKey("split.count") != nullptr
                          ? ConvertGguf(in, out, gguf, &done)
                          : GgufSingle(*file, in, out, gguf, options, &done);
  if (!error.ok()) {
    report->about_output = IsIoError(error, OutOfMemoryIs::kIoError);
    return error;
  }
  report->written = done.written.empty() ? std::vector<std::string>{out} : done.written;
  report->num_tensors = done.num_tensors;
  report->num_converted = done.num_converted;
  report->total_size = done.total_size;
  report->omitted = std::move(done.omitted);
  report->summary = Plural(done.num_tensors, "tensor") + " (" +
                    std::to_string(done.num_dequantized) + " dequantized) in " +
                    Plural(report->written.size(), "file") + ", " +
                    std::to_string(done.total_size) + " data bytes";
  return {};
}

// ConvertTo runs IN's adapter, writing to the path OUT (for a safetensors file, "-" too).
// `sniffed` is IN as the sniff opened and read it. *pickle_folder tells whether IN was
// converted as a PyTorch folder (its members are pickle-bearing shards), for the verdict
// of a failure.
Error ConvertTo(const std::string& in, SniffedInput& sniffed, const std::string& out,
                const ConvertOptions& options, ConvertReport* report, bool* pickle_folder) {
  const PathFormat format = report->input;
  if (format.is_folder) {
    struct stat info;
    // lstat: a link there, even dangling, is the PyTorch converter's to judge.
    *pickle_folder = ::lstat((in + "/pytorch_model.bin.index.json").c_str(), &info) == 0 ||
                     ::lstat((in + "/pytorch_model.bin").c_str(), &info) == 0;
    return *pickle_folder ? TorchFolder(in, out, options, report)
                          : SafetensorsFolder(in, out, options, report);
  }
  if ((format.set() & FormatsOfKind(Format::kPytorchZip)) != 0) {
    return TorchFile(in, out, options, report);
  }
  switch (format.format) {
    case Format::kSafetensors: return SafetensorsFile(in, sniffed, out, options, report);
    case Format::kNpy: return NpyFile(in, out, options, report);
    case Format::kNpz: return NpzFile(in, out, options, report);
    case Format::kGguf: return GgufFile(in, out, options, report);
    default: break;
  }
  Result<std::unique_ptr<MappedFile>> file = MappedFile::Open(in);
  if (!file.ok()) return file.error();
  return Error{ErrorCode::kNotATorchCheckpoint, 0,
               "not a format stguard converts (safetensors, PyTorch, GGUF, .npy, .npz)",
               "its bytes are " + std::string(FormatName(format.format))};
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

// CopyFile streams the file at `path` into `sink`.
Error CopyFile(const std::string& path, ByteSink& sink) {
  Result<std::unique_ptr<MappedFile>> file = MappedFile::Open(path);
  if (!file.ok()) return file.error();
  return sink.Write((*file)->bytes());
}

// ThroughTemporary converts IN into a file in a private temporary folder, then copies it
// to the standard output sink: for the writers that seek in their output (GGUF, PyTorch,
// .npy, .npz). The folder is removed whatever happens; messages say "-", never its path.
Error ThroughTemporary(const std::string& in, const ConvertOptions& options,
                       ConvertReport* report) {
  const char* tmpdir = std::getenv("TMPDIR");
  std::string folder = std::string(tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp") +
                       "/stguard-convert-XXXXXX";
  if (::mkdtemp(folder.data()) == nullptr) {
    report->about_output = true;
    return Error{ErrorCode::kIoError, 0, "cannot create a temporary folder for standard output",
                 std::strerror(errno)};
  }
  const std::string temporary = folder + "/out.safetensors";
  bool pickle_folder = false;  // a folder never converts to "-"
  // A safetensors file streams to "-" itself: nothing sniffed to hand on here.
  SniffedInput none;
  Error error = ConvertTo(in, none, temporary, options, report, &pickle_folder);
  std::error_code ignored;
  if (error.ok() && std::filesystem::is_directory(temporary, ignored)) {
    error = Usage(report, "a split GGUF model converts to a folder: OUT cannot be -");
  } else if (error.ok()) {
    error = CopyFile(temporary, *options.stdout_sink);
    report->about_output = !error.ok();
  }
  std::filesystem::remove_all(folder, ignored);
  ReplaceText(temporary, "-", &error.context);
  ReplaceText(temporary, "-", &report->summary);
  report->written = {"-"};
  return error;
}

// kMaxHandedHead bounds the sniff's bytes kept for the adapter (SniffInput).
constexpr size_t kMaxHandedHead = size_t{64} << 10;

// StartsLikeZip says whether `head` starts as a ZIP archive does ("PK": a local file
// header or, for an empty archive, the end record), the archives SniffFormat tells apart
// by their central directory.
bool StartsLikeZip(std::span<const std::byte> head) {
  return head.size() >= 2 && head[0] == std::byte{'P'} && head[1] == std::byte{'K'};
}

// SniffInput tells what IN is (FormatOfPath) from the bytes the sniff rules look at, read
// by ranges (SniffSourcePrefix), never by a mapping, so that the adapter maps or reads IN
// once; *sniffed keeps the open file and its first bytes read, for the adapter that starts
// from them (a safetensors file's prefix and header). A ZIP is the exception: read by
// ranges, its tail (64 KiB) would be copied onto the heap, which keeps those pages under
// the whole conversion's peak, so it is sniffed through a mapping as its reader maps it.
Result<PathFormat> SniffInput(const std::string& in, SniffedInput* sniffed) {
  struct stat info;
  if (::stat(in.c_str(), &info) != 0 || S_ISDIR(info.st_mode)) return FormatOfPath(in);
  Result<std::unique_ptr<MappedFile>> file = MappedFile::OpenUnmapped(in);
  if (!file.ok()) return file.error();
  std::vector<std::byte>* head = &sniffed->head;
  std::vector<std::byte> first(static_cast<size_t>(std::min<uint64_t>((*file)->size(), 512)));
  if (Error error = (*file)->ReadAt(0, first); !error.ok()) return error;
  if (StartsLikeZip(first)) return FormatOfPath(in);
  // The first block is served from memory: every byte is read once.
  const PrefixedSource prefixed(**file, first);
  const Result<Format> format = SniffSourcePrefix(prefixed, head);
  if (!format.ok()) return format.error();
  // The sniff reads a safetensors header whole when its length spells a pickle opcode;
  // kept while the checkpoint parses its own copy, it would break the hostile-header bound
  // (peak beyond N < 2N). Past kMaxHandedHead the reader reads it again instead.
  if (head->size() > kMaxHandedHead) {
    head->resize(kMaxHandedHead);
    head->shrink_to_fit();
  }
  sniffed->file = std::move(*file);
  return FormatOfPath(in, *format);
}

// ConvertAsAsked is ConvertPath before its verdict: the request checked, the format told
// once, the adapter run.
Error ConvertAsAsked(const std::string& in, const std::string& out,
                     const ConvertOptions& options, ConvertReport* report, bool* pickle_folder) {
  // IN's format first, so that every result, a usage error's too, names it.
  SniffedInput sniffed;
  const Result<PathFormat> found = SniffInput(in, &sniffed);
  PauseForTestingAt("sniffed");
  report->input = found.ok() ? *found : PathFormat{};  // the adapter's reader says why
  if (const Error error = CheckPlan(ConversionPlan{options.dtype, {}}); !error.ok()) {
    return Usage(report, std::string(error.message) +
                             (error.context.empty() ? "" : ": " + error.context));
  }
  if (std::string inapplicable = InapplicableConvertOption(options, report->input, in);
      !inapplicable.empty()) {
    return Usage(report, std::move(inapplicable));
  }
  const bool safetensors_file =
      !report->input.is_folder && report->input.format == Format::kSafetensors;
  if (out == "-") {
    if (options.stdout_sink == nullptr) {
      return Usage(report, "OUT is - (standard output) but no output stream was given");
    }
    if (report->input.is_folder) {
      return Usage(report, "a folder converts to a folder: OUT cannot be -");
    }
    if (safetensors_file || !found.ok()) {
      return ConvertTo(in, sniffed, out, options, report, pickle_folder);
    }
    return ThroughTemporary(in, options, report);
  }
  // Only a safetensors file may be converted onto itself (crash-safely, as `canon IN IN`).
  if (!safetensors_file) {
    if (const Error same = CheckOutputIsNotInput(in, out); !same.ok()) {
      return Usage(report, std::string(same.message) + ": " + same.context);
    }
  }
  Error error = ConvertTo(in, sniffed, out, options, report, pickle_folder);
  if (error.ok() && report->written.empty()) report->written = {out};
  return error;
}

}  // namespace

Error ConvertPath(const std::string& in, const std::string& out, const ConvertOptions& options,
                  ConvertReport* report) {
  *report = ConvertReport{};
  bool pickle_folder = false;
  Error error = ConvertAsAsked(in, out, options, report, &pickle_folder);
  return DecideConversionVerdict(in, options, pickle_folder, std::move(error), report);
}

}  // namespace stguard
