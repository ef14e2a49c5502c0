// SPDX-License-Identifier: Apache-2.0
// Printing GGUF files for `check` and `inspect`. Keys, strings and tensor names come
// from the file: text output passes them through PrintableText, JSON through the JSON escaper
// (validation proved them UTF-8).
#include "gguf_output.h"

#include <cstdio>
#include <string>
#include <vector>

#include "commands.h"
#include "output.h"
#include "verdict_output.h"
#include "stguard/gguf.h"
#include "stguard/json_escape.h"

namespace stguard::cli {

namespace {

using gguf::GgufFile;
using gguf::MetadataEntry;
using gguf::TensorInfo;
using gguf::Value;
using gguf::ValueType;

// kTableArrayEntries: the text table shows this many elements of an array, then the count.
constexpr uint64_t kTableArrayEntries = 8;

// AppendNumber appends a scalar number; a float as FloatText writes it (the shortest
// decimal that reads back as the same f32 or f64, "-0.0", "1.0"), a non-finite one as
// "nan", "inf" or "-inf" (quoted in JSON, where they have no number form).
void AppendNumber(const Value& value, bool json, std::string* out) {
  if (auto u = value.AsUnsigned()) {
    *out += std::to_string(*u);
  } else if (auto s = value.AsSigned()) {
    *out += std::to_string(*s);
  } else if (auto d = value.AsDouble()) {
    const bool single = value.type == ValueType::kF32;
    if (json) {
      AppendJsonFloat(*d, single, out);
    } else {
      *out += FloatText(*d, single);
    }
  } else if (auto b = value.AsBool()) {
    *out += *b ? "true" : "false";
  }
}

void AppendString(std::string_view text, bool json, std::string* out) {
  if (json) {
    AppendJsonString(text, out);
  } else {
    *out += '"';
    *out += PrintableText(text);
    *out += '"';
  }
}

// AppendArray appends an array's elements: all of them in JSON, the first few and the
// count in the table. Flushes the stream between elements (a token list is megabytes).
void AppendArray(const Value& value, bool json, JsonStreamOut* stream) {
  std::string& out = stream->text();
  const uint64_t shown = json ? value.count : std::min(value.count, kTableArrayEntries);
  out += "[";
  if (value.element_type == ValueType::kString) {
    value.StringElements([&](uint64_t i, std::string_view text) {
      if (i == shown) return false;
      if (i > 0) out += json ? "," : ", ";
      AppendString(text, json, &out);
      if (json) stream->Flush();
      return true;
    });
  } else {
    for (uint64_t i = 0; i < shown; ++i) {
      if (i > 0) out += json ? "," : ", ";
      AppendNumber(value.Element(i), json, &out);
      if (json) stream->Flush();
    }
  }
  if (!json && shown < value.count) out += ", ...";
  out += "]";
  if (!json) out += " (" + std::to_string(value.count) + " entries)";
}

void AppendValue(const Value& value, bool json, JsonStreamOut* stream) {
  if (value.type == ValueType::kArray) {
    AppendArray(value, json, stream);
  } else if (value.type == ValueType::kString) {
    AppendString(*value.AsString(), json, &stream->text());
  } else {
    AppendNumber(value, json, &stream->text());
  }
}

std::string TypeText(const Value& value) {
  if (value.type != ValueType::kArray) return std::string(gguf::ValueTypeName(value.type));
  return "array of " + std::string(gguf::ValueTypeName(value.element_type));
}

std::string NeText(const TensorInfo& tensor) {
  return ShapeText(std::span(tensor.ne.data(), tensor.n_dims));
}

struct Totals {
  uint64_t parameters = 0;
  uint64_t bytes = 0;
};

Totals ComputeTotals(const GgufFile& file) {
  // Every tensor's bytes are in the file and each element takes at least one bit of a
  // block, so neither sum can overflow.
  Totals totals;
  for (const TensorInfo& tensor : file.tensors()) {
    totals.parameters += tensor.num_elements();
    totals.bytes += tensor.byte_size;
  }
  return totals;
}

void PrintText(const std::string& path, const GgufFile& file) {
  PrintLine("file: " + PrintableText(path));
  PrintLine("format: gguf version " + std::to_string(file.version()) + ", alignment " +
            std::to_string(file.alignment()));
  PrintLine(file.metadata().empty() ? "metadata: (none)" : "metadata:");
  JsonStreamOut stream;  // used as a line buffer: each line is printed whole
  for (const MetadataEntry& entry : file.metadata()) {
    stream.text() = "  " + PrintableText(entry.key) + " (" + TypeText(entry.value) + "): ";
    AppendValue(entry.value, /*json=*/false, &stream);
    stream.text() += "\n";
    stream.Flush(/*force=*/true);
  }
  const std::vector<std::string> headings = {"name", "type", "ne", "shape", "offset", "bytes"};
  std::vector<std::vector<std::string>> rows;
  rows.reserve(file.tensors().size());
  for (const TensorInfo& tensor : file.tensors()) {
    rows.push_back({PrintableText(tensor.name), std::string(tensor.type->name), NeText(tensor),
                    ShapeText(tensor.shape()), std::to_string(tensor.absolute_offset),
                    std::to_string(tensor.byte_size)});
  }
  PrintLine("tensors (file order):");
  const std::vector<size_t> widths = ColumnWidths(headings, rows);
  PrintLine(FormatRow(headings, widths));
  for (const std::vector<std::string>& row : rows) PrintLine(FormatRow(row, widths));
  const Totals totals = ComputeTotals(file);
  PrintLine("totals: " + std::to_string(file.tensors().size()) + " tensors, " +
            std::to_string(totals.parameters) + " parameters, " + std::to_string(totals.bytes) +
            " data bytes, " + std::to_string(file.data_offset()) + " header bytes");
}

void AppendTensorJson(const TensorInfo& tensor, std::string* out) {
  *out += "{\"name\":";
  AppendJsonString(tensor.name, out);
  *out += ",\"type\":\"" + std::string(tensor.type->name) + "\",\"ne\":" +
          ShapeText(std::span(tensor.ne.data(), tensor.n_dims), ",") +
          ",\"shape\":" + ShapeText(tensor.shape(), ",") +
          ",\"offset\":" + std::to_string(tensor.absolute_offset) +
          ",\"bytes\":" + std::to_string(tensor.byte_size) + "}";
}

void PrintJson(const std::string& path, const GgufFile& file) {
  JsonStreamOut stream;
  std::string& out = stream.text();
  out = "{";
  AppendValidEnvelope(path, Format::kGguf, &out);
  out += ",\"version\":" +
         std::to_string(file.version()) + ",\"alignment\":" + std::to_string(file.alignment()) +
         ",\"metadata\":{";
  bool first = true;
  for (const MetadataEntry& entry : file.metadata()) {
    if (!first) out += ",";
    first = false;
    AppendJsonString(entry.key, &out);
    out += ":{\"type\":\"" + std::string(gguf::ValueTypeName(entry.value.type)) + "\",";
    if (entry.value.type == ValueType::kArray) {
      out += "\"element_type\":\"" + std::string(gguf::ValueTypeName(entry.value.element_type)) +
             "\",";
    }
    out += "\"value\":";
    AppendValue(entry.value, /*json=*/true, &stream);
    out += "}";
    stream.Flush();
  }
  out += "},\"tensors\":[";
  first = true;
  for (const TensorInfo& tensor : file.tensors()) {
    if (!first) out += ",";
    first = false;
    AppendTensorJson(tensor, &out);
    stream.Flush();
  }
  const Totals totals = ComputeTotals(file);
  out += "],\"totals\":{\"tensors\":" + std::to_string(file.tensors().size()) +
         ",\"parameters\":" + std::to_string(totals.parameters) +
         ",\"bytes\":" + std::to_string(totals.bytes) +
         ",\"header_bytes\":" + std::to_string(file.data_offset()) + "}}\n";
  stream.Flush(/*force=*/true);
}

}  // namespace

int InspectGguf(const std::string& path, const GgufFile& file, bool json) {
  if (json) {
    PrintJson(path, file);
  } else {
    PrintText(path, file);
  }
  return kExitOk;
}

}  // namespace stguard::cli
