// SPDX-License-Identifier: Apache-2.0
// bench/rss_probe.cc: peak memory of validating one checkpoint, in a fresh process.
//
//   rss_probe --write LAYOUT PATH [DIVISOR]
//                                   write the sparse checkpoint LAYOUT (gpt2, llama3_8b,
//                                   moe_24k, near_cap, gen_800k) to PATH, then exit; with
//                                   DIVISOR, first dimensions are divided by it
//                                   (ShrinkData), so valgrind can map the file
//   rss_probe --write-hostile SHAPE PATH
//                                   write a header near the cap made of one hostile
//                                   shape: meta_8m (8.3M metadata entries),
//                                   dims_49m (one shape of 49M dims), zero_1_7m (1.7M
//                                   zero-size tensors)
//   rss_probe PATH                  Checkpoint::Open(PATH) once and print one JSON line
//
// Checkpoint::Open copies the header into memory with pread, so the header's own bytes
// are N of anonymous memory; peak_beyond_header_kb is what validation needs beyond them
// (the bound asked for is 2 N).
//
// Validation runs exactly once, so getrusage's ru_maxrss after it, minus ru_maxrss just
// before it, is the peak that validation added. That peak includes the header pages of
// the mapped file, which count as resident file pages; the probe reads RssFile from
// /proc/self/status before and after (the Checkpoint still alive, so the pages still
// mapped) and reports the peak beyond the mapping as well. Run it on a file written by a
// separate `--write` process so that generating the header does not raise the baseline.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "generators.h"
#include "stguard/reader.h"

namespace {

long MaxRssKb() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;  // kilobytes on Linux
}

// StatusKb returns a "<field>: <n> kB" value from /proc/self/status, or -1.
long StatusKb(const char* field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  const size_t field_len = std::strlen(field);
  while (std::getline(status, line)) {
    if (line.compare(0, field_len, field) == 0 && line.size() > field_len &&
        line[field_len] == ':') {
      return std::stol(line.substr(field_len + 1));
    }
  }
  return -1;
}

int Write(const char* layout_name, const char* path, uint64_t divisor) {
  using stguard_bench::Layout;
  for (Layout layout : {Layout::kGpt2, Layout::kLlama3_8B, Layout::kMoeShard, Layout::kNearCap,
                        Layout::kHeaderGen800k}) {
    if (stguard_bench::LayoutName(layout) == layout_name) {
      stguard_bench::WriteSparseCheckpoint(
          path, stguard_bench::BuildCanonicalHeader(
                    stguard_bench::ShrinkData(stguard_bench::MakeTensors(layout), divisor)));
      return 0;
    }
  }
  std::fprintf(stderr, "rss_probe: unknown layout %s\n", layout_name);
  return 2;
}

// WriteHostile writes one of the hostile header shapes, about 99 MB of header, no data.
int WriteHostile(const std::string& shape, const char* path) {
  constexpr size_t kTarget = 99000000;
  std::string header;
  header.reserve(kTarget + 100);
  char entry[128];
  if (shape == "meta_8m") {
    header = "{\"__metadata__\":{";
    for (unsigned long i = 0; header.size() < kTarget; ++i) {
      std::snprintf(entry, sizeof(entry), "%s\"%lx\":\"\"", i == 0 ? "" : ",", i);
      header += entry;
    }
    header += "}}";
  } else if (shape == "dims_49m") {
    header = "{\"t\":{\"dtype\":\"U8\",\"shape\":[0";
    while (header.size() < kTarget) header += ",0";
    header += "],\"data_offsets\":[0,0]}}";
  } else if (shape == "zero_1_7m") {
    header = "{";
    for (unsigned long i = 0; header.size() < kTarget; ++i) {
      std::snprintf(entry, sizeof(entry),
                    "%s\"%lx\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[0,0]}",
                    i == 0 ? "" : ",", i);
      header += entry;
    }
    header += "}";
  } else {
    std::fprintf(stderr, "rss_probe: unknown hostile shape %s\n", shape.c_str());
    return 2;
  }
  std::ofstream out(path, std::ios::binary);
  const std::string prefix = stguard_bench::LengthPrefix(header.size());
  out << prefix << header;
  return out ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "--write-hostile") == 0) {
    return WriteHostile(argv[2], argv[3]);
  }
  if ((argc == 4 || argc == 5) && std::strcmp(argv[1], "--write") == 0) {
    return Write(argv[2], argv[3], argc == 5 ? std::strtoull(argv[4], nullptr, 10) : 1);
  }
  if (argc != 2) {
    std::fprintf(stderr, "usage: rss_probe --write LAYOUT PATH [DIVISOR] | rss_probe PATH\n");
    return 2;
  }
  const long rss_before = MaxRssKb();
  const long file_before = StatusKb("RssFile");
  const auto start = std::chrono::steady_clock::now();
  stguard::Result<stguard::Checkpoint> checkpoint = stguard::Checkpoint::Open(argv[1]);
  const auto stop = std::chrono::steady_clock::now();
  if (!checkpoint.ok()) {
    std::fprintf(stderr, "rss_probe: %s\n", checkpoint.error().ToString().c_str());
    return 1;
  }
  const long rss_after = MaxRssKb();
  const long file_after = StatusKb("RssFile");
  const long peak_delta = rss_after - rss_before;
  const long mapped = file_after - file_before;
  const double header_kb = static_cast<double>(checkpoint->header_len()) / 1024.0;
  std::printf(
      "{\"file\": \"%s\", \"header_bytes\": %llu, \"tensors\": %zu, \"seconds\": %.4f, "
      "\"maxrss_before_kb\": %ld, \"maxrss_after_kb\": %ld, \"peak_delta_kb\": %ld, "
      "\"mapped_file_kb\": %ld, \"peak_beyond_mapping_kb\": %ld, "
      "\"beyond_mapping_per_header_byte\": %.3f, \"total_per_header_byte\": %.3f, "
      "\"peak_beyond_header_kb\": %.0f, \"beyond_header_per_header_byte\": %.3f}\n",
      argv[1], static_cast<unsigned long long>(checkpoint->header_len()),
      checkpoint->num_tensors(), std::chrono::duration<double>(stop - start).count(),
      rss_before, rss_after, peak_delta, mapped, peak_delta - mapped,
      static_cast<double>(peak_delta - mapped) / header_kb,
      static_cast<double>(peak_delta) / header_kb, static_cast<double>(peak_delta) - header_kb,
      (static_cast<double>(peak_delta) - header_kb) / header_kb);
  return 0;
}
