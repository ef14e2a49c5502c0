// SPDX-License-Identifier: Apache-2.0
#include "output.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include "stguard/json_escape.h"

namespace stguard::cli {

Error AboutOutput(const std::string& out, Error error) {
  if (!IsIoError(error, OutOfMemoryIs::kNotIoError)) return error;
  const std::filesystem::path folder = std::filesystem::path(out).parent_path();
  std::error_code status;
  if (folder.empty() || std::filesystem::is_directory(folder, status)) return error;
  error.context = "output folder " + PrintableText(folder.string()) + " does not exist";
  return error;
}

Error StdoutSink::Write(std::span<const std::byte> bytes) {
  while (!bytes.empty()) {
    const ssize_t written = ::write(STDOUT_FILENO, bytes.data(), bytes.size());
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) {
      return Error{ErrorCode::kIoError, 0, "could not write to standard output",
                   written < 0 ? std::strerror(errno) : "no progress"};
    }
    bytes = bytes.subspan(static_cast<size_t>(written));
  }
  return Error{};
}

std::string StdoutRefusal() {
  if (::isatty(STDOUT_FILENO)) {
    return "standard output is a terminal; redirect it to a file or a pipe";
  }
  return {};
}

void PrintLeftoverNotes(std::string_view command, const std::string& out) {
  for (const std::string& leftover : FindLeftoverTemporaryFiles(out)) {
    const std::string line = "stguard " + std::string(command) + ": note: " +
                             PrintableText(leftover) +
                             " is left from an interrupted write whose process is gone; "
                             "it is safe to delete\n";
    std::fputs(line.c_str(), stderr);
  }
}


namespace {
template <typename Dims>
std::string DimsText(const Dims& shape, const char* separator) {
  std::string out = "[";
  bool first = true;
  for (uint64_t dim : shape) {
    if (!first) out += separator;
    first = false;
    out += std::to_string(dim);
  }
  return out + "]";
}
}  // namespace

std::string ShapeText(std::span<const uint64_t> shape, const char* separator) {
  return DimsText(shape, separator);
}

std::string ShapeText(const stguard::Shape& shape, const char* separator) {
  return DimsText(shape, separator);
}

size_t ShapeTextWidth(const stguard::Shape& shape, std::string_view separator) {
  size_t width = 2;  // the brackets
  bool first = true;
  for (uint64_t dim : shape) {
    if (!first) width += separator.size();
    first = false;
    do {
      ++width;
      dim /= 10;
    } while (dim != 0);
  }
  return width;
}

void PrintTableRow(const std::vector<TableCell>& cells, const std::vector<size_t>& widths) {
  // Padding is held back until more text follows, so trailing spaces are dropped as
  // FormatRow drops them.
  size_t pending_spaces = 1;
  std::string chunk;
  auto write = [&pending_spaces, &chunk](std::string_view text) {
    if (text.empty()) return;
    // Padding can be as wide as the widest shape: written a page at a time.
    while (pending_spaces > 0) {
      const size_t spaces = std::min<size_t>(pending_spaces, 4096);
      chunk.append(spaces, ' ');
      pending_spaces -= spaces;
      if (chunk.size() >= 4096) {
        std::fwrite(chunk.data(), 1, chunk.size(), stdout);
        chunk.clear();
      }
    }
    chunk += text;
    if (chunk.size() >= 4096) {
      std::fwrite(chunk.data(), 1, chunk.size(), stdout);
      chunk.clear();
    }
  };
  for (size_t i = 0; i < cells.size(); ++i) {
    const TableCell& cell = cells[i];
    pending_spaces += 1;
    if (cell.is_shape) {
      write("[");
      bool first = true;
      for (uint64_t dim : cell.shape) {
        if (!first) {
          write(",");
          pending_spaces += 1;
        }
        first = false;
        write(std::to_string(dim));
      }
      write("]");
    } else {
      write(cell.text);
    }
    const size_t cell_width = cell.width();
    if (i + 1 < cells.size() && i < widths.size() && widths[i] > cell_width) {
      pending_spaces += widths[i] - cell_width;
    }
  }
  std::fwrite(chunk.data(), 1, chunk.size(), stdout);
  std::fputc('\n', stdout);
}

std::vector<size_t> ColumnWidths(const std::vector<std::string>& headings,
                                 const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const std::string& heading : headings) widths.push_back(heading.size());
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size() && i < widths.size(); ++i) {
      widths[i] = std::max(widths[i], row[i].size());
    }
  }
  return widths;
}

std::string FormatRow(const std::vector<std::string>& cells, const std::vector<size_t>& widths) {
  std::string line = " ";
  for (size_t i = 0; i < cells.size(); ++i) {
    line += " " + cells[i];
    if (i + 1 < cells.size() && i < widths.size()) line.append(widths[i] - cells[i].size(), ' ');
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line;
}

void AppendJsonShape(const stguard::Shape& shape, JsonStreamOut* stream) {
  std::string& out = stream->text();
  out += "[";
  bool first = true;
  for (uint64_t dim : shape) {
    if (!first) out += ",";
    first = false;
    out += std::to_string(dim);
    stream->Flush();
  }
  out += "]";
}

}  // namespace stguard::cli
