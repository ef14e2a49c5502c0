// SPDX-License-Identifier: Apache-2.0
// The canonical header text of a validated checkpoint, produced a piece at a time.
#ifndef STGUARD_SRC_WRITE_CANONICAL_TEXT_H_
#define STGUARD_SRC_WRITE_CANONICAL_TEXT_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "stguard/error.h"
#include "stguard/reader.h"

namespace stguard {

// CanonicalText produces a valid checkpoint's canonical JSON text (no padding) in pieces of
// about kPieceLen bytes, so that the whole canonical header, as large as N, is never held:
// metadata in the MetadataList's order (ascending key bytes), then tensors by descending
// dtype, names ascending within a dtype, with offsets laid out in that order, exactly as
// PlanCanonicalFile writes them. It stops with kHeaderTooLarge where PlanCanonicalFile
// would (the text passing kMaxHeaderLen at the end of an entry).
//
// With `convert_to`, it is the header of the checkpoint with its IsConvertibleFloat tensors
// converted to that dtype (AddConvertedCheckpoint's file): their dtype and byte size change,
// and so does the order.
class CanonicalText {
 public:
  static constexpr size_t kPieceLen = size_t{1} << 16;

  explicit CanonicalText(const Checkpoint& checkpoint,
                         std::optional<Dtype> convert_to = std::nullopt);

  // OutDtype and OutByteSize are a tensor's dtype and byte count in the text's file.
  Dtype OutDtype(const TensorView& tensor) const;
  uint64_t OutByteSize(const TensorView& tensor) const;

  // Restart goes back to the start of the text (the order is kept).
  void Restart() {
    stage_ = Stage::kOpen;
    index_ = 0;
    offset_ = 0;
    size_ = 0;
    error_ = Error{};
  }
  // Next replaces *piece with the next piece of text; false at the end (or on error()).
  bool Next(std::string* piece);
  // order lists the tensors (indexes into checkpoint.tensors()) in canonical order, which
  // is also the order of their bytes in the canonical data buffer.
  const std::vector<uint32_t>& order() const { return order_; }
  // error is kHeaderTooLarge once the text passed the cap, as PlanCanonicalFile reports it.
  const Error& error() const { return error_; }

 private:
  enum class Stage { kOpen, kMetadata, kTensorHead, kDims, kTensorTail, kClose, kDone };

  void Step(std::string* piece);
  bool CheckSize(const std::string& piece);

  const Checkpoint& checkpoint_;
  std::optional<Dtype> convert_to_;
  std::vector<uint32_t> order_;  // tensor indexes in canonical order
  Stage stage_ = Stage::kOpen;
  size_t index_ = 0;
  uint64_t offset_ = 0;  // the next tensor's data offset
  Shape::Iterator dim_;
  Shape::Iterator dims_end_;
  bool first_dim_ = true;
  uint64_t size_ = 0;  // bytes produced before the current piece
  Error error_;
};

}  // namespace stguard

#endif  // STGUARD_SRC_WRITE_CANONICAL_TEXT_H_
