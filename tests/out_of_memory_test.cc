// SPDX-License-Identifier: Apache-2.0
// Allocation failure never escapes the library as an exception: each public function that
// returns Error or Result, run with its 1st, 2nd, 3rd... allocation failing, returns
// kOutOfMemory (and succeeds once no allocation is made to fail).
//
// This binary replaces the global operator new: with g_fail_allocation armed at N, the
// Nth allocation from now throws std::bad_alloc, once; otherwise it is malloc. Every
// replaceable form is replaced, so that new and delete always pair (AddressSanitizer
// checks that).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <new>
#include <string>

#include "stguard/checkpoint_dir.h"
#include "stguard/convert.h"
#include "stguard/json_tokenizer.h"
#include "stguard/mapped_file.h"
#include "stguard/reader.h"
#include "stguard/writer.h"
#include "support/test_files.h"

namespace {
thread_local int64_t g_fail_allocation = -1;  // -1: never; else allocations to let pass
thread_local bool g_failed = false;

void* Allocate(size_t size) {
  if (g_fail_allocation == 0) {
    g_fail_allocation = -1;
    g_failed = true;
    throw std::bad_alloc();
  }
  if (g_fail_allocation > 0) --g_fail_allocation;
  if (void* block = std::malloc(size == 0 ? 1 : size)) return block;
  throw std::bad_alloc();
}
}  // namespace

void* operator new(size_t size) { return Allocate(size); }
void* operator new[](size_t size) { return Allocate(size); }
void* operator new(size_t size, const std::nothrow_t&) noexcept {
  try {
    return Allocate(size);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](size_t size, const std::nothrow_t& tag) noexcept {
  return operator new(size, tag);
}
void operator delete(void* block) noexcept { std::free(block); }
void operator delete[](void* block) noexcept { std::free(block); }
void operator delete(void* block, size_t) noexcept { std::free(block); }
void operator delete[](void* block, size_t) noexcept { std::free(block); }
void operator delete(void* block, const std::nothrow_t&) noexcept { std::free(block); }
void operator delete[](void* block, const std::nothrow_t&) noexcept { std::free(block); }

namespace stguard {
namespace {

const std::string kSample = std::string(STGUARD_CORPUS_DIR) + "/sample.safetensors";

// ExpectOutOfMemoryAtEveryAllocation runs `operation` with allocation 0, 1, 2... failing
// until a run meets no injected failure, which must succeed. A run with a failed
// allocation must return kOutOfMemory, or succeed where the code has a fallback (the
// standard library's stable sort, for one, sorts in place when its buffer is refused).
void ExpectOutOfMemoryAtEveryAllocation(const std::function<Error()>& operation) {
  int64_t num_out_of_memory = 0;
  for (int64_t n = 0; n < 100000; ++n) {
    g_failed = false;
    g_fail_allocation = n;
    const Error error = operation();  // must not throw
    g_fail_allocation = -1;
    if (!g_failed) {
      EXPECT_TRUE(error.ok()) << error.ToString();
      EXPECT_GT(num_out_of_memory, 0) << "no allocation failure was reported: the test "
                                         "proves nothing";
      return;
    }
    if (!error.ok()) {
      ASSERT_EQ(error.code, ErrorCode::kOutOfMemory) << "allocation " << n << ": "
                                                     << error.ToString();
      ++num_out_of_memory;
    }
  }
  FAIL() << "too many allocations";
}

// MakeWriter constructs a Writer, whose constructor is documented to throw std::bad_alloc
// (constructors cannot return an Error).
std::unique_ptr<Writer> MakeWriter() {
  try {
    return std::make_unique<Writer>();
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}

template <typename T>
Error ErrorOf(const Result<T>& result) {
  return result.ok() ? Error{} : result.error();
}

TEST(OutOfMemoryTest, Reader) {
  const std::string bytes = testing::ReadFileBytes(kSample);
  ExpectOutOfMemoryAtEveryAllocation([&] { return ErrorOf(Checkpoint::FromBytes(bytes)); });
  ExpectOutOfMemoryAtEveryAllocation([&] { return ErrorOf(Checkpoint::Open(kSample)); });
  ExpectOutOfMemoryAtEveryAllocation([&] { return ErrorOf(MappedFile::Open(kSample)); });
  ExpectOutOfMemoryAtEveryAllocation([&] { return ErrorOf(CheckpointDir::Open(kSample)); });
  ExpectOutOfMemoryAtEveryAllocation([&] { return ValidateJson(R"({"a":[1,{"b":null}]})"); });
}

TEST(OutOfMemoryTest, WriterAndCanonicalForm) {
  Result<Checkpoint> checkpoint = Checkpoint::Open(kSample);
  ASSERT_TRUE(checkpoint.ok());
  ExpectOutOfMemoryAtEveryAllocation([&] { return ErrorOf(CanonicalBytes(*checkpoint)); });
  ExpectOutOfMemoryAtEveryAllocation([&] { return ErrorOf(CompareToCanonical(*checkpoint)); });
  ExpectOutOfMemoryAtEveryAllocation([&] {
    const std::unique_ptr<Writer> writer = MakeWriter();
    if (writer == nullptr) return Error{ErrorCode::kOutOfMemory, 0, "Writer()"};
    if (Error error = writer->AddCheckpoint(*checkpoint); !error.ok()) return error;
    if (Error error = writer->AddMetadata("out-of-memory-test", "yes"); !error.ok()) return error;
    return ErrorOf(writer->WriteToString());
  });
  ExpectOutOfMemoryAtEveryAllocation([&] {
    const std::unique_ptr<Writer> writer = MakeWriter();
    if (writer == nullptr) return Error{ErrorCode::kOutOfMemory, 0, "Writer()"};
    if (Error error = AddConvertedCheckpoint(*checkpoint, Dtype::kF16, writer.get());
        !error.ok()) {
      return error;
    }
    return ErrorOf(writer->CanonicalHeader());
  });
}

}  // namespace
}  // namespace stguard
