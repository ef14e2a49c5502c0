// SPDX-License-Identifier: Apache-2.0
// Header validation, timed the same way natively and in WebAssembly (under node), so the
// two can be compared on the bench files (bench/README.md): Checkpoint::OpenHeader of a
// safetensors file (open, read the prefix and header, validate everything the header
// says against the file's size; the data is never read), repeated for about `seconds`.
// Prints one JSON line: the file, its header bytes, iterations and the median time of one
// validation over 15 equal batches.
//   header_bench FILE [SECONDS]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "stguard/reader.h"

namespace {

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs("usage: header_bench FILE [SECONDS]\n", stderr);
    return 2;
  }
  const std::string path = argv[1];
  const double budget = argc > 2 ? std::atof(argv[2]) : 3.0;
  // One validation first: it must succeed, and it sizes the batches.
  const auto first_start = std::chrono::steady_clock::now();
  const stguard::Result<stguard::Checkpoint> first = stguard::Checkpoint::OpenHeader(path);
  const double first_seconds = SecondsSince(first_start);
  if (!first.ok()) {
    std::fprintf(stderr, "%s: %s\n", path.c_str(), first.error().message);
    return 1;
  }
  constexpr int kBatches = 15;
  const int per_batch =
      std::max(1, static_cast<int>(budget / kBatches / std::max(first_seconds, 1e-7)));
  std::vector<double> batch_means;
  for (int batch = 0; batch < kBatches; ++batch) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < per_batch; ++i) {
      if (!stguard::Checkpoint::OpenHeader(path).ok()) return 1;
    }
    batch_means.push_back(SecondsSince(start) / per_batch);
  }
  std::nth_element(batch_means.begin(), batch_means.begin() + kBatches / 2, batch_means.end());
  std::printf("{\"file\":\"%s\",\"header_bytes\":%zu,\"iterations\":%d,\"median_us\":%.2f}\n",
              path.c_str(), first->header_text().size(), per_batch * kBatches,
              batch_means[kBatches / 2] * 1e6);
  return 0;
}
