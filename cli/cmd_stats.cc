// SPDX-License-Identifier: Apache-2.0
// stguard inspect --stats [--json] [--allow-external-symlinks] FILE|DIR: scan every
// tensor's data and print min, max, mean and (for floating dtypes) NaN/+inf/-inf counts.
//
// The scan reads each file's data by ranges, a chunk at a time (constant memory), under
// the headers the check validated and kept: each byte is read once. On a terminal (and
// without --json), a progress bar on stderr appears once the scan has taken more than a
// second: bytes done of total, rate and time left.
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "commands.h"
#include "inspect_stats.h"
#include "output.h"
#include "progress.h"
#include "stguard/checkpoint_dir.h"
#include "stguard/convert.h"
#include "stguard/json_escape.h"
#include "stguard/mapped_file.h"
#include "stguard/tensor_stats.h"
#include "stguard/verdict.h"
#include "verdict_output.h"

namespace stguard::cli {
namespace {


using Clock = std::chrono::steady_clock;

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

// MinMaxFromF32 says whether min and max of this dtype are F32 values (to print them
// with F32's shortest form).
bool MinMaxFromF32(Dtype dtype) { return dtype != Dtype::kF64 && IsFloatingDtype(dtype); }

// StatsStore keeps each tensor's statistics from the scan to the printing pass: in memory
// when they take at most a quarter of the headers' bytes (every real checkpoint: a tensor
// has tens of header bytes or more), else in an anonymous temporary file, so that a hostile
// header of millions of tiny tensors costs disk, not memory, and no tensor is read twice.
// If no temporary file can be made, Next() reports that the statistics must be computed
// again.
class StatsStore {
 public:
  StatsStore(size_t num_tensors, uint64_t header_bytes) {
    in_memory_ = num_tensors <= header_bytes / 4 / sizeof(TensorStats);
    if (in_memory_) {
      kept_.reserve(num_tensors);
    } else {
      file_ = std::tmpfile();
    }
  }
  ~StatsStore() {
    if (file_ != nullptr) std::fclose(file_);
  }
  StatsStore(const StatsStore&) = delete;
  StatsStore& operator=(const StatsStore&) = delete;

  void Add(const TensorStats& stats) {
    if (in_memory_) {
      kept_.push_back(stats);
    } else if (file_ != nullptr && std::fwrite(&stats, sizeof stats, 1, file_) != 1) {
      std::fclose(file_);
      file_ = nullptr;  // a full disk: compute again rather than fail
    }
  }
  void Rewind() {
    if (file_ != nullptr && std::fseek(file_, 0, SEEK_SET) != 0) {
      std::fclose(file_);
      file_ = nullptr;
    }
  }
  // Next gives the next tensor's statistics, or false when they must be computed again.
  bool Next(TensorStats* out) {
    if (in_memory_) {
      *out = kept_[next_++];
      return true;
    }
    return file_ != nullptr && std::fread(out, sizeof *out, 1, file_) == 1;
  }

