// SPDX-License-Identifier: Apache-2.0
// pickle/pickle_reader.h: a static pickle reader. It runs the pickle's stack machine over
// values it builds itself and never imports, calls or constructs anything from Python.
//
// What it accepts (everything else is an Error, the first one wins):
// - the opcodes marked accepted in opcodes.cc (protocols 2-5), each with its argument
//   complete inside the input;
// - GLOBAL / STACK_GLOBAL only for the rows of allowlist.h; STACK_GLOBAL's two operands
//   must be strings (memoised or not: the reader resolves values, not text);
// - REDUCE only on an allowlisted callable with arguments of exactly the shape torch.save
//   writes (allowlist.h); BUILD only on an OrderedDict with state {"_metadata": mapping};
//   _rebuild_tensor_v2 takes a typed storage (<X>Storage), _rebuild_tensor_v3 an untyped
//   one plus an allowlisted dtype, which then becomes the storage's dtype (its byte count
//   must be a whole number of elements; one untyped storage has one dtype, as torch.save
//   itself requires); requires_grad=True (of a tensor or _rebuild_parameter) only on a
//   floating-point or complex dtype, as torch.load requires;
// - BINPERSID only when the caller allows persistent ids, on the tuple torch writes:
//   zip format  ("storage", <StorageType>, key: str, location: str, numel: int)
//   legacy      ("storage", <StorageType>, key: str, location: str, numel: int, None)
//   where <StorageType> is a legacy storage type (numel in its elements) or
//   torch.storage.UntypedStorage (numel in bytes);
// - one memo table for PUT/BINPUT/LONG_BINPUT/MEMOIZE, as CPython's unpickler keeps it
//   (MEMOIZE stores under key len(memo)); redefining a key is refused
//   (kPickleMemoConflict), which torch never does and which blocklist scanners misread;
//   a BINPUT/LONG_BINPUT key other than len(memo), the only one CPython's pickler writes,
//   is refused (kPickleMemoKey): CPython's C unpickler allocates its memo by the key;
// - FRAMEs (protocol 4+) only as CPython's pickler writes them: never inside another
//   frame, never cutting an opcode, never reaching past STOP (kPickleFrameAmbiguous),
//   since where the next read starts after such a frame depends on the unpickler;
// - STOP with exactly one value on the stack and no open MARK.
//
// BOUNDS: memory and time linear in the pickle's length L (bytes up to STOP).
// - Every opcode adds at most one value (values, stack and memo hold at most L entries
//   each) and containers only ever *move* what they take from the stack (TUPLE, APPEND(S),
//   SETITEM(S)), so container items total at most L. A memoised value is shared, never
//   cloned: BINGET/LONG_BINGET push its id, so a tuple used a million times costs nothing
//   more.
// - REDUCE takes at most kMaxReduceArgs arguments (a longer tuple is refused before it is
//   read), BUILD and BINPERSID look at a fixed number of items.
// - The places that copy a shared value's contents are a tensor's sizes and strides (into
//   TensorRef) and a new storage's location string (into StorageRef), and the state dict's
//   walk after them copies each name's shape again (torch/tensor_views.cc). All charge
//   PickleResult::copied_items (items or bytes), which may never exceed
//   CopyBudget(bytes read so far): two items per pickle byte plus kCopiedItemsAllowance.
//   torch.save writes every tensor's tuples afresh, so real checkpoints stay below half
//   of it; a size tuple memoised once and REDUCEd by thousands of tensors is refused
//   (kPickleBadArguments) or, one tensor under very many names, kOutputTooLarge.
// Stated and tested (tests/torch/test_hostile_pickle_bounds.py, 1 MB of pickle of nine
// shapes, real processes): peak memory of `stguard scan` and `convert` at most
// kPeakBytesPerPickleByte x L plus 64 MiB, and time at most 5 us per byte (about 1 us
// measured).
#ifndef STGUARD_SRC_PICKLE_PICKLE_READER_H_
#define STGUARD_SRC_PICKLE_PICKLE_READER_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "stguard/dtype.h"
#include "stguard/error.h"

