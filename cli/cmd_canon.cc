// SPDX-License-Identifier: Apache-2.0
// stguard canon IN OUT: validate IN strictly, then write its canonical form to OUT.
//
// The data is streamed from IN's mapping into a temporary file beside OUT, which replaces
// OUT only once complete and synced; so peak memory does not depend on the data size, and
// OUT may be IN itself (the mapping keeps the old file's inode alive). OUT "-" streams
// the file to standard output instead; a path that names standard output through a
// descriptor (/dev/stdout) is refused, since renaming over it would replace the file
// that standard output happens to be.
#include <cstdio>
#include <string>
#include <vector>

#include "commands.h"
#include "output.h"
#include "stguard/reader.h"
#include "stguard/writer.h"

namespace stguard::cli {
int RunCanon(const CommandLine& line) {
  const std::string& in = line.operands[0];
  const std::string& out = line.operands[1];

  const Result<Checkpoint> checkpoint = Checkpoint::Open(in);
  if (!checkpoint.ok()) {
    PrintFileError("canon", in, checkpoint.error());
    return IsIoError(checkpoint.error(), OutOfMemoryIs::kIoError) ? kExitUsage : kExitInvalid;
  }
  if (out == "-") {
    if (const std::string refusal = StdoutRefusal(); !refusal.empty()) {
      std::fputs(("stguard canon: " + refusal + "\n").c_str(), stderr);
      return kExitUsage;
    }
    StdoutSink sink;
    if (Error error = WriteCanonical(*checkpoint, sink); !error.ok()) {
      PrintFileError("canon", "-", error);
      return IsIoError(error, OutOfMemoryIs::kIoError) ? kExitUsage : kExitInvalid;
    }
    return kExitOk;
  }
  PrintLeftoverNotes("canon", out);
  CanonicalWriteOptions options;
  options.release_source_pages = true;  // the checkpoint is a file mapping
  if (Error error = WriteCanonicalFile(*checkpoint, out, options); !error.ok()) {
    PrintFileError("canon", out, AboutOutput(out, error));
    // A valid checkpoint always has a canonical form, so any failure here is about
    // writing: the output is untouched.
    return kExitUsage;
  }
  return kExitOk;
}

}  // namespace stguard::cli
