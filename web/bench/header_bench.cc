// SPDX-License-Identifier: Apache-2.0
// Header validation, timed the same way natively and in WebAssembly (under node), so the
// two can be compared on the bench files (bench/README.md). The file's length prefix and
// header are read once into memory; each iteration is Checkpoint::OpenHeader over a byte
// source holding them and reporting the file's real size: everything the header says is
// validated (tokenizer, schema, sizes, duplicates, tiling against the size), no system
// call is timed, and the data is never read. After a warm-up (WebAssembly code is
// compiled in tiers), prints one JSON line: the file, its header bytes, the iterations
// and the median time of one validation over 15 equal batches.
//   header_bench FILE [SECONDS]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include "stguard/byte_source.h"
#include "stguard/reader.h"

namespace {

// HeadSource is a file of `size` bytes of which only the first head.size() are held.
class HeadSource final : public stguard::ByteSource {
 public:
  HeadSource(std::vector<std::byte> head, uint64_t size) : head_(std::move(head)), size_(size) {}
  uint64_t size() const override { return size_; }
  stguard::Error ReadAt(uint64_t offset, std::span<std::byte> out) const override {
    if (offset > head_.size() || out.size() > head_.size() - offset) {
      return {stguard::ErrorCode::kIoError, offset, "the benchmark holds the header only", "", ""};
    }
    std::memcpy(out.data(), head_.data() + offset, out.size());
    return {};
  }

 private:
  std::vector<std::byte> head_;
  uint64_t size_;
};

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// ReadHead reads the length prefix and the header it announces.
bool ReadHead(const std::string& path, std::vector<std::byte>* head, uint64_t* size) {
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  if (!file) return false;
  *size = static_cast<uint64_t>(file.tellg());
  unsigned char prefix[8];
  file.seekg(0);
  if (!file.read(reinterpret_cast<char*>(prefix), 8)) return false;
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = header_len << 8 | prefix[i];
  if (header_len > *size - 8) return false;
  head->resize(8 + static_cast<size_t>(header_len));
  std::memcpy(head->data(), prefix, 8);
  return static_cast<bool>(
      file.read(reinterpret_cast<char*>(head->data() + 8), static_cast<std::streamsize>(header_len)));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs("usage: header_bench FILE [SECONDS]\n", stderr);
    return 2;
  }
  const std::string path = argv[1];
  const double budget = argc > 2 ? std::atof(argv[2]) : 3.0;
  std::vector<std::byte> head;
  uint64_t size = 0;
  if (!ReadHead(path, &head, &size)) {
    std::fprintf(stderr, "%s: cannot read a safetensors header\n", path.c_str());
    return 1;
  }
  const size_t header_bytes = head.size() - 8;
  const HeadSource source(std::move(head), size);
  // Warm-up for a third of the budget: it must validate, and it sizes the batches.
  int warm_iterations = 0;
  const auto warm_start = std::chrono::steady_clock::now();
  do {
    const stguard::Result<stguard::Checkpoint> checked = stguard::Checkpoint::OpenHeader(source);
    if (!checked.ok()) {
      std::fprintf(stderr, "%s: %s\n", path.c_str(), checked.error().message);
      return 1;
    }
    ++warm_iterations;
  } while (SecondsSince(warm_start) < budget / 3);
  const double warm_mean = SecondsSince(warm_start) / warm_iterations;
  constexpr int kBatches = 15;
  const int per_batch = std::max(1, static_cast<int>(budget * 2 / 3 / kBatches / warm_mean));
  std::vector<double> batch_means;
  for (int batch = 0; batch < kBatches; ++batch) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < per_batch; ++i) {
      if (!stguard::Checkpoint::OpenHeader(source).ok()) return 1;
    }
    batch_means.push_back(SecondsSince(start) / per_batch);
  }
  std::nth_element(batch_means.begin(), batch_means.begin() + kBatches / 2, batch_means.end());
  std::printf("{\"file\":\"%s\",\"header_bytes\":%zu,\"iterations\":%d,\"median_us\":%.2f}\n",
              path.c_str(), header_bytes, per_batch * kBatches, batch_means[kBatches / 2] * 1e6);
  return 0;
}
