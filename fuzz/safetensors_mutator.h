// SPDX-License-Identifier: Apache-2.0
// safetensors_mutator.h: structure-aware mutation of safetensors files, shared by the
// fuzz_header and fuzz_roundtrip targets (their LLVMFuzzerCustomMutator and
// LLVMFuzzerCustomCrossOver call these).
//
// Why: libFuzzer's byte-level mutations rarely turn a valid file into another valid file
// (one changed digit breaks the tiling, one inserted byte breaks the length prefix), so
// most executions stop at the first rejection and never reach the acceptance-side checks.
// These functions decode the input into a FileModel (the tensor set, the metadata and the
// data bytes), change it as a structure, and encode it again:
// - tensors are added, dropped, renamed (escaped, non-ASCII, empty, duplicate and
//   "__metadata__" names), swapped in the header, given other dtypes and shapes;
// - the data is usually laid out again so the file stays valid (in header order, reverse,
//   shuffled, or the canonical order), and sometimes not, or one offset moves by one;
// - __metadata__ is added, dropped, emptied, moved, or given odd keys and values;
// - the header is written with other whitespace, key order, escapes and padding, and
//   sometimes canonically (stguard::CanonicalBytes), sometimes with the length prefix off
//   by one.
// An input that does not decode (no header that parses as a JSON object, whether at the
// length prefix or between the first '{' and the last '}') goes half the time to the
// byte-level mutator and half the time is replaced by a new file grown from the empty one
// (libprotobuf-mutator does the same with a message it cannot parse); 1 in 16 of the
// inputs that decode go to the byte-level mutator too, so byte-level exploration of the
// parser goes on.
//
// Setting STGUARD_FUZZ_MUTATOR=bytes in the environment turns all of this off (the hooks
// then call the byte-level mutator only); fuzz/compare_mutators.sh uses it to compare the
// two in the same time.
#ifndef STGUARD_FUZZ_SAFETENSORS_MUTATOR_H_
#define STGUARD_FUZZ_SAFETENSORS_MUTATOR_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mutator_json.h"

namespace stguard_fuzz::mutator {

// TensorModel is one header entry as decoded; fields the input lacked stay empty.
struct TensorModel {
  std::string name;              // decoded
  std::string dtype;             // as written, known or not
  std::vector<uint64_t> shape;
  uint64_t begin = 0;
  uint64_t end = 0;
  std::string bytes;             // the tensor's data, when its offsets were inside the file
};

// FileModel is a safetensors file as a structure.
struct FileModel {
  std::vector<TensorModel> tensors;  // header order
  bool has_metadata = false;
  JsonValue metadata;                // an object, or whatever the input had
  size_t metadata_position = 0;      // index in the header among the tensors
  std::string data;                  // the data buffer as in the input
};

// DecodeFile reads `bytes` into *model: the length prefix, a header that parses as a JSON
// object (N is trusted only as far as the file goes), entries whose fields have the right
// JSON types. Returns false when there is no structure to work on.
bool DecodeFile(std::string_view bytes, FileModel* model);

// ExpectedByteSize returns the tensor's byte size from its dtype and shape, or false when
// the dtype is unknown, the size overflows or is not whole bytes.
bool ExpectedByteSize(const TensorModel& tensor, uint64_t* out);

// EncodeFile writes *model as a file: header text in `style` with the offsets as they are
// in the model, padding as `padding` says (0: none, 1: spaces to a multiple of 8, 2: a
// few random spaces, 3: leading whitespace), then the data buffer.
std::string EncodeFile(const FileModel& model, const JsonStyle& style, int padding, Rng& rng);

// LayOut gives every tensor its expected size (keeping its bytes where they fit, filling
// the rest) and consecutive offsets in an order `rng` picks, and rebuilds the data buffer,
// so the model encodes to a valid file unless a name or dtype is invalid. The data stays
// within max_data_bytes: a tensor that would not fit gets its dims cut to at most 2, and
// keeps its old bytes if it still does not fit (as does one whose size cannot be
// computed).
void LayOut(FileModel* model, size_t max_data_bytes, Rng& rng);

// MutateModel applies one to four structural changes.
void MutateModel(FileModel* model, Rng& rng);

// MutateSafetensors is the LLVMFuzzerCustomMutator body: mutates data[0, size) in place
// and returns the new size (<= max_size).
size_t MutateSafetensors(uint8_t* data, size_t size, size_t max_size, unsigned seed);

// CrossOverSafetensors is the LLVMFuzzerCustomCrossOver body: a file with tensors and
// metadata from both inputs, laid out again; a byte splice when either does not decode.
size_t CrossOverSafetensors(const uint8_t* data1, size_t size1, const uint8_t* data2,
                            size_t size2, uint8_t* out, size_t max_out_size, unsigned seed);

// ByteLevelMutate calls libFuzzer's LLVMFuzzerMutate when it is linked in, else a small
// built-in mutation (flip, insert or erase a byte), as in the gcc replay build.
size_t ByteLevelMutate(uint8_t* data, size_t size, size_t max_size, unsigned seed);

// ByteLevelOnly says whether STGUARD_FUZZ_MUTATOR=bytes is set.
bool ByteLevelOnly();

// CopyOut copies `bytes` to data when it fits in max_size and returns its size, else
// returns 0 (callers then fall back to the byte-level mutator).
size_t CopyOut(std::string_view bytes, uint8_t* data, size_t max_size);

}  // namespace stguard_fuzz::mutator

#endif  // STGUARD_FUZZ_SAFETENSORS_MUTATOR_H_
