// SPDX-License-Identifier: Apache-2.0
#include "output.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "stguard/json_escape.h"

namespace stguard::cli {

void PrintUnknownOption(std::string_view command, std::string_view arg, const char* usage) {
  const std::string line = "stguard " + std::string(command) + ": unknown option '" +
                           PrintableText(arg) + "'\n" + usage;
  std::fputs(line.c_str(), stderr);
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

void AppendErrorJson(const Error& error, std::string* out) {
  *out += "{\"code\":";
  AppendJsonString(ErrorCodeName(error.code), out);
  *out += ",\"offset\":" + std::to_string(error.offset) + ",\"message\":";
  AppendJsonString(error.message, out);
  *out += ",\"context\":";
  AppendJsonString(error.context, out);
  *out += ",\"tensor\":";
  AppendJsonString(error.tensor, out);
  *out += "}";
}

std::string ShapeText(std::span<const uint64_t> shape, const char* separator) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += separator;
    out += std::to_string(shape[i]);
  }
  return out + "]";
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

}  // namespace stguard::cli
