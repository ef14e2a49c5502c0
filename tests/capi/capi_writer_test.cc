// SPDX-License-Identifier: Apache-2.0
// C API writing: canonical output identical to the C++ writer's, referenced and copied
// data, and every refusal writing nothing.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "capi/capi_test_util.h"
#include "stguard/reader.h"
#include "stguard/stguard.h"
#include "stguard/writer.h"
#include "support/temp_dir.h"
#include "support/test_files.h"

namespace stguard::testing {
namespace {

std::span<const std::byte> Bytes(const void* data, size_t len) {
  return {static_cast<const std::byte*>(data), len};
}

// Owns a C writer for a test.
class CapiWriter : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(stguard_writer_create(&writer_, nullptr), STGUARD_OK); }
  void TearDown() override { stguard_writer_free(writer_); }

  // ExpectWriteRefused checks that a refused write left the folder empty: no
  // destination and no temporary file.
  void ExpectWriteRefused(stguard_code code) {
    stguard_error err = PoisonedError();
    EXPECT_EQ(stguard_writer_write_file(writer_, dir_.File("out.safetensors").c_str(), &err),
              code);
    EXPECT_EQ(err.code, code);
    EXPECT_TRUE(dir_.Entries().empty()) << "a refused write must leave nothing";
  }

  TempDir dir_;
  stguard_writer* writer_ = nullptr;
};

