// SPDX-License-Identifier: Apache-2.0
// stguard scan FILE|DIR... [--json] [--key NAME]... [--max-output-ratio N]
//                          [--allow-external-symlinks] [--require-convertible]
//                          [--jobs N] [--from FILE] [--sarif FILE]:
// the static report on PyTorch checkpoints (format, verdict, globals, tensors, storages,
// first refusal), composed by the library (ScanInput, stguard/inputs.h) and printed in
// input order. A folder is walked with its subfolders and every pickle-bearing file in it
// is scanned, recognised by content whatever its name. Exit 0 when every file is safe to
// load (clean or needs-key), 1 when one names code or cannot be proven safe, 2 on usage or
// I/O errors; with --require-convertible, 1 also when a file would not convert as it is.
// Over several files the worst verdict decides (refused, invalid, error, valid).
#include <string>

#include "commands.h"
#include "many_inputs.h"
#include "stguard/inputs.h"

namespace stguard::cli {

int RunScan(const CommandLine& line) {
  ScanInputOptions options;
  options.torch.key_path = line.keys;
  if (line.max_output_ratio) options.torch.max_output_ratio = *line.max_output_ratio;
  options.allow_external_symlinks = line.allow_external_symlinks;
  options.require_convertible = line.require_convertible;
  OutputOptions output;
  output.json = line.json;
  return RunManyInputs("scan", line, [&](const std::string& path) {
    return ScanInput(path, options, output);
  });
}

}  // namespace stguard::cli