namespace stguard {

// kMaxPickleLen is the longest pickle accepted (a state dict's pickle is a few bytes per
// tensor; the data lives elsewhere).
inline constexpr uint64_t kMaxPickleLen = uint64_t{1} << 30;

// kMaxReduceArgs is the longest argument tuple of any allowlisted callable
// (_rebuild_tensor_v3 with its metadata).
inline constexpr size_t kMaxReduceArgs = 8;

// kCopiedItemsAllowance is how many container items may be copied out of the value graph
// beyond two per pickle byte (see BOUNDS above): room for a small checkpoint whose few
// tensors have many names.
inline constexpr uint64_t kCopiedItemsAllowance = uint64_t{1} << 16;

// kCopiedItemsPerPickleByte is how many items may be copied per pickle byte read. A tensor
// that torch.save writes costs at least four bytes per dimension (a size and a stride of
// at least two bytes each) and four copies (into TensorRef, then its name's shape), so a
// real checkpoint stays under half of this; the rest is room for tied weights' names.
inline constexpr uint64_t kCopiedItemsPerPickleByte = 2;

// CopyBudget is the most items that may have been copied after reading `pickle_bytes`
// (which is at most kMaxPickleLen, so this cannot overflow).
inline constexpr uint64_t CopyBudget(uint64_t pickle_bytes) {
  return kCopiedItemsPerPickleByte * pickle_bytes + kCopiedItemsAllowance;
}

// kPeakBytesPerPickleByte is the stated (and tested) bound on a process's peak memory per
// byte of pickle, beyond a fixed 64 MiB: values (about 90 bytes each, one per opcode at
// most), memo entries, and the copied items with their shapes in the output.
inline constexpr uint64_t kPeakBytesPerPickleByte = 128;

using ValueId = uint32_t;

// ValueKind is what a value is.
enum class ValueKind : uint8_t {
  kNone, kBool, kInt, kBigInt, kFloat, kString, kBytes, kTuple, kList, kDict,
  kGlobal,   // an allowlisted global (AllowedGlobal row in `global`)
  kStorage,  // a persistent id resolved to a storage (index in PickleResult::storages)
  kTensor,   // a rebuilt tensor (index in PickleResult::tensors)
};

// PickleValue is one value the machine built. Containers hold ids of other values; a
// dict holds key, value, key, value... in insertion order.
struct PickleValue {
  ValueKind kind = ValueKind::kNone;
  bool flag = false;        // kBool: the value; kDict: an OrderedDict
  int64_t integer = 0;      // kInt; kGlobal, kStorage, kTensor: the index
  double real = 0;          // kFloat
  std::string text;         // kString (UTF-8), kBytes, kBigInt (little-endian two's complement)
  std::vector<ValueId> items;
  uint64_t offset = 0;      // absolute offset of the opcode that made it
};

// StorageRef is a storage a persistent id named.
struct StorageRef {
  std::string key;       // the record name under data/ (zip) or the storage key (legacy)
  Dtype dtype;           // untyped: the dtype _rebuild_tensor_v3 gave it (U8 if none did)
  uint64_t num_elements; // in elements of dtype (num_elements * size of dtype = its bytes)
  std::string location;  // "cpu", "cuda:0", ...
  uint64_t offset;       // the BINPERSID opcode's offset
  bool untyped = false;  // named as torch.storage.UntypedStorage (torch 2.x, new dtypes)
};

// TensorRef is what _rebuild_tensor_v2 / _v3 was called with (in elements of the storage's
// dtype). Sizes and strides stay signed: the torch layer refuses negatives with
// kTensorOutOfBounds.
struct TensorRef {
  uint32_t storage;
  int64_t storage_offset;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  uint64_t offset;  // the REDUCE opcode's offset
};

// GlobalUse is one GLOBAL/STACK_GLOBAL the pickle ran, for `scan`.
struct GlobalUse {
  std::string module;
  std::string name;
  bool allowed;
  uint64_t offset;
};

// PersistentIds says which persistent-id tuples BINPERSID accepts.
enum class PersistentIds : uint8_t { kNone, kZip, kLegacy };

struct PickleReadOptions {
  PersistentIds persistent_ids = PersistentIds::kNone;
  bool allow_globals = true;   // false: any GLOBAL is refused (legacy header pickles)
  uint64_t base_offset = 0;    // absolute offset of the pickle's first byte
};

// PickleResult is a pickle's value graph.
struct PickleResult {
  std::vector<PickleValue> values;
  ValueId root = 0;
  std::vector<StorageRef> storages;
  std::vector<TensorRef> tensors;
  uint64_t end = 0;  // absolute offset just past STOP
  uint64_t length = 0;  // the pickle's bytes, its STOP included
  // copied_items counts the items and bytes copied out of the graph so far (tensor sizes
  // and strides, storage locations); later stages that copy more charge it too, against
  // CopyBudget(length).
  uint64_t copied_items = 0;
  const PickleValue& at(ValueId id) const { return values[id]; }
};

// ReadPickle runs the pickle at the start of `bytes` up to its STOP (bytes after STOP are
// the caller's business). `globals`, if given, receives every global the pickle named,
// the refused one included, even when an Error is returned.
Result<PickleResult> ReadPickle(std::span<const std::byte> bytes,
                                const PickleReadOptions& options,
                                std::vector<GlobalUse>* globals = nullptr);

}  // namespace stguard

#endif  // STGUARD_SRC_PICKLE_PICKLE_READER_H_
