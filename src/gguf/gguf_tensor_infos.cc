// SPDX-License-Identifier: Apache-2.0
// Tensor infos: name, dim count, dims (ggml's ne, innermost first), type and offset. Each
// tensor's element count and byte size are computed here with overflow checks.
#include <algorithm>
#include <string>

#include "base/checked_math.h"
#include "gguf/gguf_internal.h"

namespace stguard::gguf {

namespace {

Error Truncated(const GgufCursor& cursor, std::string_view name) {
  return {ErrorCode::kGgufTruncated, cursor.position(), "the file ends inside a tensor info",
          "", std::string(name)};
}

// ReadDims reads n_dims and ne, refusing 0 or more than 4 dims, negative dims, a product
// of the non-zero dims past 63 bits and a zero in any dim but ne[0].
Error ReadDims(GgufCursor* cursor, TensorInfo* info) {
  const uint64_t dims_offset = cursor->position();
  if (!cursor->Read(&info->n_dims)) return Truncated(*cursor, info->name);
  if (info->n_dims == 0 || info->n_dims > kMaxDims) {
    return {ErrorCode::kGgufInvalidDims, dims_offset, "a tensor must have 1 to 4 dims",
            std::to_string(info->n_dims), std::string(info->name)};
  }
  info->ne.fill(1);
  for (uint32_t d = 0; d < info->n_dims; ++d) {
    const uint64_t ne_offset = cursor->position();
    uint64_t ne = 0;
    if (!cursor->Read(&ne)) return Truncated(*cursor, info->name);
    if (ne > static_cast<uint64_t>(INT64_MAX)) {  // stored as int64: negative
      return {ErrorCode::kGgufInvalidDims, ne_offset, "a tensor dim is negative",
              std::to_string(static_cast<int64_t>(ne)), std::string(info->name)};
    }
    info->ne[d] = ne;
  }
  // A zero elsewhere must not hide an overflow: gguf-py and some ggml builds multiply the
  // dims in an order that overflows before the zero is reached.
  uint64_t product = 1;
  for (uint64_t ne : info->ne) {
    if (ne != 0 && (!CheckedMul(product, ne, &product) ||
                    product > static_cast<uint64_t>(INT64_MAX))) {
      return {ErrorCode::kValidationOverflow, dims_offset,
              "a tensor's element count does not fit in 63 bits", "", std::string(info->name)};
    }
  }
  // ggml built from llama.cpp's July 2026 sources divides by ne[1], ne[2] and ne[3]
  // (SIGFPE on a zero); a zero in ne[0] alone is an empty tensor every reader accepts.
  for (uint32_t d = 1; d < info->n_dims; ++d) {
    if (info->ne[d] == 0) {
      return {ErrorCode::kGgufInvalidDims, dims_offset + 4 + 8 * d,
              "a tensor dim other than the first is zero (ggml builds of July 2026 crash "
              "dividing by it)",
              "ne[" + std::to_string(d) + "] = 0", std::string(info->name)};
    }
  }
  return {};
}

// SizeTensor checks the type and computes the byte size: ne[0] must be whole blocks and
// blocks * bytes per block fit in uint64 (ReadDims proved the element count fits).
Error SizeTensor(uint32_t type_id, uint64_t type_offset, TensorInfo* info) {
  info->type = FindGgmlType(type_id);
  if (info->type == nullptr) {
    return {ErrorCode::kGgufUnknownType, type_offset,
            "a tensor type id ggml does not know (or has removed)", std::to_string(type_id),
            std::string(info->name)};
  }
  if (info->ne[0] % info->type->block_size != 0) {
    return {ErrorCode::kGgufBlockMismatch, type_offset,
            "a tensor's first dim is not a multiple of its type's block size",
            std::to_string(info->ne[0]) + " % " + std::to_string(info->type->block_size),
            std::string(info->name)};
  }
  const uint64_t elements = info->num_elements();
  if (!CheckedMul(elements / info->type->block_size, info->type->type_size, &info->byte_size)) {
    return {ErrorCode::kValidationOverflow, type_offset,
            "a tensor's byte size does not fit in 64 bits", "", std::string(info->name)};
  }
  return {};
}

}  // namespace

Error ReadTensorInfos(GgufCursor* cursor, uint64_t count, std::vector<TensorInfo>* out) {
  // ReadHeader bounded count * 24 by the file; the bytes in hand bound it again, so a
  // prefix of a large remote file never reserves for entries it does not hold.
  out->reserve(static_cast<size_t>(std::min(count, cursor->available() / kMinTensorInfoBytes)));
  for (uint64_t i = 0; i < count; ++i) {
    TensorInfo info;
    info.info_offset = cursor->position();
    if (Error error = ReadString(cursor, "tensor name", &info.name); !error.ok()) return error;
    if (info.name.size() >= kMaxTensorNameBytes) {
      return {ErrorCode::kGgufInvalidTensorName, info.info_offset,
              "a tensor name must be shorter than 64 bytes", std::to_string(info.name.size()),
              std::string(info.name)};
    }
    if (Error error = ReadDims(cursor, &info); !error.ok()) return error;
    const uint64_t type_offset = cursor->position();
    uint32_t type_id = 0;
    if (!cursor->Read(&type_id)) return Truncated(*cursor, info.name);
    if (Error error = SizeTensor(type_id, type_offset, &info); !error.ok()) return error;
    if (!cursor->Read(&info.offset)) return Truncated(*cursor, info.name);
    out->push_back(info);
  }
  return {};
}

uint64_t TensorInfo::num_elements() const {
  return ne[0] * ne[1] * ne[2] * ne[3];  // proved to fit by ReadDims
}

std::vector<uint64_t> TensorInfo::shape() const {
  return std::vector<uint64_t>(ne.rbegin() + (kMaxDims - n_dims), ne.rend());
}

}  // namespace stguard::gguf
