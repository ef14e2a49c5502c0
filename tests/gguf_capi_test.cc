// SPDX-License-Identifier: Apache-2.0
// The C API of the GGUF reader (stguard/stguard_gguf.h): open, iterate metadata and
// tensors, look up by name, walk a string array, and errors as stguard_error values.
#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "stguard/stguard_gguf.h"
#include "support/gguf_encoder.h"
#include "support/temp_dir.h"

namespace stguard::testing {
namespace {

TEST(GgufCApi, ReadsMetadataAndTensors) {
  const std::string bytes = Encode(SimpleGgufModel());
  stguard_gguf* gguf = nullptr;
  stguard_error err;
  ASSERT_EQ(stguard_gguf_from_buffer(bytes.data(), bytes.size(), &gguf, &err), STGUARD_OK);
  EXPECT_EQ(stguard_gguf_version(gguf), 3u);
  EXPECT_EQ(stguard_gguf_alignment(gguf), 32u);
  ASSERT_EQ(stguard_gguf_num_metadata(gguf), 6u);
  EXPECT_EQ(stguard_gguf_metadata_at(gguf, 6), nullptr);
  const stguard_gguf_metadata* length =
      stguard_gguf_find_metadata(gguf, "llama.context_length", 20);
  ASSERT_NE(length, nullptr);
  EXPECT_EQ(length->type, STGUARD_GGUF_U32);
  uint32_t value = 0;
  std::memcpy(&value, length->data, 4);
  EXPECT_EQ(value, 4096u);
  const stguard_gguf_metadata* tokens = stguard_gguf_metadata_at(gguf, 4);
  ASSERT_EQ(std::string(tokens->key, tokens->key_len), "tokenizer.ggml.tokens");
  size_t cursor = 0;
  const char* text = nullptr;
  size_t text_len = 0;
  std::string joined;
  while (stguard_gguf_next_string(tokens, &cursor, &text, &text_len)) {
    joined += std::string(text, text_len) + "|";
  }
  EXPECT_EQ(joined, "<s>|</s>|hello|");
  cursor = 0;
  EXPECT_EQ(stguard_gguf_next_string(length, &cursor, &text, &text_len), 0);  // not an array

  ASSERT_EQ(stguard_gguf_num_tensors(gguf), 2u);
  const stguard_gguf_tensor* q = stguard_gguf_find_tensor(gguf, "blk.0.attn_q.weight", 19);
  ASSERT_NE(q, nullptr);
  EXPECT_STREQ(q->type_name, "q8_0");
  EXPECT_EQ(q->n_dims, 2u);
  EXPECT_EQ(q->ne[0], 64u);
  EXPECT_EQ(q->shape[0], 2u);
  EXPECT_EQ(q->shape[1], 64u);
  EXPECT_EQ(q->byte_len, 136u);
  EXPECT_EQ(static_cast<const char*>(q->data), bytes.data() + q->file_offset);
  EXPECT_EQ(stguard_gguf_find_tensor(gguf, "missing", 7), nullptr);
  stguard_gguf_close(gguf);
  stguard_gguf_close(nullptr);
}

TEST(GgufCApi, ErrorsAreValues) {
  GgufModel model = SimpleGgufModel();
  model.tensors[0].type = 4;
  const std::string bytes = Encode(model);
  stguard_gguf* gguf = nullptr;
  stguard_error err;
  EXPECT_EQ(stguard_gguf_from_buffer(bytes.data(), bytes.size(), &gguf, &err),
            STGUARD_GGUF_UNKNOWN_TYPE);
  EXPECT_EQ(gguf, nullptr);
  EXPECT_STREQ(err.code_name, "GgufUnknownType");
  EXPECT_EQ(std::string(err.tensor, err.tensor_len), "token_embd.weight");
  EXPECT_GT(err.offset, 0u);
  EXPECT_EQ(stguard_gguf_open("/nonexistent/model.gguf", &gguf, &err), STGUARD_IO_ERROR);
  EXPECT_EQ(stguard_gguf_open(nullptr, &gguf, &err), STGUARD_INVALID_ARGUMENT);
  EXPECT_EQ(stguard_is_gguf("GGUF", 4), 1);
  EXPECT_EQ(stguard_is_gguf("GGU", 3), 0);
}

TEST(GgufCApi, OpensAPath) {
  TempDir dir;
  const std::string path = dir.File("m.gguf");
  ASSERT_TRUE(WriteFileBytes(path, Encode(SimpleGgufModel())));
  stguard_gguf* gguf = nullptr;
  ASSERT_EQ(stguard_gguf_open(path.c_str(), &gguf, nullptr), STGUARD_OK);
  EXPECT_EQ(stguard_gguf_num_tensors(gguf), 2u);
  stguard_gguf_close(gguf);
}

}  // namespace
}  // namespace stguard::testing
