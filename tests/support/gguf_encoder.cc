// SPDX-License-Identifier: Apache-2.0
#include "support/gguf_encoder.h"

#include <cstring>

#include "stguard/gguf.h"

namespace stguard::testing {

namespace {

template <typename T>
std::string Le(T value) {
  std::string out(sizeof(T), '\0');
  for (size_t i = 0; i < sizeof(T); ++i) {
    uint64_t bits = 0;
    std::memcpy(&bits, &value, sizeof(T));
    out[i] = static_cast<char>((bits >> (8 * i)) & 0xFF);
  }
  return out;
}

template <typename T>
GgufKv Scalar(std::string key, uint32_t type, T value) {
  return {std::move(key), type, 0, 0, Le(value)};
}

uint64_t AlignUp(uint64_t offset, uint64_t alignment) {
  return (offset + alignment - 1) / alignment * alignment;
}

std::string EncodeTensorInfo(const GgufTensor& tensor, uint64_t offset) {
  std::string out = GgufString(tensor.name);
  out += Le(static_cast<uint32_t>(tensor.ne.size()));
  for (uint64_t ne : tensor.ne) out += Le(ne);
  out += Le(tensor.type);
  out += Le(offset);
  return out;
}

std::string TensorData(const GgufTensor& tensor) {
  if (tensor.data) return *tensor.data;
  std::string data(GgufTensorBytes(tensor), '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(1 + i % 251);
  return data;
}

}  // namespace

std::string GgufString(std::string_view text) {
  return Le(static_cast<uint64_t>(text.size())) + std::string(text);
}

GgufKv GgufU8(std::string key, uint8_t value) { return Scalar(std::move(key), 0, value); }
GgufKv GgufI8(std::string key, int8_t value) { return Scalar(std::move(key), 1, value); }
GgufKv GgufU16(std::string key, uint16_t value) { return Scalar(std::move(key), 2, value); }
GgufKv GgufI16(std::string key, int16_t value) { return Scalar(std::move(key), 3, value); }
GgufKv GgufU32(std::string key, uint32_t value) { return Scalar(std::move(key), 4, value); }
GgufKv GgufI32(std::string key, int32_t value) { return Scalar(std::move(key), 5, value); }
GgufKv GgufF32(std::string key, float value) { return Scalar(std::move(key), 6, value); }
GgufKv GgufBool(std::string key, bool value) {
  return Scalar(std::move(key), 7, static_cast<uint8_t>(value ? 1 : 0));
}
GgufKv GgufStr(std::string key, std::string_view value) {
  return {std::move(key), 8, 0, 0, GgufString(value)};
}
GgufKv GgufU64(std::string key, uint64_t value) { return Scalar(std::move(key), 10, value); }
GgufKv GgufI64(std::string key, int64_t value) { return Scalar(std::move(key), 11, value); }
GgufKv GgufF64(std::string key, double value) { return Scalar(std::move(key), 12, value); }

GgufKv GgufStrArray(std::string key, const std::vector<std::string>& values) {
  GgufKv kv{std::move(key), 9, 8, values.size(), ""};
  for (const std::string& value : values) kv.payload += GgufString(value);
  return kv;
}

GgufKv GgufI32Array(std::string key, const std::vector<int32_t>& values) {
  GgufKv kv{std::move(key), 9, 5, values.size(), ""};
  for (int32_t value : values) kv.payload += Le(value);
  return kv;
}

std::array<uint64_t, 2> GgufTypeSizes(uint32_t type) {
  const gguf::GgmlType* row = gguf::FindGgmlType(type);
  if (row == nullptr) return {1, 1};
  return {row->block_size, row->type_size};
}

uint64_t GgufTensorBytes(const GgufTensor& tensor) {
  uint64_t elements = 1;
  for (uint64_t ne : tensor.ne) elements *= ne;
  const auto [block, size] = GgufTypeSizes(tensor.type);
  return elements / block * size;
}

std::string Encode(const GgufModel& model) {
  std::string out = "GGUF";
  out += Le(model.version);
  out += Le(model.num_tensors.value_or(model.tensors.size()));
  out += Le(model.num_kvs.value_or(model.kvs.size()));
  for (const GgufKv& kv : model.kvs) {
    out += GgufString(kv.key) + Le(kv.type);
    if (kv.type == 9) out += Le(kv.element_type) + Le(kv.count);
    out += kv.payload;
  }
  uint64_t next = 0;
  std::vector<std::string> datas;
  for (const GgufTensor& tensor : model.tensors) {
    datas.push_back(TensorData(tensor));
    out += EncodeTensorInfo(tensor, tensor.offset.value_or(next));
    // The next tensor's offset follows the true layout, so one lie stays one lie.
    next = AlignUp(next + datas.back().size(), model.alignment);
  }
  if (!model.tensors.empty()) out.resize(AlignUp(out.size(), model.alignment), '\0');
  const uint64_t data_start = out.size();
  for (size_t i = 0; i < model.tensors.size(); ++i) {
    // A tensor whose offset lies is still written where the layout puts it.
    out.resize(AlignUp(out.size() - data_start, model.alignment) + data_start, '\0');
    out += datas[i];
  }
  if (model.pad_last && !model.tensors.empty()) {
    out.resize(AlignUp(out.size() - data_start, model.alignment) + data_start, '\0');
  }
  return out + model.trailing;
}

GgufModel SimpleGgufModel() {
  GgufModel model;
  model.kvs = {GgufStr("general.architecture", "llama"), GgufU32("llama.context_length", 4096),
               GgufF32("llama.rope.freq_base", 10000.0f), GgufBool("general.flag", true),
               GgufStrArray("tokenizer.ggml.tokens", {"<s>", "</s>", "hello"}),
               GgufI32Array("tokenizer.ggml.token_type", {1, 3, 1})};
  model.tensors = {{"token_embd.weight", 0, {4, 3}, {}, {}},
                   {"blk.0.attn_q.weight", 8, {64, 2}, {}, {}}};
  return model;
}

}  // namespace stguard::testing
