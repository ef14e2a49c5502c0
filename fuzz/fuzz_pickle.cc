// SPDX-License-Identifier: Apache-2.0
// fuzz_pickle: arbitrary bytes through the static pickle reader, in each persistent-id
// mode. Every rejection is an Error with an offset inside the input; every acceptance is a
// consistent value graph (ids in range, tensors naming existing storages, STOP inside).
#include <cstddef>
#include <cstdint>

#include "fuzz_support.h"
#include "pickle_mutator.h"
#include "pickle/pickle_reader.h"

namespace {

void CheckGraph(const stguard::PickleResult& result, size_t size) {
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
