// SPDX-License-Identifier: Apache-2.0
// replay_main.cc: a main() for fuzz targets built without libFuzzer (gcc, or clang without
// STGUARD_FUZZ). It runs LLVMFuzzerTestOneInput once on every file named on the command
// line and on every regular file inside every directory named (not recursively), in
// sorted order, so that ordinary test runs replay each corpus on every commit.
//
//   fuzz_header corpus/fuzz_header corpus/valid corpus/invalid
//
// -max_len=N truncates every input to N bytes, as libFuzzer does with the max_len of
// fuzz/<target>.options (ctest passes it), so a replay runs exactly what the fuzzer ran;
// without it inputs run whole, as AFL++ and honggfuzz run them. Other arguments starting
// with '-' are ignored, so libFuzzer-style flags do no harm. A path
// that does not exist, an unreadable file or an empty set of inputs is an error (exit 1):
// a replay test that silently runs nothing would hide a broken corpus path. A failed
// check aborts the process, which the test runner reports.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

bool ReadFile(const std::filesystem::path& path, std::vector<uint8_t>* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !in.bad();
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::filesystem::path> files;
  size_t max_len = SIZE_MAX;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("-max_len=", 0) == 0) {
      char* end = nullptr;
      const unsigned long long value = std::strtoull(arg.c_str() + 9, &end, 10);
      if (end == arg.c_str() + 9 || *end != '\0' || value == 0) {
        std::fprintf(stderr, "replay: bad %s\n", arg.c_str());
        return 1;
      }
      max_len = static_cast<size_t>(value);
      continue;
    }
    if (arg.empty() || arg[0] == '-') continue;
    const std::filesystem::path path(arg);
    std::error_code error;
    if (std::filesystem::is_directory(path, error)) {
      std::vector<std::filesystem::path> entries;
      for (const auto& entry : std::filesystem::directory_iterator(path, error)) {
        if (entry.is_regular_file()) entries.push_back(entry.path());
      }
      if (error) {
        std::fprintf(stderr, "replay: cannot list %s: %s\n", arg.c_str(), error.message().c_str());
        return 1;
      }
      std::sort(entries.begin(), entries.end());
      files.insert(files.end(), entries.begin(), entries.end());
    } else if (std::filesystem::is_regular_file(path, error)) {
      files.push_back(path);
    } else {
      std::fprintf(stderr, "replay: %s is neither a file nor a directory\n", arg.c_str());
      return 1;
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "replay: no inputs; usage: %s FILE_OR_DIR...\n", argv[0]);
    return 1;
  }
  std::vector<uint8_t> bytes;
  for (const std::filesystem::path& file : files) {
    if (!ReadFile(file, &bytes)) {
      std::fprintf(stderr, "replay: cannot read %s\n", file.c_str());
      return 1;
    }
    // Print the name first: when a check aborts, the last line names the input.
    if (bytes.size() > max_len) {
      std::fprintf(stderr, "replay: %s (%zu bytes, truncated to max_len %zu)\n", file.c_str(),
                   bytes.size(), max_len);
      bytes.resize(max_len);
    } else {
      std::fprintf(stderr, "replay: %s (%zu bytes)\n", file.c_str(), bytes.size());
    }
    // A copy of exactly the file's size, as libFuzzer would pass; the targets copy again.
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
  }
  std::fprintf(stderr, "replay: %zu inputs ran cleanly\n", files.size());
  return 0;
}
