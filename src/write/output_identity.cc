// SPDX-License-Identifier: Apache-2.0
// CheckOutputIsNotInput: a conversion never writes over the file it reads.
#include "stguard/writer.h"

#include <sys/stat.h>

namespace stguard {

Error CheckOutputIsNotInput(const std::string& in, const std::string& out) {
  struct stat input;
  struct stat output;
  // stat follows symbolic links, as opening does: a link to IN is IN. A missing OUT is a
  // new file; a missing IN is the conversion's own error when it opens it.
  if (::stat(in.c_str(), &input) != 0 || ::stat(out.c_str(), &output) != 0) return {};
  if (input.st_dev != output.st_dev || input.st_ino != output.st_ino) return {};
  return Error{ErrorCode::kInvalidArgument, 0,
               "OUT is IN: the output is the input file (the same path, a hard link or a "
               "symbolic link to it); write to a new path",
               "'" + in + "' and '" + out + "' are the same file"};
}

}  // namespace stguard
