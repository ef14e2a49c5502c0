// SPDX-License-Identifier: Apache-2.0
// fuzz_pickle: arbitrary bytes through the static pickle reader, in each persistent-id
// mode. Every rejection is an Error with an offset inside the input; every acceptance is a
// consistent value graph (ids in range, tensors naming existing storages, STOP inside)
// whose frames end by STOP and whose memo keys are dense, as CPython's pickler writes them,
// whose copies stay within the copy budget and whose memory is linear in the input.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "fuzz_support.h"
#include "pickle_mutator.h"
#include "pickle/opcodes.h"
#include "pickle/pickle_reader.h"

namespace {

// GraphBytes is what the value graph holds in memory (vector slack aside).
uint64_t GraphBytes(const stguard::PickleResult& result) {
  uint64_t bytes = 0;
  for (const stguard::PickleValue& value : result.values) {
    bytes += sizeof(value) + value.text.size() + value.items.size() * sizeof(stguard::ValueId);
  }
  for (const stguard::TensorRef& tensor : result.tensors) {
    bytes += sizeof(tensor) + (tensor.sizes.size() + tensor.strides.size()) * sizeof(int64_t);
  }
  for (const stguard::StorageRef& storage : result.storages) {
    bytes += sizeof(storage) + storage.key.size() + storage.location.size();
  }
  return bytes;
}

// The bound of pickle_reader.h (BOUNDS): an opcode adds at most one value, tensor or storage
// and a short text (an allowlisted global's name through STACK_GLOBAL), every container
// item is one pushed value, and what is copied out of shared values is charged.
constexpr uint64_t kGraphBytesPerInputByte = sizeof(stguard::PickleValue) +
                                             sizeof(stguard::TensorRef) +
                                             sizeof(stguard::StorageRef) + 64;

void CheckGraph(const stguard::PickleResult& result, size_t size) {
  FUZZ_CHECK(result.length >= 1 && result.length <= size);
  FUZZ_CHECK(result.copied_items <= stguard::CopyBudget(result.length));
  FUZZ_CHECK(GraphBytes(result) <=
             kGraphBytesPerInputByte * size + sizeof(int64_t) * result.copied_items);
  FUZZ_CHECK(result.root < result.values.size());
  FUZZ_CHECK(result.end >= 1 && result.end <= size);
  for (const stguard::PickleValue& value : result.values) {
    for (stguard::ValueId id : value.items) FUZZ_CHECK(id < result.values.size());
    FUZZ_CHECK(value.offset < size);
  }
  for (const stguard::TensorRef& tensor : result.tensors) {
    FUZZ_CHECK(tensor.storage < result.storages.size());
    FUZZ_CHECK(tensor.sizes.size() == tensor.strides.size());
  }
  // Bounded by the input: at most one value per byte.
  FUZZ_CHECK(result.values.size() <= size);
}

// CheckFramesAndMemo re-derives from the opcodes alone (the mutator's decoder, not the
// reader) two rules an accepted pickle meets so that torch reads it as stguard did: no
// FRAME reaches past STOP's end (where torch's next read starts would depend on its
// unpickler), and every BINPUT/LONG_BINPUT key is the next one, counting from 0 or, as
// Python 2's cPickle did, from 1 (torch's C unpickler allocates its memo by the key).
void CheckFramesAndMemo(std::string_view input, uint64_t end) {
  std::vector<stguard_fuzz::mutator::PickleOp> ops;
  FUZZ_CHECK(stguard_fuzz::mutator::DecodePickle(input.substr(0, end), &ops) == end);
  uint64_t at = 0;
  uint64_t memo_len = 0;
  uint64_t memo_base = 0;
  for (const stguard_fuzz::mutator::PickleOp& o : ops) {
    // The argument as stored in the input (the decoder keeps a FRAME's as a delta).
    const std::string_view raw = input.substr(at + 1, std::min<size_t>(o.arg.size(), 8));
    uint64_t value = 0;
    for (size_t k = raw.size(); k-- > 0;) value = (value << 8) | static_cast<uint8_t>(raw[k]);
    if (o.code == stguard::op::kFrame) {
      FUZZ_CHECK(value <= end - (at + 9));
      at += 9;
      continue;
    }
    if (o.code == stguard::op::kBinPut || o.code == stguard::op::kLongBinPut) {
      if (memo_len == 0 && value == 1) memo_base = 1;
      FUZZ_CHECK(value == memo_base + memo_len);
    }
    if (o.code == stguard::op::kBinPut || o.code == stguard::op::kLongBinPut ||
        o.code == stguard::op::kMemoize) {
      ++memo_len;
    }
    at += stguard_fuzz::mutator::EncodePickle({o}).size();
  }
  FUZZ_CHECK(at == end);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const stguard_fuzz::ExactCopy input(data, size);
  bool any_accepted = false;  // the graph checks ran in at least one mode
  for (stguard::PersistentIds ids : {stguard::PersistentIds::kNone, stguard::PersistentIds::kZip,
                                     stguard::PersistentIds::kLegacy}) {
    stguard::PickleReadOptions options;
    options.persistent_ids = ids;
    std::vector<stguard::GlobalUse> globals;
    stguard::Result<stguard::PickleResult> result =
        stguard::ReadPickle(input.bytes(), options, &globals);
    if (result.ok()) {
      any_accepted = true;
      CheckGraph(*result, size);
      CheckFramesAndMemo(input.text(), result->end);
      for (const stguard::GlobalUse& use : globals) FUZZ_CHECK(use.allowed);
    } else {
      const stguard::Error& error = result.error();
      FUZZ_CHECK_MSG(error.offset <= size, error.ToString());
      FUZZ_CHECK(error.code != stguard::ErrorCode::kOk);
      if (error.code == stguard::ErrorCode::kPickleGlobalRefused) {
        FUZZ_CHECK(!globals.empty() && !globals.back().allowed);
      }
    }
  }
  stguard_fuzz::CountExecution(any_accepted);
  return 0;
}

// Structure-aware mutation (pickle_mutator.h): most inputs stay well-formed enough to reach the checks.
STGUARD_FUZZ_CUSTOM_MUTATORS(stguard_fuzz::mutator::MutatePickle,
                             stguard_fuzz::mutator::CrossOverPickle)
