// SPDX-License-Identifier: Apache-2.0
// JudgePickleZipSource: the verdict on a PyTorch ZIP checkpoint read by ranges, with the
// rules and the verdict of JudgePickleBytes (stguard/file_verdict.h).
#ifndef STGUARD_SRC_TORCH_ZIP_SOURCE_VERDICT_H_
#define STGUARD_SRC_TORCH_ZIP_SOURCE_VERDICT_H_

#include <cstdint>

#include "stguard/byte_source.h"
#include "stguard/file_verdict.h"

namespace stguard {

// JudgePickleZipSource judges a file the sniff found to be a PyTorch ZIP, reading its
// first 512 bytes (the tar test), its end records, central directory, data.pkl and format
// records (ZipArchive::OpenSource), never a whole file. A local source also has every
// storage record's local header read and its CRC-32 computed, as the mapped path does; a
// remote source does neither, and *unread_records counts the storage records it skipped
// (set as soon as the directory is read, also when a later rule fails).
PickleFileReport JudgePickleZipSource(const ByteSource& source, const TorchOptions& options,
                                      uint64_t* unread_records);

}  // namespace stguard

#endif  // STGUARD_SRC_TORCH_ZIP_SOURCE_VERDICT_H_
