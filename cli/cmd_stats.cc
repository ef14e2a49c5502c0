// SPDX-License-Identifier: Apache-2.0
// stguard inspect --stats [--json] [--allow-external-symlinks] FILE|DIR: scan every
// tensor's data and print min, max, mean and (for floating dtypes) NaN/+inf/-inf counts.
//
// The scan streams over the mapping (constant memory; scanned pages are handed back to
// the kernel). On a terminal, a progress bar on stderr appears once the scan has taken
// more than a second: bytes done of total, rate and time left.
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "arguments.h"
#include "commands.h"
#include "output.h"
#include "stguard/checkpoint_dir.h"
#include "stguard/convert.h"
#include "stguard/json_escape.h"
#include "stguard/tensor_stats.h"

namespace stguard::cli {
namespace {

constexpr char kStatsUsage[] =
    "usage: stguard inspect --stats [--json] [--allow-external-symlinks] [--] FILE|DIR\n";

using Clock = std::chrono::steady_clock;

std::string Bytes(double bytes) {
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

// ProgressBar draws "[#####.....] 1.2 GiB / 4.0 GiB  850.0 MiB/s  ETA 0:03" on stderr,
// redrawn at most ten times a second, once the scan has run for a second, and only when
// stderr is a terminal.
class ProgressBar {
 public:
  explicit ProgressBar(uint64_t total)
      : total_(total), enabled_(::isatty(STDERR_FILENO) == 1), start_(Clock::now()) {}
  ~ProgressBar() { Clear(); }

  void Add(uint64_t bytes) {
    done_ += bytes;
    if (!enabled_) return;
    const Clock::time_point now = Clock::now();
    if (now - start_ < std::chrono::seconds(1)) return;
    if (drawn_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
    last_draw_ = now;
    Draw(std::chrono::duration<double>(now - start_).count());
  }

  void Clear() {
    if (drawn_) std::fputs("\r\x1b[K", stderr);
    drawn_ = false;
  }

 private:
  void Draw(double seconds) {
    constexpr int kWidth = 30;
    const double fraction = total_ == 0 ? 1.0 : std::min(1.0, double(done_) / double(total_));
    const int filled = static_cast<int>(fraction * kWidth);
    const double rate = seconds > 0 ? double(done_) / seconds : 0;
    const double left = rate > 0 ? double(total_ - std::min(done_, total_)) / rate : 0;
    const auto eta = static_cast<long>(left + 0.5);
    std::string bar(static_cast<size_t>(filled), '#');
    bar.append(static_cast<size_t>(kWidth - filled), '.');
    std::fprintf(stderr, "\r[%s] %s / %s  %s/s  ETA %ld:%02ld\x1b[K", bar.c_str(),
                 Bytes(double(done_)).c_str(), Bytes(double(total_)).c_str(),
                 Bytes(rate).c_str(), eta / 60, eta % 60);
    std::fflush(stderr);
    drawn_ = true;
  }

  uint64_t total_;
  uint64_t done_ = 0;
  bool enabled_;
  bool drawn_ = false;
  Clock::time_point start_;
  Clock::time_point last_draw_;
};

// Number renders a statistic: "-" (text) or null (JSON) for NaN; the shortest text that
// reads back as the same value otherwise (as an F32 for values that came from F32).
std::string Number(double value, bool from_f32, bool json) {
  if (std::isnan(value)) return json ? "null" : "-";
  char text[64];
  std::to_chars_result result;
  if (!json) {
    result = std::to_chars(text, text + sizeof(text), value, std::chars_format::general, 7);
  } else if (from_f32) {
    result = std::to_chars(text, text + sizeof(text), static_cast<float>(value));
  } else {
    result = std::to_chars(text, text + sizeof(text), value);
  }
  return std::string(text, result.ptr);
}

struct Row {
  const ShardFile* shard;
  const TensorView* tensor;
  TensorStats stats;
};

// MinMaxFromF32 says whether min and max of this dtype are F32 values (to print them
// with F32's shortest form).
bool MinMaxFromF32(Dtype dtype) { return dtype != Dtype::kF64 && IsFloatingDtype(dtype); }

void PrintJson(const std::string& path, const CheckpointDir& checkpoint,
               const std::vector<Row>& rows, double seconds) {
  std::string out = "{\"file\":";
  AppendJsonText(path, &out);
  out += ",\"tensors\":[";
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& row = rows[i];
    const TensorStats& stats = row.stats;
    if (i > 0) out += ",";
    out += "{\"name\":";
    AppendJsonString(row.tensor->name, &out);
    out += ",\"shard\":";
    AppendJsonText(row.shard->name, &out);
    out += ",\"dtype\":\"" + std::string(DtypeName(row.tensor->dtype)) +
           "\",\"shape\":" + ShapeText(row.tensor->shape, ",") +
           ",\"elements\":" + std::to_string(row.tensor->num_elements()) +
           ",\"scanned\":" + (stats.supported ? "true" : "false");
    if (stats.supported) {
      const bool f32 = MinMaxFromF32(row.tensor->dtype);
      out += ",\"min\":" + Number(stats.min, f32, true) + ",\"max\":" + Number(stats.max, f32, true) +
             ",\"mean\":" + Number(stats.mean, false, true);
      if (stats.floating) {
        out += ",\"nan\":" + std::to_string(stats.num_nan) +
               ",\"pos_inf\":" + std::to_string(stats.num_pos_inf) +
               ",\"neg_inf\":" + std::to_string(stats.num_neg_inf);
      }
    }
    out += "}";
  }
  out += "],\"totals\":{\"tensors\":" + std::to_string(rows.size()) +
         ",\"shards\":" + std::to_string(checkpoint.shards().size()) +
         ",\"bytes\":" + std::to_string(checkpoint.total_bytes()) +
         ",\"seconds\":" + Number(seconds, false, true) + "}}";
  PrintLine(out);
}

void PrintText(const std::string& path, const CheckpointDir& checkpoint,
               const std::vector<Row>& rows, double seconds) {
  const size_t num_shards = checkpoint.shards().size();
  PrintLine("file: " + PrintableText(path) + " (" + std::to_string(num_shards) +
            (num_shards == 1 ? " shard, " : " shards, ") + std::to_string(rows.size()) +
            " tensors, " + std::to_string(checkpoint.total_bytes()) + " data bytes)");
  const std::vector<std::string> headings = {"name", "dtype", "shape", "min", "max",
                                             "mean", "nan",   "+inf",  "-inf"};
  std::vector<std::vector<std::string>> cells;
  for (const Row& row : rows) {
    const TensorStats& stats = row.stats;
    std::vector<std::string> line = {PrintableText(row.tensor->name),
                                     std::string(DtypeName(row.tensor->dtype)),
                                     ShapeText(row.tensor->shape, ", ")};
    if (!stats.supported) {
      line.insert(line.end(), {"(not scanned)", "", "", "", "", ""});
    } else {
      line.push_back(Number(stats.min, false, false));
      line.push_back(Number(stats.max, false, false));
      line.push_back(Number(stats.mean, false, false));
      for (uint64_t count : {stats.num_nan, stats.num_pos_inf, stats.num_neg_inf}) {
        line.push_back(stats.floating ? std::to_string(count) : "-");
      }
    }
    cells.push_back(std::move(line));
  }
  const std::vector<size_t> widths = ColumnWidths(headings, cells);
  PrintLine(FormatRow(headings, widths));
  const ShardFile* shard = nullptr;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (num_shards > 1 && rows[i].shard != shard) {
      shard = rows[i].shard;
      PrintLine("shard " + PrintableText(shard->name) + ":");
    }
    PrintLine(FormatRow(cells[i], widths));
  }
  char summary[96];
  std::snprintf(summary, sizeof(summary), "scanned %s in %.2f s",
                Bytes(double(checkpoint.total_bytes())).c_str(), seconds);
  PrintLine(summary);
}

}  // namespace

int RunInspectStats(Args args) {
  bool json = false;
  DirOptions options;
  bool stats_flag = false;  // how RunInspect sent the command here
  const Flag flags[] = {{"--stats", &stats_flag},
                        {"--json", &json},
                        {"--allow-external-symlinks", &options.allow_external_symlinks}};
  std::vector<std::string_view> files;
  if (auto stop = ParseArguments(args, {"inspect", kStatsUsage, flags}, &files)) return *stop;
  if (files.size() != 1) {
    std::fputs(kStatsUsage, stderr);
    return kExitUsage;
  }
  const std::string path(files[0]);
  const Result<CheckpointDir> checkpoint = CheckpointDir::Open(path, options);
  if (!checkpoint.ok()) {
    std::fprintf(stderr, "%s: error: %s\n", PrintableText(path).c_str(),
                 checkpoint.error().ToString().c_str());
    return IsIoError(checkpoint.error()) ? kExitUsage : kExitInvalid;
  }

  uint64_t total = 0;
  for (const ShardFile& shard : checkpoint->shards()) {
    for (const TensorView& tensor : shard.checkpoint.tensors()) total += tensor.byte_size();
  }
  ProgressBar progress(total);
  ScanOptions scan;
  scan.progress = [&progress](uint64_t bytes) { progress.Add(bytes); };
  const Clock::time_point start = Clock::now();
  std::vector<Row> rows;
  rows.reserve(checkpoint->num_tensors());
  for (const ShardFile& shard : checkpoint->shards()) {
    for (const TensorView& tensor : shard.checkpoint.tensors()) {
      // Copied with pread, not read through the mapping: a file truncated meanwhile is an
      // I/O error naming it, not a SIGBUS.
      Result<TensorStats> stats = ComputeTensorStats(shard.checkpoint, tensor, scan);
      if (!stats.ok()) {
        progress.Clear();
        PrintFileError("inspect", path, stats.error());
        return IsIoError(stats.error()) ? kExitUsage : kExitInvalid;
      }
      rows.push_back(Row{&shard, &tensor, *stats});
    }
  }
  progress.Clear();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (json) {
    PrintJson(path, *checkpoint, rows, seconds);
  } else {
    PrintText(path, *checkpoint, rows, seconds);
  }
  return kExitOk;
}

}  // namespace stguard::cli
