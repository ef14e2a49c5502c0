// SPDX-License-Identifier: Apache-2.0
// The static pickle machine (see pickle_reader.h for what it accepts and why).
#include "pickle/pickle_reader.h"

#include <cstring>
#include <unordered_map>
#include <utility>

#include "base/utf8.h"
#include "pickle/allowlist.h"
#include "pickle/opcodes.h"

namespace stguard {
namespace {

using Arg = PickleArg;

class Machine {
 public:
  Machine(std::span<const std::byte> bytes, const PickleReadOptions& options,
          std::vector<GlobalUse>* globals)
      : in_(bytes), options_(options), globals_(globals) {}

  Result<PickleResult> Run();

 private:
  uint64_t Abs(uint64_t relative) const { return options_.base_offset + relative; }
  Error Corrupt(const char* message, std::string context = {}) const {
    return Error{ErrorCode::kPickleCorrupt, Abs(op_at_), message, std::move(context)};
  }
  Error Refuse(ErrorCode code, const char* message, std::string context = {}) const {
    return Error{code, Abs(op_at_), message, std::move(context)};
  }

  Error ReadArg(ArgKind kind, Arg* arg);
  Error Step(uint8_t code, const Arg& arg, bool* stopped);

  ValueId Add(PickleValue value) {
    value.offset = Abs(op_at_);
    result_.values.push_back(std::move(value));
    return static_cast<ValueId>(result_.values.size() - 1);
  }
  // Push adds a value (its kind and the one field that kind uses) and pushes it.
  void Push(PickleValue value) { stack_.push_back(Add(std::move(value))); }
  PickleValue& V(ValueId id) { return result_.values[id]; }
  Error Pop(ValueId* out) {
    if (stack_.size() <= (marks_.empty() ? 0 : marks_.back())) {
      return Corrupt("stack underflow (or a value taken across a MARK)");
    }
    *out = stack_.back();
    stack_.pop_back();
    return {};
  }
  Error Top(ValueId* out) const {
    if (stack_.size() <= (marks_.empty() ? 0 : marks_.back())) {
      return Corrupt("stack underflow (or a value taken across a MARK)");
    }
    *out = stack_.back();
    return {};
  }
  // PopMark moves the values above the last MARK into *items and drops the MARK.
  Error PopMark(std::vector<ValueId>* items) {
    if (marks_.empty()) return Corrupt("no MARK to pop to");
    const size_t mark = marks_.back();
    marks_.pop_back();
    items->assign(stack_.begin() + static_cast<ptrdiff_t>(mark), stack_.end());
    stack_.resize(mark);
    return {};
  }
  // ChargeCopies accounts for copying value `id`'s items (or its text's bytes) out of the
  // value graph (see kCopiedItemsAllowance): refused when the copies would pass the budget
  // of the bytes read so far.
  Error ChargeCopies(ValueId id) {
    const uint64_t items = V(id).items.size() + V(id).text.size();
    if (items > CopyBudget(pos_) - result_.copied_items) {
      return Refuse(ErrorCode::kPickleBadArguments,
                    "tensor sizes and strides (or storage locations) copied past the "
                    "pickle's length (one value shared by many tensors or storages, which "
                    "torch.save never writes)",
                    std::to_string(result_.copied_items + items) + " items after " +
                        std::to_string(pos_) + " bytes");
    }
    result_.copied_items += items;
    return {};
  }
  Error Stop(bool* stopped);
  Error TakeOperands(uint8_t code, std::vector<ValueId>* items);
  Error Collect(uint8_t code);
  Error Memoize(uint64_t key);
  Error StartFrame(uint64_t len);
  Error CheckInsideFrame() const;
  Error Global(std::string_view module, std::string_view name);
  Error StackGlobal();
  Error Reduce();
  Error Build();
  Error PersistentId();
  Error SetItems(ValueId dict, const std::vector<ValueId>& pairs);
  Error TypeUntypedStorage(size_t index, Dtype dtype);

