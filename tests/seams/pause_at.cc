// SPDX-License-Identifier: Apache-2.0
// The pause points of the tests' pausing CLI (src/base/test_pause.h). Linked only into
// the tests' build of the library (stguard_internal), never into what users install.
//
// PauseForTestingAt does nothing unless the environment variable STGUARD_TEST_PAUSE_AT
// equals `point` and STGUARD_TEST_PAUSE_FILE names a file to create. Then, the first time
// the process reaches `point`, it creates that file and waits, polling every millisecond,
// until the test removes it (or 60 seconds pass).
#include "base/test_pause.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace stguard {

void PauseForTestingAt(const char* point) {
  const char* wanted = std::getenv("STGUARD_TEST_PAUSE_AT");
  if (wanted == nullptr || std::strcmp(wanted, point) != 0) return;
  const char* marker = std::getenv("STGUARD_TEST_PAUSE_FILE");
  if (marker == nullptr || marker[0] == '\0') return;
  static std::atomic<bool> paused{false};
  if (paused.exchange(true)) return;  // once per process
  const int fd = ::open(marker, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return;
  ::close(fd);
  const timespec one_millisecond{0, 1000000};
  for (int waited = 0; waited < 60000 && ::access(marker, F_OK) == 0; ++waited) {
    ::nanosleep(&one_millisecond, nullptr);
  }
}

}  // namespace stguard
