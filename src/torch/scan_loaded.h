// SPDX-License-Identifier: Apache-2.0
// ScanLoaded: the part of a torch scan that follows loading the container, shared by the
// mapped path (ScanTorchBytes, ScanTorchFile, ScanTorchSniffed) and the ZIP read by ranges.
#ifndef STGUARD_SRC_TORCH_SCAN_LOADED_H_
#define STGUARD_SRC_TORCH_SCAN_LOADED_H_

#include <cstdint>
#include <span>
#include <vector>

#include "stguard/byte_source.h"
#include "stguard/mapped_file.h"
#include "stguard/torch_checkpoint.h"
#include "torch/containers.h"

namespace stguard {

// ScanLoaded reports on a container LoadTorchContainer (or LoadZipArchive) loaded with
// `load_error`: globals, storages, the selected tensors (SelectTensors against a file of
// `file_size` bytes), then every ZIP storage's CRC-32, computed on bytes read from
// `crc_source` in one fixed 1 MiB buffer. A null `crc_source` (a remote source, which does
// not read the storages) leaves the CRC-32s unchecked: the caller says so.
TorchScanReport ScanLoaded(const Error& load_error, const LoadedPickle& loaded,
                           const std::vector<GlobalUse>& uses, uint64_t file_size,
                           const ByteSource* crc_source, const TorchOptions& options);

// ScanTorchSniffed is ScanTorchBytes over bytes SniffFormat already judged (`sniffed`), so
// the verdict and the scan sniff once. `file`, when given, holds `bytes` (JudgePickleFile
// judges the same mapping: the file is mapped once) and the storages' CRC-32s are computed
// on bytes read from it with pread (a file truncated meanwhile is kIoError).
TorchScanReport ScanTorchSniffed(Format sniffed, std::span<const std::byte> bytes,
                                 const MappedFile* file, const TorchOptions& options);

}  // namespace stguard

#endif  // STGUARD_SRC_TORCH_SCAN_LOADED_H_
