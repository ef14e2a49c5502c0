// SPDX-License-Identifier: Apache-2.0
// A temporary directory removed with its contents at the end of a test, and small file
// helpers for tests of the crash-safe writer.
#ifndef STGUARD_TESTS_SUPPORT_TEMP_DIR_H_
#define STGUARD_TESTS_SUPPORT_TEMP_DIR_H_

#include <string>
#include <string_view>
#include <vector>

namespace stguard::testing {

class TempDir {
 public:
  TempDir();  // a fresh directory under $TMPDIR (or /tmp)
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // File returns path()/name.
  std::string File(std::string_view name) const;
  // Entries lists the names in the directory, sorted, without "." and "..".
  std::vector<std::string> Entries() const;

 private:
  std::string path_;
};

// WriteFileBytes creates or truncates `path` and writes `content` (plainly, not crash-safe:
// for setting up tests). Returns false on failure.
bool WriteFileBytes(const std::string& path, std::string_view content);

}  // namespace stguard::testing

#endif  // STGUARD_TESTS_SUPPORT_TEMP_DIR_H_
