// SPDX-License-Identifier: Apache-2.0
// stguard check [-q] [--json] [--canonical] [--aligned] FILE|DIR...
#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "arguments.h"
#include "commands.h"
#include "gguf_output.h"
#include "npy_output.h"
#include "output.h"
#include "stguard/json_escape.h"
#include "stguard/reader.h"
#include "stguard/writer.h"

namespace stguard::cli {

namespace {

constexpr char kCheckUsage[] =
    "usage: stguard check [-q] [--json] [--canonical] [--aligned] [--allow-external-symlinks]\n"
    "                     [--] FILE|DIR...\n"
    "  FILE     a .safetensors file, validated strictly; with --canonical it must also be\n"
    "           byte-identical to its canonical form; or a GGUF file (known by its magic)\n"
    "  DIR      a checkpoint folder or a *.safetensors.index.json: the index, every\n"
    "           *.safetensors file in the folder, config.json and pickle files\n"
    "  --aligned  also require every tensor's data to be aligned to its element size\n"
    "exit status: 0 all valid, 1 any invalid, 2 usage, I/O error or out of memory\n";

}  // namespace

int RunCheck(Args args) {
  bool quiet = false;
  bool json = false;
  bool allow_external_symlinks = false;
  bool canonical = false;
  Options options;
  const Flag flags[] = {{"-q", &quiet},
                        {"--quiet", &quiet},
                        {"--json", &json},
                        {"--canonical", &canonical},
                        {"--aligned", &options.require_aligned_data},
                        {"--allow-external-symlinks", &allow_external_symlinks}};
  std::vector<std::string_view> files;
  if (auto stop = ParseArguments(args, {"check", kCheckUsage, flags}, &files)) return *stop;
  if (files.empty()) {
    std::fputs(kCheckUsage, stderr);
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
    if (IsGgufFile(path)) {  // recognised by its magic: gguf_output.cc
      status = std::max(status, CheckGgufFile(path, quiet, json));
      continue;
    }
    if (IsNpyFile(path)) {  // told by its magic: npy_output.cc
      status = std::max(status, CheckNpy(path, quiet, json));
      continue;
    }
    if (IsNpzFile(path)) {  // a ZIP that is not PyTorch's: npy_output.cc
      status = std::max(status, CheckNpz(path, quiet, json));
      continue;
    }
    const Result<Checkpoint> checkpoint = Checkpoint::Open(path, options);
    // With --canonical a valid file that differs from its canonical form counts as a
    // failure (exit 1), so scripts can gate on it.
    std::optional<CanonicalDiff> diff;
    // no_canonical_form: a valid file whose canonical rewrite cannot exist (its canonical
    // header would pass the 100,000,000-byte cap), so it is not canonical: exit 1.
    Error no_canonical_form;
    // The error that decides this file's line: invalid, or running out of memory.
    Error error = checkpoint.ok() ? Error{} : checkpoint.error();
    if (checkpoint.ok() && canonical) {
      Result<CanonicalDiff> compared = CompareToCanonical(*checkpoint);
      if (compared.ok()) {
        diff = *compared;
      } else if (compared.error().code == ErrorCode::kOutOfMemory) {
        error = compared.error();  // no verdict: exit 2
      } else {
        no_canonical_form = compared.error();
      }
    }
    const bool not_canonical = (diff && !diff->canonical) || !no_canonical_form.ok();
    const bool failed = !error.ok() || not_canonical;
    if (!error.ok()) {
      status = std::max(status, IsIoError(error) ? kExitUsage : kExitInvalid);
    } else if (failed) {
      status = std::max(status, kExitInvalid);
    }
    if (quiet && !failed) continue;
    std::string line;
    if (json) {
      line = "{\"file\":";
      AppendJsonText(path, &line);
      if (error.ok()) {
        line += ",\"ok\":true,\"tensors\":" + std::to_string(checkpoint->num_tensors()) +
                ",\"header_bytes\":" + std::to_string(checkpoint->header_len());
        if (!no_canonical_form.ok()) {
          line += ",\"canonical\":false,\"canonical_reason\":\"no-canonical-form\",\"canonical_error\":";
          AppendErrorJson(no_canonical_form, &line);
        } else if (diff) {
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
        AppendErrorJson(error, &line);
        line += "}";
      }
    } else {
      line = PrintableText(path) + ": ";
      if (error.ok()) {
        line += "ok (" + std::to_string(checkpoint->num_tensors()) + " tensors, " +
                std::to_string(checkpoint->header_len()) + " header bytes)";
        if (!no_canonical_form.ok()) {
          line += "; not canonical: no canonical form exists: " + no_canonical_form.ToString();
        } else if (diff) {
          line += "; " + DescribeCanonicalDiff(*diff);
        }
      } else {
        line += "error: " + ErrorText(path, error);
      }
    }
    PrintLine(line);
  }
  return status;
}

}  // namespace stguard::cli
