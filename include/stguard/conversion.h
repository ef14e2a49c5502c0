// SPDX-License-Identifier: Apache-2.0
// stguard/conversion.h: conversions of whole model folders that only the conversion layer
// (src/convert/, above the readers and the writer) can make.
//
// A SAFETENSORS MODEL FOLDER converts to another dtype as a folder: every shard CheckpointDir
// finds (stguard/checkpoint_dir.h: model.safetensors.index.json, a lone index, a single
// model.safetensors, or shards without an index) is rewritten under its own file name with
// WriteConverted (stguard/writer.h: floating tensors to the target, everything else and the
// metadata copied), and the index, when there was one, is rewritten under its own name
// with the same weight map and metadata.total_size the sum of the new tensors' byte sizes.
// Other files of the folder (config.json, tokenizer files) are not copied: the output is
// the weights.
// OUTPUT FOLDER: as ConvertTorchFolder's (stguard/torch_checkpoint.h): new or empty,
// created as `mkdir -p` does, every file staged through the folder's descriptor with
// O_EXCL and O_NOFOLLOW and renamed into place only once all are complete, the index last;
// on any failure nothing this call wrote or created is left. OUT must not be IN
// (CheckOutputIsNotInput).
// MEMORY: the folder's headers (CheckpointDir keeps them), the weight map's names for the
// new index, and the writer's fixed buffers; data is streamed shard by shard.
#ifndef STGUARD_CONVERSION_H_
#define STGUARD_CONVERSION_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stguard/checkpoint_dir.h"
#include "stguard/dtype.h"
#include "stguard/error.h"
#include "stguard/export.h"
#include "stguard/formats.h"
#include "stguard/gguf_convert.h"
#include "stguard/torch_checkpoint.h"
#include "stguard/writer.h"

