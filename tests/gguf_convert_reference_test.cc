// SPDX-License-Identifier: Apache-2.0
// GGUF conversion end to end against ggml itself, one case per quantized type: the file is
// written by ggml's writer (gguf_init_empty, gguf_add_tensor, gguf_write_to_file), holding
// values quantized by ggml's quantize_row_*_ref where it has one plus random blocks (NaN
// and infinite scales included); it is converted by ConvertGguf, read back with the
// safetensors reader, and every float is compared by its bits with ggml's own
// dequantize_row_* of the same blocks. Skips with a message when the reference is absent.
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "stguard/gguf.h"
#include "stguard/gguf_convert.h"
#include "stguard/gguf_dequant.h"
#include "stguard/reader.h"
#include "support/ggml_quant_reference.h"
#include "support/ggml_reference.h"
#include "support/temp_dir.h"

namespace stguard::testing {
namespace {

const GgmlReference* ReferenceOrSkip() {
  std::string why;
  const GgmlReference* reference = GgmlReference::Load(&why);
  if (reference == nullptr) std::fprintf(stderr, "SKIPPED: %s\n", why.c_str());
  return reference;
}

// Values a model holds: mostly small normal numbers, a few outliers and zeros.
std::vector<float> ModelValues(size_t count, std::mt19937* random) {
  std::normal_distribution<float> normal(0.0f, 0.05f);
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i) {
    values[i] = i % 97 == 0 ? 0.0f : (i % 61 == 0 ? 4.0f * normal(*random) * 20 : normal(*random));
  }
  return values;
}

std::string RandomBlocks(size_t len, std::mt19937* random) {
  std::string out(len, '\0');
  for (char& c : out) c = static_cast<char>((*random)() & 0xFF);
  return out;
}

std::string Bits(const float* values, size_t count) {
  return std::string(reinterpret_cast<const char*>(values), count * sizeof(float));
}

TEST(GgufConvertReference, EveryQuantizedTypeIsBitIdenticalToGgml) {
  const GgmlReference* reference = ReferenceOrSkip();
  if (reference == nullptr) GTEST_SKIP() << "ggml's reference library is absent (tools/fetch_ggml.sh)";
  const GgmlQuantReference quant(*reference);
  TempDir dir;
  std::mt19937 random(20261203);
  int types_checked = 0;
  std::string checked;
  for (const gguf::GgmlType& type : gguf::GgmlTypes()) {
    if (type.dtype.has_value() || !quant.CanDequantize(type.id)) continue;
    SCOPED_TRACE(std::string(type.name));
    // The conversion decodes every type ggml decodes.
    ASSERT_TRUE(gguf::CanDequantize(type)) << "ggml dequantizes it, stguard does not";
    const int64_t row = static_cast<int64_t>(type.block_size) * 4;
    const int64_t rows = 3;
    const size_t bytes = static_cast<size_t>(rows * row / type.block_size) * type.type_size;
    std::vector<GgmlReference::WriteTensor> tensors = {
        {"random.weight", static_cast<int>(type.id), {row, rows}, RandomBlocks(bytes, &random)}};
    if (quant.CanQuantize(type.id)) {
      tensors.push_back({"quantized.weight", static_cast<int>(type.id), {row, rows},
                         quant.Quantize(type.id, ModelValues(static_cast<size_t>(row * rows),
                                                             &random))});
    }
    const std::string in = dir.File(std::string(type.name) + ".gguf");
    const std::string out = dir.File(std::string(type.name) + ".safetensors");
    ASSERT_TRUE(reference->Write(in, {{"general.name", 8, 0, {"x"}}}, tensors));
    GgufConvertReport report;
    const Error error = ConvertGguf(in, out, {}, &report);
    ASSERT_TRUE(error.ok()) << error.ToString();
    Result<Checkpoint> converted = Checkpoint::Open(out);
    ASSERT_TRUE(converted.ok()) << converted.error().ToString();
    for (const GgmlReference::WriteTensor& tensor : tensors) {
      const TensorView* view = converted->Find(tensor.name);
      ASSERT_NE(view, nullptr) << tensor.name;
      EXPECT_EQ(view->dtype, Dtype::kF32);
      EXPECT_EQ(std::vector<uint64_t>(view->shape.begin(), view->shape.end()),
                (std::vector<uint64_t>{static_cast<uint64_t>(rows), static_cast<uint64_t>(row)}));
      const std::vector<float> expected = quant.Dequantize(type.id, tensor.data, row * rows);
      const std::string ours(reinterpret_cast<const char*>(view->data.data()), view->data.size());
      ASSERT_EQ(ours.size(), expected.size() * sizeof(float)) << tensor.name;
      if (ours != Bits(expected.data(), expected.size())) {
        size_t first = 0;
        while (std::memcmp(ours.data() + 4 * first, &expected[first], 4) == 0) ++first;
        float got;
        std::memcpy(&got, ours.data() + 4 * first, 4);
        ADD_FAILURE() << tensor.name << ": element " << first << " is " << got << ", ggml gives "
                      << expected[first];
      }
    }
    ++types_checked;
    checked += " " + std::string(type.name);
  }
  std::printf("bit-identical to ggml's dequantize_row_*:%s (%d types)\n", checked.c_str(),
              types_checked);
  EXPECT_GE(types_checked, 1);
}

}  // namespace
}  // namespace stguard::testing
