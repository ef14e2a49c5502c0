// SPDX-License-Identifier: Apache-2.0
// stguard/sniff.h: what a file is, from its bytes alone (never its name).
//
// SniffFormat is the one place stguard decides a file's format. It reads only what it
// needs (the first bytes, a ZIP's central directory, a pickle's opcodes up to the first
// one a loader would act on, within the BOUNDS below) and never allocates more than a
// fixed amount: time is linear in the bytes it looks at, memory constant.
//
// WHAT COUNTS AS A PICKLE. A file is pickle-bearing when a loader would run pickle
// opcodes from it: torch.load runs a pickle at byte 0 of any file that is not a ZIP (it
// first tries it as a tar), and unpickles the ".pkl" record of a ZIP archive. Pickles of
// protocol 2 and later start with PROTO; protocols 0 and 1 have no magic at all, so a
// file is a pickle when the pickle machine, reading from byte 0 with its stack and marks
// checked, reaches a STOP or an opcode that calls out of the machine (GLOBAL, INST,
// STACK_GLOBAL, REDUCE, BUILD, OBJ, NEWOBJ, PERSID, EXT...) before any byte it would
// reject. Code runs as the opcodes are read, so what follows that point does not matter.
// A GLOBAL or INST counts only with a module and a name in Python's identifier syntax
// (dotted): the import system cannot resolve anything else to code. Text files (JSON,
// merges.txt, vocab.txt, README) and images fail that walk within their first bytes.
// BOUNDS. A file shaped like safetensors is walked over its length prefix and header only
// (what the reader reads anyway): a call there makes it a pickle. Any other file is walked
// over its first kMaxSniffWalkLen (1 MiB) bytes; one still reading as a pickle there is
// taken for one (fail closed). Memory is constant: the walk keeps counts, not values.
#ifndef STGUARD_SNIFF_H_
#define STGUARD_SNIFF_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "stguard/byte_source.h"
#include "stguard/error.h"
#include "stguard/export.h"

namespace stguard {

// Format is what SniffFormat recognises. New formats are appended before kNumFormats.
enum class Format : uint8_t {
  kUnknown,         // none of the below
  kSafetensors,     // 8-byte header length, then a JSON object
  kPytorchZip,      // a ZIP archive holding a ".pkl" record (torch >= 1.6)
  kPytorchLegacy,   // the pickled magic number of torch < 1.6's stream
  kPickle,          // a bare pickle, any protocol (see WHAT COUNTS AS A PICKLE)
  kTar,             // a tar archive (torch's oldest format unpickles its members)
  kZip,             // a ZIP archive that is neither PyTorch's nor an npz (keras...), or both
  kGguf,            // "GGUF" magic (ggml's checkpoint format; a byte-swapped one too)
  kNpy,             // "\x93NUMPY" magic (numpy's single-array file)
  kNpz,             // a ZIP archive whose members are all "*.npy" (numpy's savez), or
                    // one with no member (starting "PK\5\6": np.savez(f) writes it)
  kJson,            // not a pickle, starts (after whitespace) with '{' or '[': config.json,
                    // an index; the JSON reader decides whether it is one
  kNumFormats,
};

// FormatName returns "unknown", "safetensors", "pytorch-zip", "pytorch-legacy",
// "pickle", "tar", "zip", "gguf", "npy", "npz" or "json".
STGUARD_API std::string_view FormatName(Format format);

// SniffFormat says what `bytes` (a whole file) are.
STGUARD_API Format SniffFormat(std::span<const std::byte> bytes);

// SniffFile says what the file at `path` is (through a read-only mapping: only the bytes
// SniffFormat looks at are read). A file that cannot be opened gives its error.
STGUARD_API Result<Format> SniffFile(const std::string& path);

// SniffSource is SniffFormat over a file read by ranges: it reads the bytes the rules
// above look at and no others (a tar block, a safetensors header, the pickle walk's
// window as far as it goes, a ZIP's tail and central directory) and decides exactly as
// SniffFormat over the whole file would. The source failing gives its error.
STGUARD_API Result<Format> SniffSource(const ByteSource& source);

// IsPickleBearing says whether loading a file of this format (torch.load, pickle.load)
// runs pickle opcodes from it: kPytorchZip, kPytorchLegacy, kPickle and kTar.
STGUARD_API bool IsPickleBearing(Format format);

}  // namespace stguard

#endif  // STGUARD_SNIFF_H_
