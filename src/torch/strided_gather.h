// SPDX-License-Identifier: Apache-2.0
// torch/strided_gather.h: copying a strided view's elements out in row-major order, in
// time linear in the elements copied whatever the view's dimensions.
//
// A view of shape (M, 1, 1, ..., 1) with 50,000 unit dimensions has M elements, but an
// odometer over its dimensions carries through every unit dimension at every element.
// PlanGather first drops unit dimensions (they index nothing) and merges neighbours that
// step through memory as one (stride[d] == shape[d+1] * stride[d+1], zero strides
// included); every dimension left has at least two entries, so at most 64 remain and the
// odometer's carries average below one per step. The innermost dimension is copied in one
// loop (one memcpy when its stride is 1). Work is counted: GatherStrided stops with an
// error if it would take more than kGatherStepsPerElement steps per element it emits, a
// bound the plan guarantees, so a mistake here cannot turn into a hang. The elements
// themselves are bounded by TorchOptions::max_output_ratio (the output bound).
#ifndef STGUARD_SRC_TORCH_STRIDED_GATHER_H_
#define STGUARD_SRC_TORCH_STRIDED_GATHER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "stguard/error.h"

namespace stguard {

// GatherPlan is a view's dimensions reduced to those that matter, outermost first, with
// strides in elements. A view of no dimension (a scalar) has none.
struct GatherPlan {
  std::vector<uint64_t> shape;
  std::vector<uint64_t> strides;
  uint64_t num_elements = 1;  // the product of shape (0: nothing to gather)
};

// kGatherStepsPerElement bounds GatherStrided's loop steps per emitted element: one per
// innermost element, plus the outer odometer's steps and carries (at most two per
// innermost run, as every planned dimension has at least two entries).
inline constexpr uint64_t kGatherStepsPerElement = 3;

// PlanGather drops unit dimensions and merges dimensions that are contiguous together.
// `shape` and `strides` have the same length (strides in elements, never negative).
GatherPlan PlanGather(std::span<const uint64_t> shape, std::span<const uint64_t> strides);

// GatherFlush receives the gathered bytes, a full buffer at a time (the last may be short).
using GatherFlush = std::function<Error(std::span<const std::byte>)>;

// GatherStrided copies the view's elements in row-major order into `buffer` (at least one
// element long), calling `flush` each time it is full and once at the end. Element e of
// the storage is at base + e * element_len; the view starts at element `first`. The caller
// has checked that every element the plan reaches is inside the storage. Returns the first
// error `flush` returns, or kInvalidArgument if the work bound is broken (a defect).
Error GatherStrided(const std::byte* base, uint64_t element_len, uint64_t first,
                    const GatherPlan& plan, std::span<std::byte> buffer,
                    const GatherFlush& flush);

}  // namespace stguard

#endif  // STGUARD_SRC_TORCH_STRIDED_GATHER_H_
