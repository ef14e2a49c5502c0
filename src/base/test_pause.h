// SPDX-License-Identifier: Apache-2.0
// Pause points for tests that must act on a real stguard process at a known moment:
// truncate the file it is reading, or send it a signal while its temporary file exists.
#ifndef STGUARD_SRC_BASE_TEST_PAUSE_H_
#define STGUARD_SRC_BASE_TEST_PAUSE_H_

namespace stguard {

// PauseForTestingAt marks a point where a test may hold the process. Points: "header"
// (a file's first bytes read, its header not yet: the sniff's growing read, or the
// safetensors reader's header read, whichever comes first), "data" (before tensor data is
// first read from a file), "written" (the first bytes are in a temporary output file),
// "sniffed" (convert has opened IN and told its format, its adapter has not yet run).
//
// In the library users get, it is an empty function inlined even without optimisation,
// so no symbol, string or environment read remains in what is installed. Only the tests'
// build of the library (stguard_internal, never installed) compiles the sources that call
// it with STGUARD_TESTING_SEAMS defined and links the implementation that waits
// (tests/seams/pause_at.cc), which the tests' pausing CLI runs.
#ifdef STGUARD_TESTING_SEAMS
void PauseForTestingAt(const char* point);
#else
[[gnu::always_inline]] inline void PauseForTestingAt(const char* /*point*/) {}
#endif

}  // namespace stguard

#endif  // STGUARD_SRC_BASE_TEST_PAUSE_H_
