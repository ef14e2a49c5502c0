// SPDX-License-Identifier: Apache-2.0
// Whether an error is about reaching a file (see stguard/io_error.h).
#include "stguard/io_error.h"

namespace stguard {

bool IsIoError(const Error& error, OutOfMemoryIs out_of_memory) {
  if (error.code == ErrorCode::kOutOfMemory) return out_of_memory == OutOfMemoryIs::kIoError;
  return error.code == ErrorCode::kIoError || error.code == ErrorCode::kNotARegularFile;
}

}  // namespace stguard
