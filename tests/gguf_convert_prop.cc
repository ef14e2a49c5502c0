// SPDX-License-Identifier: Apache-2.0
// Property: converting any GGUF file of plain-type tensors (F32, F16, BF16, F64, I8, I16,
// I32, I64; 1-4 dims, any names, alignments, metadata) gives a safetensors file whose
// tensors are exactly the GGUF tensors: the same names, shape = ne reversed, the dtype of
// the ggml type and the same bytes. Files come from the shared test encoder
// (support/gguf_encoder.h), which the GGUF fuzz mutator uses too.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "stguard/gguf.h"
#include "stguard/gguf_convert.h"
#include "stguard/reader.h"
#include "support/gguf_encoder.h"
#include "support/temp_dir.h"

namespace stguard::testing {
namespace {

// The plain ggml ids and the safetensors dtype each becomes.
const std::map<uint32_t, Dtype> kPlainTypes = {
    {0, Dtype::kF32},  {1, Dtype::kF16},  {24, Dtype::kI8},  {25, Dtype::kI16},
    {26, Dtype::kI32}, {27, Dtype::kI64}, {28, Dtype::kF64}, {30, Dtype::kBF16}};

// PlainTensor draws a tensor of a plain type, 1 to 4 dims of 0 to 5 (1 to 5 past ne[0]), filled with bytes
// from an arbitrary string (so every bit pattern, NaN included, comes up).
rc::Gen<GgufTensor> PlainTensor() {
  return rc::gen::mapcat(rc::gen::inRange<size_t>(1, 5), [](size_t dims) {
    return rc::gen::map(
        rc::gen::tuple(rc::gen::elementOf(std::vector<uint32_t>{0, 1, 24, 25, 26, 27, 28, 30}),
                       rc::gen::container<std::vector<uint64_t>>(
                           dims, rc::gen::inRange<uint64_t>(0, 6)),
                       rc::gen::arbitrary<std::string>()),
        [](const std::tuple<uint32_t, std::vector<uint64_t>, std::string>& t) {
          GgufTensor tensor;
          tensor.type = std::get<0>(t);
          tensor.ne = std::get<1>(t);
          // Only ne[0] may be zero: stguard refuses a zero further out (older ggml builds
          // divide by it), so a zero-element tensor is drawn as ne[0] = 0.
          for (size_t d = 1; d < tensor.ne.size(); ++d) {
            tensor.ne[d] = std::max<uint64_t>(tensor.ne[d], 1);
          }
          std::string data(GgufTensorBytes(tensor), '\0');
          const std::string& seed = std::get<2>(t);
          for (size_t i = 0; i < data.size(); ++i) {
            data[i] = static_cast<char>(seed.empty() ? i * 37 : seed[i % seed.size()] + i);
          }
          tensor.data = data;
          return tensor;
        });
  });
}

rc::Gen<GgufModel> PlainModel() {
  return rc::gen::mapcat(rc::gen::inRange<size_t>(0, 8), [](size_t count) {
    return rc::gen::map(
        rc::gen::tuple(rc::gen::container<std::vector<GgufTensor>>(count, PlainTensor()),
                       rc::gen::elementOf(std::vector<uint32_t>{8, 16, 32, 64, 256}),
                       rc::gen::inRange<uint32_t>(0, 100000)),
        [](const std::tuple<std::vector<GgufTensor>, uint32_t, uint32_t>& t) {
          GgufModel model;
          model.tensors = std::get<0>(t);
          for (size_t i = 0; i < model.tensors.size(); ++i) {
            // Distinct names: the index keeps them apart.
            model.tensors[i].name = "blk." + std::to_string(i) + ".weight";
          }
          model.alignment = std::get<1>(t);
          model.kvs = {GgufStr("general.architecture", "llama"),
                       GgufU32("general.alignment", std::get<1>(t)),
                       GgufU32("some.count", std::get<2>(t))};
          return model;
        });
  });
}

RC_GTEST_PROP(GgufConvertProp, PlainTypesRoundTripExactly, ()) {
  const GgufModel model = *PlainModel();
  TempDir dir;
  const std::string in = dir.File("in.gguf");
  const std::string out = dir.File("out.safetensors");
  RC_ASSERT(WriteFileBytes(in, Encode(model)));
  GgufConvertReport report;
  const Error error = ConvertGguf(in, out, {}, &report);
  RC_ASSERT(error.ok());
  Result<Checkpoint> converted = Checkpoint::Open(out);
  RC_ASSERT(converted.ok());
  RC_ASSERT(converted->num_tensors() == model.tensors.size());
  for (const GgufTensor& tensor : model.tensors) {
    const TensorView* view = converted->Find(tensor.name);
    RC_ASSERT(view != nullptr);
    RC_ASSERT(view->dtype == kPlainTypes.at(tensor.type));
    const std::vector<uint64_t> reversed(tensor.ne.rbegin(), tensor.ne.rend());
    RC_ASSERT(std::vector<uint64_t>(view->shape.begin(), view->shape.end()) == reversed);
    const std::string bytes(reinterpret_cast<const char*>(view->data.data()), view->data.size());
    RC_ASSERT(bytes == *tensor.data);
  }
  uint32_t count = 0;
  std::memcpy(&count, model.kvs[2].payload.data(), sizeof count);
  const std::string expected = "{\"u32\":" + std::to_string(count) + "}";
  RC_ASSERT(converted->FindMetadata("some.count") == std::optional<std::string_view>(expected));
}

}  // namespace
}  // namespace stguard::testing
