// SPDX-License-Identifier: Apache-2.0
// stguard convert IN OUT --dtype BF16|F16|F32: rewrite the floating tensors of IN (F64,
// F32, F16, BF16) to the given dtype, round to nearest even, and write OUT canonically.
//
// Other tensors (integers, BOOL, the 8-bit and smaller float formats, C64) and the
// metadata are copied unchanged. The data is converted as it is streamed into a
// temporary file beside OUT, which replaces OUT only once complete and synced; peak
// memory does not depend on the data size, and OUT may be IN.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "output.h"
#include "stguard/convert.h"
#include "stguard/reader.h"
#include "stguard/writer.h"

namespace stguard::cli {
namespace {

constexpr char kConvertUsage[] = "usage: stguard convert IN OUT|- --dtype BF16|F16|F32\n";


}  // namespace

int RunConvert(Args args) {
  std::vector<std::string_view> files;
  std::optional<std::string_view> dtype_name;
  bool options_done = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string_view arg = args[i];
    if (options_done) {
      files.push_back(arg);
    } else if (arg == "--") {
      options_done = true;
    } else if (arg == "-h" || arg == "--help") {
      std::fputs(kConvertUsage, stdout);
      return kExitOk;
    } else if (arg == "--dtype" && i + 1 < args.size()) {
      dtype_name = args[++i];
    } else if (arg.starts_with("--dtype=")) {
      dtype_name = arg.substr(8);
    } else if (IsOption(arg)) {
      PrintUnknownOption("convert", arg, kConvertUsage);
      return kExitUsage;
    } else {
      files.push_back(arg);
    }
  }
  if (files.size() != 2 || !dtype_name) {
    std::fputs(kConvertUsage, stderr);
    return kExitUsage;
  }
  const std::optional<Dtype> target = ParseDtype(*dtype_name);
  if (!target || (*target != Dtype::kBF16 && *target != Dtype::kF16 && *target != Dtype::kF32)) {
    std::fprintf(stderr, "stguard convert: --dtype must be BF16, F16 or F32, not '%s'\n",
                 PrintableText(*dtype_name).c_str());
    return kExitUsage;
  }
  const std::string in(files[0]);
  const std::string out(files[1]);

  const Result<Checkpoint> checkpoint = Checkpoint::Open(in);
  if (!checkpoint.ok()) {
    PrintFileError("convert", in, checkpoint.error());
    return IsIoError(checkpoint.error()) ? kExitUsage : kExitInvalid;
  }
  Writer writer;
  size_t num_converted = 0;
  if (Error error = AddConvertedCheckpoint(*checkpoint, *target, &writer, &num_converted);
      !error.ok()) {
    PrintFileError("convert", in, error);
    return kExitInvalid;
  }
  const bool to_stdout = out == "-";
  if (to_stdout) {
    if (const std::string refusal = StdoutRefusal(); !refusal.empty()) {
      std::fputs(("stguard convert: " + refusal + "\n").c_str(), stderr);
      return kExitUsage;
    }
    StdoutSink sink;
    if (Error error = writer.WriteTo(sink); !error.ok()) {
      PrintFileError("convert", "-", error);
      return kExitUsage;
    }
  } else {
    PrintLeftoverNotes("convert", out);
    if (Error error = writer.WriteToFile(out); !error.ok()) {
      // A valid checkpoint always converts, so any failure here is about reading IN or
      // writing OUT: the output is untouched either way.
      PrintFileError("convert", out, error);
      return kExitUsage;
    }
  }
  // The summary goes to stderr when the file itself goes to standard output.
  (to_stdout ? PrintErrorLine : PrintLine)(PrintableText(out) + ": " + std::to_string(num_converted) + " of " +
            std::to_string(checkpoint->num_tensors()) + " tensors converted to " +
            std::string(DtypeName(*target)));
  return kExitOk;
}

}  // namespace stguard::cli
