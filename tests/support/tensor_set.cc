// SPDX-License-Identifier: Apache-2.0
#include "support/tensor_set.h"

#include <algorithm>

namespace stguard::testing {

std::span<const std::byte> AsBytes(std::string_view text) {
  return std::as_bytes(std::span<const char>(text.data(), text.size()));
}

Error AddToWriter(const TensorSet& set, Writer* writer) {
  for (const TestTensor& tensor : set.tensors) {
    if (Error error = writer->AddTensor(tensor.name, tensor.dtype, tensor.shape,
                                        AsBytes(tensor.data));
        !error.ok()) {
      return error;
    }
  }
  for (const auto& [key, value] : set.metadata) {
    if (Error error = writer->AddMetadata(key, value); !error.ok()) return error;
  }
  return Error{};
}

Result<std::string> WriteSet(const TensorSet& set) {
  Writer writer;
  if (Error error = AddToWriter(set, &writer); !error.ok()) return error;
  return writer.WriteToString();
}

TensorSet FromCheckpoint(const Checkpoint& checkpoint) {
  TensorSet set;
  for (const TensorView& view : checkpoint.tensors()) {
    set.tensors.push_back(TestTensor{
        std::string(view.name), view.dtype,
        std::vector<uint64_t>(view.shape.begin(), view.shape.end()),
        std::string(reinterpret_cast<const char*>(view.data.data()), view.data.size())});
  }
  for (const MetadataEntry& entry : checkpoint.metadata()) {
    set.metadata.emplace_back(std::string(entry.key), std::string(entry.value));
  }
  return set;
}

std::string DescribeDifference(const TensorSet& set, const Checkpoint& checkpoint) {
  if (checkpoint.num_tensors() != set.tensors.size()) {
    return "expected " + std::to_string(set.tensors.size()) + " tensors, read " +
           std::to_string(checkpoint.num_tensors());
  }
  for (const TestTensor& tensor : set.tensors) {
    const std::string name = "tensor '" + PrintableText(tensor.name) + "'";
    const TensorView* view = checkpoint.Find(tensor.name);
    if (view == nullptr) return name + " is missing";
    if (view->dtype != tensor.dtype) return name + " has another dtype";
    if (!std::equal(view->shape.begin(), view->shape.end(), tensor.shape.begin(),
                    tensor.shape.end())) {
      return name + " has another shape";
    }
    const std::string_view data(reinterpret_cast<const char*>(view->data.data()),
                                view->data.size());
    if (data != tensor.data) return name + " has other bytes";
  }
  if (checkpoint.metadata().size() != set.metadata.size()) {
    return "expected " + std::to_string(set.metadata.size()) + " metadata entries, read " +
           std::to_string(checkpoint.metadata().size());
  }
  for (const auto& [key, value] : set.metadata) {
    const std::optional<std::string_view> read = checkpoint.FindMetadata(key);
    if (!read) return "metadata key '" + PrintableText(key) + "' is missing";
    if (*read != value) return "metadata key '" + PrintableText(key) + "' has another value";
  }
  return "";
}

std::string HexDump(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < bytes.size(); ++i) {
    const auto byte = static_cast<unsigned char>(bytes[i]);
    if (i != 0) out.push_back(i % 16 == 0 ? '\n' : ' ');
    out.push_back(kHex[byte >> 4]);
    out.push_back(kHex[byte & 0xF]);
  }
  return out;
}

}  // namespace stguard::testing
