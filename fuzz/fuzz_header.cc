// SPDX-License-Identifier: Apache-2.0
// fuzz_header: arbitrary bytes as a whole safetensors file.
//
// Every rejection is a well-formed Error with an offset inside the input. Every accepted
// file keeps the reader's promises (spans inside the buffer, exact tiling, Find, sizes;
// see checkpoint_checks.h), and the reader agrees with the independent reference checker
// (fuzz/reference_checker.cc) on the verdict and, when accepted, on every tensor's name,
// dtype, shape and offsets and on the metadata.
#include <cstddef>
#include <cstdint>

#include "checkpoint_checks.h"
#include "fuzz_support.h"
#include "reference_checker.h"
#include "safetensors_mutator.h"
#include "stguard/reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const stguard_fuzz::ExactCopy input(data, size);
  const stguard::Result<stguard::Checkpoint> result =
      stguard::Checkpoint::FromBytes(input.bytes());
  stguard_fuzz::CountExecution(result.ok());  // the acceptance-side checks below
  if (result.ok()) {
    stguard_fuzz::CheckInvariants(*result, input.bytes());
    // Options only make the reader stricter, and do what they say: a header cap below N
    // rejects at the prefix; max_depth 2 admits no tensor entry (their arrays sit at
    // depth 3) and max_depth 3 admits every valid header.
    const uint64_t n = result->header_len();
    if (n > 0) {
      stguard::Options small_cap;
      small_cap.max_header_len = n - 1;
      const auto capped = stguard::Checkpoint::FromBytes(input.bytes(), small_cap);
      FUZZ_CHECK(!capped.ok() && capped.error().code == stguard::ErrorCode::kHeaderTooLarge);
    }
    stguard::Options shallow;
    shallow.max_depth = 2;
    const auto two = stguard::Checkpoint::FromBytes(input.bytes(), shallow);
    if (result->num_tensors() == 0) {
      FUZZ_CHECK(two.ok());
    } else {
      FUZZ_CHECK(!two.ok() && two.error().code == stguard::ErrorCode::kDepthExceeded);
    }
    shallow.max_depth = 3;
    FUZZ_CHECK(stguard::Checkpoint::FromBytes(input.bytes(), shallow).ok());
  } else {
    stguard_fuzz::CheckRejection(result.error(), size);
  }
  stguard_fuzz::CheckAgreesWithReference(result, stguard_fuzz::reference::CheckFile(input.text()));
  return 0;
}

// Structure-aware mutation (fuzz/safetensors_mutator.h): decode, change the tensor set and
// its text, re-encode; byte-level mutation for what does not decode.
STGUARD_FUZZ_CUSTOM_MUTATORS(stguard_fuzz::mutator::MutateSafetensors,
                             stguard_fuzz::mutator::CrossOverSafetensors)
