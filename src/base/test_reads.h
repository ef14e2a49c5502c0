// SPDX-License-Identifier: Apache-2.0
// A record of every read of a local file, for the test that keeps each byte read once.
#ifndef STGUARD_SRC_BASE_TEST_READS_H_
#define STGUARD_SRC_BASE_TEST_READS_H_

#include <cstdint>

namespace stguard {

// RecordReadForTesting notes that `path` was read: `how` is "pread" (the bytes
// [offset, offset + len) by ReadAt), "map" (the whole file, len bytes, mapped: its pages
// are read as the reader touches them) or "slurp" (a file of size 0 read to its end).
//
// As PauseForTestingAt (base/test_pause.h): an empty inline function in the library users
// get; only the tests' build (stguard_internal) links the implementation
// (tests/seams/read_log.cc), which writes one line per read to a log a test names.
#ifdef STGUARD_TESTING_SEAMS
void RecordReadForTesting(const char* path, const char* how, uint64_t offset, uint64_t len);
#else
[[gnu::always_inline]] inline void RecordReadForTesting(const char* /*path*/,
                                                        const char* /*how*/,
                                                        uint64_t /*offset*/, uint64_t /*len*/) {}
#endif

}  // namespace stguard

#endif  // STGUARD_SRC_BASE_TEST_READS_H_
