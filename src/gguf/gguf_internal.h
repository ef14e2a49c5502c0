// SPDX-License-Identifier: Apache-2.0
// The stages of GGUF validation, in the order GgufFile runs them. Each reads from one
// GgufCursor and returns an Error whose offset is absolute in the file.
#ifndef STGUARD_SRC_GGUF_GGUF_INTERNAL_H_
#define STGUARD_SRC_GGUF_GGUF_INTERNAL_H_

#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "gguf/gguf_cursor.h"
#include "stguard/error.h"
#include "stguard/gguf.h"

namespace stguard::gguf {

// The fixed header: magic, version, tensor count and key/value count.
struct GgufHeader {
  uint32_t version = 0;
  uint64_t num_tensors = 0;
  uint64_t num_key_values = 0;
};

// gguf_header.cc: reads the magic, version and counts. Refuses a count that the bytes
// left could not hold even at the smallest encoding (so nothing is allocated from it).
Error ReadHeader(GgufCursor* cursor, GgufHeader* header);

// gguf_values.cc: reads a GGUF string (u64 length + bytes) that must be valid UTF-8.
// `what` names it in errors ("key", "tensor name", "string value").
Error ReadString(GgufCursor* cursor, const char* what, std::string_view* out);
// gguf_values.cc: reads one value of `type` (after the key), arrays included, checking
// bools, UTF-8 and every length against the bytes left.
Error ReadValue(GgufCursor* cursor, uint32_t type, Value* out);

// gguf_keys.cc: the key/value section: `count` pairs, keys checked for syntax.
Error ReadMetadata(GgufCursor* cursor, uint64_t count, std::vector<MetadataEntry>* out);
// gguf_keys.cc: general.alignment, or the default when absent.
Error FindAlignment(const std::vector<MetadataEntry>& metadata, uint32_t* alignment);
// gguf_keys.cc: IsValidKey says whether `key` follows the key syntax.
bool IsValidKey(std::string_view key);

// gguf_tensor_infos.cc: `count` tensor infos (name, dims, type, offset, byte size).
Error ReadTensorInfos(GgufCursor* cursor, uint64_t count, std::vector<TensorInfo>* out);

// ZeroCheck checks that the file's bytes [begin, end) (a padding run inside the file)
// are all zero, or returns kGgufNonZeroPadding at the first that is not, naming `after`,
// the tensor before it (FirstNonZero over the bytes does that).
using ZeroCheck = std::function<Error(uint64_t begin, uint64_t end, std::string_view after)>;
Error FirstNonZero(std::span<const std::byte> bytes, uint64_t offset, std::string_view after);

// gguf_data_section.cc: checks that the tensors tile the data section of a file of
// file_size bytes, which starts at the first multiple of `alignment` at or after
// `infos_end`, that the file ends exactly at the last tensor's padded end, and (through
// `zeros`, when given) that padding is zero; fills each tensor's absolute offset. Sets
// *data_offset.
Error CheckDataSection(uint64_t file_size, uint64_t infos_end, uint32_t alignment,
                       std::vector<TensorInfo>* tensors, uint64_t* data_offset,
                       const ZeroCheck& zeros);

// gguf_names.cc: fills *sorted with the indexes of the entries in byte order of their
// keys (tensor names) and refuses the first name that appears twice. Sorting, never
// pairwise comparison: O(n log n) whatever the names.
Error SortUniqueKeys(const std::vector<MetadataEntry>& entries, std::vector<uint32_t>* sorted);
Error SortUniqueNames(const std::vector<TensorInfo>& tensors, std::vector<uint32_t>* sorted);

}  // namespace stguard::gguf

#endif  // STGUARD_SRC_GGUF_GGUF_INTERNAL_H_
