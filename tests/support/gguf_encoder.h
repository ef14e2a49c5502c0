// SPDX-License-Identifier: Apache-2.0
// A small GGUF encoder for tests and fuzzing (not a product writer): a GgufModel describes
// a file piece by piece, and Encode lays it out as ggml does (infos, padding to the
// alignment, each tensor padded), unless a field says to lie. Shared by the GoogleTest
// suites, the reference differential and the fuzz mutator.
#ifndef STGUARD_TESTS_SUPPORT_GGUF_ENCODER_H_
#define STGUARD_TESTS_SUPPORT_GGUF_ENCODER_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stguard::testing {

// GgufKv is one key/value pair. `payload` is what follows the type field(s): the value's
// bytes for a scalar (a string with its u64 length), the elements for an array.
struct GgufKv {
  std::string key;
  uint32_t type = 0;          // gguf_type; 9 for arrays
  uint32_t element_type = 0;  // arrays only
  uint64_t count = 0;         // arrays only: the element count written
  std::string payload;
};

// GgufTensor is one tensor info plus its data. Without `offset`, Encode places it where
// ggml would (the previous tensor's end rounded up); without `data`, its bytes are
// byte_size bytes of a non-zero pattern (so padding checks cannot pass by accident).
struct GgufTensor {
  std::string name;
  uint32_t type = 0;
  std::vector<uint64_t> ne;  // ggml order, innermost first; its size is n_dims
  std::optional<uint64_t> offset;
  std::optional<std::string> data;
};

struct GgufModel {
  uint32_t version = 3;
  uint32_t alignment = 32;  // the layout's alignment; add general.alignment to declare it
  std::vector<GgufKv> kvs;
  std::vector<GgufTensor> tensors;
  std::optional<uint64_t> num_tensors;  // lies: written instead of tensors.size()
  std::optional<uint64_t> num_kvs;      // lies: written instead of kvs.size()
  std::string trailing;                 // bytes appended after the last tensor's padding
  bool pad_last = true;                 // pad the last tensor to the alignment
};

// Value builders (little-endian encodings).
std::string GgufString(std::string_view text);  // u64 length + bytes
GgufKv GgufU8(std::string key, uint8_t value);
GgufKv GgufI8(std::string key, int8_t value);
GgufKv GgufU16(std::string key, uint16_t value);
GgufKv GgufI16(std::string key, int16_t value);
GgufKv GgufU32(std::string key, uint32_t value);
GgufKv GgufI32(std::string key, int32_t value);
GgufKv GgufF32(std::string key, float value);
GgufKv GgufBool(std::string key, bool value);
GgufKv GgufStr(std::string key, std::string_view value);
GgufKv GgufU64(std::string key, uint64_t value);
GgufKv GgufI64(std::string key, int64_t value);
GgufKv GgufF64(std::string key, double value);
GgufKv GgufStrArray(std::string key, const std::vector<std::string>& values);
GgufKv GgufI32Array(std::string key, const std::vector<int32_t>& values);

// GgufTypeSizes gives (block size, bytes per block) for the ggml ids the encoder knows
// (the table is stguard's own, from stguard/gguf.h); {1, 1} for unknown ids.
std::array<uint64_t, 2> GgufTypeSizes(uint32_t type);
// GgufTensorBytes is a tensor's byte size from its type and ne (no overflow checks: tests
// keep it small).
uint64_t GgufTensorBytes(const GgufTensor& tensor);

// Encode returns the file's bytes.
std::string Encode(const GgufModel& model);

// SimpleGgufModel is a small valid model: a few keys of several types and two tensors.
GgufModel SimpleGgufModel();

}  // namespace stguard::testing

#endif  // STGUARD_TESTS_SUPPORT_GGUF_ENCODER_H_
