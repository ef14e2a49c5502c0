// SPDX-License-Identifier: Apache-2.0
// OpenCheckpointWithHead: Checkpoint::Open for a caller that already opened the file and
// read its first bytes (the conversion's sniff), so that the file is opened once and no
// byte is read twice.
#ifndef STGUARD_SRC_FORMAT_OPEN_WITH_HEAD_H_
#define STGUARD_SRC_FORMAT_OPEN_WITH_HEAD_H_

#include <cstddef>
#include <memory>
#include <span>
#include <string>

#include "stguard/mapped_file.h"
#include "stguard/reader.h"

namespace stguard {

// OpenCheckpointWithHead is Checkpoint::Open of the file the caller opened (`file`) and
// whose first known_head.size() bytes it read (`known_head`): only the rest of the length
// prefix and header is read, from that same open file, and the checkpoint keeps it for
// ReadData, so a path replaced since the caller opened it is never read. A `file` opened
// unmapped (MappedFile::OpenUnmapped) stays so: the tensors' data spans are empty and
// ReadData reads by pread, each byte once. A head longer than the file is ignored.
Result<Checkpoint> OpenCheckpointWithHead(std::unique_ptr<MappedFile> file,
                                          std::span<const std::byte> known_head,
                                          const Options& options = {});

}  // namespace stguard

#endif  // STGUARD_SRC_FORMAT_OPEN_WITH_HEAD_H_