  std::span<const std::byte> in_;
  PickleReadOptions options_;
  std::vector<GlobalUse>* globals_;
  size_t pos_ = 0;
  size_t op_at_ = 0;
  PickleResult result_;
  std::vector<ValueId> stack_;
  std::vector<size_t> marks_;
  size_t frame_at_ = 0;   // the last FRAME opcode
  size_t frame_end_ = 0;  // just past the last frame's bytes (0 before any FRAME)
  std::vector<ValueId> memo_;  // memo key memo_base_ + k is memo_[k]: dense (Memoize)
  uint64_t memo_base_ = 0;     // the first key: 0 (CPython 3), 1 (Python 2's cPickle)
  std::unordered_map<std::string, size_t> storage_index_;  // storage key -> storages index
  std::vector<bool> typed_;  // typed_[k]: untyped storage k was given a dtype by a v3 tensor
};

bool IsInt(const PickleValue& v) { return v.kind == ValueKind::kInt; }

// CanRequireGrad says whether torch lets a tensor of `dtype` require gradients (floating
// point and complex only): setting requires_grad=True on any other makes torch.load fail
// with "only Tensors of floating point and complex dtype can require gradients".
bool CanRequireGrad(Dtype dtype) {
  // From the dtype table, so that a floating dtype added later is not refused silently.
  return IsFloatingDtype(dtype) || dtype == Dtype::kC64;
}

// ReadArg decodes the argument at pos_ (opcodes.h's one decoder) and moves past it.
Error Machine::ReadArg(ArgKind kind, Arg* arg) {
  switch (DecodeArg(kind, in_.subspan(pos_), arg)) {
    case ArgStatus::kOk:
      pos_ += static_cast<size_t>(arg->len);
      return {};
    case ArgStatus::kLengthPastEnd:
      return Corrupt("string or bytes argument runs past the end");
    case ArgStatus::kPastEnd:
      break;
  }
  return Corrupt("opcode argument runs past the end");
}

Error Machine::Memoize(uint64_t key) {
  ValueId top;
  if (Error error = Top(&top); !error.ok()) return error;
  // CPython's pickler numbers memo entries 0, 1, 2... (key = len(memo)); Python 2's
  // cPickle, which torch used to save its legacy files under Python 2, numbered them
  // 1, 2, 3... The first key decides which numbering the pickle uses.
  if (memo_.empty() && key == 1) memo_base_ = 1;
  const uint64_t next_key = memo_base_ + memo_.size();
  if (key >= memo_base_ && key < next_key) {
    return Refuse(ErrorCode::kPickleMemoConflict, "memo key already defined",
                  std::to_string(key));
  }
  // CPython's C unpickler keeps the memo as an array of 2 * key entries, so one
  // LONG_BINPUT 0xffffffff asks torch for 64 GiB. Only the next key keeps torch's memo
  // linear in the pickle.
  if (key != next_key) {
    return Refuse(ErrorCode::kPickleMemoKey,
                  "memo key other than the next one, which CPython's pickler always writes",
                  std::to_string(key) + ", expected " + std::to_string(next_key));
  }
  memo_.push_back(top);
  return {};
}

// Frames (protocol 4+) are read ahead: CPython's pure-Python unpickler reads a whole frame
// from the file at once, its C unpickler prefetches it (peeking up to a buffer's worth,
// reading beyond), so after STOP the file stands at the frame's end or just after STOP
// depending on the unpickler and the frame's size. CPython's pickler writes frames only
// around whole opcodes, ending where the next frame, an unframed large argument or STOP's
// end begins, and never one inside another. stguard accepts exactly that: a frame may not
// start inside another, cut an opcode, or reach past STOP, so that every unpickler reads
// the same bytes and stops at the same place.
Error Machine::StartFrame(uint64_t len) {
  if (op_at_ < frame_end_) {
    return Refuse(ErrorCode::kPickleFrameAmbiguous, "FRAME inside another frame");
  }
  if (len > in_.size() - pos_) return Corrupt("FRAME longer than the rest of the input");
  frame_at_ = op_at_;
  frame_end_ = pos_ + static_cast<size_t>(len);
  return {};
}

// CheckInsideFrame refuses an opcode (just read, argument included) that begins inside a
// frame and ends past it: the pure-Python unpickler refuses it, the C one reads on.
Error Machine::CheckInsideFrame() const {
  if (op_at_ < frame_end_ && pos_ > frame_end_) {
    return Error{ErrorCode::kPickleFrameAmbiguous, Abs(op_at_),
                 "opcode cut by the end of its FRAME",
                 "frame at " + std::to_string(Abs(frame_at_))};
  }
  return {};
}

Error Machine::Global(std::string_view module, std::string_view name) {
  const AllowedGlobal* row = options_.allow_globals ? FindAllowedGlobal(module, name) : nullptr;
  if (globals_ != nullptr) {
    globals_->push_back({std::string(module), std::string(name), row != nullptr, Abs(op_at_)});
  }
  if (row == nullptr) {
    return Refuse(ErrorCode::kPickleGlobalRefused,
                  options_.allow_globals && TorchDtypeWithoutSafetensors(module, name)
                      ? "torch dtype that safetensors has no dtype for"
                      : "global not in the allowlist",
                  std::string(module) + "." + std::string(name));
  }
  Push({.kind = ValueKind::kGlobal,
        .integer = row - AllowedGlobals().data(),
        .text = std::string(module) + "." + std::string(name)});
  return {};
}

Error Machine::Reduce() {
  ValueId args_id, callable_id;
  if (Error error = Pop(&args_id); !error.ok()) return error;
  if (Error error = Pop(&callable_id); !error.ok()) return error;
  const PickleValue& callable = V(callable_id);
  if (callable.kind != ValueKind::kGlobal) {
    return Refuse(ErrorCode::kPickleBadArguments, "REDUCE on a value that is not a global");
  }
  const AllowedGlobal& row = AllowedGlobals()[static_cast<size_t>(callable.integer)];
  const std::string callable_name = callable.text;
  const PickleValue& args = V(args_id);
  if (args.kind != ValueKind::kTuple) {
    return Refuse(ErrorCode::kPickleBadArguments, "REDUCE arguments are not a tuple",
                  callable_name);
  }
  // No allowlisted callable takes more than kMaxReduceArgs arguments: refusing a longer
  // tuple first keeps REDUCE constant-time however large a memoised tuple it is given.
  if (args.items.size() > kMaxReduceArgs) {
    return Refuse(ErrorCode::kPickleBadArguments,
                  "more REDUCE arguments than any allowlisted callable takes", callable_name);
  }
  const std::vector<ValueId> a = args.items;  // copy (short): Add() may move values_
  auto is_empty_dict = [&](ValueId id) {
    return V(id).kind == ValueKind::kDict && V(id).items.empty();
  };
  auto bad = [&](const char* why) {
    return Refuse(ErrorCode::kPickleBadArguments, why, callable_name);
  };
  switch (row.kind) {
    case GlobalKind::kOrderedDict: {
      if (!a.empty()) return bad("OrderedDict called with arguments");
      Push({.kind = ValueKind::kDict, .flag = true});
      return {};
    }
    case GlobalKind::kRebuildParameter: {
      if (a.size() != 3 || V(a[0]).kind != ValueKind::kTensor ||
          V(a[1]).kind != ValueKind::kBool || !is_empty_dict(a[2])) {
        return bad("expected (tensor, requires_grad: bool, backward_hooks: {})");
      }
      const TensorRef& tensor = result_.tensors[static_cast<size_t>(V(a[0]).integer)];
      if (V(a[1]).flag && !CanRequireGrad(result_.storages[tensor.storage].dtype)) {
        return bad("requires_grad on a dtype that cannot require gradients (torch.load fails)");
      }
      stack_.push_back(a[0]);
      return {};
    }
    case GlobalKind::kRebuildTensorV2:
    case GlobalKind::kRebuildTensorV3: {
      // v2: (storage, offset, size, stride, requires_grad, backward_hooks[, metadata])
      // v3: (storage, offset, size, stride, requires_grad, backward_hooks, dtype[, metadata])
      const bool v3 = row.kind == GlobalKind::kRebuildTensorV3;
      const size_t fixed = v3 ? 7 : 6;
      if (a.size() != fixed && a.size() != fixed + 1) {
        return bad(v3 ? "expected 7 or 8 arguments" : "expected 6 or 7 arguments");
      }
      // The size and stride tuples are copied into the TensorRef: charged before they are
      // read, so a tuple shared by many tensors cannot cost more than the budget.
      if (Error error = ChargeCopies(a[2]); !error.ok()) return error;
      if (Error error = ChargeCopies(a[3]); !error.ok()) return error;
      auto int_tuple = [&](ValueId id) {
        if (V(id).kind != ValueKind::kTuple) return false;
        for (ValueId item : V(id).items) {
          if (!IsInt(V(item))) return false;
        }
        return true;
      };
      auto is_dtype = [&](ValueId id) {
        return V(id).kind == ValueKind::kGlobal &&
               AllowedGlobals()[static_cast<size_t>(V(id).integer)].kind ==
                   GlobalKind::kTorchDtype;
      };
      if (V(a[0]).kind != ValueKind::kStorage || !IsInt(V(a[1])) || !int_tuple(a[2]) ||
          !int_tuple(a[3]) || V(a[2]).items.size() != V(a[3]).items.size() ||
          V(a[4]).kind != ValueKind::kBool || !is_empty_dict(a[5]) ||
          (v3 && !is_dtype(a[6])) ||
          (a.size() == fixed + 1 && V(a[fixed]).kind != ValueKind::kNone &&
           !is_empty_dict(a[fixed]))) {
        return bad(v3 ? "expected (untyped storage, offset: int, size: ints, stride: ints of "
                        "the same length, requires_grad: bool, backward_hooks: {}, dtype[, "
                        "metadata: None or {}])"
                      : "expected (storage, offset: int, size: ints, stride: ints of the "
                        "same length, requires_grad: bool, backward_hooks: {}[, metadata: "
                        "None or {}])");
      }
      const auto storage_index = static_cast<size_t>(V(a[0]).integer);
      StorageRef& storage = result_.storages[storage_index];
      if (storage.untyped != v3) {
        return bad(v3 ? "_rebuild_tensor_v3 on a typed storage (<X>Storage)"
                      : "_rebuild_tensor_v2 on an untyped storage");
      }
      if (v3) {
        const Dtype dtype = AllowedGlobals()[static_cast<size_t>(V(a[6]).integer)].dtype;
        if (Error error = TypeUntypedStorage(storage_index, dtype); !error.ok()) return error;
      }
      if (V(a[4]).flag && !CanRequireGrad(storage.dtype)) {
        return bad("requires_grad on a dtype that cannot require gradients (torch.load fails)");
      }
      TensorRef tensor;
      tensor.storage = static_cast<uint32_t>(storage_index);
      tensor.storage_offset = V(a[1]).integer;
      for (ValueId item : V(a[2]).items) tensor.sizes.push_back(V(item).integer);
      for (ValueId item : V(a[3]).items) tensor.strides.push_back(V(item).integer);
      tensor.offset = Abs(op_at_);
      result_.tensors.push_back(std::move(tensor));
      Push({.kind = ValueKind::kTensor,
            .integer = static_cast<int64_t>(result_.tensors.size() - 1)});
      return {};
    }
    case GlobalKind::kUntypedStorage:
    case GlobalKind::kTorchDtype:
    case GlobalKind::kStorageType:
      return bad("a storage type or dtype is only an argument, never called");
  }
  return bad("unknown allowlist row");
}

// TypeUntypedStorage gives untyped storage `index` (counted in bytes until now) the dtype
// of a _rebuild_tensor_v3 that views it. torch.save refuses to save two views of one
// storage as different dtypes, so a second dtype is refused too.
Error Machine::TypeUntypedStorage(size_t index, Dtype dtype) {
  StorageRef& storage = result_.storages[index];
  if (typed_.size() <= index) typed_.resize(index + 1, false);
  if (typed_[index]) {
    if (storage.dtype == dtype) return {};
    return Refuse(ErrorCode::kStorageMismatch, "one untyped storage viewed as two dtypes",
                  storage.key);
  }
  const uint64_t element_len = DtypeBits(dtype) / 8;
  if (storage.num_elements % element_len != 0) {
    return Refuse(ErrorCode::kStorageMismatch,
                  "untyped storage's byte count is not a whole number of elements",
                  storage.key + ": " + std::to_string(storage.num_elements) + " bytes, " +
                      std::string(DtypeName(dtype)));
  }
  storage.dtype = dtype;
  storage.num_elements /= element_len;
  typed_[index] = true;
  return {};
}

Error Machine::Build() {
  ValueId state_id, object_id;
  if (Error error = Pop(&state_id); !error.ok()) return error;
  if (Error error = Top(&object_id); !error.ok()) return error;
  const PickleValue& object = V(object_id);
  const PickleValue& state = V(state_id);
  // torch's OrderedDict state dicts carry one attribute, _metadata (a mapping of module
  // names to version dicts); BUILD may set that and nothing else.
  if (object.kind != ValueKind::kDict || !object.flag) {
    return Refuse(ErrorCode::kPickleBadArguments, "BUILD on something other than an OrderedDict");
  }
  if (state.kind != ValueKind::kDict || state.items.size() != 2 ||
      V(state.items[0]).kind != ValueKind::kString || V(state.items[0]).text != "_metadata" ||
      V(state.items[1]).kind != ValueKind::kDict) {
    return Refuse(ErrorCode::kPickleBadArguments,
                  "BUILD state other than {'_metadata': mapping}");
  }
  return {};
}

Error Machine::PersistentId() {
  ValueId pid_id;
  if (Error error = Pop(&pid_id); !error.ok()) return error;
  if (options_.persistent_ids == PersistentIds::kNone) {
    return Refuse(ErrorCode::kPickleOpcodeRefused, "persistent id outside a torch checkpoint");
  }
  const PickleValue& pid = V(pid_id);
  const size_t want = options_.persistent_ids == PersistentIds::kZip ? 5 : 6;
  // Only a tuple of the right length is copied (a few ids), however long a shared one is.
  const bool right_length = pid.kind == ValueKind::kTuple && pid.items.size() == want;
  const std::vector<ValueId> t = right_length ? pid.items : std::vector<ValueId>{};
  auto tag_kind = [&]() {
    return AllowedGlobals()[static_cast<size_t>(V(t[1]).integer)].kind;
  };
  if (t.size() != want || V(t[0]).kind != ValueKind::kString || V(t[0]).text != "storage" ||
      V(t[1]).kind != ValueKind::kGlobal ||
      (tag_kind() != GlobalKind::kStorageType && tag_kind() != GlobalKind::kUntypedStorage) ||
      V(t[2]).kind != ValueKind::kString || V(t[3]).kind != ValueKind::kString ||
      !IsInt(V(t[4])) || V(t[4]).integer < 0 ||
      (want == 6 && V(t[5]).kind != ValueKind::kNone)) {
    return Refuse(ErrorCode::kPickleBadArguments,
                  want == 5 ? "persistent id is not ('storage', <Storage type>, key, "
                              "location, numel)"
                            : "persistent id is not ('storage', <Storage type>, key, "
                              "location, numel, None)");
  }
  const bool untyped = tag_kind() == GlobalKind::kUntypedStorage;
  const Dtype dtype = AllowedGlobals()[static_cast<size_t>(V(t[1]).integer)].dtype;
  const std::string& key = V(t[2]).text;
  const auto numel = static_cast<uint64_t>(V(t[4]).integer);
  const auto [it, added] = storage_index_.emplace(key, result_.storages.size());
  const size_t index = it->second;
  if (added) {
    // The location string is copied into each new storage: charged, as one memoised
    // string could otherwise be copied once per storage.
    if (Error error = ChargeCopies(t[3]); !error.ok()) return error;
    StorageRef storage{key, dtype, numel, V(t[3]).text, Abs(op_at_)};
    storage.untyped = untyped;
    result_.storages.push_back(std::move(storage));
  } else {
    // Named again (each reference to a storage is its own persistent id): the same type
    // and size. An untyped storage may have been given its dtype since: compare bytes.
    const StorageRef& known = result_.storages[index];
    const bool same = untyped ? known.untyped &&
                                    known.num_elements * (DtypeBits(known.dtype) / 8) == numel
                              : !known.untyped && known.dtype == dtype &&
                                    known.num_elements == numel;
    if (!same) {
      return Refuse(ErrorCode::kStorageMismatch,
                    "one storage named twice with another type or element count", key);
    }
  }
  Push({.kind = ValueKind::kStorage, .integer = static_cast<int64_t>(index)});
  return {};
}

Error Machine::SetItems(ValueId dict, const std::vector<ValueId>& pairs) {
  if (V(dict).kind != ValueKind::kDict) return Corrupt("SETITEM(S) on a value that is not a dict");
  if (pairs.size() % 2 != 0) return Corrupt("SETITEMS with an odd number of values");
  for (size_t k = 0; k < pairs.size(); k += 2) {
    const ValueKind key_kind = V(pairs[k]).kind;
    if (key_kind == ValueKind::kList || key_kind == ValueKind::kDict) {
      return Corrupt("unhashable dict key (list or dict)");
    }
  }
  std::vector<ValueId>& items = V(dict).items;
  items.insert(items.end(), pairs.begin(), pairs.end());
  return {};
}

// DecodeLong1 makes the value of LONG1's argument: little-endian two's complement,
// sign-extended from its top byte. Longer than 8 bytes, it stays bytes (kBigInt).
PickleValue DecodeLong1(std::string_view bytes) {
  if (bytes.size() > 8) return {.kind = ValueKind::kBigInt, .text = std::string(bytes)};
  uint64_t bits = 0;
  for (size_t k = bytes.size(); k-- > 0;) bits = (bits << 8) | static_cast<uint8_t>(bytes[k]);
  const size_t n = bytes.size();
  if (n > 0 && n < 8 && (static_cast<uint8_t>(bytes[n - 1]) & 0x80) != 0) {
    bits |= ~uint64_t{0} << (8 * n);
  }
  return {.kind = ValueKind::kInt, .integer = static_cast<int64_t>(bits)};
}

Error Machine::Stop(bool* stopped) {
  if (!marks_.empty()) return Corrupt("STOP with an open MARK");
  if (frame_end_ > pos_) {
    return Error{ErrorCode::kPickleFrameAmbiguous, Abs(frame_at_),
                 "FRAME reaches past the pickle's STOP: torch's unpickler may read the "
                 "next pickle from the frame's end, not from after STOP",
                 std::to_string(frame_end_ - pos_) + " bytes past STOP"};
  }
  if (stack_.size() != 1) {
    return Corrupt("STOP with other than exactly one value on the stack",
                   std::to_string(stack_.size()));
  }
  result_.root = stack_[0];
  *stopped = true;
  return {};
}

// TakeOperands pops the values a TUPLE/APPEND/SETITEM-family opcode works on, in stack
// order: everything above the last MARK for TUPLE, APPENDS and SETITEMS, else a fixed count
// (never across a MARK).
Error Machine::TakeOperands(uint8_t code, std::vector<ValueId>* items) {
  namespace o = op;
  size_t count = 0;
  switch (code) {
    case o::kTuple: case o::kAppends: case o::kSetItems:
      return PopMark(items);
    case o::kTuple1: case o::kAppend: count = 1; break;
    case o::kTuple2: case o::kSetItem: count = 2; break;
    case o::kTuple3: count = 3; break;
    default: return Corrupt("opcode without a handler");
  }
  items->resize(count);
  for (size_t k = count; k-- > 0;) {
    if (Error error = Pop(&(*items)[k]); !error.ok()) return error;
  }
  return {};
}

// Collect runs the opcodes that gather values into a container: TUPLE* make a new tuple,
// APPEND(S) extend the list below the values, SETITEM(S) the dict below them.
Error Machine::Collect(uint8_t code) {
  namespace o = op;
  std::vector<ValueId> items;
  if (Error error = TakeOperands(code, &items); !error.ok()) return error;
  if (code == o::kTuple || code == o::kTuple1 || code == o::kTuple2 || code == o::kTuple3) {
    Push({.kind = ValueKind::kTuple, .items = std::move(items)});
    return {};
  }
  ValueId target;
  if (Error error = Top(&target); !error.ok()) return error;
  if (code == o::kSetItem || code == o::kSetItems) return SetItems(target, items);
  if (V(target).kind != ValueKind::kList) {
    return Corrupt(code == o::kAppend ? "APPEND to a value that is not a list"
                                      : "APPENDS to a value that is not a list");
  }
  V(target).items.insert(V(target).items.end(), items.begin(), items.end());
  return {};
}

// StackGlobal is STACK_GLOBAL: GLOBAL with the module and name popped off the stack.
Error Machine::StackGlobal() {
  ValueId module_id, name_id;
  if (Error error = Pop(&name_id); !error.ok()) return error;
  if (Error error = Pop(&module_id); !error.ok()) return error;
  if (V(module_id).kind != ValueKind::kString || V(name_id).kind != ValueKind::kString) {
    return Corrupt("STACK_GLOBAL operands are not two strings");
  }
  const std::string module = V(module_id).text, name = V(name_id).text;
  return Global(module, name);
}

// Step runs one opcode whose argument has been read. A switch, as in any interpreter: each
// case is the opcode's whole effect, or names the member function that has it.
Error Machine::Step(uint8_t code, const Arg& arg, bool* stopped) {
  namespace o = op;
  switch (code) {
    case o::kProto:
      if (op_at_ != 0) return Corrupt("PROTO after the first opcode");
      if (arg.u < 2 || arg.u > 5) {
        return Refuse(ErrorCode::kPickleOpcodeRefused, "pickle protocol outside 2-5",
                      std::to_string(arg.u));
      }
      return {};
    case o::kFrame:
      return StartFrame(arg.u);
    case o::kMark:
      marks_.push_back(stack_.size());
      return {};
    case o::kStop:
      return Stop(stopped);
    case o::kBinInt:
    case o::kBinInt1:
    case o::kBinInt2:
      Push({.kind = ValueKind::kInt,
            .integer = code == o::kBinInt ? arg.i : static_cast<int64_t>(arg.u)});
      return {};
    case o::kLong1:
      Push(DecodeLong1(arg.bytes));
      return {};
    case o::kNone:
      Push({.kind = ValueKind::kNone});
      return {};
    case o::kNewTrue:
    case o::kNewFalse:
      Push({.kind = ValueKind::kBool, .flag = code == o::kNewTrue});
      return {};
    case o::kBinFloat:
      Push({.kind = ValueKind::kFloat, .real = arg.f});
      return {};
    case o::kBinUnicode:
    case o::kShortBinUnicode:
    case o::kBinUnicode8:
      if (!IsValidUtf8(arg.bytes)) return Corrupt("string that is not valid UTF-8");
      Push({.kind = ValueKind::kString, .text = std::string(arg.bytes)});
      return {};
    case o::kBinBytes:
    case o::kShortBinBytes:
    case o::kBinBytes8:
      Push({.kind = ValueKind::kBytes, .text = std::string(arg.bytes)});
      return {};
    case o::kEmptyList:
      Push({.kind = ValueKind::kList});
      return {};
    case o::kEmptyDict:
      Push({.kind = ValueKind::kDict});
      return {};
    case o::kEmptyTuple:
      Push({.kind = ValueKind::kTuple});
      return {};
    case o::kTuple:
    case o::kTuple1:
    case o::kTuple2:
    case o::kTuple3:
    case o::kAppend:
    case o::kAppends:
    case o::kSetItem:
    case o::kSetItems:
      return Collect(code);
    case o::kBinGet:
    case o::kLongBinGet:
      if (arg.u < memo_base_ || arg.u - memo_base_ >= memo_.size()) {
        return Corrupt("memo key not defined", std::to_string(arg.u));
      }
      stack_.push_back(memo_[arg.u - memo_base_]);
      return {};
    case o::kBinPut:
    case o::kLongBinPut:
      return Memoize(arg.u);
    case o::kMemoize:
      // CPython: self.memo[len(self.memo)] = self.stack[-1]
      return Memoize(memo_.size());
    case o::kGlobal:
      if (!IsValidUtf8(arg.bytes) || !IsValidUtf8(arg.line2)) {
        return Corrupt("GLOBAL name that is not valid UTF-8");
      }
      return Global(arg.bytes, arg.line2);
    case o::kStackGlobal:
      return StackGlobal();
    case o::kReduce:
      return Reduce();
    case o::kBuild:
      return Build();
    case o::kBinPersId:
      return PersistentId();
    default:
      return Corrupt("opcode without a handler");
  }
}

Result<PickleResult> Machine::Run() {
  if (in_.size() > kMaxPickleLen) {
    return Error{ErrorCode::kPickleCorrupt, Abs(0), "pickle longer than kMaxPickleLen"};
  }
  // Every opcode adds at most one value; reserving a share of the input size up front
  // would over-allocate for string-heavy pickles, so the vectors grow as needed.
  bool stopped = false;
  while (!stopped) {
    if (pos_ >= in_.size()) {
      op_at_ = pos_;
      return Corrupt("pickle ends without STOP");
    }
    op_at_ = pos_;
    const auto code = static_cast<uint8_t>(in_[pos_]);
    const OpcodeInfo* info = FindOpcode(code);
    if (info == nullptr) return Corrupt("not a pickle opcode", std::to_string(code));
    if (!info->accepted) {
      return Refuse(ErrorCode::kPickleOpcodeRefused, "opcode torch.save does not write",
                    std::string(info->name));
    }
    if (op_at_ == 0 && code != op::kProto) {
      return Corrupt("pickle does not start with PROTO (protocol 2-5)");
    }
    ++pos_;
    Arg arg;
    if (Error error = ReadArg(info->arg, &arg); !error.ok()) return error;
    if (Error error = CheckInsideFrame(); !error.ok()) return error;
    if (Error error = Step(code, arg, &stopped); !error.ok()) return error;
  }
  result_.end = Abs(pos_);
  result_.length = pos_;
  return std::move(result_);
}

}  // namespace

Result<PickleResult> ReadPickle(std::span<const std::byte> bytes,
                                const PickleReadOptions& options,
                                std::vector<GlobalUse>* globals) {
  Machine machine(bytes, options, globals);
  return machine.Run();
}

}  // namespace stguard
