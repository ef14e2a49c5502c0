// SPDX-License-Identifier: Apache-2.0
// pickle_mutator.h: structure-aware mutation of pickles, for fuzz_pickle (raw pickles) and,
// through zip_mutator.h, for fuzz_torch_checkpoint (the pickles inside torch checkpoints).
//
// Why: a pickle is a program; one flipped byte usually turns an opcode's length prefix
// into garbage or leaves the stack unbalanced, and the reader stops at the first refusal.
// These functions decode the input into a list of opcodes with their arguments (using the
// reader's own opcode table, src/pickle/opcodes.h), change the list, and encode it again
// with every length prefix and FRAME length consistent:
// - opcodes are dropped, duplicated, swapped with a neighbour, or replaced by one of the
//   same family (TUPLE1/2/3, EMPTY_LIST/DICT/TUPLE, BINPUT/LONG_BINPUT/MEMOIZE, ...);
// - memo indices move by one, jump to an index already used, or repeat a PUT (memo
//   confusion); integers take boundary values;
// - strings become the names the allowlist is about (every row of AllowedGlobals(): torch
//   storage types, rebuild functions, collections.OrderedDict, torch 2.x dtypes) or ones it
//   refuses (os.system, builtins.eval, importlib, marshal, QInt8Storage), including as
//   STACK_GLOBAL operands;
// - whole snippets torch.save writes are inserted (a persistent-id tuple, a rebuild call,
//   an OrderedDict with _metadata), and rarely an opcode the reader refuses;
// - FRAMEs are inserted, some longer than their contents (reaching past STOP into a copy
//   of the pickle that then follows, as a legacy stream's next pickle would) or shorter
//   (cutting an opcode); now and then the first 512 bytes are made tar-shaped.
// Input that does not decode goes to the byte-level mutator half the time, and half the
// time is replaced by a small state dict pickle; 1 in 16 inputs go to the byte-level
// mutator anyway. STGUARD_FUZZ_MUTATOR=bytes turns structure off (safetensors_mutator.h).
#ifndef STGUARD_FUZZ_PICKLE_MUTATOR_H_
#define STGUARD_FUZZ_PICKLE_MUTATOR_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mutator_json.h"

namespace stguard_fuzz::mutator {

// PickleOp is one opcode and its argument: for length-prefixed kinds the payload without
// its length, for line kinds the text without the final newline (GLOBAL: "module\nname"),
// for fixed-width kinds the little-endian (BINFLOAT: big-endian) bytes.
struct PickleOp {
  uint8_t code = 0;
  std::string arg;
};

// DecodePickle reads opcodes from the start of `bytes` up to and including STOP. Returns
// the number of bytes used, or 0 when the first opcode is unknown or truncated; *ops holds
// what decoded before any truncation (so a broken tail still gives a structure).
size_t DecodePickle(std::string_view bytes, std::vector<PickleOp>* ops);

// EncodePickle writes `ops`, each length prefix from its payload's size; a FRAME's length
// becomes the size of what follows it up to the next FRAME, plus its argument when that
// has 8 bytes (little-endian two's complement: a long or short frame).
std::string EncodePickle(const std::vector<PickleOp>& ops);

// MutatePickleOps applies one change half the time, else two to four.
void MutatePickleOps(std::vector<PickleOp>* ops, Rng& rng);

// MakeTarShaped pads `bytes` to 512 with NULs if shorter and writes into bytes 148-155
// the checksum that makes its first block pass Python tarfile's header test (torch.load
// would read the file as a tar archive): the rest stays as it was.
void MakeTarShaped(std::string* bytes);

// StateDictPickle returns the opcodes of a small state dict as torch.save writes it (zip
// persistent ids): {"w": FloatStorage tensor of 2 elements}.
std::vector<PickleOp> StateDictPickle();

// MutatePickle and CrossOverPickle are the bodies of fuzz_pickle's libFuzzer hooks.
size_t MutatePickle(uint8_t* data, size_t size, size_t max_size, unsigned seed);
size_t CrossOverPickle(const uint8_t* data1, size_t size1, const uint8_t* data2, size_t size2,
                       uint8_t* out, size_t max_out_size, unsigned seed);

}  // namespace stguard_fuzz::mutator

#endif  // STGUARD_FUZZ_PICKLE_MUTATOR_H_