 private:
  bool in_memory_ = false;
  std::vector<TensorStats> kept_;
  size_t next_ = 0;
  std::FILE* file_ = nullptr;
};

// The table's columns; widths are measured in a first pass, rows printed in a second.
const std::vector<std::string> kHeadings = {"name", "dtype", "shape", "min", "max",
                                            "mean", "nan",   "+inf",  "-inf"};

// RowCells is one text row. The shape is a streamed cell (never one string: a hostile
// shape of 49 million dims would make it 150 MB).
std::vector<TableCell> RowCells(const TensorView& tensor, const TensorStats& stats) {
  std::vector<TableCell> cells(3);
  cells[0].text = PrintableText(tensor.name);
  cells[1].text = std::string(DtypeName(tensor.dtype));
  cells[2].shape = tensor.shape;
  cells[2].is_shape = true;
  const auto add = [&cells](std::string text) {
    cells.emplace_back();
    cells.back().text = std::move(text);
  };
  if (!stats.supported) {
    add("(not scanned)");
    for (int i = 0; i < 5; ++i) add("");
  } else {
    add(Number(stats.min, false, false));
    add(Number(stats.max, false, false));
    add(Number(stats.mean, false, false));
    for (uint64_t count : {stats.num_nan, stats.num_pos_inf, stats.num_neg_inf}) {
      add(stats.floating ? std::to_string(count) : "-");
    }
  }
  return cells;
}

// AppendJsonRow appends one tensor's JSON object to `out`, flushing as it goes.
void AppendJsonRow(const std::string& shard, const TensorView& tensor, const TensorStats& stats,
                   JsonStreamOut* stream) {
  std::string& out = stream->text();
  out += "{\"name\":";
  AppendJsonString(tensor.name, &out);
  out += ",\"shard\":";
  AppendJsonText(shard, &out);
  out += ",\"dtype\":\"" + std::string(DtypeName(tensor.dtype)) + "\",\"shape\":";
  AppendJsonShape(tensor.shape, stream);
  out += ",\"elements\":" + std::to_string(tensor.num_elements()) +
         ",\"scanned\":" + (stats.supported ? "true" : "false");
  if (stats.supported) {
    const bool f32 = MinMaxFromF32(tensor.dtype);
    out += ",\"min\":" + Number(stats.min, f32, true) + ",\"max\":" + Number(stats.max, f32, true) +
           ",\"mean\":" + Number(stats.mean, false, true);
    if (stats.floating) {
      out += ",\"nan\":" + std::to_string(stats.num_nan) +
             ",\"pos_inf\":" + std::to_string(stats.num_pos_inf) +
             ",\"neg_inf\":" + std::to_string(stats.num_neg_inf);
    }
  }
  out += "}";
  stream->Flush();
}

}  // namespace

namespace {

// RefuseUnlessValid prints the front door's result and returns its exit status when the
// path is not valid, or the usage error when an option does not apply to what its sniff
// found; nullopt when it is valid (*checked keeps the result).
std::optional<int> RefuseUnlessValid(const CommandLine& line, const DirOptions& options,
                                     CheckResult* checked) {
  const std::string& path = line.operands[0];
  const bool json = line.json;
  CheckOptions check;
  check.allow_external_symlinks = options.allow_external_symlinks;
  check.keep_reader = true;  // the validated headers: the scan reads only the data after them
  CheckResult result = CheckPath(path, check);
  const std::optional<Format> sniffed =
      result.is_folder ? std::nullopt : std::optional<Format>(result.format);
  if (std::optional<int> refused = RefuseInapplicable(line, path, sniffed)) return refused;
  if (result.valid()) {
    // Kept for an error after the check: only the envelope's fields, since the whole result
    // (its summary, warnings, a folder's files) would count against inspect's memory bound;
    // and the safetensors headers the check validated.
    checked->file = std::move(result.file);
    checked->format = result.format;
    checked->is_folder = result.is_folder;
    checked->verdict = result.verdict;
    checked->checkpoint = std::move(result.checkpoint);
    checked->checkpoint_dir = std::move(result.checkpoint_dir);
    return std::nullopt;
  }
  if (json) return PrintResult(result, /*quiet=*/false, /*json=*/true);
  PrintErrorLine(ResultLine(result));
  return result.exit_status();
}

// PrintFailure prints an error found after the check (a valid folder without safetensors
// shards, a read failing while scanning): with --json the check's result with that error
// and the verdict the library gives it (VerdictForError), so --json prints an envelope.
int PrintFailure(CheckResult checked, const Error& error, bool json) {
  if (!json) {
    PrintFileError("inspect", checked.file, error);
    return IsIoError(error, OutOfMemoryIs::kIoError) ? kExitUsage : kExitInvalid;
  }
  checked.verdict = VerdictForError(error);
  checked.error = error;
  checked.member.clear();
  return PrintResult(checked, /*quiet=*/false, /*json=*/true);
}

}  // namespace

namespace {

// StatsShard is one safetensors file the scan reads: its header as the check validated it,
// and the file its data is read from.
struct StatsShard {
  std::string name;  // as CheckpointDir names a shard (a single file: its file name)
  std::string path;
  const Checkpoint* header = nullptr;
};

// Scanned is what the scan covers: the headers the check kept (each read once), or for a
// path the check kept none of, the ones read again to say why it has no tensors to scan.
struct Scanned {
  std::shared_ptr<const Checkpoint> file;
  std::shared_ptr<const CheckpointDir> folder;
  std::vector<StatsShard> shards;
  uint64_t num_tensors = 0;
  uint64_t total_bytes = 0;  // saturating, as CheckpointDir::total_bytes
  uint64_t header_bytes = 0;
};

void AddShard(std::string name, std::string path, const Checkpoint& header, Scanned* out) {
  out->num_tensors += header.num_tensors();
  out->header_bytes += header.header_len();
  for (const TensorView& tensor : header.tensors()) {
    const uint64_t size = tensor.byte_size();
    out->total_bytes = size > UINT64_MAX - out->total_bytes ? UINT64_MAX : out->total_bytes + size;
  }
  out->shards.push_back(StatsShard{std::move(name), std::move(path), &header});
}

void AddShards(std::shared_ptr<const CheckpointDir> folder, Scanned* out) {
  for (const ShardFile& shard : folder->shards()) {
    AddShard(shard.name, shard.path, shard.checkpoint, out);
  }
  out->folder = std::move(folder);
}

// TakeKeptHeaders takes the headers the check kept for the scan: a single safetensors
// file's, or a folder's shards'. False when it kept none (a valid file of another
// format, a folder without safetensors).
bool TakeKeptHeaders(const std::string& path, CheckResult* checked, Scanned* out) {
  if (checked->checkpoint_dir != nullptr) {
    AddShards(std::move(checked->checkpoint_dir), out);
    return true;
  }
  if (checked->checkpoint == nullptr) return false;
  out->file = std::move(checked->checkpoint);
  const size_t slash = path.find_last_of('/');
  AddShard(slash == std::string::npos ? path : path.substr(slash + 1), path, *out->file, out);
  return true;
}

// OpenShardData opens a shard's file for its data, read by ranges, never mapped (a file
// truncated meanwhile is an I/O error naming it, not a SIGBUS). Its header was validated
// against the file's size: a file whose size changed since the check is an error.
Result<std::unique_ptr<MappedFile>> OpenShardData(const StatsShard& shard) {
  Result<std::unique_ptr<MappedFile>> file = MappedFile::OpenUnmapped(shard.path);
  if (file.ok() && (*file)->size() != shard.header->file_size()) {
    return Error{ErrorCode::kIoError, 0, "the file changed after it was checked (its size differs)",
                 shard.path};
  }
  return file;
}

// ScanPass computes every tensor's statistics (so that any error comes before any output)
// into *kept and, for the table, measures *widths. Returns the first error.
Error ScanPass(const Scanned& scanned, bool json, ProgressBar* progress, StatsStore* kept,
               std::vector<size_t>* widths) {
  ScanOptions scan;
  scan.progress = [progress](uint64_t bytes) { progress->Add(bytes); };
  for (const StatsShard& shard : scanned.shards) {
    Result<std::unique_ptr<MappedFile>> data = OpenShardData(shard);
    if (!data.ok()) return data.error();
    for (const TensorView& tensor : shard.header->tensors()) {
      Result<TensorStats> stats = ComputeTensorStats(**data, *shard.header, tensor, scan);
      if (!stats.ok()) return stats.error();
      kept->Add(*stats);
      if (!json) {
        const std::vector<TableCell> cells = RowCells(tensor, *stats);
        for (size_t i = 0; i < cells.size(); ++i) {
          (*widths)[i] = std::max((*widths)[i], cells[i].width());
        }
      }
    }
  }
  return {};
}

// PrintHead starts the output: the JSON envelope, or the text heading and column titles.
void PrintHead(const std::string& path, const Scanned& scanned, bool json,
               const std::vector<size_t>& widths, JsonStreamOut* stream) {
  if (json) {
    stream->text() = "{";
    AppendValidEnvelope(path, Format::kSafetensors, &stream->text(), IsFolderPath(path));
    stream->text() += ",\"tensors\":[";
    return;
  }
  const size_t num_shards = scanned.shards.size();
  PrintLine("file: " + PrintableText(path) + " (" + std::to_string(num_shards) +
            (num_shards == 1 ? " shard, " : " shards, ") +
            std::to_string(scanned.num_tensors) + " tensors, " +
            std::to_string(scanned.total_bytes) + " data bytes)");
  std::vector<TableCell> heading_cells(kHeadings.size());
  for (size_t i = 0; i < kHeadings.size(); ++i) heading_cells[i].text = kHeadings[i];
  PrintTableRow(heading_cells, widths);  // padded to the widest shape: never one string
}

// PrintRows prints every tensor's row from *kept (computing again what it could not
// keep). Returns the error of a tensor computed again, after flushing what was printed.
Error PrintRows(const Scanned& scanned, bool json, const std::vector<size_t>& widths,
                StatsStore* kept, JsonStreamOut* stream) {
  kept->Rewind();
  const size_t num_shards = scanned.shards.size();
  size_t index = 0;
  const auto fail = [stream](const Error& error) {
    stream->Flush(true);
    std::fflush(stdout);
    return error;
  };
  for (const StatsShard& shard : scanned.shards) {
    if (!json && num_shards > 1 && !shard.header->tensors().empty()) {
      PrintLine("shard " + PrintableText(shard.name) + ":");
    }
    std::unique_ptr<MappedFile> data;  // opened when a statistic must be computed again
    for (const TensorView& tensor : shard.header->tensors()) {
      TensorStats stats;
      if (!kept->Next(&stats)) {
        if (data == nullptr) {
          Result<std::unique_ptr<MappedFile>> opened = OpenShardData(shard);
          if (!opened.ok()) return fail(opened.error());
          data = std::move(*opened);
        }
        Result<TensorStats> again = ComputeTensorStats(*data, *shard.header, tensor);
        if (!again.ok()) return fail(again.error());
        stats = *again;
      }
      if (json) {
        if (index > 0) stream->text() += ",";
        AppendJsonRow(shard.name, tensor, stats, stream);
      } else {
        PrintTableRow(RowCells(tensor, stats), widths);
      }
      ++index;
    }
  }
  return {};
}

// PrintTotals ends the output with the totals and the time the scan took.
void PrintTotals(const Scanned& scanned, bool json, double seconds, JsonStreamOut* stream) {
  if (json) {
    stream->text() += "],\"totals\":{\"tensors\":" + std::to_string(scanned.num_tensors) +
                      ",\"shards\":" + std::to_string(scanned.shards.size()) +
                      ",\"bytes\":" + std::to_string(scanned.total_bytes) +
                      ",\"seconds\":" + Number(seconds, false, true) + "}}\n";
    stream->Flush(true);
    return;
  }
  char summary[96];
  std::snprintf(summary, sizeof(summary), "scanned %s in %.2f s",
                HumanBytes(double(scanned.total_bytes)).c_str(), seconds);
  PrintLine(summary);
}

}  // namespace

int RunInspectStats(const CommandLine& line) {
  const bool json = line.json;
  DirOptions options;
  options.allow_external_symlinks = line.allow_external_symlinks;
  const std::string& path = line.operands[0];
  // The front door's verdict first: statistics are computed only over a file or folder
  // that check calls valid (a malicious pickle beside the weights stops it here).
  CheckResult checked;
  if (std::optional<int> status = RefuseUnlessValid(line, options, &checked)) {
    return *status;
  }
  Scanned scanned;
  if (!TakeKeptHeaders(path, &checked, &scanned)) {
    // The check kept no safetensors header (a valid file of another format, a folder
    // without safetensors): opened as safetensors, the error says why there is nothing to
    // scan (headers only: the data is read by ranges).
    DirOptions headers = options;
    headers.headers_only = true;
    Result<CheckpointDir> checkpoint = CheckpointDir::Open(path, headers);
    if (!checkpoint.ok() && !json) {
      PrintErrorLine(PrintableText(path) + ": error: " + ErrorText(path, checkpoint.error()));
      return IsIoError(checkpoint.error(), OutOfMemoryIs::kIoError) ? kExitUsage : kExitInvalid;
    }
    if (!checkpoint.ok()) return PrintFailure(std::move(checked), checkpoint.error(), json);
    AddShards(std::make_shared<const CheckpointDir>(std::move(*checkpoint)), &scanned);
  }
  // Two passes: the first scans every tensor and measures the table; the second prints.
  // Nothing of a row is kept in memory but its statistics, and those only when they are
  // small next to the headers (StatsStore), so memory stays within the bound of
  // SECURITY.md whatever the header holds.
  StatsStore kept(scanned.num_tensors, scanned.header_bytes);
  std::vector<size_t> widths = ColumnWidths(kHeadings, {});
  ProgressBar progress(scanned.total_bytes, ShowProgress(json, /*quiet=*/false));  // progress.h
  const auto fail = [&checked, &progress, json](const Error& error) {
    progress.Clear();
    return PrintFailure(checked, error, json);
  };
  const Clock::time_point start = Clock::now();
  if (Error error = ScanPass(scanned, json, &progress, &kept, &widths); !error.ok()) {
    return fail(error);
  }
  progress.Clear();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  JsonStreamOut stream;
  PrintHead(path, scanned, json, widths, &stream);
  if (Error error = PrintRows(scanned, json, widths, &kept, &stream); !error.ok()) {
    return fail(error);
  }
  PrintTotals(scanned, json, seconds, &stream);
  return kExitOk;
}

}  // namespace stguard::cli
