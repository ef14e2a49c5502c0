// SPDX-License-Identifier: Apache-2.0
// The canonical layout of a safetensors file: tensor order, data offsets and header text.
// One plan serves the writer (which then streams the data) and the canonical check (which
// only compares the header).
#ifndef STGUARD_SRC_WRITE_CANONICAL_HEADER_H_
#define STGUARD_SRC_WRITE_CANONICAL_HEADER_H_

#include <charconv>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "stguard/dtype.h"
#include "stguard/error.h"
#include "stguard/shape.h"

namespace stguard {

// PlanTensor is what the plan needs to know about one tensor: not its bytes.
struct PlanTensor {
  std::string_view name;
  Dtype dtype = Dtype::kBOOL;
  Shape shape;
  uint64_t byte_len = 0;  // the number of bytes the caller will supply
};

struct PlanMetadata {
  std::string_view key;
  std::string_view value;
};

// CanonicalPlan is the canonical file for a set of tensors, less the data itself.
struct CanonicalPlan {
  std::vector<uint32_t> order;  // input indexes of the tensors, in canonical order
  std::vector<uint64_t> begin;  // begin[i]: data offset of tensor order[i]
  std::string header;           // the N header bytes: JSON text, then spaces
  uint64_t text_len = 0;        // the JSON text's length, without the spaces
  uint64_t data_len = 0;        // size of the data buffer
  uint64_t file_size = 0;       // 8 + N + data_len
};

// CheckTensorEntry checks what can be checked of one tensor alone: the reserved name,
// UTF-8, the size that dtype and shape imply, and that byte_len equals it. Returns an Error
// (kOk when all pass) naming the tensor.
Error CheckTensorEntry(const PlanTensor& tensor);

// CheckMetadataEntry checks that key and value are valid UTF-8.
Error CheckMetadataEntry(const PlanMetadata& entry);

// PlanCanonicalFile checks every entry, then duplicates, then the sizes, and lays the file
// out. The first failed check is returned; see the POLICY block in stguard/writer.h.
Result<CanonicalPlan> PlanCanonicalFile(std::span<const PlanTensor> tensors,
                                        std::span<const PlanMetadata> metadata);

// AppendUint appends value in decimal, as the canonical header writes integers (no sign,
// no leading zeros). Inline: it runs once per dimension and offset of every tensor.
inline void AppendUint(uint64_t value, std::string* out) {
  char digits[20];  // UINT64_MAX has 20 digits
  const auto result = std::to_chars(digits, digits + sizeof(digits), value);
  out->append(digits, result.ptr);
}

// EncodeLengthPrefix returns N as the 8 little-endian bytes that start the file.
std::string EncodeLengthPrefix(uint64_t header_len);

}  // namespace stguard

#endif  // STGUARD_SRC_WRITE_CANONICAL_HEADER_H_
