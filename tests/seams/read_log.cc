// SPDX-License-Identifier: Apache-2.0
// The read record of the tests' build of the library (src/base/test_reads.h). Linked only
// into stguard_internal, never into what users install.
//
// RecordReadForTesting does nothing unless the environment variable STGUARD_TEST_READ_LOG
// names a file; then it appends "HOW OFFSET LEN PATH\n" to it (the path last: it may hold
// spaces), one write(2) per line so that the lines of one process stay whole.
#include "base/test_reads.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace stguard {

void RecordReadForTesting(const char* path, const char* how, uint64_t offset, uint64_t len) {
  const char* log = std::getenv("STGUARD_TEST_READ_LOG");
  if (log == nullptr || log[0] == '\0') return;
  const std::string line = std::string(how) + " " + std::to_string(offset) + " " +
                           std::to_string(len) + " " + path + "\n";
  const int fd = ::open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return;
  const ssize_t written = ::write(fd, line.data(), line.size());
  static_cast<void>(written);  // a lost line makes the test fail, which is what it checks
  ::close(fd);
}

}  // namespace stguard
