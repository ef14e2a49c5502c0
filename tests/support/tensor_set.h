// SPDX-License-Identifier: Apache-2.0
// A plain, owning description of a set of tensors and metadata, for round-trip tests of the
// writer against the reader.
#ifndef STGUARD_TESTS_SUPPORT_TENSOR_SET_H_
#define STGUARD_TESTS_SUPPORT_TENSOR_SET_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "stguard/dtype.h"
#include "stguard/error.h"
#include "stguard/reader.h"
#include "stguard/writer.h"

namespace stguard::testing {

struct TestTensor {
  std::string name;
  Dtype dtype = Dtype::kU8;
  std::vector<uint64_t> shape;
  std::string data;  // the tensor's bytes
};

struct TensorSet {
  std::vector<TestTensor> tensors;
  std::vector<std::pair<std::string, std::string>> metadata;
};

// AddToWriter adds every tensor (as a span over its data) and metadata entry, in order.
// The set must outlive the writer's last write.
Error AddToWriter(const TensorSet& set, Writer* writer);

// WriteSet writes the set in canonical form to memory.
Result<std::string> WriteSet(const TensorSet& set);

// FromCheckpoint copies a checkpoint into a TensorSet (tensors in file order, metadata in
// key order).
TensorSet FromCheckpoint(const Checkpoint& checkpoint);

// DescribeDifference returns "" when `checkpoint` holds exactly the tensors (names,
// dtypes, shapes, bytes) and metadata of `set`, whatever their order; otherwise a
// sentence naming the first difference found.
std::string DescribeDifference(const TensorSet& set, const Checkpoint& checkpoint);

// AsBytes views a string's bytes.
std::span<const std::byte> AsBytes(std::string_view text);

// HexDump renders bytes as "7b 22 ..." for failure messages.
std::string HexDump(std::string_view bytes);

}  // namespace stguard::testing

#endif  // STGUARD_TESTS_SUPPORT_TENSOR_SET_H_
