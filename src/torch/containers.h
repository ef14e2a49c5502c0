// SPDX-License-Identifier: Apache-2.0
// torch/containers.h: the two containers around a torch pickle (ZIP and legacy stream),
// read into the pickle's value graph plus where each storage's bytes are.
#ifndef STGUARD_SRC_TORCH_CONTAINERS_H_
#define STGUARD_SRC_TORCH_CONTAINERS_H_

#include <cstdint>
#include <span>
#include <vector>

#include "pickle/pickle_reader.h"
#include "stguard/error.h"
#include "stguard/torch_checkpoint.h"
#include "zip/zip_archive.h"

namespace stguard {

// StoragePlacement is where one storage's bytes are, parallel to PickleResult::storages.
struct StoragePlacement {
  uint64_t data_offset = 0;
  uint64_t byte_len = 0;
  bool has_crc = false;  // ZIP records carry a CRC-32; legacy storages do not
  uint32_t crc32 = 0;
};

struct LoadedPickle {
  TorchFormat format = TorchFormat::kUnknown;
  PickleResult pickle;
  std::vector<StoragePlacement> placements;
};

// ContainerOf picks which of the torch reader's containers to read from the first bytes.
// It is not a format detector (SniffFormat, stguard/sniff.h, says what a file is, for every
// command): a file reaches the torch reader only once the sniffer found it pickle-bearing,
// and this picks the reader's path (a ZIP, the legacy stream, a bare pickle of protocol
// 2-5; anything else is scanned as a pickle of protocol 0 or 1 by file_verdict.cc).
TorchFormat ContainerOf(std::span<const std::byte> bytes);

// BarePickleError is the outcome of a bare pickle read to its STOP: kRawPickle (it holds
// no tensor data), or kTrailingContent when bytes follow its STOP. A loader that calls
// pickle.load again on the same stream (joblib, a reused Unpickler, a loop) runs
// whatever follows, and no layout of one pickle continues after STOP; the
// layouts that do (the legacy stream, data.pkl in a ZIP) are read by their own path,
// each record to its exact end. `pickle` was read from the start of `bytes`.
Error BarePickleError(const PickleResult& pickle, std::span<const std::byte> bytes);

// LoadTorchContainer detects the format, checks the container, runs the main pickle and
// places every storage it names. `globals` receives the globals named, even on error.
Error LoadTorchContainer(std::span<const std::byte> bytes, LoadedPickle* out,
                         std::vector<GlobalUse>* globals);

// LoadZipArchive is LoadTorchContainer's ZIP path on an archive already opened, over a
// mapping or by ranges: the record set and format records checked (torch/zip_records.h),
// data.pkl read (its CRC-32 checked) and every storage it names placed. A storage whose
// record a remote source did not read is placed at offset 0 (unknown), its CRC-32 kept.
Error LoadZipArchive(const ZipArchive& archive, LoadedPickle* out,
                     std::vector<GlobalUse>* globals);

}  // namespace stguard

#endif  // STGUARD_SRC_TORCH_CONTAINERS_H_
