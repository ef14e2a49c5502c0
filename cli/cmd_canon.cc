// SPDX-License-Identifier: Apache-2.0
// stguard canon IN OUT: validate IN strictly, then write its canonical form to OUT.
//
// The data is streamed from IN's mapping into a temporary file beside OUT, which replaces
// OUT only once complete and synced; so peak memory does not depend on the data size, and
// OUT may be IN itself (the mapping keeps the old file's inode alive).
#include <cstdio>
#include <string>
#include <vector>

#include "commands.h"
#include "output.h"
#include "stguard/reader.h"
#include "stguard/writer.h"

namespace stguard::cli {
namespace {

constexpr char kCanonUsage[] = "usage: stguard canon IN OUT\n";


}  // namespace

int RunCanon(Args args) {
  std::vector<std::string_view> files;
  for (std::string_view arg : args) {
    if (arg == "-h" || arg == "--help") {
      std::fputs(kCanonUsage, stdout);
      return kExitOk;
    }
    if (arg.size() > 1 && arg[0] == '-') {
      std::fprintf(stderr, "stguard canon: unknown option '%s'\n%s",
                   PrintableText(arg).c_str(), kCanonUsage);
      return kExitUsage;
    }
    files.push_back(arg);
  }
  if (files.size() != 2) {
    std::fputs(kCanonUsage, stderr);
    return kExitUsage;
  }
  const std::string in(files[0]);
  const std::string out(files[1]);

  const Result<Checkpoint> checkpoint = Checkpoint::Open(in);
  if (!checkpoint.ok()) {
    PrintFileError("canon", in, checkpoint.error());
    return IsIoError(checkpoint.error()) ? kExitUsage : kExitInvalid;
  }
  CanonicalWriteOptions options;
  options.release_source_pages = true;  // the checkpoint is a file mapping
  if (Error error = WriteCanonicalFile(*checkpoint, out, options); !error.ok()) {
    PrintFileError("canon", out, error);
    // A valid checkpoint always has a canonical form, so any failure here is about
    // writing: the output is untouched.
    return kExitUsage;
  }
  return kExitOk;
}

}  // namespace stguard::cli
