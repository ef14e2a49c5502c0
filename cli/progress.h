// SPDX-License-Identifier: Apache-2.0
// The progress line long commands draw on stderr. The library only reports bytes done
// through a callback in its options (ScanOptions::progress, TorchConvertOptions::
// progress); drawing, and deciding whether to draw, is the CLI's.
#ifndef STGUARD_CLI_PROGRESS_H_
#define STGUARD_CLI_PROGRESS_H_

#include <chrono>
#include <cstdint>
#include <string>

namespace stguard::cli {

// HumanBytes renders a byte count for people: "512 B", "1.2 GiB".
std::string HumanBytes(double bytes);

// ShowProgress says whether a command shows progress: only when stderr is a terminal (a
// person is watching), never with --json (a program is reading) and never with -q.
bool ShowProgress(bool json, bool quiet);

// ProgressBar draws "[#####.....] 1.2 GiB / 4.0 GiB  850.0 MiB/s  ETA 0:03" on stderr
// ("1.2 GiB  850.0 MiB/s" when the total is not known: 0),
// redrawn at most ten times a second, once the work has run for a second (short work
// shows nothing), and only when `enabled` (ShowProgress). Clear() erases it before
// anything else is printed; the destructor clears it too.
class ProgressBar {
 public:
  ProgressBar(uint64_t total, bool enabled);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  // Add counts `bytes` more done and redraws when it is time to.
  void Add(uint64_t bytes);
  void Clear();

 private:
  using Clock = std::chrono::steady_clock;
  void Draw(double seconds);

  uint64_t total_;
  uint64_t done_ = 0;
  bool enabled_;
  bool drawn_ = false;
  Clock::time_point start_;
  Clock::time_point last_draw_;
};

}  // namespace stguard::cli

#endif  // STGUARD_CLI_PROGRESS_H_
