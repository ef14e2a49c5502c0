// SPDX-License-Identifier: Apache-2.0
// Structure-aware pickle mutation (see pickle_mutator.h).
#include "pickle_mutator.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>
#include <vector>

#include "pickle/allowlist.h"
#include "pickle/opcodes.h"
#include "safetensors_mutator.h"  // ByteLevelMutate, ByteLevelOnly, CopyOut

namespace stguard_fuzz::mutator {
namespace {

using stguard::ArgKind;
namespace op = stguard::op;

// GlobalName is a module and name for a GLOBAL or STACK_GLOBAL.
struct GlobalName {
  std::string_view module;
  std::string_view name;
};

// FixedWidth returns the argument width of a fixed-size kind, 0 for the others.
size_t FixedWidth(ArgKind kind) {
  switch (kind) {
    case ArgKind::kU8: return 1;
    case ArgKind::kU16: return 2;
    case ArgKind::kI32:
    case ArgKind::kU32: return 4;
    case ArgKind::kU64:
    case ArgKind::kF64BigEnd: return 8;
    default: return 0;
  }
}

// LengthWidth returns the width of a length-prefixed kind's length, 0 for the others.
size_t LengthWidth(ArgKind kind) {
  switch (kind) {
    case ArgKind::kBytes1: return 1;
    case ArgKind::kBytes4: return 4;
    case ArgKind::kBytes8: return 8;
    default: return 0;
  }
}

ArgKind KindOf(uint8_t code) {
  const stguard::OpcodeInfo* info = stguard::FindOpcode(code);
  return info == nullptr ? ArgKind::kNone : info->arg;
}

uint64_t ReadLittleEndian(std::string_view bytes) {
  uint64_t value = 0;
  for (size_t i = 0; i < bytes.size() && i < 8; ++i) {
    value |= uint64_t{static_cast<unsigned char>(bytes[i])} << (8 * i);
  }
  return value;
}

std::string LittleEndian(uint64_t value, size_t width) {
  std::string out(width, '\0');
  for (size_t i = 0; i < width; ++i) out[i] = static_cast<char>((value >> (8 * i)) & 0xFF);
  return out;
}

PickleOp Op(uint8_t code, std::string arg = {}) { return PickleOp{code, std::move(arg)}; }

// FrameDelta returns what a FRAME op claims beyond its contents (its argument, 8 bytes
// little-endian two's complement; none for an empty one).
int64_t FrameDelta(const PickleOp& o) {
  return o.arg.size() == 8 ? static_cast<int64_t>(ReadLittleEndian(o.arg)) : 0;
}

// OddFrame is a FRAME whose length does not fit its contents: longer (past STOP, into
// what follows: the next pickle of a legacy stream) or shorter (cutting an opcode).
PickleOp OddFrame(Rng& rng) {
  static constexpr int64_t kDeltas[] = {1, 2, 8, 64, 9000, -1, -2, -9};
  const int64_t delta = kDeltas[rng.Below(std::size(kDeltas))];
  return Op(op::kFrame, LittleEndian(static_cast<uint64_t>(delta), 8));
}
PickleOp Int(uint64_t value) {
  if (value < 256) return Op(op::kBinInt1, LittleEndian(value, 1));
  if (value < 65536) return Op(op::kBinInt2, LittleEndian(value, 2));
  return Op(op::kBinInt, LittleEndian(value, 4));
}
PickleOp Text(std::string_view text) { return Op(op::kBinUnicode, std::string(text)); }
PickleOp Global(std::string_view module, std::string_view name) {
  return Op(op::kGlobal, std::string(module) + "\n" + std::string(name));
}

// Globals the reader refuses, tried beside the allowlist's own rows: code execution,
// objects torch.save never writes, names one step off an allowed one, and torch dtypes
// and storages with no safetensors dtype.
constexpr GlobalName kRefusedGlobals[] = {
    {"torch", "QInt8Storage"},            {"torch", "complex32"},
    {"torch", "UntypedStorage"},          {"torch", "Size"},
    {"torch._utils", "_rebuild_qtensor"}, {"os", "system"},
    {"posix", "system"},                  {"builtins", "eval"},
    {"builtins", "getattr"},              {"__builtin__", "exec"},
    {"importlib", "import_module"},       {"marshal", "loads"},
    {"pickle", "loads"},                  {"subprocess", "call"},
    {"torch.nn.modules.linear", "Linear"}, {"collections", "OrderedDict.__setitem__"},
    {"", ""},
};

// Globals lists the globals the mutator names: every row of the allowlist, then
// kRefusedGlobals. Built from AllowedGlobals() so that a row added there is fuzzed too.
const std::vector<GlobalName>& Globals() {
  static const std::vector<GlobalName> globals = [] {
    std::vector<GlobalName> out;
    for (const stguard::AllowedGlobal& row : stguard::AllowedGlobals()) {
      out.push_back({row.module, row.name});
    }
    out.insert(out.end(), std::begin(kRefusedGlobals), std::end(kRefusedGlobals));
    return out;
  }();
  return globals;
}

// StorageTypes lists the allowlist's typed storages (torch.<X>Storage), the tags a
// _rebuild_tensor_v2 persistent id names.
const std::vector<GlobalName>& StorageTypes() {
  static const std::vector<GlobalName> storages = [] {
    std::vector<GlobalName> out;
    for (const stguard::AllowedGlobal& row : stguard::AllowedGlobals()) {
      if (row.kind == stguard::GlobalKind::kStorageType) out.push_back({row.module, row.name});
    }
    return out;
  }();
  return storages;
}

const GlobalName& AnyGlobal(Rng& rng) { return Globals()[rng.Below(Globals().size())]; }

constexpr std::string_view kStrings[] = {
    "storage", "cpu", "cuda:0", "0", "1", "2", "_metadata", "state_dict", "model",
    "version", "w", "weight", "", "data", "archive/data/0", "\xff", "é", "__reduce__",
};

// Opcodes that can replace each other: same stack effect or close to it.
constexpr std::string_view kFamilies[] = {
    "\x85\x86\x87t",        // TUPLE1, TUPLE2, TUPLE3, TUPLE
    "]})",                  // EMPTY_LIST, EMPTY_DICT, EMPTY_TUPLE
    "N\x88\x89",            // NONE, NEWTRUE, NEWFALSE
    "aesu",                 // APPEND, APPENDS, SETITEM, SETITEMS
    "qr\x94",               // BINPUT, LONG_BINPUT, MEMOIZE
    "hj",                   // BINGET, LONG_BINGET
    "KMJ\x8a",              // BININT1, BININT2, BININT, LONG1
    "X\x8c\x8d" "CB\x8e",  // the string and bytes opcodes
    "Rb",                   // REDUCE, BUILD
    "c\x93",                // GLOBAL, STACK_GLOBAL
};

// Opcodes the reader refuses, inserted now and then.
constexpr std::string_view kRefused = "012FILPSTUVdgilop\x81\x82\x83\x84\x8b\x8f\x90\x91\x92\x96\x97\x98";

uint64_t BoundaryValue(Rng& rng) {
  static constexpr uint64_t kValues[] = {0, 1, 2, 3, 0x7F, 0x80, 0xFF, 0x100, 0xFFFF, 0x10000,
                                         0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, ~uint64_t{0}};
  return rng.OneIn(4) ? rng.Bits64() : kValues[rng.Below(std::size(kValues))];
}

// RandomArg gives `code` an argument of its kind.
std::string RandomArg(uint8_t code, Rng& rng) {
  const ArgKind kind = KindOf(code);
  if (code == op::kGlobal) {
    const GlobalName& global = AnyGlobal(rng);
    return std::string(global.module) + "\n" + std::string(global.name);
  }
  if (code == op::kProto) return std::string(1, static_cast<char>(rng.Below(7)));
  if (code == op::kLong1) return LittleEndian(BoundaryValue(rng), 1 + rng.Below(8));
  if (const size_t width = FixedWidth(kind); width != 0) {
    return LittleEndian(BoundaryValue(rng), width);
  }
  if (LengthWidth(kind) != 0) return std::string(kStrings[rng.Below(std::size(kStrings))]);
  if (kind == ArgKind::kLine) return std::to_string(rng.Below(8));
  if (kind == ArgKind::kTwoLines) return "os\nsystem";
  return {};
}

// MemoIndices lists the indices the pickle's PUTs use, for memo confusion.
std::vector<uint64_t> MemoIndices(const std::vector<PickleOp>& ops) {
  std::vector<uint64_t> out;
  uint64_t memoized = 0;
  for (const PickleOp& o : ops) {
    if (o.code == op::kBinPut || o.code == op::kLongBinPut) out.push_back(ReadLittleEndian(o.arg));
    if (o.code == op::kMemoize) out.push_back(memoized++);
  }
  return out;
}

// A snippet torch.save writes: a persistent-id tuple, or a whole tensor rebuild.
std::vector<PickleOp> TensorSnippet(Rng& rng) {
  const GlobalName& storage = StorageTypes()[rng.Below(StorageTypes().size())];
  const uint64_t numel = rng.OneIn(4) ? BoundaryValue(rng) : rng.Below(5);
  std::vector<PickleOp> ops = {Global("torch._utils", "_rebuild_tensor_v2"), Op(op::kMark),
                               Op(op::kMark), Text("storage"),
                               Global(storage.module, storage.name),
                               Text(std::to_string(rng.Below(3))), Text("cpu"), Int(numel),
                               Op(op::kTuple), Op(op::kBinPersId), Int(rng.Below(3))};
  const size_t rank = rng.Below(4);
  for (int part = 0; part < 2; ++part) {  // sizes, then strides
    ops.push_back(Op(op::kMark));
    for (size_t d = 0; d < rank; ++d) ops.push_back(Int(rng.OneIn(8) ? BoundaryValue(rng) : rng.Below(4)));
    ops.push_back(Op(op::kTuple));
  }
  ops.push_back(Op(rng.OneIn(2) ? op::kNewFalse : op::kNewTrue));
  ops.push_back(Global("collections", "OrderedDict"));
  ops.push_back(Op(op::kEmptyTuple));
  ops.push_back(Op(op::kReduce));
  ops.push_back(Op(op::kTuple));
  ops.push_back(Op(op::kReduce));
  return ops;
}

// Snippet returns a few opcodes to insert.
std::vector<PickleOp> Snippet(const std::vector<PickleOp>& ops, Rng& rng) {
  switch (rng.Below(10)) {
    case 0: return TensorSnippet(rng);
    case 1: {  // STACK_GLOBAL fed from (memoised) strings
      const GlobalName& global = AnyGlobal(rng);
      return {Op(op::kShortBinUnicode, std::string(global.module)), Op(op::kMemoize),
              Op(op::kShortBinUnicode, std::string(global.name)), Op(op::kMemoize),
              Op(op::kStackGlobal)};
    }
    case 2: {  // memo confusion: a PUT or GET of an index already in use
      const std::vector<uint64_t> used = MemoIndices(ops);
      const uint64_t index = used.empty() ? rng.Below(4) : used[rng.Below(used.size())];
      return {Op(rng.OneIn(2) ? op::kBinPut : op::kBinGet, LittleEndian(index, 1))};
    }
    case 3: return {Op(op::kMemoize)};
    case 4: {  // an OrderedDict's _metadata, set by BUILD
      return {Global("collections", "OrderedDict"), Op(op::kEmptyTuple), Op(op::kReduce),
              Op(op::kEmptyDict), Text("_metadata"), Op(op::kEmptyDict), Op(op::kSetItem),
              Op(op::kBuild)};
    }
    case 5: {
      const uint8_t code = static_cast<uint8_t>(kRefused[rng.Below(kRefused.size())]);
      return {Op(code, RandomArg(code, rng))};
    }
    case 6: return {Op(op::kMark)};
    case 7: return {rng.OneIn(2) ? Op(op::kFrame, LittleEndian(0, 8)) : OddFrame(rng)};
    default: {  // any accepted opcode with an argument of its kind
      static constexpr std::string_view kAccepted =
          "(.JKMNQRX]abcehj}stu)Gqr\x80\x85\x86\x87\x88\x89\x8a" "BC\x8c\x8d\x8e\x93\x94";
      const uint8_t code = static_cast<uint8_t>(kAccepted[rng.Below(kAccepted.size())]);
      return {Op(code, RandomArg(code, rng))};
    }
  }
}

void MutateArg(PickleOp* o, const std::vector<PickleOp>& ops, Rng& rng) {
  const ArgKind kind = KindOf(o->code);
  if (o->code == op::kBinGet || o->code == op::kLongBinGet || o->code == op::kBinPut ||
      o->code == op::kLongBinPut) {
    const std::vector<uint64_t> used = MemoIndices(ops);
    uint64_t index = ReadLittleEndian(o->arg);
    switch (rng.Below(3)) {
      case 0: index += rng.OneIn(2) ? 1 : ~uint64_t{0}; break;
      case 1: if (!used.empty()) index = used[rng.Below(used.size())]; break;
      default: index = BoundaryValue(rng);
    }
    o->arg = LittleEndian(index, FixedWidth(kind));
  } else if (o->code == op::kGlobal || LengthWidth(kind) != 0) {
    if (!o->arg.empty() && rng.OneIn(4)) {
      o->arg[rng.Below(o->arg.size())] = static_cast<char>(rng.Below(256));
    } else {
      o->arg = RandomArg(o->code, rng);
    }
  } else {
    o->arg = RandomArg(o->code, rng);
  }
}

void MutateOnce(std::vector<PickleOp>* ops, Rng& rng) {
  if (ops->empty()) {
    *ops = StateDictPickle();
    return;
  }
  const size_t at = rng.Below(ops->size());
  switch (rng.Below(9)) {
    case 0:  // drop
      if (ops->size() > 1) ops->erase(ops->begin() + static_cast<ptrdiff_t>(at));
      break;
    case 1:  // duplicate
      ops->insert(ops->begin() + static_cast<ptrdiff_t>(at), (*ops)[at]);
      break;
    case 2:  // swap with the next
      if (at + 1 < ops->size()) std::swap((*ops)[at], (*ops)[at + 1]);
      break;
    case 3: {  // a sibling opcode
      PickleOp& o = (*ops)[at];
      for (std::string_view family : kFamilies) {
        if (family.find(static_cast<char>(o.code)) == std::string_view::npos) continue;
        const uint8_t code = static_cast<uint8_t>(family[rng.Below(family.size())]);
        const bool same_kind = KindOf(code) == KindOf(o.code);
        o.code = code;
        if (!same_kind) o.arg = RandomArg(code, rng);
        break;
      }
      break;
    }
    case 4:
    case 5:
      MutateArg(&(*ops)[at], *ops, rng);
      break;
    case 6: {  // copy a run of opcodes elsewhere (a value built twice, a call repeated)
      const size_t length = 1 + rng.Below(std::min<size_t>(16, ops->size() - at));
      const std::vector<PickleOp> run(ops->begin() + static_cast<ptrdiff_t>(at),
                                      ops->begin() + static_cast<ptrdiff_t>(at + length));
      const size_t to = rng.Below(ops->size() + 1);
      ops->insert(ops->begin() + static_cast<ptrdiff_t>(to), run.begin(), run.end());
      break;
    }
    default: {  // insert a snippet (before STOP when it is last)
      const std::vector<PickleOp> snippet = Snippet(*ops, rng);
      ops->insert(ops->begin() + static_cast<ptrdiff_t>(at), snippet.begin(), snippet.end());
      break;
    }
  }
}

}  // namespace

size_t DecodePickle(std::string_view bytes, std::vector<PickleOp>* ops) {
  size_t pos = 0;
  // A FRAME's argument becomes its length beyond its contents (what EncodePickle adds):
  // zero for every frame CPython's pickler writes.
  struct OpenFrame { size_t op_index; size_t contents_begin; uint64_t length; };
  std::vector<OpenFrame> frames;
  auto frame_deltas = [&](size_t end) {
    for (size_t k = 0; k < frames.size(); ++k) {
      const size_t contents_end = k + 1 < frames.size() ? frames[k + 1].contents_begin - 9 : end;
      const uint64_t delta = frames[k].length - (contents_end - frames[k].contents_begin);
      (*ops)[frames[k].op_index].arg = LittleEndian(delta, 8);
    }
  };
  while (pos < bytes.size()) {
    const uint8_t code = static_cast<uint8_t>(bytes[pos]);
    const stguard::OpcodeInfo* info = stguard::FindOpcode(code);
    if (info == nullptr) break;
    size_t arg_begin = pos + 1;
    size_t arg_len = 0;
    size_t next = 0;
    if (const size_t width = FixedWidth(info->arg); width != 0) {
      arg_len = width;
      next = arg_begin + width;
    } else if (const size_t length_width = LengthWidth(info->arg); length_width != 0) {
      if (bytes.size() - arg_begin < length_width) break;
      const uint64_t length = ReadLittleEndian(bytes.substr(arg_begin, length_width));
      arg_begin += length_width;
      if (length > bytes.size() - arg_begin) break;
      arg_len = static_cast<size_t>(length);
      next = arg_begin + arg_len;
    } else if (info->arg == ArgKind::kLine || info->arg == ArgKind::kTwoLines) {
      size_t end = bytes.find('\n', arg_begin);
      if (end != std::string_view::npos && info->arg == ArgKind::kTwoLines) {
        end = bytes.find('\n', end + 1);
      }
      if (end == std::string_view::npos) break;
      arg_len = end - arg_begin;
      next = end + 1;
    } else {
      next = arg_begin;
    }
    if (next > bytes.size()) break;
    if (code == op::kFrame) {
      frames.push_back({ops->size(), next, ReadLittleEndian(bytes.substr(arg_begin, 8))});
    }
    ops->push_back(PickleOp{code, std::string(bytes.substr(arg_begin, arg_len))});
    pos = next;
    if (code == op::kStop) {
      frame_deltas(pos);
      return pos;
    }
  }
  frame_deltas(pos);
  return 0;
}

std::string EncodePickle(const std::vector<PickleOp>& ops) {
  std::string out;
  size_t frame_length_at = std::string::npos;  // where the open FRAME's length goes
  int64_t frame_delta = 0;  // the open FRAME's length beyond (or short of) its contents
  auto close_frame = [&] {
    if (frame_length_at == std::string::npos) return;
    const auto contents = static_cast<int64_t>(out.size() - (frame_length_at + 8));
    const int64_t length = std::max<int64_t>(0, contents + frame_delta);
    out.replace(frame_length_at, 8, LittleEndian(static_cast<uint64_t>(length), 8));
    frame_length_at = std::string::npos;
  };
  for (const PickleOp& o : ops) {
    const ArgKind kind = KindOf(o.code);
    if (o.code == op::kFrame) close_frame();
    out.push_back(static_cast<char>(o.code));
    if (o.code == op::kFrame) {
      frame_length_at = out.size();
      frame_delta = FrameDelta(o);
      out.append(8, '\0');
    } else if (const size_t width = FixedWidth(kind); width != 0) {
      std::string arg = o.arg;
      arg.resize(width, '\0');
      out += arg;
    } else if (const size_t length_width = LengthWidth(kind); length_width != 0) {
      const std::string_view payload =
          length_width == 1 ? std::string_view(o.arg).substr(0, 255) : std::string_view(o.arg);
      out += LittleEndian(payload.size(), length_width);
      out += payload;
    } else if (kind == ArgKind::kLine || kind == ArgKind::kTwoLines) {
      out += o.arg;
      out.push_back('\n');
    }
  }
  close_frame();
  return out;
}

void MakeTarShaped(std::string* bytes) {
  constexpr size_t kBlock = 512, kChecksumAt = 148;
  if (bytes->size() < kBlock) bytes->resize(kBlock, '\0');
  uint64_t sum = 256;  // the checksum field counts as eight spaces
  for (size_t k = 0; k < kBlock; ++k) {
    if (k < kChecksumAt || k >= kChecksumAt + 8) sum += static_cast<unsigned char>((*bytes)[k]);
  }
  std::string field(8, '\0');
  for (size_t k = 6; k-- > 0; sum >>= 3) field[k] = static_cast<char>('0' + (sum & 7));
  field[7] = ' ';  // "%06o\0 ", as tarfile writes it
  bytes->replace(kChecksumAt, 8, field);
}

std::vector<PickleOp> StateDictPickle() {
  std::vector<PickleOp> ops = {Op(op::kProto, "\x02"), Op(op::kEmptyDict), Op(op::kMark),
                               Text("w"),
                               Global("torch._utils", "_rebuild_tensor_v2"), Op(op::kMark),
                               Op(op::kMark), Text("storage"), Global("torch", "FloatStorage"),
                               Text("0"), Text("cpu"), Int(2), Op(op::kTuple),
                               Op(op::kBinPersId), Int(0), Int(2), Op(op::kTuple1), Int(1),
                               Op(op::kTuple1), Op(op::kNewFalse),
                               Global("collections", "OrderedDict"), Op(op::kEmptyTuple),
                               Op(op::kReduce), Op(op::kTuple), Op(op::kReduce),
                               Op(op::kSetItems), Op(op::kStop)};
  return ops;
}

void MutatePickleOps(std::vector<PickleOp>* ops, Rng& rng) {
  // One change half the time: a pickle is a program, and each change is likely to break it.
  const size_t changes = rng.OneIn(2) ? 1 : 2 + rng.Below(3);
  for (size_t i = 0; i < changes; ++i) MutateOnce(ops, rng);
  // Most pickles should still end in STOP, or the reader stops at the end every time.
  if (!rng.OneIn(16) && (ops->empty() || ops->back().code != op::kStop)) {
    ops->push_back(Op(op::kStop));
  }
}

size_t MutatePickle(uint8_t* data, size_t size, size_t max_size, unsigned seed) {
  Rng rng(seed);
  if (ByteLevelOnly() || rng.OneIn(16)) return ByteLevelMutate(data, size, max_size, seed);
  std::vector<PickleOp> ops;
  DecodePickle(std::string_view(reinterpret_cast<const char*>(data), size), &ops);
  if (ops.empty()) {
    if (rng.OneIn(2)) return ByteLevelMutate(data, size, max_size, seed);
    ops = StateDictPickle();
  } else if (rng.OneIn(4)) {
    // A corpus fills up with refused pickles (each new refusal is new coverage), and
    // mutating a refused pickle rarely makes an accepted one: now and then start again
    // from a state dict, so that the acceptance-side checks keep running.
    ops = StateDictPickle();
  }
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  for (int attempt = 0; attempt < 4; ++attempt) {
    std::vector<PickleOp> changed = ops;
    MutatePickleOps(&changed, rng);
    std::string encoded = EncodePickle(changed);
    // A frame longer than its contents needs bytes after STOP to reach into (else it is
    // merely truncated): another copy of the pickle, as a legacy stream's next one.
    if (std::any_of(changed.begin(), changed.end(), [](const PickleOp& o) {
          return o.code == op::kFrame && FrameDelta(o) > 0;
        })) {
      encoded += encoded;
    }
    if (rng.OneIn(32)) MakeTarShaped(&encoded);
    if (encoded != input) {
      if (const size_t out = CopyOut(encoded, data, max_size); out != 0) return out;
    }
  }
  return ByteLevelMutate(data, size, max_size, seed);
}

size_t CrossOverPickle(const uint8_t* data1, size_t size1, const uint8_t* data2, size_t size2,
                       uint8_t* out, size_t max_out_size, unsigned seed) {
  Rng rng(seed);
  std::vector<PickleOp> first;
  std::vector<PickleOp> second;
  DecodePickle(std::string_view(reinterpret_cast<const char*>(data1), size1), &first);
  DecodePickle(std::string_view(reinterpret_cast<const char*>(data2), size2), &second);
  if (ByteLevelOnly() || first.empty() || second.empty()) {
    const size_t head = std::min(rng.Below(size1 + 1), max_out_size);
    const size_t tail = std::min(rng.Below(size2 + 1), max_out_size - head);
    std::memcpy(out, data1, head);
    std::memcpy(out + head, data2 + size2 - tail, tail);
    return head + tail;
  }
  // Opcodes [0, cut1) of the first, then [cut2, end) of the second: a prefix that builds
  // some values and a suffix that consumes them.
  const size_t cut1 = rng.Below(first.size() + 1);
  const size_t cut2 = rng.Below(second.size() + 1);
  first.resize(cut1);
  first.insert(first.end(), second.begin() + static_cast<ptrdiff_t>(cut2), second.end());
  const std::string encoded = EncodePickle(first);
  if (encoded.empty() || encoded.size() > max_out_size) return 0;
  std::memcpy(out, encoded.data(), encoded.size());
  return encoded.size();
}

}  // namespace stguard_fuzz::mutator
