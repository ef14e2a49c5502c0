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

// LoadTorchContainer detects the format, checks the container, runs the main pickle and
// places every storage it names. `globals` receives the globals named, even on error.
Error LoadTorchContainer(std::span<const std::byte> bytes, LoadedPickle* out,
                         std::vector<GlobalUse>* globals);

}  // namespace stguard

#endif  // STGUARD_SRC_TORCH_CONTAINERS_H_
