// SPDX-License-Identifier: Apache-2.0
// fuzz_npy: arbitrary bytes as a whole .npy file.
//
// Every rejection is a well-formed Error with an offset inside the input. Every accepted
// file keeps the reader's promises: the data ends exactly at the end of the input and
// begins at a multiple of 16 after a header of at most 10,000 bytes; shape and descr
// imply exactly that many bytes; the descr parses alone to the same type; and the
// verdict depends on the header and the file size only (the same header with any other
// data bytes of the same length gets the same answer, so no data byte is read).
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "npy_mutator.h"
#include "stguard/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const stguard_fuzz::ExactCopy input(data, size);
  const std::span<const std::byte> bytes = input.bytes();
  const stguard::Result<stguard::NpyArrayInfo> result = stguard::ParseNpy(bytes, size);
  stguard_fuzz::CountExecution(result.ok());
  if (!result.ok()) {
    FUZZ_CHECK(result.error().code != stguard::ErrorCode::kOk);
    FUZZ_CHECK(result.error().offset <= size);
    FUZZ_CHECK(result.error().message != nullptr && result.error().message[0] != '\0');
    return 0;
  }
  const stguard::NpyArrayInfo& info = *result;
  FUZZ_CHECK(info.header_len <= stguard::kNpyMaxHeaderLen);
  FUZZ_CHECK(info.data_offset % 16 == 0);
  FUZZ_CHECK(info.data_offset + info.data_len == size);
  FUZZ_CHECK(info.type.itemsize > 0 || info.type.kind == 'V');  // numpy writes '|V0'
  FUZZ_CHECK(info.shape.size() <= stguard::kNpyMaxDims);
  uint64_t count = 1;
  for (uint64_t dim : info.shape) count *= dim;  // cannot wrap: the reader checked it
  FUZZ_CHECK(count * info.type.itemsize == info.data_len);
  // np.load holds the element count of the non-zero dimensions in an intp whatever the
  // item size, V0 included: an accepted shape keeps it below 2**63.
  uint64_t nonzero = 1;
  for (uint64_t dim : info.shape) {
    if (dim == 0) continue;
    FUZZ_CHECK(!__builtin_mul_overflow(nonzero, dim, &nonzero) && nonzero <= INT64_MAX);
  }
  const auto alone = stguard::ParseNpyDescr(info.descr, 0);
  FUZZ_CHECK(alone.ok() && alone->itemsize == info.type.itemsize &&
             alone->dtype == info.type.dtype && alone->kind == info.type.kind);
  // Only the header decides: the header alone, with the file's size, gets the same verdict.
  const auto header_only = stguard::ParseNpy(bytes.first(info.data_offset), size);
  FUZZ_CHECK(header_only.ok() && header_only->shape == info.shape &&
             header_only->descr == info.descr);
  return 0;
}

// Structure-aware mutation (npy_mutator.h): the preamble, padding and data length follow
// the mutated dict, so mutations reach the dict's own rules.
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  return stguard_fuzz::mutator::MutateNpy(data, size, max_size, seed);
}
