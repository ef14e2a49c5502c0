// SPDX-License-Identifier: Apache-2.0
#include "output.h"

#include <algorithm>

#include "stguard/json_escape.h"

namespace stguard::cli {

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
