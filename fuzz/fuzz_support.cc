// SPDX-License-Identifier: Apache-2.0
// fuzz_support.cc: the shared helpers of the fuzz targets.
#include "fuzz_support.h"

#include <cstdio>
#include <cstdlib>

namespace stguard_fuzz {

void CheckFailed(const char* file, int line, const char* condition, const std::string& detail) {
  std::fprintf(stderr, "fuzz check failed at %s:%d: %s%s%s\n", file, line, condition,
               detail.empty() ? "" : "\n  ", detail.c_str());
  std::fflush(stderr);
  std::abort();
}

namespace {

// OracleCounts prints the counts when the process exits normally (libFuzzer calls exit()
// at the end of a run; the replay main() returns from main()).
struct OracleCounts {
  unsigned long long executions = 0;
  unsigned long long reached = 0;
  ~OracleCounts() {
    if (executions == 0) return;
    std::fprintf(stderr, "stat::oracle_reached: %llu of %llu executions (%.1f%%)\n", reached,
                 executions, 100.0 * static_cast<double>(reached) / static_cast<double>(executions));
  }
};
OracleCounts oracle_counts;

}  // namespace

void CountExecution(bool reached_oracle) {
  ++oracle_counts.executions;
  if (reached_oracle) ++oracle_counts.reached;
}

bool Ignored(std::string_view name) {
  // Each name between commas; built with append (g++ 12 warns falsely on "," + string).
  static const std::string list = [] {
    const char* value = std::getenv("STGUARD_FUZZ_IGNORE");
    std::string commas(1, ',');
    commas.append(value == nullptr ? "" : value).push_back(',');
    return commas;
  }();
  std::string key(1, ',');
  key.append(name).push_back(',');
  return list.find(key) != std::string::npos;
}

std::string Hex(std::string_view bytes, size_t limit) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < bytes.size() && i < limit; ++i) {
    if (i != 0) out.push_back(' ');
    const auto byte = static_cast<unsigned char>(bytes[i]);
    out.push_back(kDigits[byte >> 4]);
    out.push_back(kDigits[byte & 0xF]);
  }
  if (bytes.size() > limit) out.append(" ...");
  return out;
}

}  // namespace stguard_fuzz
