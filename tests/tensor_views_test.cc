// SPDX-License-Identifier: Apache-2.0
// The state dict's walk (src/torch/tensor_views.cc) copies each name's shape from the
// pickle's shared TensorRef: those copies are charged against the pickle's copy budget
// (pickle_reader.h, BOUNDS), so one tensor of many dimensions under many names is refused.
#include "torch/tensor_views.h"

#include <gtest/gtest.h>

#include <string>

#include "pickle/pickle_reader.h"

namespace stguard {
namespace {

using namespace std::string_literals;

std::string Unicode(const std::string& text) {
  const auto n = static_cast<uint32_t>(text.size());
  std::string out = "X";
  for (int k = 0; k < 4; ++k) out += static_cast<char>((n >> (8 * k)) & 0xff);
  return out + text;
}

// TiedNamesPickle is a state dict naming one U8 tensor of `dims` unit dimensions `names`
// times (the tensor memoised once, then BINGET per name, as torch.save writes tied
// weights).
std::string TiedNamesPickle(size_t dims, size_t names) {
  std::string out = "\x80\x02" "ccollections\nOrderedDict\n)R(" + Unicode("n0") +
                    "ctorch._utils\n_rebuild_tensor_v2\n((" + Unicode("storage") +
                    "ctorch\nByteStorage\n" + Unicode("0") + Unicode("cpu") + "K\x10tQK\x00"s;
  for (int part = 0; part < 2; ++part) {  // sizes, then strides
    out += "(";
    for (size_t d = 0; d < dims; ++d) out += "K\x01";
    out += "t";
  }
  out += "\x89}tRq\x00"s;
  for (size_t k = 1; k < names; ++k) out += Unicode("n" + std::to_string(k)) + "h\x00"s;
  return out + "u.";
}

Error Select(const std::string& pickle, std::vector<TorchTensor>* tensors) {
  PickleReadOptions options;
  options.persistent_ids = PersistentIds::kZip;
  Result<PickleResult> result =
      ReadPickle(std::as_bytes(std::span(pickle.data(), pickle.size())), options);
  if (!result.ok()) return result.error();
  LoadedPickle loaded;
  loaded.pickle = std::move(result).value();
  return SelectTensors(loaded, TorchOptions{}, pickle.size(), tensors);
}

TEST(TensorViewsBoundsTest, NamesOfOneTensorAreChargedTheirShapes) {
  // Accepted: 50 names of a 100-dimension tensor (10,200 sizes and strides copied).
  std::vector<TorchTensor> tensors;
  Error error = Select(TiedNamesPickle(100, 50), &tensors);
  ASSERT_TRUE(error.ok()) << error.ToString();
  ASSERT_EQ(tensors.size(), 50u);
  EXPECT_EQ(tensors[49].shape, std::vector<uint64_t>(100, 1));
  EXPECT_EQ(tensors[49].alias_of, 0u);
  // Refused: 200 names of a 1,000-dimension tensor would copy 400,000 from a 6 KB pickle.
  tensors.clear();
  error = Select(TiedNamesPickle(1000, 200), &tensors);
  EXPECT_EQ(error.code, ErrorCode::kOutputTooLarge) << error.ToString();
  EXPECT_NE(std::string(error.message).find("more dimensions than the pickle's length allows"),
            std::string::npos);
  EXPECT_FALSE(error.tensor.empty());
}

}  // namespace
}  // namespace stguard
