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
// Bounds: every opcode adds at most one value, so values, stack and memo are bounded by
// the pickle's length (and it by kMaxPickleLen). Time is linear in the input except
// for container copies made by TUPLE/APPENDS/SETITEMS, which move what they take.
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
