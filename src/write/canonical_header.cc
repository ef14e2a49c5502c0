// SPDX-License-Identifier: Apache-2.0
// The canonical layout: order, offsets and header text, as the reference writer makes them.
#include "write/canonical_header.h"

#include <algorithm>
#include <array>

#include "base/checked_math.h"
#include "base/duplicate_keys.h"
#include "stguard/json_escape.h"
#include "stguard/options.h"
#include "format/tensor_size.h"
#include "base/utf8.h"

namespace stguard {
namespace {

constexpr std::string_view kMetadataKey = "__metadata__";

// WriterError builds the Error of a refused input. Writer errors have no file offset.
Error WriterError(ErrorCode code, const char* message, std::string_view tensor,
                  std::string context = {}) {
  Error error;
  error.code = code;
  error.message = message;
  error.context = std::move(context);
  error.tensor = std::string(tensor);
  return error;
}

// AppendTensorEntry appends "name":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}.
void AppendTensorEntry(const PlanTensor& tensor, uint64_t begin, std::string* out) {
  AppendJsonString(tensor.name, out);
  out->append(":{\"dtype\":\"");
  out->append(DtypeName(tensor.dtype));  // dtype names are plain ASCII: nothing to escape
  out->append("\",\"shape\":[");
  bool first = true;
  for (uint64_t dim : tensor.shape) {
    if (!first) out->push_back(',');
    first = false;
    AppendUint(dim, out);
  }
  out->append("],\"data_offsets\":[");
  AppendUint(begin, out);
  out->push_back(',');
  AppendUint(begin + tensor.byte_len, out);  // the caller proved the sum fits
  out->append("]}");
}

// StableOrderByDescendingDtype reorders `by_name` (tensor indexes sorted by name) so that
// dtypes come in descending enum order, names ascending within each: the canonical order.
// A counting sort over the 22 dtypes is linear and stable, unlike a comparison sort.
std::vector<uint32_t> StableOrderByDescendingDtype(std::span<const PlanTensor> tensors,
                                                   const std::vector<uint32_t>& by_name) {
  std::array<size_t, kNumDtypes + 1> starts{};  // starts[k]: first slot of the k-th dtype
  const auto rank = [&tensors](uint32_t index) {  // 0 for U64 (first), 21 for BOOL (last)
    return kNumDtypes - 1 - static_cast<int>(tensors[index].dtype);
  };
  for (uint32_t index : by_name) ++starts[rank(index) + 1];
  for (int k = 0; k < kNumDtypes; ++k) starts[k + 1] += starts[k];
  std::vector<uint32_t> order(by_name.size());
  for (uint32_t index : by_name) order[starts[rank(index)]++] = index;
  return order;
}

// ReserveHeader reserves about what the header text will need, so that building it does
// not copy what it has written so far as the string grows. Each tensor entry is its name
// (names rarely need escapes, which would make them longer) plus at most 80 bytes of
// keys, punctuation, dtype and offsets, and 21 per dimension. The estimate is capped at
// the header limit, past which writing stops anyway.
void ReserveHeader(std::span<const PlanTensor> tensors, std::span<const PlanMetadata> metadata,
                   std::string* header) {
  uint64_t estimate = 64;
  for (const PlanTensor& tensor : tensors) {
    estimate += tensor.name.size() + 80 + 21 * tensor.shape.size();
  }
  for (const PlanMetadata& entry : metadata) estimate += entry.key.size() + entry.value.size() + 8;
  header->reserve(std::min<uint64_t>(estimate, kMaxHeaderLen + 8));
}

}  // namespace

Error CheckTensorEntry(const PlanTensor& tensor) {
  if (tensor.name == kMetadataKey) {
    return WriterError(ErrorCode::kInvalidTensorName,
                       "a tensor cannot be named __metadata__, which names the metadata map",
                       tensor.name);
  }
  size_t bad_index = 0;
  if (!IsValidUtf8(tensor.name, &bad_index)) {
    return WriterError(ErrorCode::kInvalidArgument, "tensor name is not valid UTF-8",
                       tensor.name, "first bad byte at index " + std::to_string(bad_index));
  }
  uint64_t expected_len = 0;
  ElementCount count;
  for (uint64_t dim : tensor.shape) count.Add(dim);
  switch (ByteSizeFromCount(tensor.dtype, count, &expected_len)) {
    case ErrorCode::kOk:
      break;
    case ErrorCode::kMisalignedSlice:
      return WriterError(ErrorCode::kMisalignedSlice,
                         "the tensor's bits do not fill whole bytes (sub-byte dtype)",
                         tensor.name, std::string(DtypeName(tensor.dtype)));
    default:
      return WriterError(ErrorCode::kValidationOverflow,
                         "the tensor's element or bit count overflows 64 bits", tensor.name);
  }
  if (expected_len != tensor.byte_len) {
    return WriterError(ErrorCode::kInvalidArgument,
                       "byte count differs from what dtype and shape imply", tensor.name,
                       "expected " + std::to_string(expected_len) + " bytes, got " +
                           std::to_string(tensor.byte_len));
  }
  return Error{};
}

Error CheckMetadataEntry(const PlanMetadata& entry) {
  size_t bad_index = 0;
  if (!IsValidUtf8(entry.key, &bad_index)) {
    return WriterError(ErrorCode::kInvalidArgument, "metadata key is not valid UTF-8", {},
                       "key '" + std::string(entry.key) + "', first bad byte at index " +
                           std::to_string(bad_index));
  }
  if (!IsValidUtf8(entry.value, &bad_index)) {
    return WriterError(ErrorCode::kInvalidArgument, "metadata value is not valid UTF-8", {},
                       "key '" + std::string(entry.key) + "', first bad byte at index " +
                           std::to_string(bad_index));
  }
  return Error{};
}

Result<CanonicalPlan> PlanCanonicalFile(std::span<const PlanTensor> tensors,
                                        std::span<const PlanMetadata> metadata) {
  // Every entry takes more than one header byte, so counts beyond kMaxHeaderLen cannot
  // fit; checking first also keeps the 32-bit indexes below exact.
  if (tensors.size() > kMaxHeaderLen || metadata.size() > kMaxHeaderLen) {
    return WriterError(ErrorCode::kHeaderTooLarge, "too many entries for one header", {});
  }
  for (const PlanTensor& tensor : tensors) {
    if (Error error = CheckTensorEntry(tensor); !error.ok()) return error;
  }
  for (const PlanMetadata& entry : metadata) {
    if (Error error = CheckMetadataEntry(entry); !error.ok()) return error;
  }

  CanonicalPlan plan;
  // Sorting by name finds duplicates; a stable sort by descending dtype then gives the
  // canonical order (dtype first, name within a dtype).
  const size_t tensor_dup = SortKeysFindDuplicate(
      tensors.size(), [&](uint32_t i) { return tensors[i].name; }, &plan.order);
  if (tensor_dup != kNoDuplicate) {
    return WriterError(ErrorCode::kDuplicateName, "two tensors have the same name",
                       tensors[tensor_dup].name);
  }
  plan.order = StableOrderByDescendingDtype(tensors, plan.order);
  std::vector<uint32_t> metadata_order;
  const size_t metadata_dup = SortKeysFindDuplicate(
      metadata.size(), [&](uint32_t i) { return metadata[i].key; }, &metadata_order);
  if (metadata_dup != kNoDuplicate) {
    return WriterError(ErrorCode::kDuplicateName, "two metadata entries have the same key",
                       {}, "key '" + std::string(metadata[metadata_dup].key) + "'");
  }

  plan.begin.resize(plan.order.size());
  uint64_t offset = 0;
  for (size_t i = 0; i < plan.order.size(); ++i) {
    plan.begin[i] = offset;
    if (!CheckedAdd(offset, tensors[plan.order[i]].byte_len, &offset)) {
      return WriterError(ErrorCode::kValidationOverflow,
                         "the data buffer's size overflows 64 bits",
                         tensors[plan.order[i]].name);
    }
  }
  plan.data_len = offset;

  // The header grows entry by entry and stops as soon as it is too long, so an oversized
  // header costs at most one entry beyond the limit.
  std::string& header = plan.header;
  ReserveHeader(tensors, metadata, &header);
  const auto too_large = [&header]() {
    return WriterError(ErrorCode::kHeaderTooLarge,
                       "the header would exceed 100,000,000 bytes", {},
                       std::to_string(header.size()) + " bytes and more");
  };
  header.push_back('{');
  if (!metadata_order.empty()) {
    header.append("\"__metadata__\":{");
    for (size_t i = 0; i < metadata_order.size(); ++i) {
      if (i != 0) header.push_back(',');
      const PlanMetadata& entry = metadata[metadata_order[i]];
      AppendJsonString(entry.key, &header);
      header.push_back(':');
      AppendJsonString(entry.value, &header);
      if (header.size() > kMaxHeaderLen) return too_large();
    }
    header.push_back('}');
  }
  for (size_t i = 0; i < plan.order.size(); ++i) {
    if (i != 0 || !metadata_order.empty()) header.push_back(',');
    AppendTensorEntry(tensors[plan.order[i]], plan.begin[i], &header);
    if (header.size() > kMaxHeaderLen) return too_large();
  }
  header.push_back('}');
  plan.text_len = header.size();
  // kMaxHeaderLen is a multiple of 8, so padding never pushes a fitting text over it.
  header.append((8 - header.size() % 8) % 8, ' ');
  if (header.size() > kMaxHeaderLen) return too_large();

  if (!CheckedAdd(8 + header.size(), plan.data_len, &plan.file_size)) {
    return WriterError(ErrorCode::kValidationOverflow, "the file's size overflows 64 bits",
                       {});
  }
  return plan;
}

std::string EncodeLengthPrefix(uint64_t header_len) {
  std::string prefix(8, '\0');
  for (int i = 0; i < 8; ++i) {
    prefix[i] = static_cast<char>((header_len >> (8 * i)) & 0xFF);
  }
  return prefix;
}

}  // namespace stguard
