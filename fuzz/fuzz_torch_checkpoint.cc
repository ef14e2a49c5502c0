// SPDX-License-Identifier: Apache-2.0
// fuzz_torch_checkpoint: arbitrary bytes as a whole torch checkpoint, in memory: format
// detection, ZIP or legacy container, pickle, tensor views, then every tensor streamed.
// Rejections have offsets inside the input; accepted tensors stream exactly their byte
// count (or fail their CRC-32), and ScanTorchBytes agrees with TorchCheckpoint.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "zip_mutator.h"
#include "stguard/torch_checkpoint.h"

namespace {

class CountingSink : public stguard::ByteSink {
 public:
  stguard::Error Write(std::span<const std::byte> bytes) override {
    count += bytes.size();
    return {};
  }
  uint64_t count = 0;
};

// Check returns whether the checkpoint opened, so that its tensors were streamed and checked.
bool Check(const stguard_fuzz::ExactCopy& input, const stguard::TorchOptions& options) {
  stguard::Result<stguard::TorchCheckpoint> checkpoint =
      stguard::TorchCheckpoint::FromBytes(input.bytes(), options);
  const stguard::TorchScanReport report = stguard::ScanTorchBytes(input.bytes(), options);
  if (!checkpoint.ok()) {
    FUZZ_CHECK_MSG(checkpoint.error().offset <= input.size(), checkpoint.error().ToString());
    FUZZ_CHECK_MSG(report.error.code == checkpoint.error().code &&
                       report.error.offset == checkpoint.error().offset,
                   report.error.ToString() + " vs " + checkpoint.error().ToString());
    return false;
  }
  FUZZ_CHECK(report.error.ok() || report.error.code == stguard::ErrorCode::kZipChecksum);
  FUZZ_CHECK(report.tensors.size() == checkpoint->tensors().size());
  bool any_crc_error = false;
  for (size_t k = 0; k < checkpoint->tensors().size(); ++k) {
    const stguard::TorchTensor& tensor = checkpoint->tensors()[k];
    FUZZ_CHECK(tensor.storage < checkpoint->storages().size());
    CountingSink sink;
    const stguard::Error error = checkpoint->StreamTensor(k, sink);
    if (error.ok()) {
      FUZZ_CHECK(sink.count == tensor.byte_len);
    } else {
      FUZZ_CHECK_MSG(error.code == stguard::ErrorCode::kZipChecksum, error.ToString());
      any_crc_error = true;
    }
  }
  if (any_crc_error) FUZZ_CHECK(report.error.code == stguard::ErrorCode::kZipChecksum);
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const stguard_fuzz::ExactCopy input(data, size);
  const bool root_opened = Check(input, {});
  stguard::TorchOptions nested;
  nested.key_path = {"state_dict"};
  const bool nested_opened = Check(input, nested);
  stguard_fuzz::CountExecution(root_opened || nested_opened);
  return 0;
}

// Structure-aware mutation (zip_mutator.h): most inputs stay well-formed enough to reach the checks.
STGUARD_FUZZ_CUSTOM_MUTATORS(stguard_fuzz::mutator::MutateTorchCheckpoint,
                             stguard_fuzz::mutator::CrossOverTorchCheckpoint)
