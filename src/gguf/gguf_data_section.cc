// SPDX-License-Identifier: Apache-2.0
// The data section: it starts at the first multiple of the alignment after the tensor
// infos; tensor i starts where tensor i-1 ends rounded up to the alignment (the offsets
// are stored, and must say exactly that); every padding byte is zero, and the file ends
// exactly at the last tensor's padded end (ggml's full load reads that much; a file of
// zero-byte tensors only, or of none, needs no padding). Only padding bytes are read,
// never data, and only through the caller's ZeroCheck (the mapping, a byte source, or
// nothing when the file is read remotely and the padding is not worth a request per
// tensor); the padding's length needs no read.
#include <string>

#include "base/checked_math.h"
#include "gguf/gguf_internal.h"

namespace stguard::gguf {

namespace {

// AlignUp rounds `offset` up to a multiple of `alignment` (a power of two), or fails on
// overflow.
bool AlignUp(uint64_t offset, uint32_t alignment, uint64_t* out) {
  if (!CheckedAdd(offset, alignment - 1, out)) return false;
  *out &= ~static_cast<uint64_t>(alignment - 1);
  return true;
}

Error CheckTensor(uint64_t file_size, uint64_t data_offset, uint64_t expected,
                  TensorInfo* tensor) {
  if (tensor->offset != expected) {
    return {ErrorCode::kGgufTensorOffset, tensor->info_offset,
            "a tensor's offset is not where the previous tensor ends, rounded up to the "
            "alignment",
            std::to_string(tensor->offset) + " != " + std::to_string(expected),
            std::string(tensor->name)};
  }
  uint64_t end = 0;
  if (!CheckedAdd(data_offset, tensor->offset, &tensor->absolute_offset) ||
      !CheckedAdd(tensor->absolute_offset, tensor->byte_size, &end) || end > file_size) {
    return {ErrorCode::kGgufTensorOutOfFile, tensor->info_offset,
            "a tensor's bytes reach past the end of the file",
            std::to_string(tensor->byte_size) + " bytes", std::string(tensor->name)};
  }
  return {};
}

// CheckZerosIfAsked runs `zeros` when there is one; without it the padding is not read.
Error CheckZerosIfAsked(const ZeroCheck& zeros, uint64_t begin, uint64_t end,
                        std::string_view after) {
  return zeros ? zeros(begin, end, after) : Error{};
}

}  // namespace

Error FirstNonZero(std::span<const std::byte> bytes, uint64_t offset, std::string_view after) {
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (bytes[i] != std::byte{0}) {
      return {ErrorCode::kGgufNonZeroPadding, offset + i, "a padding byte is not zero", "",
              std::string(after)};
    }
  }
  return {};
}

Error CheckDataSection(uint64_t file_size, uint64_t infos_end, uint32_t alignment,
                       std::vector<TensorInfo>* tensors, uint64_t* data_offset,
                       const ZeroCheck& zeros) {
  AlignUp(infos_end, alignment, data_offset);  // infos_end <= file size: cannot overflow
  uint64_t expected = 0;   // relative offset where the next tensor must start
  uint64_t content_end = infos_end;  // absolute end of the last real bytes
  std::string_view previous = "";
  for (TensorInfo& tensor : *tensors) {
    if (Error error = CheckTensor(file_size, *data_offset, expected, &tensor); !error.ok()) {
      return error;
    }
    // The padding before this tensor: from the previous content's end to its start.
    const uint64_t gap_begin = std::min(content_end, tensor.absolute_offset);
    if (Error error = CheckZerosIfAsked(zeros, gap_begin, tensor.absolute_offset, previous);
        !error.ok()) {
      return error;
    }
    content_end = tensor.absolute_offset + tensor.byte_size;
    uint64_t padded = 0;
    AlignUp(tensor.byte_size, alignment, &padded);  // byte_size < file size: no overflow
    expected = tensor.offset + padded;
    previous = tensor.name;
  }
  // After the last real byte: at most the padding to the next aligned offset, all zeros.
  uint64_t padded_end = 0;
  AlignUp(content_end, alignment, &padded_end);
  if (file_size > padded_end) {
    return {ErrorCode::kGgufTrailingBytes, padded_end,
            "bytes follow the last tensor's alignment padding",
            std::to_string(file_size - padded_end) + " bytes"};
  }
  // ggml's full load (no_alloc = false) reads every tensor's padded size from the data
  // section's start, so it refuses a file cut inside the last padding; checked from the
  // size alone, so a remote check (which reads no padding) gives the same verdict.
  if (expected != 0 && file_size < *data_offset + expected) {
    return {ErrorCode::kGgufMissingPadding, file_size,
            "the file ends before the last tensor's alignment padding",
            std::to_string(*data_offset + expected - file_size) + " bytes missing",
            std::string(previous)};
  }
  return CheckZerosIfAsked(zeros, content_end, file_size, previous);
}

}  // namespace stguard::gguf