TEST_F(CapiWriter, WritesTheSameCanonicalBytesAsTheCppWriter) {
  const float weights[6] = {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f};
  const uint64_t weights_shape[2] = {2, 3};
  const uint16_t bf16[2] = {0x3F80, 0x4000};
  const uint64_t bf16_shape[1] = {2};
  const int64_t scalar = -5;
  const uint64_t zero_shape[1] = {0};
  ASSERT_EQ(stguard_writer_add_tensor(writer_, "w", 1, STGUARD_DTYPE_F32, weights_shape, 2,
                                      weights, sizeof(weights), nullptr), STGUARD_OK);
  ASSERT_EQ(stguard_writer_add_tensor_copy(writer_, "b\0f", 3, STGUARD_DTYPE_BF16, bf16_shape,
                                           1, bf16, sizeof(bf16), nullptr), STGUARD_OK);
  ASSERT_EQ(stguard_writer_add_tensor(writer_, "s", 1, STGUARD_DTYPE_I64, nullptr, 0, &scalar,
                                      sizeof(scalar), nullptr), STGUARD_OK);
  ASSERT_EQ(stguard_writer_add_tensor(writer_, "empty", 5, STGUARD_DTYPE_F16, zero_shape, 1,
                                      nullptr, 0, nullptr), STGUARD_OK);
  ASSERT_EQ(stguard_writer_add_metadata(writer_, "format", 6, "pt", 2, nullptr), STGUARD_OK);
  EXPECT_EQ(stguard_writer_num_tensors(writer_), 4u);
  const std::string path = dir_.File("out.safetensors");
  ASSERT_EQ(stguard_writer_write_file(writer_, path.c_str(), nullptr), STGUARD_OK);

  Writer cpp;
  ASSERT_TRUE(cpp.AddTensor("w", Dtype::kF32, {2, 3}, Bytes(weights, sizeof(weights))).ok());
  ASSERT_TRUE(cpp.AddTensor(std::string_view("b\0f", 3), Dtype::kBF16, {2},
                            Bytes(bf16, sizeof(bf16))).ok());
  ASSERT_TRUE(cpp.AddTensor("s", Dtype::kI64, {}, Bytes(&scalar, sizeof(scalar))).ok());
  ASSERT_TRUE(cpp.AddTensor("empty", Dtype::kF16, {0}, {}).ok());
  ASSERT_TRUE(cpp.AddMetadata("format", "pt").ok());
  Result<std::string> expected = cpp.WriteToString();
  ASSERT_TRUE(expected.ok());
  EXPECT_EQ(ReadFileBytes(path), *expected);
  EXPECT_EQ(dir_.Entries(), std::vector<std::string>{"out.safetensors"});

  // And the reader reads it back, every tensor aligned (a canonical file).
  stguard_checkpoint* handle = nullptr;
  ASSERT_EQ(stguard_checkpoint_open(path.c_str(), &handle, nullptr), STGUARD_OK);
  ASSERT_EQ(stguard_checkpoint_num_tensors(handle), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(stguard_checkpoint_tensor(handle, i)->is_aligned, 1);
  stguard_checkpoint_close(handle);
}

TEST_F(CapiWriter, AddTensorReferencesTheDataAndAddTensorCopyCopiesIt) {
  uint8_t referenced[2] = {1, 2};
  uint8_t copied[2] = {3, 4};
  const uint64_t shape[1] = {2};
  ASSERT_EQ(stguard_writer_add_tensor(writer_, "r", 1, STGUARD_DTYPE_U8, shape, 1, referenced,
                                      2, nullptr), STGUARD_OK);
  ASSERT_EQ(stguard_writer_add_tensor_copy(writer_, "c", 1, STGUARD_DTYPE_U8, shape, 1, copied,
                                           2, nullptr), STGUARD_OK);
  // The caller changes both buffers before writing: only the referenced one shows it.
  referenced[0] = 9;
  copied[0] = 9;
  const std::string path = dir_.File("out.safetensors");
  ASSERT_EQ(stguard_writer_write_file(writer_, path.c_str(), nullptr), STGUARD_OK);
  const std::string bytes = ReadFileBytes(path);
  Result<Checkpoint> read = Checkpoint::FromBytes(std::string_view(bytes));
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(std::to_integer<int>(read->Find("r")->data[0]), 9);
  EXPECT_EQ(std::to_integer<int>(read->Find("c")->data[0]), 3);
}

TEST_F(CapiWriter, DuplicateNamesAreRefusedAtWriteTimeWritingNothing) {
  const uint8_t data[1] = {7};
  const uint64_t shape[1] = {1};
  ASSERT_EQ(stguard_writer_add_tensor(writer_, "x", 1, STGUARD_DTYPE_U8, shape, 1, data, 1,
                                      nullptr), STGUARD_OK);
  ASSERT_EQ(stguard_writer_add_tensor(writer_, "x", 1, STGUARD_DTYPE_U8, shape, 1, data, 1,
                                      nullptr), STGUARD_OK);
  ExpectWriteRefused(STGUARD_DUPLICATE_NAME);
  stguard_error err = PoisonedError();
  EXPECT_EQ(stguard_writer_write_file(writer_, dir_.File("o").c_str(), &err),
            STGUARD_DUPLICATE_NAME);
  EXPECT_EQ(TensorOf(err), "x");
}

TEST_F(CapiWriter, DuplicateMetadataKeysAreRefused) {
  ASSERT_EQ(stguard_writer_add_metadata(writer_, "k", 1, "a", 1, nullptr), STGUARD_OK);
  // Duplicates need every entry, so they are found when writing (stguard/writer.h).
  ASSERT_EQ(stguard_writer_add_metadata(writer_, "k", 1, "b", 1, nullptr), STGUARD_OK);
  ExpectWriteRefused(STGUARD_DUPLICATE_NAME);
}

TEST_F(CapiWriter, TheReservedNameIsRefusedAndTheRefusalSticks) {
  const uint8_t data[1] = {7};
  const uint64_t shape[1] = {1};
  stguard_error err = PoisonedError();
  EXPECT_EQ(stguard_writer_add_tensor(writer_, "__metadata__", 12, STGUARD_DTYPE_U8, shape, 1,
                                      data, 1, &err), STGUARD_INVALID_TENSOR_NAME);
  EXPECT_EQ(TensorOf(err), "__metadata__");
  // A good tensor afterwards does not make the writer usable again: the file would lack
  // the refused one.
  EXPECT_EQ(stguard_writer_add_tensor(writer_, "ok", 2, STGUARD_DTYPE_U8, shape, 1, data, 1,
                                      nullptr), STGUARD_OK);
  ExpectWriteRefused(STGUARD_INVALID_TENSOR_NAME);
}

TEST_F(CapiWriter, ASizeMismatchIsRefusedAndTheRefusalSticks) {
  const float data[3] = {1, 2, 3};
  const uint64_t shape[2] = {2, 2};
  stguard_error err = PoisonedError();
  EXPECT_EQ(stguard_writer_add_tensor_copy(writer_, "w", 1, STGUARD_DTYPE_F32, shape, 2, data,
                                           sizeof(data), &err), STGUARD_INVALID_ARGUMENT);
  EXPECT_EQ(TensorOf(err), "w");
  EXPECT_EQ(stguard_writer_num_tensors(writer_), 0u);
  ExpectWriteRefused(STGUARD_INVALID_ARGUMENT);
}

TEST_F(CapiWriter, AFailedWriteKeepsTheOldFile) {
  const std::string path = dir_.File("out.safetensors");
  ASSERT_TRUE(WriteFileBytes(path, "old content"));
  const uint8_t data[1] = {7};
  const uint64_t shape[1] = {1};
  EXPECT_EQ(stguard_writer_add_tensor(writer_, "\xFF", 1, STGUARD_DTYPE_U8, shape, 1, data, 1,
                                      nullptr), STGUARD_INVALID_ARGUMENT);  // invalid UTF-8
  EXPECT_EQ(stguard_writer_write_file(writer_, path.c_str(), nullptr), STGUARD_INVALID_ARGUMENT);
  EXPECT_EQ(ReadFileBytes(path), "old content");
  EXPECT_EQ(dir_.Entries(), std::vector<std::string>{"out.safetensors"});
}

TEST_F(CapiWriter, BadDestinationsAreErrors) {
  const uint8_t data[1] = {7};
  const uint64_t shape[1] = {1};
  ASSERT_EQ(stguard_writer_add_tensor(writer_, "x", 1, STGUARD_DTYPE_U8, shape, 1, data, 1,
                                      nullptr), STGUARD_OK);
  EXPECT_EQ(stguard_writer_write_file(writer_, dir_.path().c_str(), nullptr),
            STGUARD_NOT_A_REGULAR_FILE);
  EXPECT_EQ(stguard_writer_write_file(writer_, dir_.File("no/such/dir").c_str(), nullptr),
            STGUARD_IO_ERROR);
  EXPECT_EQ(stguard_writer_write_file(writer_, nullptr, nullptr), STGUARD_INVALID_ARGUMENT);
  EXPECT_TRUE(dir_.Entries().empty());
}

TEST_F(CapiWriter, NullArgumentsAreRefusedAndStick) {
  const uint8_t data[1] = {7};
  const uint64_t shape[1] = {1};
  stguard_error err = PoisonedError();
  EXPECT_EQ(stguard_writer_add_tensor(writer_, nullptr, 1, STGUARD_DTYPE_U8, shape, 1, data, 1,
                                      &err), STGUARD_INVALID_ARGUMENT);
  EXPECT_STREQ(err.message, "name is NULL but name_len is not 0");
  EXPECT_EQ(stguard_writer_add_tensor(writer_, "x", 1, STGUARD_DTYPE_U8, nullptr, 1, data, 1,
                                      &err), STGUARD_INVALID_ARGUMENT);
  EXPECT_STREQ(err.message, "shape is NULL but ndim is not 0");
  EXPECT_EQ(TensorOf(err), "x");
  EXPECT_EQ(stguard_writer_add_tensor(writer_, "x", 1, STGUARD_DTYPE_U8, shape, 1, nullptr, 1,
                                      &err), STGUARD_INVALID_ARGUMENT);
  EXPECT_STREQ(err.message, "data is NULL but byte_len is not 0");
  EXPECT_EQ(stguard_writer_add_tensor_copy(writer_, "x", 1, STGUARD_NUM_DTYPES, shape, 1, data,
                                           1, &err), STGUARD_INVALID_ARGUMENT);
  EXPECT_STREQ(err.message, "dtype is not a stguard_dtype value");
  EXPECT_EQ(stguard_writer_add_metadata(writer_, nullptr, 1, "v", 1, &err),
            STGUARD_INVALID_ARGUMENT);
  EXPECT_EQ(stguard_writer_add_metadata(writer_, "k", 1, nullptr, 1, &err),
            STGUARD_INVALID_ARGUMENT);
  EXPECT_EQ(stguard_writer_num_tensors(writer_), 0u);
  // The first failure is the one every write reports.
  stguard_error write_err = PoisonedError();
  EXPECT_EQ(stguard_writer_write_file(writer_, dir_.File("o").c_str(), &write_err),
            STGUARD_INVALID_ARGUMENT);
  EXPECT_STREQ(write_err.message, "name is NULL but name_len is not 0");
  EXPECT_TRUE(dir_.Entries().empty());
}

TEST(CapiWriterHandle, NullWritersAreRefusedOrIgnored) {
  stguard_error err = PoisonedError();
  const uint8_t data[1] = {7};
  const uint64_t shape[1] = {1};
  EXPECT_EQ(stguard_writer_create(nullptr, &err), STGUARD_INVALID_ARGUMENT);
  EXPECT_EQ(stguard_writer_add_tensor(nullptr, "x", 1, STGUARD_DTYPE_U8, shape, 1, data, 1,
                                      &err), STGUARD_INVALID_ARGUMENT);
  EXPECT_STREQ(err.message, "writer is NULL");
  EXPECT_EQ(stguard_writer_add_tensor_copy(nullptr, "x", 1, STGUARD_DTYPE_U8, shape, 1, data, 1,
                                           &err), STGUARD_INVALID_ARGUMENT);
  EXPECT_EQ(stguard_writer_add_metadata(nullptr, "k", 1, "v", 1, &err), STGUARD_INVALID_ARGUMENT);
  EXPECT_EQ(stguard_writer_write_file(nullptr, "/tmp/x", &err), STGUARD_INVALID_ARGUMENT);
  EXPECT_EQ(stguard_writer_num_tensors(nullptr), 0u);
  stguard_writer_free(nullptr);
}

}  // namespace
}  // namespace stguard::testing
