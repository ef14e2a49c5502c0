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

constexpr char kConvertUsage[] = "usage: stguard convert IN OUT --dtype BF16|F16|F32\n";


}  // namespace

int RunConvert(Args args) {
  std::vector<std::string_view> files;
  std::optional<std::string_view> dtype_name;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string_view arg = args[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs(kConvertUsage, stdout);
      return kExitOk;
    }
    if (arg == "--dtype" && i + 1 < args.size()) {
      dtype_name = args[++i];
    } else if (arg.starts_with("--dtype=")) {
      dtype_name = arg.substr(8);
    } else if (arg.size() > 1 && arg[0] == '-') {
      std::fprintf(stderr, "stguard convert: unknown option '%s'\n%s",
                   PrintableText(arg).c_str(), kConvertUsage);
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
  if (Error error = writer.WriteToFile(out); !error.ok()) {
    PrintFileError("convert", out, error);
    // A valid checkpoint always converts, so any failure here is about writing: the
    // output is untouched.
    return kExitUsage;
  }
  PrintLine(PrintableText(out) + ": " + std::to_string(num_converted) + " of " +
            std::to_string(checkpoint->num_tensors()) + " tensors converted to " +
            std::string(DtypeName(*target)));
  return kExitOk;
}

}  // namespace stguard::cli
