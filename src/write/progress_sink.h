// SPDX-License-Identifier: Apache-2.0
// ProgressSink: the one sink that counts the bytes going to an output (Writer::set_progress,
// the pipeline's streamed conversion), passing placement (write/placing_sink.h) through.
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

// ProgressSink passes every write on and reports its byte count to `progress` (when set),
// as Writer::set_progress says; placed bytes count once they are all stored (EndPlaced).
// `progress` must outlive the sink.
class ProgressSink final : public ByteSink, public PlacingSink {
 public:
  ProgressSink(ByteSink& inner, const std::function<void(uint64_t)>& progress)
      : inner_(inner), placing_(dynamic_cast<PlacingSink*>(&inner)), progress_(progress) {}
  Error Write(std::span<const std::byte> bytes) override {
    Error error = inner_.Write(bytes);
    if (error.ok() && progress_) progress_(bytes.size());
    return error;
  }
  Error BeginPlaced(uint64_t len, std::byte** at) override {
    *at = nullptr;
    if (placing_ == nullptr) return Error{};
    Error error = placing_->BeginPlaced(len, at);
    placed_ = *at != nullptr ? len : 0;
    return error;
  }
  void ReleasePlaced(uint64_t offset, uint64_t len) override {
    if (placing_ != nullptr) placing_->ReleasePlaced(offset, len);
  }
  void PreparePlaced(uint64_t offset, uint64_t len) override {
    if (placing_ != nullptr) placing_->PreparePlaced(offset, len);
  }
  Error EndPlaced() override {
    if (placing_ == nullptr) {
      return Error{ErrorCode::kInvalidArgument, 0,
                   "the output cannot place bytes: none were begun"};
    }
    Error error = placing_->EndPlaced();
    if (error.ok() && progress_) progress_(placed_);
    return error;
  }

 private:
  ByteSink& inner_;
  PlacingSink* placing_;
  const std::function<void(uint64_t)>& progress_;
  uint64_t placed_ = 0;
};

}  // namespace stguard

#endif  // STGUARD_SRC_WRITE_PROGRESS_SINK_H_
