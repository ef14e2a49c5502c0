// SPDX-License-Identifier: Apache-2.0
#include "npy_output.h"

#include <array>
#include <cstdio>
#include <filesystem>
#include <vector>
#include <memory>
#include <span>

#include "arguments.h"
#include "commands.h"
#include "output.h"
#include "verdict_output.h"
#include "stguard/mapped_file.h"
#include "stguard/npy.h"
#include "stguard/npy_convert.h"

namespace stguard::cli {

namespace {

std::string VersionText(const NpyArrayInfo& info) {
  return std::to_string(info.major_version) + "." + std::to_string(info.minor_version);
}

int ErrorStatus(const Error& error) { return IsIoError(error) ? kExitUsage : kExitInvalid; }

}  // namespace

int InspectNpy(const std::string& path, bool json) {
  const Result<NpyArrayInfo> info = ReadNpyFile(path);
  if (!info.ok()) {
    std::fprintf(stderr, "%s: error: %s\n", PrintableText(path).c_str(),
                 info.error().ToString().c_str());
    return ErrorStatus(info.error());
  }
  const std::string shape = ShapeText(info->shape, json ? "," : ", ");
  if (json) {
    std::string out = "{";
    AppendValidEnvelope(path, Format::kNpy, &out);
    out += ",\"version\":\"" + VersionText(*info) + "\",\"descr\":";
    AppendJsonText(info->descr, &out);
    out += std::string(",\"fortran_order\":") + (info->fortran_order ? "true" : "false") +
           ",\"shape\":" + shape + ",\"data_offset\":" + std::to_string(info->data_offset) +
           ",\"bytes\":" + std::to_string(info->data_len) + "}";
    PrintLine(out);
  } else {
    PrintLine(PrintableText(path) + ": npy " + VersionText(*info));
    PrintLine("  descr:         " + info->descr);
    PrintLine(std::string("  fortran_order: ") + (info->fortran_order ? "true" : "false"));
    PrintLine("  shape:         " + shape);
    PrintLine("  bytes:         " + std::to_string(info->data_len));
  }
  return kExitOk;
}

int ConvertNpy(Args args) {
  static constexpr char kUsage[] =
      "usage: stguard convert IN.npy OUT.safetensors [--name NAME]\n"
      "  --name NAME  the tensor's name (default: IN's file name without .npy)\n";
  std::string name;
  const ValueOption values[] = {{.name = "--name", .value = &name}};
  std::vector<std::string_view> files;
  if (auto stop = ParseArguments(args, {"convert", kUsage, {}, values}, &files)) return *stop;
  if (files.size() != 2) {
    std::fputs(kUsage, stderr);
    return kExitUsage;
  }
  const std::string in(files[0]);
  const std::string out(files[1]);
  if (name.empty()) {
    name = std::filesystem::path(in).filename().string();
    if (name.size() > 4 && name.ends_with(".npy")) name.resize(name.size() - 4);
  }
  const Error error = NpyArrayToSafetensors(in, out, name);
  if (!error.ok()) {
    PrintFileError("convert", in, error);
    return ErrorStatus(error);
  }
  return kExitOk;
}

}  // namespace stguard::cli
