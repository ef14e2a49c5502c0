// SPDX-License-Identifier: Apache-2.0
// The strided gather (see strided_gather.h for why the plan keeps it linear).
#include "torch/strided_gather.h"

#include <algorithm>
#include <cstring>

namespace stguard {
namespace {

// ChunkFiller appends bytes to the caller's buffer and flushes it each time it fills.
class ChunkFiller {
 public:
  ChunkFiller(std::span<std::byte> buffer, const GatherFlush& flush)
      : buffer_(buffer), flush_(flush) {}

  Error Append(const std::byte* source, uint64_t len) {
    while (len > 0) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(len, buffer_.size() - used_));
      std::memcpy(buffer_.data() + used_, source, n);
      used_ += n;
      source += n;
      len -= n;
      if (used_ == buffer_.size()) {
        if (Error error = Flush(); !error.ok()) return error;
      }
    }
    return {};
  }

  Error Flush() {
    if (used_ == 0) return {};
    Error error = flush_(buffer_.first(used_));
    used_ = 0;
    return error;
  }

 private:
  std::span<std::byte> buffer_;
  const GatherFlush& flush_;
  size_t used_ = 0;
};

}  // namespace

GatherPlan PlanGather(std::span<const uint64_t> shape, std::span<const uint64_t> strides) {
  GatherPlan plan;
  for (size_t d = 0; d < shape.size(); ++d) {
    plan.num_elements *= shape[d];  // the caller checked that the product fits
    if (shape[d] == 1) continue;    // a unit dimension indexes nothing
    if (!plan.shape.empty() && plan.strides.back() == shape[d] * strides[d]) {
      // The previous dimension steps over exactly this one: one dimension of both.
      plan.shape.back() *= shape[d];
      plan.strides.back() = strides[d];
      continue;
    }
    plan.shape.push_back(shape[d]);
    plan.strides.push_back(strides[d]);
  }
  if (plan.num_elements == 0) {
    plan.shape.clear();
    plan.strides.clear();
  }
  return plan;
}

Error GatherStrided(const std::byte* base, uint64_t element_len, uint64_t first,
                    const GatherPlan& plan, std::span<std::byte> buffer,
                    const GatherFlush& flush) {
  if (plan.num_elements == 0) return {};
  ChunkFiller out(buffer, flush);
  if (plan.shape.empty()) {  // a scalar, or only unit dimensions: one element
    if (Error error = out.Append(base + first * element_len, element_len); !error.ok()) {
      return error;
    }
    return out.Flush();
  }
  const size_t outer_dims = plan.shape.size() - 1;
  const uint64_t inner_size = plan.shape.back();
  const uint64_t inner_stride = plan.strides.back();
  const uint64_t budget = kGatherStepsPerElement * plan.num_elements;
  std::vector<uint64_t> counter(outer_dims, 0);
  uint64_t steps = 0;
  uint64_t row = first;  // the element at the start of the current innermost run
  for (uint64_t runs = plan.num_elements / inner_size; runs > 0; --runs) {
    steps += inner_size + 1;
    const std::byte* source = base + row * element_len;
    if (inner_stride == 1) {
      if (Error error = out.Append(source, inner_size * element_len); !error.ok()) return error;
    } else {
      for (uint64_t k = 0; k < inner_size; ++k) {
        if (Error error = out.Append(source + k * inner_stride * element_len, element_len);
            !error.ok()) {
          return error;
        }
      }
    }
    for (size_t d = outer_dims; d-- > 0;) {  // the odometer over the outer dimensions
      ++steps;
      if (++counter[d] < plan.shape[d]) {
        row += plan.strides[d];
        break;
      }
      row -= (plan.shape[d] - 1) * plan.strides[d];
      counter[d] = 0;
    }
    if (steps > budget) {
      return Error{ErrorCode::kInvalidArgument, 0,
                   "strided gather exceeded its work bound (a defect in the gather plan)"};
    }
  }
  return out.Flush();
}

}  // namespace stguard
