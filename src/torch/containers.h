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
#include "stguard/sniff.h"
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

// ContainerOf picks which of the torch reader's containers to read, from the format
// SniffFormat (stguard/sniff.h, the one sniffer) found in `bytes`: a ZIP for a file starting
// with a local header, the legacy stream for one starting with its magic pickle, a bare
// pickle of protocol 2-5; anything else kUnknown (a protocol 0 or 1 pickle is scanned by
// file_verdict.cc).
TorchFormat ContainerOf(Format sniffed, std::span<const std::byte> bytes);

// BarePickleError is the outcome of a bare pickle read to its STOP: kRawPickle (it holds
// no tensor data), or kTrailingContent when bytes follow its STOP. A loader that calls
// pickle.load again on the same stream (joblib, a reused Unpickler, a loop) runs
// whatever follows, and no layout of one pickle continues after STOP; the
// layouts that do (the legacy stream, data.pkl in a ZIP) are read by their own path,
// each record to its exact end. `pickle` was read from the start of `bytes`.
Error BarePickleError(const PickleResult& pickle, std::span<const std::byte> bytes);

// LoadTorchContainer takes the container SniffFormat found in `bytes` (`sniffed`), checks
// it, runs the main pickle and places every storage it names. `globals` receives the globals named, even on error.
Error LoadTorchContainer(Format sniffed, std::span<const std::byte> bytes, LoadedPickle* out,
                         std::vector<GlobalUse>* globals);

// LoadZipArchive is LoadTorchContainer's ZIP path on an archive already opened, over a
// mapping or by ranges: the record set and format records checked (torch/zip_records.h),
// data.pkl read (its CRC-32 checked) and every storage it names placed. A storage whose
// record a remote source did not read is placed at offset 0 (unknown), its CRC-32 kept.
Error LoadZipArchive(const ZipArchive& archive, LoadedPickle* out,
                     std::vector<GlobalUse>* globals);

}  // namespace stguard

#endif  // STGUARD_SRC_TORCH_CONTAINERS_H_
