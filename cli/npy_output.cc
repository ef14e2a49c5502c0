// SPDX-License-Identifier: Apache-2.0
#include "npy_output.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <vector>
#include <memory>
#include <span>

#include "commands.h"
#include "convert_result.h"
#include "output.h"
#include "progress.h"
#include "stguard/dtype.h"
#include "verdict_output.h"
#include "stguard/mapped_file.h"
#include "stguard/npy.h"
#include "stguard/npy_convert.h"
#include "stguard/npz.h"
#include "stguard/sniff.h"

namespace stguard::cli {

namespace {

std::string VersionText(const NpyArrayInfo& info) {
  return std::to_string(info.major_version) + "." + std::to_string(info.minor_version);
}

}  // namespace

int InspectNpz(const std::string& path, const NpzInfo& info, bool json) {
  if (json) {
    std::string out = "{";
    AppendValidEnvelope(path, Format::kNpz, &out);
    out += ",\"arrays\":[";
    for (size_t i = 0; i < info.members.size(); ++i) {
      const NpzMember& m = info.members[i];
      out += i == 0 ? "{\"name\":" : ",{\"name\":";
      AppendJsonText(m.key, &out);
      out += ",\"version\":\"" + VersionText(m.array) + "\",\"descr\":";
      AppendJsonText(m.array.descr, &out);
      out += std::string(",\"fortran_order\":") + (m.array.fortran_order ? "true" : "false") +
             ",\"shape\":" + ShapeText(m.array.shape, ",") + ",\"compressed\":" +
             (m.compressed ? "true" : "false") + ",\"bytes\":" +
             std::to_string(m.array.data_len) + "}";
    }
    PrintLine(out + "]}");
    return kExitOk;
  }
  PrintLine(PrintableText(path) + ": npz, " + std::to_string(info.members.size()) + " arrays");
  for (const NpzMember& m : info.members) {
    PrintLine("  " + PrintableText(m.key) + "  npy " + VersionText(m.array) + "  " +
              m.array.descr + "  " + ShapeText(m.array.shape, ", ") +
              (m.array.fortran_order ? "  fortran_order" : "") + "  " +
              std::to_string(m.array.data_len) + " bytes" +
              (m.compressed ? "  (deflated)" : "  (stored)"));
  }
  return kExitOk;
}

int InspectNpy(const std::string& path, const NpyArrayInfo& info, bool json) {
  const std::string shape = ShapeText(info.shape, json ? "," : ", ");
  if (json) {
    std::string out = "{";
    AppendValidEnvelope(path, Format::kNpy, &out);
    out += ",\"version\":\"" + VersionText(info) + "\",\"descr\":";
    AppendJsonText(info.descr, &out);
    out += std::string(",\"fortran_order\":") + (info.fortran_order ? "true" : "false") +
           ",\"shape\":" + shape + ",\"data_offset\":" + std::to_string(info.data_offset) +
           ",\"bytes\":" + std::to_string(info.data_len) + "}";
    PrintLine(out);
  } else {
    PrintLine(PrintableText(path) + ": npy " + VersionText(info));
    PrintLine("  descr:         " + info.descr);
    PrintLine(std::string("  fortran_order: ") + (info.fortran_order ? "true" : "false"));
    PrintLine("  shape:         " + shape);
    PrintLine("  bytes:         " + std::to_string(info.data_len));
  }
  return kExitOk;
}

ConvertResult ConvertNpz(const std::string& in, const std::string& out,
                         std::optional<Dtype> dtype, bool json) {
  size_t num_tensors = 0;
  // The output's size is known only once its header is planned: bytes and rate show.
  ProgressBar progress(/*total=*/0, ShowProgress(json, /*quiet=*/false));
  const Error error = NpzToSafetensors(in, out, dtype, &num_tensors,
                                       [&progress](uint64_t bytes) { progress.Add(bytes); });
  progress.Clear();
  if (!error.ok()) {
    return ConvertFailed(in, IsIoError(error) && error.context.starts_with(out) ? out : in,
                         error);
  }
  return Converted(in, out, num_tensors,
                   PrintableText(out) + ": " + Plural(num_tensors, "tensor") +
                       " from an npz archive");
}

ConvertResult ConvertNpy(const std::string& in, const std::string& out, std::string name,
                         std::optional<Dtype> dtype, bool json) {
  if (name.empty()) {
    name = std::filesystem::path(in).filename().string();
    if (name.size() > 4 && name.ends_with(".npy")) name.resize(name.size() - 4);
  }
  ProgressBar progress(/*total=*/0, ShowProgress(json, /*quiet=*/false));
  const Error error = NpyArrayToSafetensors(
      in, out, name, dtype, [&progress](uint64_t bytes) { progress.Add(bytes); });
  progress.Clear();
  if (!error.ok()) {
    return ConvertFailed(in, IsIoError(error) && error.context.starts_with(out) ? out : in,
                         error);
  }
  return Converted(in, out, 1,
                   PrintableText(out) + ": 1 tensor ('" + PrintableText(name) +
                       "') from an npy array");
}

}  // namespace stguard::cli
