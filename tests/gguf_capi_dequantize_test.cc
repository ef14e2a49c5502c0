// SPDX-License-Identifier: Apache-2.0
// stguard_gguf_dequantize (stguard/stguard_gguf.h): one tensor decoded into the caller's
// buffer, equal to the library's decoder; refusals (integer and q8_1 tensors, a wrong
// length, an index past the end) are stguard_error values that leave the buffer alone.
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "stguard/gguf.h"
#include "stguard/gguf_dequant.h"
#include "stguard/stguard_gguf.h"
#include "support/gguf_encoder.h"

namespace stguard::testing {
namespace {

TEST(GgufCApiDequantize, DecodesIntoTheCallersBuffer) {
  GgufModel model = SimpleGgufModel();  // f32 {4, 3}, then q8_0 {64, 2}
  model.tensors.push_back({"ids", 26, {2}, {}, {}});
  model.tensors.push_back({"act", 9, {32}, {}, {}});
  const std::string bytes = Encode(model);
  stguard_gguf* gguf = nullptr;
  stguard_error err;
  ASSERT_EQ(stguard_gguf_from_buffer(bytes.data(), bytes.size(), &gguf, &err), STGUARD_OK);

  // Accept: the q8_0 tensor, bit for bit what the decoder gives.
  const stguard_gguf_tensor* q = stguard_gguf_tensor_at(gguf, 1);
  std::vector<float> out(128, -1.0f);
  ASSERT_EQ(stguard_gguf_dequantize(gguf, 1, out.data(), out.size(), &err), STGUARD_OK);
  std::vector<float> expected(128);
  ASSERT_TRUE(gguf::DequantizeRow(*gguf::FindGgmlType(8),
                                  {static_cast<const std::byte*>(q->data), q->byte_len}, expected)
                  .ok());
  EXPECT_EQ(std::memcmp(out.data(), expected.data(), 128 * sizeof(float)), 0);
  // And the f32 tensor, as stored.
  std::vector<float> plain(12);
  ASSERT_EQ(stguard_gguf_dequantize(gguf, 0, plain.data(), plain.size(), &err), STGUARD_OK);
  EXPECT_EQ(std::memcmp(plain.data(), stguard_gguf_tensor_at(gguf, 0)->data, 48), 0);

  // Refusals leave the buffer untouched.
  std::vector<float> untouched(32, 7.0f);
  EXPECT_EQ(stguard_gguf_dequantize(gguf, 3, untouched.data(), 32, &err),
            STGUARD_GGUF_NOT_DEQUANTIZABLE);
  EXPECT_EQ(std::string(err.tensor), "act");
  EXPECT_NE(err.offset, 0u);  // the tensor's info record
  EXPECT_NE(std::string(err.message).find("q8_1"), std::string::npos) << err.message;
  EXPECT_EQ(stguard_gguf_dequantize(gguf, 2, untouched.data(), 2, &err),
            STGUARD_GGUF_NOT_DEQUANTIZABLE);
  EXPECT_EQ(stguard_gguf_dequantize(gguf, 1, untouched.data(), 32, &err),
            STGUARD_INVALID_ARGUMENT);
  EXPECT_EQ(stguard_gguf_dequantize(gguf, 4, untouched.data(), 32, &err),
            STGUARD_INVALID_ARGUMENT);
  EXPECT_EQ(stguard_gguf_dequantize(gguf, 1, nullptr, 128, &err), STGUARD_INVALID_ARGUMENT);
  EXPECT_EQ(stguard_gguf_dequantize(nullptr, 1, out.data(), 128, nullptr),
            STGUARD_INVALID_ARGUMENT);
  EXPECT_EQ(untouched, std::vector<float>(32, 7.0f));
  stguard_gguf_close(gguf);
}

}  // namespace
}  // namespace stguard::testing
