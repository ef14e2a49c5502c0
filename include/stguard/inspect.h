// SPDX-License-Identifier: Apache-2.0
// stguard/inspect.h: what `inspect` describes, decided once for every input `check`
// accepts. The CLI prints it; nothing here prints.
//
// - A file: checked as CheckFile does, keeping the format reader's result (the header is
//   read once) for the caller to describe.
// - A folder: checked as CheckFolder does, and listed: every weight file of it (the
//   safetensors shards of its logical checkpoint, pickle-bearing files, GGUF split parts,
//   npy and npz files), each with its tensors, and totals.
// - An index file (*.index.json): inspected as its folder, and `note` says so.
// - A file whose bytes are not what its name suggests: `note` says what it is. A valid
//   file of another format is described as what it is ("this is a PyTorch checkpoint,
//   named like a safetensors file"); JSON text, which no reader describes, is an error
//   (kInvalidArgument, exit 2) saying what it is ("this is a shard index"), never a
//   reader's absurd finding (a header length read from JSON text).
#ifndef STGUARD_INSPECT_H_
#define STGUARD_INSPECT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "stguard/export.h"
#include "stguard/verdict.h"

namespace stguard {

struct InspectResult {
  // check: the verdict on what was inspected (a folder's for an index file), with the
  // format reader's result kept for a valid file (CheckOptions::keep_reader); a folder's
  // kept checkpoint_dir is taken for `files` (its shards are listed from it).
  CheckResult check;
  // inspected: the path described: the path given, or an index file's folder.
  std::string inspected;
  bool is_folder = false;
  // note: one sentence for a person when what was described is not simply what was
  // named; empty otherwise.
  std::string note;
  // files: a valid folder's weight files in name order of the checkpoint's shards, then
  // walk order, each with `file` (the name in the folder), `format` and `tensors`.
  std::vector<CheckResult> files;
  uint64_t num_tensors = 0;  // over `files`
  uint64_t data_bytes = 0;   // over `files`: the tensors' data bytes
};

// InspectPath decides what `path` is and checks it as above. `options` are check's
// (InspectPath sets list_contents for a folder, and keep_reader).
STGUARD_API InspectResult InspectPath(const std::string& path, const CheckOptions& options = {});

}  // namespace stguard

#endif  // STGUARD_INSPECT_H_
