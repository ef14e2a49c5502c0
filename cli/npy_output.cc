// SPDX-License-Identifier: Apache-2.0
#include "npy_output.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <cstdio>
#include <vector>
#include <memory>
#include <span>

#include "commands.h"
#include "output.h"
#include "stguard/dtype.h"
#include "verdict_output.h"
#include "stguard/mapped_file.h"
#include "stguard/npy.h"
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

}  // namespace stguard::cli
