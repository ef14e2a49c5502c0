// SPDX-License-Identifier: Apache-2.0
// stguard/io_error.h: whether an error is about reaching a file rather than its bytes, the
// one rule for the library, the CLI and every other caller.
#ifndef STGUARD_IO_ERROR_H_
#define STGUARD_IO_ERROR_H_

#include "stguard/error.h"
#include "stguard/export.h"

namespace stguard {

// OutOfMemoryIs says how IsIoError counts kOutOfMemory. Running out of memory is this
// machine's limit: no verdict on the file, yet not a file that cannot be reached. A caller
// asking "is there a verdict on the file?" (an exit status, whether to judge the file
// again) counts it as an I/O error (kIoError); a caller asking "could the path not be
// reached?" (lint could not run; the output folder may be missing) does not (kNotIoError).
enum class OutOfMemoryIs { kIoError, kNotIoError };

// IsIoError says whether `error` is about reaching a file: kIoError and kNotARegularFile,
// and kOutOfMemory as `out_of_memory` says. Every other code is about the bytes read.
STGUARD_API bool IsIoError(const Error& error, OutOfMemoryIs out_of_memory);

}  // namespace stguard

#endif  // STGUARD_IO_ERROR_H_
