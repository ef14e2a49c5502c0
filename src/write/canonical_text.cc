// SPDX-License-Identifier: Apache-2.0
// CanonicalText: see canonical_text.h. The text must equal PlanCanonicalFile's byte for
// byte (tests/writer_test.cc and writer_prop.cc compare them through the writer and the
// canonical check).
#include "write/canonical_text.h"

#include <algorithm>

#include "data/conversion_target.h"
#include "stguard/dtype.h"
#include "stguard/json_escape.h"
#include "stguard/options.h"
#include "write/canonical_header.h"

namespace stguard {

CanonicalText::CanonicalText(const Checkpoint& checkpoint, std::optional<Dtype> convert_to)
    : checkpoint_(checkpoint), convert_to_(convert_to) {
  const std::span<const TensorView> tensors = checkpoint.tensors();
  order_.resize(tensors.size());
  for (uint32_t i = 0; i < order_.size(); ++i) order_[i] = i;
  // Names are distinct in a valid checkpoint, so this order is total.
  std::sort(order_.begin(), order_.end(), [this, &tensors](uint32_t a, uint32_t b) {
    const TensorView& x = tensors[a];
    const TensorView& y = tensors[b];
    const Dtype x_dtype = OutDtype(x);
    const Dtype y_dtype = OutDtype(y);
    return x_dtype != y_dtype ? x_dtype > y_dtype : x.name < y.name;
  });
}

Dtype CanonicalText::OutDtype(const TensorView& tensor) const {
  return OutputDtype(tensor.dtype, convert_to_);
}

uint64_t CanonicalText::OutByteSize(const TensorView& tensor) const {
  return ConvertedByteLen(tensor.dtype, tensor.byte_size(), convert_to_);
}

bool CanonicalText::Next(std::string* piece) {
  piece->clear();
  while (piece->size() < kPieceLen && stage_ != Stage::kDone) Step(piece);
  size_ += piece->size();
  return !piece->empty();
}

// Step appends one entry, or a run of one shape's dims, to *piece.
void CanonicalText::Step(std::string* piece) {
  const MetadataList& metadata = checkpoint_.metadata();
  switch (stage_) {
    case Stage::kOpen:
      piece->push_back('{');
      if (!metadata.empty()) piece->append("\"__metadata__\":{");
      stage_ = metadata.empty() ? Stage::kTensorHead : Stage::kMetadata;
      return;
    case Stage::kMetadata: {
      if (index_ != 0) piece->push_back(',');
      const MetadataEntry entry = metadata[index_];
      AppendJsonString(entry.key, piece);
      piece->push_back(':');
      AppendJsonString(entry.value, piece);
      if (!CheckSize(*piece)) return;
      if (++index_ == metadata.size()) {
        piece->push_back('}');
        index_ = 0;
        stage_ = Stage::kTensorHead;
      }
      return;
    }
    case Stage::kTensorHead: {
      if (index_ == order_.size()) {
        stage_ = Stage::kClose;
        return;
      }
      if (index_ != 0 || !metadata.empty()) piece->push_back(',');
      const TensorView& tensor = checkpoint_.tensors()[order_[index_]];
      AppendJsonString(tensor.name, piece);
      piece->append(":{\"dtype\":\"");
      piece->append(DtypeName(OutDtype(tensor)));
      piece->append("\",\"shape\":[");
      dim_ = tensor.shape.begin();
      dims_end_ = tensor.shape.end();
      first_dim_ = true;
      stage_ = Stage::kDims;
      return;
    }
    case Stage::kDims:
      for (; dim_ != dims_end_ && piece->size() < kPieceLen; ++dim_) {
        if (!first_dim_) piece->push_back(',');
        first_dim_ = false;
        AppendUint(*dim_, piece);
      }
      if (dim_ == dims_end_) stage_ = Stage::kTensorTail;
      return;
    case Stage::kTensorTail: {
      const TensorView& tensor = checkpoint_.tensors()[order_[index_]];
      piece->append("],\"data_offsets\":[");
      AppendUint(offset_, piece);
      piece->push_back(',');
      offset_ += OutByteSize(tensor);
      AppendUint(offset_, piece);
      piece->append("]}");
      if (!CheckSize(*piece)) return;
      ++index_;
      stage_ = Stage::kTensorHead;
      return;
    }
    case Stage::kClose:
      piece->push_back('}');
      stage_ = Stage::kDone;
      return;
    case Stage::kDone:
      return;
  }
}

// CheckSize stops the text once it passes the cap at the end of an entry.
bool CanonicalText::CheckSize(const std::string& piece) {
  const uint64_t size = size_ + piece.size();
  if (size <= kMaxHeaderLen) return true;
  error_ = Error{ErrorCode::kHeaderTooLarge, 0, "the header would exceed 100,000,000 bytes",
                 std::to_string(size) + " bytes and more"};
  stage_ = Stage::kDone;
  return false;
}

}  // namespace stguard