namespace stguard {

// SafetensorsFolderReport says what ConvertSafetensorsFolder wrote.
struct SafetensorsFolderReport {
  std::vector<std::string> written;  // file names in the output folder, index last
  size_t num_tensors = 0;
  size_t num_converted = 0;          // tensors whose dtype changed
  uint64_t total_size = 0;           // the data bytes written, every shard
};

// ConvertSafetensorsFolder converts the safetensors model folder (or index file) `in` into
// the folder `out_dir`, every floating tensor to `target` (F32, F16 or BF16, else
// kInvalidArgument). Errors are CheckpointDir::Open's for the input (a shard named in the
// context), kIoError for the output folder, WriteConverted's while streaming. `progress`,
// when set, is called with the bytes of each write, as Writer::set_progress's is.
[[nodiscard]] STGUARD_API Error ConvertSafetensorsFolder(
    const std::string& in, const std::string& out_dir, Dtype target, const DirOptions& options,
    const std::function<void(uint64_t bytes)>& progress, SafetensorsFolderReport* report);

// ConvertOptions is everything a conversion of any input can be asked. An option that
// does not apply to IN's format is a usage error (kConvertOptionRules, below).
struct ConvertOptions {
  std::optional<Dtype> dtype;              // F32, F16 or BF16: every input
  std::vector<std::string> key_path;       // a PyTorch file: where its state dict sits
  std::optional<uint64_t> max_output_ratio;  // a PyTorch file: TorchOptions's bound
  bool drop_aliases = false;               // PyTorch: one name per tied tensor
  bool allow_external_symlinks = false;    // folders: links out of IN are read
  std::string name;                        // .npy: the tensor's name (default: the file's)
  bool all_metadata = false;               // GGUF: keep long metadata arrays
  // progress, when set, is called with the bytes of each write (Writer::set_progress).
  std::function<void(uint64_t bytes)> progress;
  // stdout_sink receives the file when OUT is "-" (standard output). It must be set then.
  ByteSink* stdout_sink = nullptr;
};

// OPTIONS AND FORMATS: the one rule saying which option applies to which input. Each row
// is an option (named as the command line spells it), the inputs it applies to, and
// whether a ConvertOptions gives it. ConvertPath refuses, as a usage error before anything
// is read beyond the sniff, the first row (in this order) given for an input outside its
// set: "--key applies to PyTorch, not to safetensors (IN)". The command table's --help
// prints these sets (ConvertOptionFormats); no front end keeps a copy.
struct ConvertOptionRule {
  std::string_view flag;
  FormatSet formats;
  bool (*given)(const ConvertOptions& options);
};
inline constexpr ConvertOptionRule kConvertOptionRules[] = {
    {"--dtype", FormatsWith(&FormatFacts::convertible) | kFolderInput,
     [](const ConvertOptions& o) { return o.dtype.has_value(); }},
    {"--key", FormatsOfKind(Format::kPytorchZip),
     [](const ConvertOptions& o) { return !o.key_path.empty(); }},
    {"--drop-aliases", FormatsOfKind(Format::kPytorchZip) | kFolderInput,
     [](const ConvertOptions& o) { return o.drop_aliases; }},
    {"--max-output-ratio", FormatsOfKind(Format::kPytorchZip),
     [](const ConvertOptions& o) { return o.max_output_ratio.has_value(); }},
    {"--allow-external-symlinks", kFolderInput,
     [](const ConvertOptions& o) { return o.allow_external_symlinks; }},
    {"--name", FormatBit(Format::kNpy), [](const ConvertOptions& o) { return !o.name.empty(); }},
    {"--all-metadata", FormatBit(Format::kGguf),
     [](const ConvertOptions& o) { return o.all_metadata; }},
};

// ConvertOptionFormats returns the inputs the option `flag` applies to (its row of
// kConvertOptionRules), or 0 for a flag with no row.
constexpr FormatSet ConvertOptionFormats(std::string_view flag) {
  for (const ConvertOptionRule& rule : kConvertOptionRules) {
    if (rule.flag == flag) return rule.formats;
  }
  return 0;
}

// InapplicableConvertOption returns the usage sentence for the first option `options`
// gives that does not apply to `input` (IN, named `in` in the sentence), or "" when every
// given option applies. An input no converter reads (an unknown file) refuses no option:
// its reader says what it is not.
STGUARD_API std::string InapplicableConvertOption(const ConvertOptions& options,
                                                  const PathFormat& input,
                                                  const std::string& in);

// ConvertReport says what ConvertPath did, and on failure what the error is about.
struct ConvertReport {
  PathFormat input;                  // what IN was found to be
  std::vector<std::string> written;  // OUT, or the output folder's file names, index last
  size_t num_tensors = 0;
  // num_converted counts, for every format, the tensors whose dtype changed (ChangesDtype);
  // a GGUF block type decoded to F32 (or --dtype) is a change.
  size_t num_converted = 0;
  uint64_t total_size = 0;           // data bytes written (a folder: every shard)
  std::vector<TorchDroppedAlias> dropped;
  std::vector<GgufOmittedKey> omitted;
  std::string summary;               // what was written, for a person ("3 tensors from ...")
  // On failure: usage, the request cannot be done as asked (kInvalidArgument, the sentence
  // in the error's message and context; nothing is judged about IN); about_output, the
  // error is about writing OUT, not about IN; needs_key, a PyTorch file whose tensors sit
  // under a key: the error's context is the static scan's sentence listing the keys.
  bool usage = false;
  bool about_output = false;
  bool needs_key = false;
  // verdict: valid on success; on failure what the failure says about IN, decided where
  // the conversion failed (convert/conversion_verdict.cc), so every front end prints the
  // same: error for a usage error, an error about OUT and I/O; refused when the error's
  // code means "would run code" (error_codes.def's VERDICT column), for a ZIP that is
  // neither PyTorch's nor an npz, and for a pickle-bearing file (a folder's shard) whose
  // static scan cannot prove it safe, as `check` judges it; invalid otherwise (a
  // needs-key checkpoint included). ConvertPath returns the error that decided it: for a
  // folder refused by its shard's scan, the scan's error, with Error::file the shard.
  Verdict verdict = Verdict::kValid;
};

// ConvertPath converts IN, a file or folder of any format stguard converts, to OUT: the
// one conversion every front end calls (`stguard convert`, Python's convert, the C API).
// IN's format is told by its bytes (FormatOfPath). A file becomes one safetensors file; a
// folder (PyTorch shards, a safetensors model folder) or the first part of a split GGUF
// model a folder. OUT "-" is standard output for every single-file conversion: the bytes
// go to options.stdout_sink (safetensors streamed, the others built in a private temporary
// folder that is removed whatever happens). OUT that is IN (CheckOutputIsNotInput) is a
// usage error before anything is written, except safetensors to safetensors, which the
// crash-safe writer does in place as `canon IN IN` does.
[[nodiscard]] STGUARD_API Error ConvertPath(const std::string& in, const std::string& out,
                                            const ConvertOptions& options,
                                            ConvertReport* report);

}  // namespace stguard

#endif  // STGUARD_CONVERSION_H_
