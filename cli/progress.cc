// SPDX-License-Identifier: Apache-2.0
#include "progress.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>

namespace stguard::cli {

std::string HumanBytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 4) {
    bytes /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof(text), unit == 0 ? "%.0f %s" : "%.1f %s", bytes, units[unit]);
  return text;
}

bool ShowProgress(bool json, bool quiet) {
  return !json && !quiet && ::isatty(STDERR_FILENO) == 1;
}

ProgressBar::ProgressBar(uint64_t total, bool enabled)
    : total_(total), enabled_(enabled), start_(Clock::now()) {}

ProgressBar::~ProgressBar() { Clear(); }

void ProgressBar::Add(uint64_t bytes) {
  done_ += bytes;
  if (!enabled_) return;
  const Clock::time_point now = Clock::now();
  if (now - start_ < std::chrono::seconds(1)) return;
  if (drawn_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  Draw(std::chrono::duration<double>(now - start_).count());
}

void ProgressBar::Clear() {
  if (drawn_) std::fputs("\r\x1b[K", stderr);
  drawn_ = false;
}

void ProgressBar::Draw(double seconds) {
  const double rate = seconds > 0 ? double(done_) / seconds : 0;
  if (total_ == 0) {  // unknown: bytes and rate only
    std::fprintf(stderr, "\r%s  %s/s\x1b[K", HumanBytes(double(done_)).c_str(),
                 HumanBytes(rate).c_str());
    std::fflush(stderr);
    drawn_ = true;
    return;
  }
  constexpr int kWidth = 30;
  const double fraction = std::min(1.0, double(done_) / double(total_));
  const int filled = static_cast<int>(fraction * kWidth);
  const double left = rate > 0 ? double(total_ - std::min(done_, total_)) / rate : 0;
  const auto eta = static_cast<long>(left + 0.5);
  std::string bar(static_cast<size_t>(filled), '#');
  bar.append(static_cast<size_t>(kWidth - filled), '.');
  std::fprintf(stderr, "\r[%s] %s / %s  %s/s  ETA %ld:%02ld\x1b[K", bar.c_str(),
               HumanBytes(double(done_)).c_str(), HumanBytes(double(total_)).c_str(), HumanBytes(rate).c_str(),
               eta / 60, eta % 60);
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace stguard::cli
