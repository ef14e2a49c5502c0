// SPDX-License-Identifier: Apache-2.0
// Alignment properties (ALIGNMENT in stguard/reader.h), over random tensor sets of every
// dtype (support/tensor_set_gen.h):
// (1) in a canonical file every tensor's data begins at a file offset that is a multiple
//     of its element size, so Options::require_aligned_data accepts it and, in an
//     8-aligned buffer, every TensorView::is_aligned();
// (2) with the data buffer moved by 1..7 header spaces (a valid, non-canonical file),
//     require_aligned_data rejects exactly when some tensor lost its alignment, naming the
//     first such tensor in file order, and is_aligned() agrees with the file offsets.
// The expected alignment comes from the table below, not from the library.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "stguard/dtype.h"
#include "stguard/reader.h"
#include "support/tensor_set.h"
#include "support/tensor_set_gen.h"
#include "support/test_files.h"

namespace stguard {
namespace {

// ExpectedAlignment is the element size in bytes of the types wider than a byte; every
// other dtype (bytes, booleans, sub-byte floats) needs no alignment.
uint64_t ExpectedAlignment(Dtype dtype) {
  static const std::map<std::string_view, uint64_t> kWide = {
      {"F64", 8}, {"I64", 8}, {"U64", 8}, {"C64", 8}, {"F32", 4}, {"I32", 4},
      {"U32", 4}, {"F16", 2}, {"BF16", 2}, {"I16", 2}, {"U16", 2}};
  const auto it = kWide.find(DtypeName(dtype));
  return it == kWide.end() ? 1 : it->second;
}

// AlignedCopy holds bytes at an address that is a multiple of 8, as a page-aligned
// mapping would (std::string's buffer promises less).
class AlignedCopy {
 public:
  explicit AlignedCopy(std::string_view bytes) : words_(bytes.size() / 8 + 1), size_(bytes.size()) {
    std::memcpy(words_.data(), bytes.data(), bytes.size());
  }
  std::span<const std::byte> bytes() const {
    return {reinterpret_cast<const std::byte*>(words_.data()), size_};
  }

 private:
  std::vector<uint64_t> words_;
  size_t size_;
};

uint64_t HeaderLen(std::string_view file) {
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = n << 8 | static_cast<uint8_t>(file[i]);
  return n;
}

RC_GTEST_PROP(AlignmentProp, CanonicalFilesAlignEveryTensorToItsElementSize, ()) {
  const testing::TensorSet set = *testing::GenTensorSet();
  Result<std::string> written = testing::WriteSet(set);
  RC_ASSERT(written.ok());
  const uint64_t data_start = 8 + HeaderLen(*written);
  RC_ASSERT(data_start % 8 == 0u);

  const AlignedCopy copy(*written);
  Options aligned;
  aligned.require_aligned_data = true;
  Result<Checkpoint> checkpoint = Checkpoint::FromBytes(copy.bytes(), aligned);
  RC_ASSERT(checkpoint.ok());
  for (const TensorView& tensor : checkpoint->tensors()) {
    RC_ASSERT((data_start + tensor.begin) % ExpectedAlignment(tensor.dtype) == 0u);
    RC_ASSERT(tensor.is_aligned());
  }
}

RC_GTEST_PROP(AlignmentProp, RequireAlignedDataRejectsExactlyTheMisalignedFiles, ()) {
  const testing::TensorSet set = *testing::GenTensorSet();
  Result<std::string> written = testing::WriteSet(set);
  RC_ASSERT(written.ok());
  const uint64_t header_len = HeaderLen(*written);
  const uint64_t shift = *rc::gen::inRange<uint64_t>(1, 8);
  // Spaces after the header's closing brace are valid: only the data moves.
  const std::string shifted = testing::FileWithN(
      header_len + shift,
      written->substr(8, header_len) + std::string(shift, ' '),
      std::string_view(*written).substr(8 + header_len));
  const uint64_t data_start = 8 + header_len + shift;
  const AlignedCopy copy(shifted);

  Result<Checkpoint> loose = Checkpoint::FromBytes(copy.bytes());
  RC_ASSERT(loose.ok());
  const TensorView* first_misaligned = nullptr;
  for (const TensorView& tensor : loose->tensors()) {  // file order
    const bool aligned = (data_start + tensor.begin) % ExpectedAlignment(tensor.dtype) == 0;
    RC_ASSERT(tensor.is_aligned() == aligned);
    if (!aligned && first_misaligned == nullptr) first_misaligned = &tensor;
  }
  RC_CLASSIFY(first_misaligned != nullptr, "misaligned");

  Options strict;
  strict.require_aligned_data = true;
  Result<Checkpoint> checked = Checkpoint::FromBytes(copy.bytes(), strict);
  if (first_misaligned == nullptr) {
    RC_ASSERT(checked.ok());
  } else {
    RC_ASSERT(!checked.ok());
    RC_ASSERT(checked.error().code == ErrorCode::kMisalignedData);
    RC_ASSERT(checked.error().tensor == std::string(first_misaligned->name));
    RC_ASSERT(checked.error().offset == first_misaligned->header_offset);
  }
}

}  // namespace
}  // namespace stguard
