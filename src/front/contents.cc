// SPDX-License-Identifier: Apache-2.0
// The CONTENTS lists (stguard/verdict.h): what each reader validated, as rows a person or
// a page shows, and their JSON.
#include "front/contents.h"

#include <string>
#include <string_view>

#include "base/concat.h"
#include "stguard/json_escape.h"

namespace stguard {
namespace {

// Clip cuts `text` to kMaxContentsValueLen bytes at a UTF-8 boundary, marking the cut.
std::string Clip(std::string_view text) {
  if (text.size() <= kMaxContentsValueLen) return std::string(text);
  size_t cut = kMaxContentsValueLen;
  // Back up over continuation bytes (10xxxxxx) to the start of a character.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return Concat({text.substr(0, cut), "\u2026"});
}

std::string TupleText(const std::vector<uint64_t>& dims) {
  std::string text = "(";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i != 0) text += ", ";
    text += std::to_string(dims[i]);
  }
  text += dims.size() == 1 ? ",)" : ")";
  return text;
}

// GgufValueText is a key's value as text: scalars as written, an array by its element
// type and count ("[string × 32000]"), never its elements.
std::string GgufValueText(const gguf::Value& value) {
  using gguf::ValueType;
  if (value.type == ValueType::kArray) {
    return Concat({"[", gguf::ValueTypeName(value.element_type), " \u00d7 ",
                   std::to_string(value.count), "]"});
  }
  if (auto text = value.AsString()) return Clip(*text);
  if (auto flag = value.AsBool()) return *flag ? "true" : "false";
  if (auto number = value.AsUnsigned()) return std::to_string(*number);
  if (auto number = value.AsSigned()) return std::to_string(*number);
  if (auto number = value.AsDouble()) return FloatText(*number, value.type == ValueType::kF32);
  return "";
}

void AppendUints(const std::vector<uint64_t>& values, std::string* out) {
  *out += '[';
  for (size_t i = 0; i < values.size(); ++i) {
    if (i != 0) *out += ',';
    *out += std::to_string(values[i]);
  }
  *out += ']';
}

}  // namespace

void ListSafetensors(const Checkpoint& checkpoint, CheckResult* result) {
  const uint64_t data_start = 8 + checkpoint.header_len();
  result->tensors.reserve(checkpoint.num_tensors());
  for (const TensorView& tensor : checkpoint.tensors()) {
    TensorEntry entry;
    entry.name = std::string(tensor.name);
    entry.dtype = std::string(DtypeName(tensor.dtype));
    for (uint64_t dim : tensor.shape) entry.shape.push_back(dim);
    entry.begin = data_start + tensor.begin;
    entry.end = data_start + tensor.end;
    entry.bytes = tensor.byte_size();
    result->tensors.push_back(std::move(entry));
  }
  for (const MetadataEntry& item : checkpoint.metadata()) {
    result->metadata.emplace_back(std::string(item.key), Clip(item.value));
  }
}

void ListGguf(const gguf::GgufFile& file, CheckResult* result) {
  result->tensors.reserve(file.tensors().size());
  for (const gguf::TensorInfo& tensor : file.tensors()) {
    TensorEntry entry;
    entry.name = std::string(tensor.name);
    entry.dtype = std::string(tensor.type->name);
    // ne in file order (innermost first): see CONTENTS.
    entry.shape.assign(tensor.ne.begin(), tensor.ne.begin() + tensor.n_dims);
    entry.begin = tensor.absolute_offset;
    entry.end = tensor.absolute_offset + tensor.byte_size;
    entry.bytes = tensor.byte_size;
    result->tensors.push_back(std::move(entry));
  }
  result->metadata.reserve(file.metadata().size());
  for (const gguf::MetadataEntry& item : file.metadata()) {
    result->metadata.emplace_back(std::string(item.key), GgufValueText(item.value));
  }
}

void ListNpy(const NpyArrayInfo& info, CheckResult* result) {
  TensorEntry entry;
  entry.name = "array";
  entry.dtype = info.descr;
  entry.shape = info.shape;
  entry.begin = info.data_offset;
  entry.end = info.data_offset + info.data_len;
  entry.bytes = info.data_len;
  result->tensors.push_back(std::move(entry));
  result->metadata.emplace_back("descr", info.descr);
  result->metadata.emplace_back("fortran_order", info.fortran_order ? "True" : "False");
  result->metadata.emplace_back("shape", TupleText(info.shape));
}

void ListNpz(const NpzInfo& info, CheckResult* result) {
  result->tensors.reserve(info.members.size());
  for (const NpzMember& member : info.members) {
    TensorEntry entry;
    entry.name = member.key;
    entry.dtype = member.array.descr;
    entry.shape = member.array.shape;
    // A deflated member's bytes have no place in the archive: offsets unknown (0, 0).
    if (!member.compressed) {
      entry.begin = member.data_offset + member.array.data_offset;
      entry.end = entry.begin + member.array.data_len;
    }
    entry.bytes = member.array.data_len;
    result->tensors.push_back(std::move(entry));
  }
}

void ListPickle(const PickleFileReport& report, CheckResult* result) {
  const TorchScanReport& scan = report.scan;
  result->tensors.reserve(scan.tensors.size());
  for (const TorchTensor& tensor : scan.tensors) {
    TensorEntry entry;
    entry.name = tensor.name;
    entry.dtype = std::string(DtypeName(tensor.dtype));
    entry.shape = tensor.shape;
    entry.bytes = tensor.byte_len;
    // A contiguous view has one place in the file: its storage's bytes from its offset.
    if (tensor.contiguous && tensor.storage < scan.storages.size() &&
        scan.storages[tensor.storage].data_offset != 0) {
      entry.begin = scan.storages[tensor.storage].data_offset +
                    tensor.storage_offset * ElementSize(tensor.dtype);
      entry.end = entry.begin + tensor.byte_len;
    }
    result->tensors.push_back(std::move(entry));
  }
  for (const TorchGlobal& global : scan.globals) {
    result->metadata.emplace_back("global", Concat({global.module, ".", global.name}));
  }
}

void AppendContentsJson(const CheckResult& result, std::string* out) {
  *out += "\"tensors\":[";
  for (size_t i = 0; i < result.tensors.size(); ++i) {
    const TensorEntry& tensor = result.tensors[i];
    *out += i == 0 ? "{\"name\":" : ",{\"name\":";
    AppendJsonText(tensor.name, out);
    *out += ",\"dtype\":";
    AppendJsonText(tensor.dtype, out);
    *out += ",\"shape\":";
    AppendUints(tensor.shape, out);
    *out += Concat({",\"begin\":", std::to_string(tensor.begin), ",\"end\":",
                    std::to_string(tensor.end), ",\"bytes\":", std::to_string(tensor.bytes), "}"});
  }
  *out += "],\"metadata\":[";
  for (size_t i = 0; i < result.metadata.size(); ++i) {
    *out += i == 0 ? "[" : ",[";
    AppendJsonText(result.metadata[i].first, out);
    *out += ',';
    AppendJsonText(result.metadata[i].second, out);
    *out += ']';
  }
  *out += "],\"notes\":[";
  for (size_t i = 0; i < result.notes.size(); ++i) {
    if (i != 0) *out += ',';
    AppendJsonText(result.notes[i], out);
  }
  *out += ']';
}

}  // namespace stguard
