// SPDX-License-Identifier: Apache-2.0
// SniffSourcePrefix: SniffSource that keeps the prefix it read, so the format's reader
// can start from those bytes instead of asking the source for them again.
#ifndef STGUARD_SRC_SNIFF_SNIFF_SOURCE_H_
#define STGUARD_SRC_SNIFF_SNIFF_SOURCE_H_

#include <cstddef>
#include <vector>

#include "stguard/byte_source.h"
#include "stguard/sniff.h"

namespace stguard {

// SniffSourcePrefix sniffs `source`, leaving in *prefix (empty on entry) the file's first
// bytes it read: at least the first min(size, 512), more only as far as the pickle walk
// needed (a safetensors header is not read whole). The caller hands them to the reader
// (PrefixedSource), so no byte of the prefix is read twice.
Result<Format> SniffSourcePrefix(const ByteSource& source, std::vector<std::byte>* prefix);

}  // namespace stguard

#endif  // STGUARD_SRC_SNIFF_SNIFF_SOURCE_H_
