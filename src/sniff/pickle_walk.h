// SPDX-License-Identifier: Apache-2.0
// sniff/pickle_walk.h: whether a file reads as a pickle from byte 0, for SniffFormat and
// for naming the call a protocol 0 or 1 pickle makes (stguard's reader reads only the
// protocols torch.save writes).
#ifndef STGUARD_SRC_SNIFF_PICKLE_WALK_H_
#define STGUARD_SRC_SNIFF_PICKLE_WALK_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace stguard {

// PickleWalk is how far the pickle machine gets from byte 0.
enum class PickleWalk : uint8_t {
  kRejected,  // a byte it refuses comes first: not a pickle
  kStops,     // it reaches a STOP (or opens marks past kMaxSniffMarks): a pickle
  kCalls,     // it reaches an opcode that calls out of the machine: a pickle
};

struct PickleWalkResult {
  PickleWalk outcome = PickleWalk::kRejected;
  uint64_t offset = 0;  // kStops, kCalls: the opcode's offset
  uint8_t opcode = 0;
  std::string module;   // kCalls through GLOBAL or INST: the names it imports
  std::string name;
  // ran_out: kRejected only because `bytes` ended (inside an argument, or before a STOP).
  // A caller that passed a prefix of a file cannot tell that file from a pickle.
  bool ran_out = false;
};

// kMaxSniffWalkLen bounds the bytes SniffFormat walks in a file that is not shaped like
// safetensors: a file still walking as a pickle past this many bytes is taken for one.
inline constexpr size_t kMaxSniffWalkLen = size_t{1} << 20;

// kMaxSniffMarks bounds the marks the walk keeps (8 bytes each). A file that opens more
// is treated as a pickle: no text or image does that.
inline constexpr size_t kMaxSniffMarks = size_t{1} << 16;

// WalkPickle runs the machine's checks (opcodes, arguments, stack and marks) over `bytes`
// from byte 0 until a STOP, an opcode that calls out, or a byte it rejects.
PickleWalkResult WalkPickle(std::span<const std::byte> bytes);

}  // namespace stguard

#endif  // STGUARD_SRC_SNIFF_PICKLE_WALK_H_
