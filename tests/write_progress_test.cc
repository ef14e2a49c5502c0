// SPDX-License-Identifier: Apache-2.0
// Writer::set_progress and TorchConvertOptions::progress: the callback a tool draws its
// progress from counts every byte written, and nothing when the write is refused.
#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "stguard/reader.h"
#include "stguard/torch_checkpoint.h"
#include "stguard/writer.h"
#include "support/temp_dir.h"
#include "support/test_files.h"

namespace stguard {
namespace {

TEST(WriteProgressTest, CountsEveryByteOfTheFile) {
  const std::vector<float> big(1 << 20, 1.0f);  // 4 MiB: several chunks
  const std::vector<float> small = {1, 2, 3};
  Writer writer;
  ASSERT_TRUE(writer.AddTensor("big", Dtype::kF32, {big.size()}, std::as_bytes(std::span(big)))
                  .ok());
  ASSERT_TRUE(writer.AddTensor("small", Dtype::kF32, {3}, std::as_bytes(std::span(small))).ok());
  uint64_t counted = 0;
  int calls = 0;
  writer.set_progress([&](uint64_t bytes) {
    counted += bytes;
    ++calls;
  });
  testing::TempDir dir;
  ASSERT_TRUE(writer.WriteToFile(dir.File("out.safetensors")).ok());
  const Result<uint64_t> size = writer.FileSize();
  ASSERT_TRUE(size.ok());
  EXPECT_EQ(counted, *size);
  EXPECT_GE(calls, 3);  // the length prefix, the header, the data
}

TEST(WriteProgressTest, RefusedWriteCountsNothing) {
  Writer writer;
  const float value[1] = {1};
  // A duplicate name: refused when added or when written, never half-written.
  (void)writer.AddTensor("x", Dtype::kF32, {1}, std::as_bytes(std::span(value)));
  (void)writer.AddTensor("x", Dtype::kF32, {1}, std::as_bytes(std::span(value)));
  uint64_t counted = 0;
  writer.set_progress([&](uint64_t bytes) { counted += bytes; });
  testing::TempDir dir;
  EXPECT_FALSE(writer.WriteToFile(dir.File("out.safetensors")).ok());
  EXPECT_EQ(counted, 0u);
}

TEST(WriteProgressTest, TorchConversionReportsItsOutput) {
  const std::string in = STGUARD_CORPUS_DIR "/torch/valid/module_state_dict.zip.pt";
  testing::TempDir dir;
  const std::string out = dir.File("out.safetensors");
  TorchConvertOptions options;
  uint64_t counted = 0;
  options.progress = [&](uint64_t bytes) { counted += bytes; };
  std::vector<TorchDroppedAlias> dropped;
  ASSERT_TRUE(ConvertTorchFile(in, out, {}, options, &dropped).ok());
  EXPECT_EQ(counted, testing::ReadFileBytes(out).size());
}

}  // namespace
}  // namespace stguard
