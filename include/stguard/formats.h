// SPDX-License-Identifier: Apache-2.0
// stguard/formats.h: the formats stguard tells apart and what each one is to the commands,
// expanded from stguard/formats.def (the one list; a new format is a row there).
//
// The front ends (the command line, the C API, Python, the WebAssembly glue) never branch
// on a format: they ask these facts, or a library function that does the format's work.
#ifndef STGUARD_FORMATS_H_
#define STGUARD_FORMATS_H_

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>

#include "stguard/error.h"
#include "stguard/export.h"

namespace stguard {

// Format is what SniffFormat (stguard/sniff.h) recognises, in formats.def's order.
enum class Format : uint8_t {
#define STGUARD_FORMAT(Name, C_NAME, word, kind, hint, pickle, convert, inspect, scan) k##Name,
#include "stguard/formats.def"
#undef STGUARD_FORMAT
  kNumFormats,  // not a format: the number of formats above
};
static_assert(static_cast<int>(Format::kUnknown) == 0, "kUnknown is the first row and zero");

// FormatFacts is one row of formats.def (its comment says what each column means).
struct FormatFacts {
  std::string_view name;  // "safetensors", "pytorch-zip"...: the envelope's "format"
  std::string_view kind;  // "safetensors", "PyTorch", "GGUF", ".npy"...: what help prints
  std::string_view hint;  // "a GGUF file": what Python says before pointing to convert()
  bool pickle_bearing;
  bool convertible;
  bool inspectable;
  bool scannable;
};

// kFormatFacts holds formats.def's rows, indexed by Format.
inline constexpr FormatFacts kFormatFacts[] = {
#define STGUARD_FORMAT(Name, C_NAME, word, kind, hint, pickle, convert, inspect, scan) \
  {word, kind, hint, pickle != 0, convert != 0, inspect != 0, scan != 0},
#include "stguard/formats.def"
#undef STGUARD_FORMAT
};
static_assert(std::size(kFormatFacts) == static_cast<size_t>(Format::kNumFormats));

// FactsOf returns `format`'s row; kUnknown's for a value outside the enum.
constexpr const FormatFacts& FactsOf(Format format) {
  const auto index = static_cast<size_t>(format);
  return kFormatFacts[index < std::size(kFormatFacts) ? index : 0];
}

// FormatName returns the format's word: "unknown", "safetensors", "pytorch-zip",
// "pytorch-legacy", "pickle", "tar", "zip", "gguf", "npy", "npz" or "json". The views
// are made from string literals: data() is NUL-terminated.
STGUARD_API std::string_view FormatName(Format format);

// IsPickleBearing says whether loading a file of this format (torch.load, pickle.load)
// runs pickle opcodes from it: kPytorchZip, kPytorchLegacy, kPickle and kTar.
STGUARD_API bool IsPickleBearing(Format format);

// FormatSet is a set of inputs a command or an option reads: a bit per Format
// (FormatBit), and kFolderInput for a model folder or a sharded index.
using FormatSet = uint32_t;
static_assert(static_cast<size_t>(Format::kNumFormats) < 32, "FormatSet has a bit per format");
constexpr FormatSet FormatBit(Format format) {
  return FormatSet{1} << static_cast<unsigned>(format);
}
inline constexpr FormatSet kFolderInput = FormatSet{1}
                                          << static_cast<unsigned>(Format::kNumFormats);

// FormatsWith is the set of formats whose `column` (&FormatFacts::convertible...) is true.
constexpr FormatSet FormatsWith(bool FormatFacts::* column) {
  FormatSet set = 0;
  for (size_t i = 0; i < std::size(kFormatFacts); ++i) {
    if (kFormatFacts[i].*column) set |= FormatBit(static_cast<Format>(i));
  }
  return set;
}

// FormatsOfKind is the set of formats of `like`'s kind (kPytorchZip: every format the
// torch reader reads).
constexpr FormatSet FormatsOfKind(Format like) {
  FormatSet set = 0;
  for (size_t i = 0; i < std::size(kFormatFacts); ++i) {
    if (kFormatFacts[i].kind == FactsOf(like).kind) set |= FormatBit(static_cast<Format>(i));
  }
  return set;
}

// FormatSetNames is how help names a set: its kinds in formats.def's order, each once,
// then "folder", joined by ", " ("safetensors, PyTorch, folder").
STGUARD_API std::string FormatSetNames(FormatSet set);

// PathFormat is what a path names, for the commands: one format, or a folder.
struct PathFormat {
  Format format = Format::kUnknown;  // what the file's bytes are (kJson for an index)
  bool is_folder = false;            // a directory, or a "*.index.json" JSON file

  // set is the one-member FormatSet the command table's sets are matched against; empty
  // for a format no checkpoint command reads (unknown, or JSON that is no index): no
  // option is refused for it, and the command's reader says what the file is not.
  FormatSet set() const {
    if (is_folder) return kFolderInput;
    const FormatFacts& facts = FactsOf(format);
    const bool read = facts.inspectable || facts.convertible || facts.scannable;
    return read ? FormatBit(format) : 0;
  }
};

// FormatOfPath says what `path` is: a directory is a folder; a file is told by its bytes
// (SniffFile), and a JSON file named "*.index.json" is a folder (a sharded index names
// its shards). `sniffed`, when given, is what was already sniffed of the file: it is not
// read again. A file that cannot be read gives its error.
STGUARD_API Result<PathFormat> FormatOfPath(const std::string& path,
                                            std::optional<Format> sniffed = std::nullopt);

}  // namespace stguard

#endif  // STGUARD_FORMATS_H_
