// SPDX-License-Identifier: Apache-2.0
// stguard inspect [--json] FILE|DIR: metadata, the tensors in file order, and totals; for
// a folder (or an index file, inspected as its folder) every weight file's tensors. What
// is inspected is decided by the library (InspectPath); this file prints it.
#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "arguments.h"
#include "command_table.h"
#include "commands.h"
#include "gguf_output.h"
#include "inspect_stats.h"
#include "npy_output.h"
#include "output.h"
#include "pickle_output.h"
#include "stguard/formats.h"
#include "stguard/inspect.h"
#include "stguard/json_escape.h"
#include "stguard/reader.h"
#include "stguard/remote.h"
#include "stguard/verdict.h"
#include "verdict_output.h"

namespace stguard::cli {
namespace {

struct Totals {
  uint64_t parameters = 0;
  uint64_t bytes = 0;
};

Totals ComputeTotals(const Checkpoint& checkpoint) {
  // Every element takes at least 4 bits and every byte is in the file, so neither sum
  // can overflow.
  Totals totals;
  for (const TensorView& tensor : checkpoint.tensors()) {
    totals.parameters += tensor.num_elements();
    totals.bytes += tensor.byte_size();
  }
  return totals;
}

void PrintText(const std::string& path, const Checkpoint& checkpoint) {
  PrintLine("file: " + PrintableText(path));
  if (checkpoint.metadata().empty()) {
    PrintLine("metadata: (none)");
  } else {
    PrintLine("metadata:");
    for (const MetadataEntry& entry : checkpoint.metadata()) {
      PrintLine("  " + PrintableText(entry.key) + ": " + PrintableText(entry.value));
    }
  }

  // The table is streamed in two passes, widths then rows: rows are built one at a time
  // and never kept, so memory stays within the bound of SECURITY.md whatever the header
  // holds (1.8 million tensors, or one shape of 49 million dims).
  auto row_cells = [](const TensorView& tensor) {
    std::vector<TableCell> cells(5);
    cells[0].text = PrintableText(tensor.name);
    cells[1].text = std::string(DtypeName(tensor.dtype));
    cells[2].shape = tensor.shape;
    cells[2].is_shape = true;
    // Formatted into a buffer: g++ 12 misreports std::string concatenation here
    // (-Wrestrict), even when appended piece by piece.
    char offsets[48];
    std::snprintf(offsets, sizeof offsets, "[%llu, %llu]",
                  static_cast<unsigned long long>(tensor.begin),
                  static_cast<unsigned long long>(tensor.end));
    cells[3].text = offsets;
    cells[4].text = std::to_string(tensor.byte_size());
    return cells;
  };
  const std::vector<std::string> headings = {"name", "dtype", "shape", "data_offsets", "bytes"};
  std::vector<size_t> widths = ColumnWidths(headings, {});
  for (const TensorView& tensor : checkpoint.tensors()) {
    const std::vector<TableCell> cells = row_cells(tensor);
    for (size_t i = 0; i < cells.size(); ++i) widths[i] = std::max(widths[i], cells[i].width());
  }
  PrintLine("tensors (file order):");
  std::vector<TableCell> heading_cells(headings.size());
  for (size_t i = 0; i < headings.size(); ++i) heading_cells[i].text = headings[i];
  PrintTableRow(heading_cells, widths);  // padded to the widest shape: never one string
  for (const TensorView& tensor : checkpoint.tensors()) PrintTableRow(row_cells(tensor), widths);

  const Totals totals = ComputeTotals(checkpoint);
  PrintLine("totals: " + std::to_string(checkpoint.num_tensors()) + " tensors, " +
            std::to_string(totals.parameters) + " parameters, " + std::to_string(totals.bytes) +
            " data bytes, " + std::to_string(checkpoint.header_len()) + " header bytes");
}

void PrintJson(const CheckResult& result, const Checkpoint& checkpoint) {
  // Streamed through a small buffer: the output can be larger than the header.
  JsonStreamOut stream;
  std::string& out = stream.text();
  out = "{";
  AppendResultJson(result, &out);
  out += ",\"metadata\":{";
  bool first = true;
  for (const MetadataEntry& entry : checkpoint.metadata()) {
    if (!first) out += ",";
    first = false;
    AppendJsonString(entry.key, &out);
    out += ":";
    AppendJsonString(entry.value, &out);
    stream.Flush();
  }
  out += "},\"tensors\":[";
  first = true;
  for (const TensorView& tensor : checkpoint.tensors()) {
    if (!first) out += ",";
    first = false;
    out += "{\"name\":";
    AppendJsonString(tensor.name, &out);
    out += ",\"dtype\":\"" + std::string(DtypeName(tensor.dtype)) + "\",\"shape\":";
    AppendJsonShape(tensor.shape, &stream);
    out += ",\"data_offsets\":[";
    out += std::to_string(tensor.begin);
    out += ",";
    out += std::to_string(tensor.end);
    out += "],\"bytes\":";
    out += std::to_string(tensor.byte_size());
    out += "}";
    stream.Flush();
  }
  const Totals totals = ComputeTotals(checkpoint);
  out += "],\"totals\":{\"tensors\":" + std::to_string(checkpoint.num_tensors()) +
         ",\"parameters\":" + std::to_string(totals.parameters) +
         ",\"bytes\":" + std::to_string(totals.bytes) +
         ",\"header_bytes\":" + std::to_string(checkpoint.header_len()) + "}}\n";
  stream.Flush(/*force=*/true);
}

// FolderRowCells is one tensor of a folder's file, as a table row.
std::vector<TableCell> FolderRowCells(const TensorEntry& tensor) {
  std::vector<TableCell> cells(4);
  cells[0].text = PrintableText(tensor.name);
  cells[1].text = PrintableText(tensor.dtype);
  cells[2].text = ShapeText(tensor.shape);  // already held as a vector
  cells[3].text = std::to_string(tensor.bytes);
  return cells;
}

void PrintFolderText(const InspectResult& inspected) {
  PrintLine("folder: " + PrintableText(inspected.inspected));
  if (!inspected.note.empty()) PrintLine("note: " + PrintableText(inspected.note));
  const std::vector<std::string> headings = {"name", "dtype", "shape", "bytes"};
  for (const CheckResult& file : inspected.files) {
    PrintLine("file: " + PrintableText(file.file) + " (" + std::string(FormatName(file.format)) +
              ", " + Plural(file.tensors.size(), "tensor") + ")");
    if (file.tensors.empty()) continue;
    std::vector<size_t> widths = ColumnWidths(headings, {});
    for (const TensorEntry& tensor : file.tensors) {
      const std::vector<TableCell> cells = FolderRowCells(tensor);
      for (size_t i = 0; i < cells.size(); ++i) widths[i] = std::max(widths[i], cells[i].width());
    }
    std::vector<TableCell> heading_cells(headings.size());
    for (size_t i = 0; i < headings.size(); ++i) heading_cells[i].text = headings[i];
    PrintTableRow(heading_cells, widths);
    for (const TensorEntry& tensor : file.tensors) PrintTableRow(FolderRowCells(tensor), widths);
  }
  PrintLine("totals: " + Plural(inspected.num_tensors, "tensor") + " in " +
            Plural(inspected.files.size(), "file") + ", " +
            std::to_string(inspected.data_bytes) + " data bytes");
  for (const Warning& warning : inspected.check.warnings) {
    PrintErrorLine(WarningLine(inspected.check.file, warning));
  }
}

void PrintFolderJson(const InspectResult& inspected) {
  JsonStreamOut stream;
  std::string& out = stream.text();
  out = "{";
  AppendResultJson(inspected.check, &out);
  out += ",\"inspected\":";
  AppendJsonString(inspected.inspected, &out);
  if (!inspected.note.empty()) {
    out += ",\"note\":";
    AppendJsonString(inspected.note, &out);
  }
  out += ",";
  AppendWarningsJson(inspected.check.warnings, &out);
  out += ",\"files\":[";
  for (size_t k = 0; k < inspected.files.size(); ++k) {
    const CheckResult& file = inspected.files[k];
    out += k == 0 ? "{\"name\":" : ",{\"name\":";
    AppendJsonString(file.file, &out);
    out += ",\"format\":";
    AppendJsonString(FormatName(file.format), &out);
    out += ",\"tensors\":[";
    for (size_t i = 0; i < file.tensors.size(); ++i) {
      const TensorEntry& tensor = file.tensors[i];
      out += i == 0 ? "{\"name\":" : ",{\"name\":";
      AppendJsonString(tensor.name, &out);
      out += ",\"dtype\":";
      AppendJsonString(tensor.dtype, &out);
      out += ",\"shape\":";
      out += "[";
      for (size_t d = 0; d < tensor.shape.size(); ++d) {
        if (d > 0) out += ",";
        out += std::to_string(tensor.shape[d]);
      }
      out += "]";
      out += ",\"bytes\":" + std::to_string(tensor.bytes) + "}";
      stream.Flush();
    }
    out += "]}";
  }
  out += "],\"totals\":{\"files\":" + std::to_string(inspected.files.size()) +
         ",\"tensors\":" + std::to_string(inspected.num_tensors) +
         ",\"bytes\":" + std::to_string(inspected.data_bytes) + "}}\n";
  stream.Flush(/*force=*/true);
}

// PrintFailedJson prints what was not valid as `check --json` does, then, as for a valid
// folder, what was inspected and the note saying why (an index file: its folder).
int PrintFailedJson(const InspectResult& inspected) {
  std::string line = "{";
  AppendResultJson(inspected.check, &line);
  line += ",\"inspected\":";
  AppendJsonText(inspected.inspected, &line);  // paths need not be UTF-8
  if (!inspected.note.empty()) {
    line += ",\"note\":";
    AppendJsonText(inspected.note, &line);
  }
  line += ",";
  AppendWarningsJson(inspected.check.warnings, &line);
  PrintLine(line + "}");
  return inspected.check.exit_status();
}

}  // namespace

std::optional<int> RefuseInapplicable(const CommandLine& line, const std::string& path,
                                      std::optional<Format> sniffed) {
  const CommandRow& command = *FindCommand("inspect");
  const FormatSet found = FormatOf(path, sniffed);
  const std::string what = InapplicableOption(command, line, found, path);
  if (what.empty()) return std::nullopt;
  if (line.json) {
    for (const std::string_view name : line.given) {
      const OptionRow* option = FindOption(command.name, name);
      if (option == nullptr || (option->formats & found) != 0) continue;
      const Result<PathFormat> named = FormatOfPath(path, sniffed);
      CheckResult usage = stguard::UsageError(path, named.ok() ? named->format : Format::kUnknown,
                                              name, FormatSetNames(option->formats));
      if (found == kFolderInput) {
        usage.is_folder = true;
        usage.error.context = what;
      }
      PrintResult(usage, /*quiet=*/false, /*json=*/true);
      break;
    }
  }
  return UsageError(command, what);
}

int RunInspect(const CommandLine& line) {
  const std::string& path = line.operands[0];
  if (line.stats) {
    // Statistics read every tensor's data: a URL is read by ranges within a budget of
    // 64 MiB, which a checkpoint's data passes. A usage error, saying what to do.
    if (IsRemoteInput(path)) {
      constexpr char kWhy[] =
          "--stats reads every tensor's data, which a URL's read budget does not cover: "
          "download the file first (or convert URL OUT), then inspect --stats the copy";
      if (line.json) {
        CheckResult usage =
            stguard::UsageError(path, Format::kUnknown, "--stats", "local files and folders");
        usage.error.context = kWhy;
        PrintResult(usage, /*quiet=*/false, /*json=*/true);
      }
      return UsageError(*FindCommand("inspect"), kWhy);
    }
    // --stats checks first, then refuses an inapplicable option from what the check's
    // sniff found (RefuseInapplicable): the file is sniffed once.
    return RunInspectStats(line);  // cmd_stats.cc
  }
  // The library (InspectPath) decides what is inspected and whether it is valid; only a
  // valid file or folder is described, a file from what the check's reader built (kept:
  // the header is read once). Otherwise its result is printed as `check` prints it.
  CheckOptions options;
  options.allow_external_symlinks = line.allow_external_symlinks;
  const InspectResult inspected = InspectPath(path, options);
  const CheckResult& result = inspected.check;
  if (!inspected.is_folder) {
    if (std::optional<int> refused = RefuseInapplicable(line, path, result.format)) {
      return *refused;
    }
  }
  const bool json = line.json;
  if (!result.valid()) {
    if (json) return PrintFailedJson(inspected);
    if (!inspected.note.empty() && inspected.is_folder) {
      PrintErrorLine(PrintableText(path) + ": " + PrintableText(inspected.note));
    }
    PrintErrorLine(ResultLine(result));
    return result.exit_status();
  }
  if (inspected.is_folder) {
    if (json) {
      PrintFolderJson(inspected);
    } else {
      PrintFolderText(inspected);
    }
    return kExitOk;
  }
  // A file of another format than its name says: said once, then described as what it is.
  if (!inspected.note.empty()) PrintErrorLine(PrintableText(path) + ": note: " + inspected.note);
  // Described from what the library's check kept: each reader's result has one printer,
  // and which reader read the file is the library's decision, never asked here again.
  if (result.gguf) return InspectGguf(path, *result.gguf, json);  // gguf_output.cc
  if (result.npy) return InspectNpy(path, *result.npy, json);     // npy_output.cc
  if (result.npz) return InspectNpz(path, *result.npz, json);     // npy_output.cc
  if (result.pickle) return InspectPickle(result, json);          // pickle_output.cc
  if (!result.checkpoint) return PrintResult(result, /*quiet=*/false, json);  // nothing kept
  if (json) {
    PrintJson(result, *result.checkpoint);
  } else {
    PrintText(path, *result.checkpoint);
  }
  return kExitOk;
}

}  // namespace stguard::cli
