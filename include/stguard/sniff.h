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
#include "stguard/formats.h"

namespace stguard {

// Format, its facts and FormatName are in stguard/formats.h (from stguard/formats.def).

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

}  // namespace stguard

#endif  // STGUARD_SNIFF_H_
