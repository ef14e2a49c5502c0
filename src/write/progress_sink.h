// SPDX-License-Identifier: Apache-2.0
// PassThroughSink, the base of a sink that wraps another and passes placement
// (write/placing_sink.h) on to it, and ProgressSink, the one sink that counts the bytes
// going to an output (Writer::set_progress, the pipeline's streamed conversion).
#ifndef STGUARD_SRC_WRITE_PROGRESS_SINK_H_
#define STGUARD_SRC_WRITE_PROGRESS_SINK_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>

#include "stguard/error.h"
#include "stguard/writer.h"
#include "write/placing_sink.h"

namespace stguard {

// PassThroughSink holds the inner sink and, if it can place, its PlacingSink side (found
// once by dynamic_cast), so that a wrapper never hides the output file's placement from a
// producer. A wrapper overrides Write, BeginPlaced and EndPlaced to do its own part and
// calls BeginInner and EndInner for the inner sink's.
class PassThroughSink : public ByteSink, public PlacingSink {
 public:
  explicit PassThroughSink(ByteSink& inner)
      : inner_(inner), placing_(dynamic_cast<PlacingSink*>(&inner)) {}
  void ReleasePlaced(uint64_t offset, uint64_t len) override {
    if (placing_ != nullptr) placing_->ReleasePlaced(offset, len);
  }
  void PreparePlaced(uint64_t offset, uint64_t len) override {
    if (placing_ != nullptr) placing_->PreparePlaced(offset, len);
  }

 protected:
  ByteSink& inner() const { return inner_; }
  // BeginInner is the inner sink's BeginPlaced; *at is nullptr (write in order) when it
  // cannot place.
  [[nodiscard]] Error BeginInner(uint64_t len, std::byte** at) {
    *at = nullptr;
    if (placing_ == nullptr) return {};
    return placing_->BeginPlaced(len, at);
  }
  // EndInner is the inner sink's EndPlaced; `misuse` when it cannot place (no BeginPlaced
  // could have given bytes to place).
  [[nodiscard]] Error EndInner(const Error& misuse) {
    return placing_ != nullptr ? placing_->EndPlaced() : misuse;
  }

 private:
  ByteSink& inner_;
  PlacingSink* placing_;
};

// ProgressSink passes every write on and reports its byte count to `progress` (when set),
// as Writer::set_progress says; placed bytes count once they are all stored (EndPlaced).
// `progress` must outlive the sink.
class ProgressSink final : public PassThroughSink {
 public:
  ProgressSink(ByteSink& inner, const std::function<void(uint64_t)>& progress)
      : PassThroughSink(inner), progress_(progress) {}
  Error Write(std::span<const std::byte> bytes) override {
    Error error = inner().Write(bytes);
    if (error.ok() && progress_) progress_(bytes.size());
    return error;
  }
  Error BeginPlaced(uint64_t len, std::byte** at) override {
    Error error = BeginInner(len, at);
    placed_ = *at != nullptr ? len : 0;
    return error;
  }
  Error EndPlaced() override {
    Error error = EndInner(Error{ErrorCode::kInvalidArgument, 0,
                                 "the output cannot place bytes: none were begun"});
    if (error.ok() && progress_) progress_(placed_);
    return error;
  }

 private:
  const std::function<void(uint64_t)>& progress_;
  uint64_t placed_ = 0;
};

}  // namespace stguard

#endif  // STGUARD_SRC_WRITE_PROGRESS_SINK_H_
