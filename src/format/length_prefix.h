// SPDX-License-Identifier: Apache-2.0
// Stage 1: the 8-byte length prefix.
#ifndef STGUARD_SRC_FORMAT_LENGTH_PREFIX_H_
#define STGUARD_SRC_FORMAT_LENGTH_PREFIX_H_

#include <cstddef>
#include <cstdint>
#include <span>

#include "stguard/error.h"
#include "stguard/options.h"

namespace stguard {

// ReadLengthPrefix reads N, the header length, from the first 8 bytes of `file` and checks
// it against the options' cap and the real file size, so that no later stage ever trusts
// N before it is known to fit. On success sets *out_header_len and returns an ok Error.
Error ReadLengthPrefix(std::span<const std::byte> file, const Options& options,
                       uint64_t* out_header_len);
// ReadLengthPrefix is the same check for a file read piecewise: `prefix` holds its first
// min(8, file_size) bytes.
Error ReadLengthPrefix(std::span<const std::byte> prefix, uint64_t file_size,
                       const Options& options, uint64_t* out_header_len);

}  // namespace stguard

#endif  // STGUARD_SRC_FORMAT_LENGTH_PREFIX_H_
