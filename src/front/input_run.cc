// SPDX-License-Identifier: Apache-2.0
// Many inputs on a pool of threads, delivered in input order (stguard/inputs.h): workers
// take the next index while it is inside the window ahead of the delivery, the calling
// thread delivers each report as soon as it and every earlier one are ready.
#include "stguard/inputs.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace stguard {
namespace {

// Window holds the reports judged ahead of delivery: slot i % size for input i. A worker
// may take input i only when i < delivered + size, so a slot is free when it is taken.
class Window {
 public:
  Window(size_t inputs, size_t size) : inputs_(inputs), slots_(size) {}

  // Take returns the next input to judge, waiting while the window is full; nullopt when
  // every input is taken.
  std::optional<size_t> Take() {
    std::unique_lock lock(mutex_);
    room_.wait(lock, [&] { return next_ >= inputs_ || next_ < delivered_ + slots_.size(); });
    if (next_ >= inputs_) return std::nullopt;
    return next_++;
  }

  // Stop gives out no more inputs (the delivery failed): workers finish what they hold.
  void Stop() {
    {
      std::lock_guard lock(mutex_);
      next_ = inputs_;
    }
    room_.notify_all();
  }

  void Put(size_t index, InputReport report) {
    {
      std::lock_guard lock(mutex_);
      slots_[index % slots_.size()] = std::move(report);
    }
    ready_.notify_one();
  }

  // Wait returns input `index`'s report once it is ready (index == delivered so far).
  InputReport Wait(size_t index) {
    std::unique_lock lock(mutex_);
    std::optional<InputReport>& slot = slots_[index % slots_.size()];
    ready_.wait(lock, [&] { return slot.has_value(); });
    InputReport report = std::move(*slot);
    slot.reset();
    ++delivered_;
    lock.unlock();
    room_.notify_all();
    return report;
  }

 private:
  std::mutex mutex_;
  std::condition_variable room_;   // a slot was freed
  std::condition_variable ready_;  // a report was put
  const size_t inputs_;
  size_t next_ = 0;
  size_t delivered_ = 0;
  std::vector<std::optional<InputReport>> slots_;
};

void CountVerdict(Verdict verdict, RunSummary* summary) {
  ++summary->inputs;
  switch (verdict) {
    case Verdict::kValid: ++summary->valid; break;
    case Verdict::kInvalid: ++summary->invalid; break;
    case Verdict::kRefused: ++summary->refused; break;
    case Verdict::kError: ++summary->errors; break;
  }
  summary->worst = WorseVerdict(summary->worst, verdict);
}

// Grouped writes 10010 as "10,010".
std::string Grouped(uint64_t n) {
  const std::string digits = std::to_string(n);
  std::string grouped;
  for (size_t i = 0; i < digits.size(); ++i) {
    // A comma before each group of three counted from the right (appending, not inserting:
    // g++ 12 -O2 warns falsely on string::insert here, and CI builds with -Werror).
    if (i > 0 && (digits.size() - i) % 3 == 0) grouped += ',';
    grouped += digits[i];
  }
  return grouped;
}

}  // namespace

unsigned DefaultJobs() { return std::max(1u, std::thread::hardware_concurrency()); }

std::string SummaryLine(const RunSummary& s) {
  std::string line = Grouped(s.inputs) + (s.inputs == 1 ? " file: " : " files: ") +
                     Grouped(s.valid) + " valid, ";
  if (s.invalid > 0) line += Grouped(s.invalid) + " invalid, ";
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.1f s", s.seconds);
  return line + Grouped(s.refused) + " refused, " + Grouped(s.errors) +
         (s.errors == 1 ? " error; " : " errors; ") + seconds;
}

// JoiningThreads joins its threads when it goes, as std::jthread would (the WebAssembly
// build's libc++ has no jthread): a delivery that throws still joins the workers.
class JoiningThreads {
 public:
  explicit JoiningThreads(size_t count) { threads_.reserve(count); }
  JoiningThreads(const JoiningThreads&) = delete;
  JoiningThreads& operator=(const JoiningThreads&) = delete;
  ~JoiningThreads() { JoinAll(); }

  template <typename Work>
  void Start(Work&& work) { threads_.emplace_back(std::forward<Work>(work)); }
  void JoinAll() {
    for (std::thread& thread : threads_) {
      if (thread.joinable()) thread.join();
    }
    threads_.clear();
  }

 private:
  std::vector<std::thread> threads_;
};

RunSummary RunInputs(std::span<const std::string> inputs, unsigned jobs,
                     const std::function<InputReport(const std::string& input)>& judge,
                     const std::function<void(size_t index, InputReport& report)>& deliver) {
  const auto start = std::chrono::steady_clock::now();
  RunSummary summary;
  if (jobs == 0) jobs = DefaultJobs();
  const size_t threads = std::min<size_t>({jobs, kMaxJobs, std::max<size_t>(inputs.size(), 1)});
  Window window(inputs.size(), kPendingPerJob * threads);
  JoiningThreads pool(threads);
  try {
    for (size_t t = 0; t < threads && !inputs.empty(); ++t) {
      pool.Start([&] {
        while (const std::optional<size_t> index = window.Take()) {
          window.Put(*index, judge(inputs[*index]));
        }
      });
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
      InputReport report = window.Wait(i);
      CountVerdict(report.verdict, &summary);
      deliver(i, report);
    }
  } catch (...) {
    // A thread that cannot start, or a delivery that throws (out of memory printing), must
    // not leave the workers waiting for room that will never come: the join would hang.
    window.Stop();
    throw;
  }
  pool.JoinAll();  // every worker has found no input left
  summary.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

}  // namespace stguard
