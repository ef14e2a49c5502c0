// SPDX-License-Identifier: Apache-2.0
#include "npy_output.h"

#include <array>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <vector>
#include <memory>
#include <span>

#include "arguments.h"
#include "commands.h"
#include "output.h"
#include "stguard/dtype.h"
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

bool IsNpyFile(const std::string& path) {
  Result<std::unique_ptr<MappedFile>> file = MappedFile::OpenUnmapped(path);
  if (!file.ok() || (*file)->size() < kNpyMagicLen) return false;
  std::array<std::byte, kNpyMagicLen> magic{};
  return (*file)->ReadAt(0, magic).ok() && HasNpyMagic(magic);
}

int CheckNpy(const std::string& path, bool quiet, bool json) {
  const Result<NpyArrayInfo> info = ReadNpyFile(path);
  if (quiet && info.ok()) return kExitOk;
  std::string line;
  if (json) {
    line = "{\"file\":";
    AppendJsonText(path, &line);
    if (info.ok()) {
      line += ",\"ok\":true,\"format\":\"npy\",\"header_bytes\":" +
              std::to_string(info->header_len) + "}";
    } else {
      line += ",\"ok\":false,\"error\":";
      AppendErrorJson(info.error(), &line);
      line += "}";
    }
  } else {
    line = PrintableText(path) + ": ";
    line += info.ok() ? "ok (npy " + VersionText(*info) + ", " + info->descr + ", " +
                            std::to_string(info->data_len) + " data bytes)"
                      : "INVALID: " + info.error().ToString();
  }
  PrintLine(line);
  return info.ok() ? kExitOk : ErrorStatus(info.error());
}

int InspectNpy(const std::string& path, bool json) {
  const Result<NpyArrayInfo> info = ReadNpyFile(path);
  if (!info.ok()) {
    std::fprintf(stderr, "%s: error: %s\n", PrintableText(path).c_str(),
                 info.error().ToString().c_str());
    return ErrorStatus(info.error());
  }
  const std::string shape = ShapeText(info->shape, json ? "," : ", ");
  if (json) {
    std::string out = "{\"file\":";
    AppendJsonText(path, &out);
    out += ",\"format\":\"npy\",\"version\":\"" + VersionText(*info) + "\",\"descr\":";
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
      "usage: stguard convert IN.npy OUT.safetensors [--name NAME] [--dtype BF16|F16|F32]\n"
      "  --name NAME  the tensor's name (default: IN's file name without .npy)\n"
      "  --dtype D    the dtype a floating array (F64, F32, F16, BF16) becomes\n";
  std::string name;
  std::string dtype_name;
  const ValueOption values[] = {{.name = "--name", .value = &name},
                                {.name = "--dtype", .value = &dtype_name}};
  std::vector<std::string_view> files;
  if (auto stop = ParseArguments(args, {"convert", kUsage, {}, values}, &files)) return *stop;
  if (files.size() != 2) {
    std::fputs(kUsage, stderr);
    return kExitUsage;
  }
  std::optional<Dtype> dtype;
  if (!dtype_name.empty()) {
    dtype = ParseDtype(dtype_name);
    if (!dtype || !IsConversionTarget(*dtype)) {
      std::fprintf(stderr, "stguard convert: --dtype must be BF16, F16 or F32, not '%s'\n",
                   PrintableText(dtype_name).c_str());
      return kExitUsage;
    }
  }
  const std::string in(files[0]);
  const std::string out(files[1]);
  if (name.empty()) {
    name = std::filesystem::path(in).filename().string();
    if (name.size() > 4 && name.ends_with(".npy")) name.resize(name.size() - 4);
  }
  const Error error = NpyArrayToSafetensors(in, out, name, dtype);
  if (!error.ok()) {
    PrintFileError("convert", in, error);
    return ErrorStatus(error);
  }
  return kExitOk;
}

}  // namespace stguard::cli
