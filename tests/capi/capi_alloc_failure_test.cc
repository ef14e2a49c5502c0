// SPDX-License-Identifier: Apache-2.0
// Allocation failure through the C API: for each operation, every allocation it makes is
// failed in turn (and every one after it, as when memory stays exhausted). Each attempt
// must come back as STGUARD_OUT_OF_MEMORY, never as a crash, an exception, a leak (the
// sanitizer build checks) or a file: and once no allocation is failed, as STGUARD_OK.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "capi/capi_test_util.h"
#include "capi/fail_alloc.h"
#include "stguard/stguard.h"
#include "support/temp_dir.h"
#include "support/test_files.h"

namespace stguard::testing {
namespace {

const std::string kCorpus = STGUARD_CORPUS_DIR;
const std::string kSample = kCorpus + "/sample.safetensors";

// Armed runs `call` with allocation `n` (counted from here) and all later ones failing,
// and reports whether a failure was injected.
bool Armed(uint64_t n, const std::function<void()>& call) {
  FailAllocationNumber(n);
  call();
  return StopFailingAllocations();
}

// ForEachAllocation calls `attempt(n)` for n = 0, 1, 2, ... until an attempt meets no
// failed allocation; `attempt` returns whether it met one. Returns the number of
// allocations the operation makes.
uint64_t ForEachAllocation(const std::function<bool(uint64_t)>& attempt) {
  for (uint64_t n = 0; n < 100000; ++n) {
    if (!attempt(n)) return n;
  }
  ADD_FAILURE() << "the operation never completed";
  return 0;
}

void ExpectOutOfMemory(stguard_code code, const stguard_error& err) {
  EXPECT_EQ(code, STGUARD_OUT_OF_MEMORY);
  EXPECT_EQ(err.code, STGUARD_OUT_OF_MEMORY);
  EXPECT_STREQ(err.code_name, "OutOfMemory");
  EXPECT_EQ(std::strncmp(err.message, "out of memory", 13), 0) << err.message;
}

// AllocateOnce makes one allocation that the compiler cannot elide (the pointer escapes
// through a volatile), and frees it.
void AllocateOnce() {
  static void* volatile escaped;
  escaped = ::operator new(16);
  ::operator delete(escaped);
}

TEST(CapiAllocFailure, TheHookFailsTheChosenAllocation) {
  // Accept and reject case for the machinery itself.
  EXPECT_FALSE(Armed(1, [] { AllocateOnce(); }));
  bool threw = false;
  EXPECT_TRUE(Armed(0, [&] {
    try {
      AllocateOnce();
    } catch (const std::bad_alloc&) {
      threw = true;
    }
  }));
  EXPECT_TRUE(threw);
  const uint64_t before = NumAllocations();
  AllocateOnce();
  EXPECT_EQ(NumAllocations(), before + 1);
}

TEST(CapiAllocFailure, Open) {
  const uint64_t count = ForEachAllocation([](uint64_t n) {
    stguard_checkpoint* handle = nullptr;
    stguard_error err = PoisonedError();
    stguard_code code = STGUARD_OK;
    const bool injected =
        Armed(n, [&] { code = stguard_checkpoint_open(kSample.c_str(), &handle, &err); });
    if (injected) {
      ExpectOutOfMemory(code, err);
      EXPECT_EQ(handle, nullptr);
    } else {
      EXPECT_EQ(code, STGUARD_OK);
      EXPECT_EQ(stguard_checkpoint_num_tensors(handle), 7u);
    }
    stguard_checkpoint_close(handle);
    return injected;
  });
  EXPECT_GT(count, 3u) << "opening allocates: the hook must have seen it";
}

TEST(CapiAllocFailure, FromBuffer) {
  const std::string bytes = ReadFileBytes(kSample);
  const uint64_t count = ForEachAllocation([&](uint64_t n) {
    stguard_checkpoint* handle = nullptr;
    stguard_error err = PoisonedError();
    stguard_code code = STGUARD_OK;
    const bool injected = Armed(n, [&] {
      code = stguard_checkpoint_from_buffer(bytes.data(), bytes.size(), &handle, &err);
    });
    if (injected) {
      ExpectOutOfMemory(code, err);
      EXPECT_EQ(handle, nullptr);
    } else {
      EXPECT_EQ(code, STGUARD_OK);
    }
    stguard_checkpoint_close(handle);
    return injected;
  });
  EXPECT_GT(count, 3u);
}

TEST(CapiAllocFailure, OpenInvalidFile) {
  // Reporting an error with detail allocates too; failing that is still OutOfMemory.
  const std::string path = kCorpus + "/invalid/UnknownField__extra_field.safetensors";
  ForEachAllocation([&](uint64_t n) {
    stguard_checkpoint* handle = nullptr;
    stguard_error err = PoisonedError();
    stguard_code code = STGUARD_OK;
    const bool injected =
        Armed(n, [&] { code = stguard_checkpoint_open(path.c_str(), &handle, &err); });
    EXPECT_EQ(handle, nullptr);
    if (injected) {
      ExpectOutOfMemory(code, err);
    } else {
      EXPECT_EQ(code, STGUARD_UNKNOWN_FIELD);
    }
    return injected;
  });
}

TEST(CapiAllocFailure, WriterCreate) {
  ForEachAllocation([](uint64_t n) {
    stguard_writer* writer = nullptr;
    stguard_error err = PoisonedError();
    stguard_code code = STGUARD_OK;
    const bool injected = Armed(n, [&] { code = stguard_writer_create(&writer, &err); });
    if (injected) {
      ExpectOutOfMemory(code, err);
      EXPECT_EQ(writer, nullptr);
    } else {
      EXPECT_EQ(code, STGUARD_OK);
      EXPECT_NE(writer, nullptr);
    }
    stguard_writer_free(writer);
    return injected;
  });
}

// Each add, armed alone on a writer that holds one tensor already: a failed add returns
// OutOfMemory, and sticks, so that the file is not written without it.
void ExpectAddFailsAndSticks(
    const std::function<stguard_code(stguard_writer*, stguard_error*)>& add) {
  static const float kData[4] = {1, 2, 3, 4};
  static const uint64_t kShape[2] = {2, 2};
  const uint64_t count = ForEachAllocation([&](uint64_t n) {
    TempDir dir;
    const std::string path = dir.File("out.safetensors");
    stguard_writer* writer = nullptr;
    EXPECT_EQ(stguard_writer_create(&writer, nullptr), STGUARD_OK);
    EXPECT_EQ(stguard_writer_add_tensor(writer, "first", 5, STGUARD_DTYPE_F32, kShape, 2, kData,
                                        sizeof(kData), nullptr),
              STGUARD_OK);
    stguard_error err = PoisonedError();
    stguard_code code = STGUARD_OK;
    const bool injected = Armed(n, [&] { code = add(writer, &err); });
    if (injected) {
      ExpectOutOfMemory(code, err);
      stguard_error write_err = PoisonedError();
      EXPECT_EQ(stguard_writer_write_file(writer, path.c_str(), &write_err),
                STGUARD_OUT_OF_MEMORY);
      EXPECT_TRUE(dir.Entries().empty());
    } else {
      EXPECT_EQ(code, STGUARD_OK);
      EXPECT_EQ(stguard_writer_write_file(writer, path.c_str(), nullptr), STGUARD_OK);
    }
    stguard_writer_free(writer);
    return injected;
  });
  EXPECT_GT(count, 0u) << "an add allocates: the hook must have seen it";
}

TEST(CapiAllocFailure, WriterAddTensor) {
  static const uint16_t kData[3] = {1, 2, 3};
  static const uint64_t kShape[1] = {3};
  ExpectAddFailsAndSticks([](stguard_writer* writer, stguard_error* err) {
    return stguard_writer_add_tensor(writer, "second", 6, STGUARD_DTYPE_BF16, kShape, 1, kData,
                                     sizeof(kData), err);
  });
}

TEST(CapiAllocFailure, WriterAddTensorCopy) {
  static const uint16_t kData[3] = {1, 2, 3};
  static const uint64_t kShape[1] = {3};
  ExpectAddFailsAndSticks([](stguard_writer* writer, stguard_error* err) {
    return stguard_writer_add_tensor_copy(writer, "second", 6, STGUARD_DTYPE_BF16, kShape, 1,
                                          kData, sizeof(kData), err);
  });
}

TEST(CapiAllocFailure, WriterAddMetadata) {
  static const std::string kValue(100, 'v');  // longer than any short-string buffer
  ExpectAddFailsAndSticks([](stguard_writer* writer, stguard_error* err) {
    return stguard_writer_add_metadata(writer, "a key longer than sixteen", 25, kValue.data(),
                                       kValue.size(), err);
  });
}

TEST(CapiAllocFailure, WriterWriteFile) {
  static const float kData[4] = {1, 2, 3, 4};
  static const uint64_t kShape[2] = {2, 2};
  const uint64_t count = ForEachAllocation([&](uint64_t n) {
    TempDir dir;
    const std::string path = dir.File("out.safetensors");
    EXPECT_TRUE(WriteFileBytes(path, "old content"));
    stguard_writer* writer = nullptr;
    EXPECT_EQ(stguard_writer_create(&writer, nullptr), STGUARD_OK);
    EXPECT_EQ(stguard_writer_add_tensor(writer, "w", 1, STGUARD_DTYPE_F32, kShape, 2, kData,
                                        sizeof(kData), nullptr),
              STGUARD_OK);
    EXPECT_EQ(stguard_writer_add_metadata(writer, "k", 1, "v", 1, nullptr), STGUARD_OK);
    stguard_error err = PoisonedError();
    stguard_code code = STGUARD_OK;
    const bool injected =
        Armed(n, [&] { code = stguard_writer_write_file(writer, path.c_str(), &err); });
    if (injected) {
      ExpectOutOfMemory(code, err);
      EXPECT_EQ(ReadFileBytes(path), "old content") << "a failed write keeps the old file";
      EXPECT_EQ(dir.Entries(), std::vector<std::string>{"out.safetensors"})
          << "and leaves no temporary file";
    } else {
      EXPECT_EQ(code, STGUARD_OK);
      EXPECT_NE(ReadFileBytes(path), "old content");
    }
    stguard_writer_free(writer);
    return injected;
  });
  EXPECT_GT(count, 0u);
}

TEST(CapiAllocFailure, ConversionAndLookupsDoNotAllocate) {
  stguard_checkpoint* handle = nullptr;
  ASSERT_EQ(stguard_checkpoint_open(kSample.c_str(), &handle, nullptr), STGUARD_OK);
  const stguard_tensor* embed = stguard_checkpoint_find_cstr(handle, "model.embed_tokens.weight");
  ASSERT_NE(embed, nullptr);
  std::vector<float> out(embed->num_elements);
  // Results are kept and checked after disarming: a failing check would allocate.
  stguard_error err = PoisonedError();
  const stguard_tensor* found = nullptr;
  const stguard_metadata* quant = nullptr;
  stguard_code converted = STGUARD_NUM_CODES;
  stguard_code too_small = STGUARD_NUM_CODES;
  stguard_code unknown_dtype = STGUARD_NUM_CODES;
  const bool injected = Armed(0, [&] {
    found = stguard_checkpoint_find_cstr(handle, "model.norm.weight");
    quant = stguard_checkpoint_find_metadata(handle, "quant", 5);
    converted = stguard_tensor_to_f32(embed, out.data(), out.size(), &err);
    // Errors are reported without allocating, even with detail.
    too_small = stguard_tensor_to_f32(embed, out.data(), 1, &err);
    stguard_dtype dtype;
    unknown_dtype = stguard_dtype_from_name("X", 1, &dtype, &err);
  });
  EXPECT_EQ(found, stguard_checkpoint_tensor(handle, 1));
  EXPECT_NE(quant, nullptr);
  EXPECT_EQ(converted, STGUARD_OK);
  EXPECT_EQ(too_small, STGUARD_INVALID_ARGUMENT);
  EXPECT_EQ(unknown_dtype, STGUARD_INVALID_DTYPE);
  EXPECT_FALSE(injected) << "lookups, conversion and error reports must not allocate";
  stguard_checkpoint_close(handle);
}

}  // namespace
}  // namespace stguard::testing
