// SPDX-License-Identifier: Apache-2.0
// OpenCheckpointWithHead: Checkpoint::Open for a caller that already read the file's first
// bytes (the conversion's sniff), so that they are not read twice.
#ifndef STGUARD_SRC_FORMAT_OPEN_WITH_HEAD_H_
#define STGUARD_SRC_FORMAT_OPEN_WITH_HEAD_H_

#include <cstddef>
#include <span>
#include <string>

#include "stguard/reader.h"

namespace stguard {

// OpenCheckpointWithHead is Checkpoint::Open of `path` whose first known_head.size() bytes
// are `known_head` (read from this file by the caller): only the rest of the length
// prefix and header is read. A head longer than the file is ignored.
Result<Checkpoint> OpenCheckpointWithHead(const std::string& path,
                                          std::span<const std::byte> known_head,
                                          const Options& options = {});

}  // namespace stguard

#endif  // STGUARD_SRC_FORMAT_OPEN_WITH_HEAD_H_
