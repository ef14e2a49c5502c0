// SPDX-License-Identifier: Apache-2.0
// fuzz_gguf: arbitrary bytes through the strict GGUF reader. A rejection has an offset
// inside the input. An accepted file's tensors tile the data section in order at aligned
// offsets inside the input, which ends exactly at the last one's padded end (when any has
// bytes), their sizes follow from type and ne (zero only in ne[0], the non-zero dims'
// product within 63 bits), no string holds a NUL, every metadata value can
// be read back, lookups find every key and tensor, and decoding then re-encoding the file
// (the mutator's model) gives a file with the same verdict and contents. Every tensor of
// a block type with a dequantizer is decoded (its first kMaxDequantElements elements, so
// an input stays fast): whatever the bytes, DequantizeRow succeeds and stays in bounds.
#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "gguf_mutator.h"
#include "stguard/gguf.h"
#include "stguard/gguf_dequant.h"

namespace {

using stguard::gguf::GgufFile;
using stguard::gguf::TensorInfo;
using stguard::gguf::Value;
using stguard::gguf::ValueType;

void CheckValue(const Value& value) {
  if (value.type == ValueType::kArray) {
    uint64_t seen = 0;
    value.StringElements([&](uint64_t i, std::string_view text) {
      FUZZ_CHECK(i == seen);
      FUZZ_CHECK(text.find('\0') == std::string_view::npos);
      ++seen;
      return true;
    });
    if (value.element_type == ValueType::kString) {
      FUZZ_CHECK(seen == value.count);
    } else {
      FUZZ_CHECK(value.bytes.size() == value.count * stguard::gguf::ValueTypeFixedSize(value.element_type));
      if (value.count > 0) FUZZ_CHECK(!value.Element(value.count - 1).bytes.empty());
    }
    return;
  }
  const bool readable = value.AsUnsigned() || value.AsSigned() || value.AsDouble() ||
                        value.AsBool() || value.AsString();
  FUZZ_CHECK(readable);
  if (value.AsString()) FUZZ_CHECK(value.AsString()->find('\0') == std::string_view::npos);
}

void CheckTensors(const GgufFile& file, size_t size) {
  FUZZ_CHECK(file.data_offset() % file.alignment() == 0 || file.tensors().empty());
  uint64_t expected = 0;
  for (const TensorInfo& tensor : file.tensors()) {
    FUZZ_CHECK(tensor.type != nullptr && tensor.n_dims >= 1 && tensor.n_dims <= 4);
    FUZZ_CHECK(tensor.offset == expected);
    FUZZ_CHECK(tensor.absolute_offset == file.data_offset() + tensor.offset);
    FUZZ_CHECK(tensor.absolute_offset % file.alignment() == 0);
    FUZZ_CHECK(tensor.absolute_offset <= size && tensor.byte_size <= size - tensor.absolute_offset);
    FUZZ_CHECK(tensor.data.size() == tensor.byte_size);
    FUZZ_CHECK(tensor.ne[0] % tensor.type->block_size == 0);
    FUZZ_CHECK(tensor.num_elements() / tensor.type->block_size * tensor.type->type_size ==
               tensor.byte_size);
    FUZZ_CHECK(tensor.shape().size() == tensor.n_dims && tensor.shape().front() == tensor.ne[tensor.n_dims - 1]);
    FUZZ_CHECK(file.FindTensor(tensor.name) == &tensor);
    FUZZ_CHECK(tensor.name.find('\0') == std::string_view::npos);
    uint64_t product = 1;
    for (uint32_t d = 0; d < stguard::gguf::kMaxDims; ++d) {
      FUZZ_CHECK(d == 0 || tensor.ne[d] != 0);
      if (tensor.ne[d] != 0) FUZZ_CHECK(!__builtin_mul_overflow(product, tensor.ne[d], &product));
    }
    FUZZ_CHECK(product <= static_cast<uint64_t>(INT64_MAX));
    expected = tensor.offset + (tensor.byte_size + file.alignment() - 1) / file.alignment() * file.alignment();
  }
  // ggml's full load reads every tensor's padded size: the last padding is all there.
  FUZZ_CHECK(expected == 0 || size == file.data_offset() + expected);
}

// kMaxDequantElements bounds the decoding per tensor (a fuzz input may claim many blocks
// of a tiny type).
constexpr uint64_t kMaxDequantElements = 1 << 16;

void CheckDequantize(const GgufFile& file) {
  std::vector<float> out;
  for (const TensorInfo& tensor : file.tensors()) {
    if (!stguard::gguf::CanDequantize(*tensor.type)) continue;
    const uint64_t block_size = tensor.type->block_size;
    const uint64_t n_blocks = std::min(tensor.num_elements(), kMaxDequantElements) / block_size;
    out.assign(n_blocks * block_size, 0.0f);
    const stguard::Error error = stguard::gguf::DequantizeRow(
        *tensor.type, tensor.data.first(n_blocks * tensor.type->type_size), out);
    FUZZ_CHECK_MSG(error.ok(), error.ToString());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const stguard_fuzz::ExactCopy input(data, size);
  stguard::Result<GgufFile> file = GgufFile::FromBytes(input.bytes());
  stguard_fuzz::CountExecution(file.ok());
  if (!file.ok()) {
    FUZZ_CHECK_MSG(file.error().offset <= size, file.error().ToString());
    return 0;
  }
  for (const stguard::gguf::MetadataEntry& entry : file->metadata()) {
    FUZZ_CHECK(file->FindKey(entry.key) == &entry);
    FUZZ_CHECK(entry.key.find('\0') == std::string_view::npos);
    CheckValue(entry.value);
  }
  CheckTensors(*file, size);
  CheckDequantize(*file);
  // Decoded and re-encoded, the file is read the same way (a round trip of the layout).
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::optional<stguard::testing::GgufModel> model = stguard_fuzz::mutator::DecodeGguf(text);
  FUZZ_CHECK(model.has_value());
  const std::string again = stguard::testing::Encode(*model);
  stguard::Result<GgufFile> reread =
      GgufFile::FromBytes(std::as_bytes(std::span(again.data(), again.size())));
  FUZZ_CHECK_MSG(reread.ok(), reread.error().ToString());
  FUZZ_CHECK(reread->metadata().size() == file->metadata().size());
  FUZZ_CHECK(reread->tensors().size() == file->tensors().size());
  return 0;
}

// Structure-aware mutation (gguf_mutator.h): one lie at a time in an otherwise valid file.
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  return stguard_fuzz::mutator::MutateGguf(data, size, max_size, seed);
}
