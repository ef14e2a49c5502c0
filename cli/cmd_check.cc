// SPDX-License-Identifier: Apache-2.0
// stguard check [-q] [--json] [--canonical] [--aligned] FILE|DIR...
#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "output.h"
#include "stguard/json_escape.h"
#include "stguard/reader.h"
#include "stguard/writer.h"

namespace stguard::cli {

int RunCheck(Args args) {
  bool quiet = false;
  bool json = false;
  bool allow_external_symlinks = false;
  bool canonical = false;
  Options options;
  std::vector<std::string_view> files;
  for (std::string_view arg : args) {
    if (arg == "-q" || arg == "--quiet") {
      quiet = true;
    } else if (arg == "--json") {
      json = true;
    } else if (arg == "--canonical") {
      canonical = true;
    } else if (arg == "--aligned") {
      options.require_aligned_data = true;
    } else if (arg == "--allow-external-symlinks") {
      allow_external_symlinks = true;
    } else if (arg.size() > 1 && arg[0] == '-') {
      std::fprintf(stderr, "stguard check: unknown option '%.*s'\n",
                   static_cast<int>(arg.size()), arg.data());
      return kExitUsage;
    } else {
      files.push_back(arg);
    }
  }
  if (files.empty()) {
    std::fputs("usage: stguard check [-q] [--json] [--canonical] [--aligned] "
               "[--allow-external-symlinks] FILE|DIR...\n",
               stderr);
    return kExitUsage;
  }

  int status = kExitOk;
  for (std::string_view file : files) {
    const std::string path(file);
    if (IsCheckpointDirPath(path)) {  // a folder or a sharded index: cmd_check_dir.cc
      status = std::max(status,
                        CheckCheckpointDir(path, {quiet, json, allow_external_symlinks,
                                                  options.require_aligned_data}));
      continue;
    }
    const Result<Checkpoint> checkpoint = Checkpoint::Open(path, options);
    // With --canonical a valid file that differs from its canonical form counts as a
    // failure (exit 1), so scripts can gate on it.
    std::optional<CanonicalDiff> diff;
    if (checkpoint.ok() && canonical) {
      Result<CanonicalDiff> compared = CompareToCanonical(*checkpoint);
      if (compared.ok()) diff = *compared;
    }
    const bool failed = !checkpoint.ok() || (diff && !diff->canonical);
    if (!checkpoint.ok()) {
      status = std::max(status, IsIoError(checkpoint.error()) ? kExitUsage : kExitInvalid);
    } else if (failed) {
      status = std::max(status, kExitInvalid);
    }
    if (quiet && !failed) continue;
    std::string line;
    if (json) {
      line = "{\"file\":";
      AppendJsonString(path, &line);
      if (checkpoint.ok()) {
        line += ",\"ok\":true,\"tensors\":" + std::to_string(checkpoint->num_tensors()) +
                ",\"header_bytes\":" + std::to_string(checkpoint->header_len());
        if (diff) {
          line += std::string(",\"canonical\":") + (diff->canonical ? "true" : "false");
          if (!diff->canonical) {
            line += ",\"canonical_reason\":\"" +
                    std::string(CanonicalDiffReasonName(diff->reason)) +
                    "\",\"first_difference\":" + std::to_string(diff->offset) +
                    ",\"reason_offset\":" + std::to_string(diff->reason_offset);
          }
        }
        line += "}";
      } else {
        line += ",\"ok\":false,\"error\":";
        AppendErrorJson(checkpoint.error(), &line);
        line += "}";
      }
    } else {
      line = PrintableText(path) + ": ";
      if (checkpoint.ok()) {
        line += "ok (" + std::to_string(checkpoint->num_tensors()) + " tensors, " +
                std::to_string(checkpoint->header_len()) + " header bytes)";
        if (diff) line += "; " + DescribeCanonicalDiff(*diff);
      } else {
        line += "error: " + checkpoint.error().ToString();
      }
    }
    PrintLine(line);
  }
  return status;
}

}  // namespace stguard::cli
