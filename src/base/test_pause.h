// SPDX-License-Identifier: Apache-2.0
// A pause point for tests that must act on a real stguard process at a known moment:
// truncate the file it is reading, or send it a signal while its temporary file exists.
#ifndef STGUARD_SRC_BASE_TEST_PAUSE_H_
#define STGUARD_SRC_BASE_TEST_PAUSE_H_

namespace stguard {

// PauseForTestingAt does nothing unless the environment variable STGUARD_TEST_PAUSE_AT
// equals `point` and STGUARD_TEST_PAUSE_FILE names a file to create. Then, the first time
// the process reaches `point`, it creates that file and waits, polling every millisecond,
// until the test removes it (or 60 seconds pass). Points: "header" (Checkpoint::Open,
// file opened, header not yet read), "data" (before tensor data is first read from a
// file), "written" (the first bytes are in a temporary output file).
void PauseForTestingAt(const char* point);

}  // namespace stguard

#endif  // STGUARD_SRC_BASE_TEST_PAUSE_H_
