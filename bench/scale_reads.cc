// SPDX-License-Identifier: Apache-2.0
// scale_reads FILE...: what checking each file by ranges costs, as a hub reading over the
// network pays it: CheckSource over a source that says it is remote and counts its reads.
// Prints "FORMAT VERDICT SIZE REQUESTS BYTES_READ FILE" per file (docs/scale.md's table).
#include <cstdio>
#include <fstream>
#include <iterator>
#include <span>
#include <string>
#include <vector>

#include "stguard/byte_source.h"
#include "stguard/sniff.h"
#include "stguard/verdict.h"

namespace {

class CountingSource final : public stguard::ByteSource {
 public:
  explicit CountingSource(std::span<const std::byte> file) : memory_(file, "file") {}
  uint64_t size() const override { return memory_.size(); }
  stguard::Error ReadAt(uint64_t offset, std::span<std::byte> out) const override {
    ++requests;
    bytes += out.size();
    return memory_.ReadAt(offset, out);
  }
  bool remote() const override { return true; }
  mutable uint64_t requests = 0;
  mutable uint64_t bytes = 0;

 private:
  stguard::MemorySource memory_;
};

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    const std::vector<char> data((std::istreambuf_iterator<char>(in)), {});
    CountingSource source(std::as_bytes(std::span(data)));
    const stguard::CheckResult result = stguard::CheckSource(source, argv[i]);
    std::printf("%s %s %zu %llu %llu %s\n", std::string(stguard::FormatName(result.format)).c_str(),
                std::string(stguard::VerdictName(result.verdict)).c_str(), data.size(),
                static_cast<unsigned long long>(source.requests),
                static_cast<unsigned long long>(source.bytes), argv[i]);
  }
  return 0;
}
