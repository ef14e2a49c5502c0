// SPDX-License-Identifier: Apache-2.0
// fuzz_torch_checkpoint: arbitrary bytes as a whole torch checkpoint, in memory: format
// detection, ZIP or legacy container, pickle, tensor views, then every tensor streamed.
// Rejections have offsets inside the input; accepted tensors stream exactly their byte
// count (or fail their CRC-32), ScanTorchBytes agrees with TorchCheckpoint, and no accepted
// file is also a tar archive to torch. An accepted ZIP checkpoint holds only the records
// torch.save writes, a version record torch reads ("<n>\n", n from 1 to 10) and no
// byteorder other than "little", so torch.load takes the same path stguard read.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_support.h"
#include "zip_mutator.h"
#include "stguard/torch_checkpoint.h"
#include "zip/zip_archive.h"

namespace {

// IsTorchSaveRecord is the oracle's own list of the records torch.save writes.
bool IsTorchSaveRecord(std::string_view path) {
  for (const char* name : {"data.pkl", "version", ".data/version", "byteorder",
                           ".format_version", ".storage_alignment",
                           ".data/serialization_id"}) {
    if (path == name) return true;
  }
  return path.size() > 5 && path.starts_with("data/") &&
         path.find('/', 5) == std::string_view::npos;
}

bool IsReadableVersion(std::string_view text) {
  for (int n = 1; n <= 10; ++n) {
    if (text == std::to_string(n) + "\n") return true;
  }
  return false;
}

// CheckRecordSet applies the oracle to a ZIP checkpoint that opened.
void CheckRecordSet(const stguard_fuzz::ExactCopy& input) {
  stguard::Result<stguard::ZipArchive> archive = stguard::ZipArchive::Open(input.bytes());
  FUZZ_CHECK(archive.ok());
  auto text = [&](const stguard::ZipRecord& record) {
    const std::span<const std::byte> bytes = archive->Data(record);
    return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  };
  for (const stguard::ZipRecord& record : archive->records()) {
    const std::string path = record.name.substr(archive->folder().size() + 1);
    FUZZ_CHECK_MSG(IsTorchSaveRecord(path), record.name);
    if (path == "version" || path == ".data/version") {
      FUZZ_CHECK_MSG(IsReadableVersion(text(record)), text(record));
    }
    if (path == "byteorder") FUZZ_CHECK(text(record) == "little");
  }
  FUZZ_CHECK(archive->Find("version") != nullptr || archive->Find(".data/version") != nullptr);
}

class CountingSink : public stguard::ByteSink {
 public:
  stguard::Error Write(std::span<const std::byte> bytes) override {
    count += bytes.size();
    return {};
  }
  uint64_t count = 0;
};

// IsCanonicalTarHeader says whether the first 512 bytes carry the checksum tarfile itself
// writes ("%06o\0 " or plain octal digits, of the unsigned or signed byte sum with the
// field as spaces): a narrower test than the reader's, written separately, so that an
// accepted file failing it shows the reader's tar test missed one.
bool IsCanonicalTarHeader(std::string_view bytes) {
  if (bytes.size() < 512) return false;
  int64_t unsigned_sum = 256, signed_sum = 256;
  for (size_t k = 0; k < 512; ++k) {
    if (k >= 148 && k < 156) continue;
    unsigned_sum += static_cast<uint8_t>(bytes[k]);
    signed_sum += static_cast<int8_t>(bytes[k]);
  }
  int64_t stored = 0;
  size_t k = 148;
  for (; k < 156 && bytes[k] >= '0' && bytes[k] <= '7'; ++k) stored = stored * 8 + (bytes[k] - '0');
  if (k == 148 || (k < 156 && bytes[k] != '\0' && bytes[k] != ' ')) return false;
  return stored == unsigned_sum || stored == signed_sum;
}

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
  FUZZ_CHECK(!IsCanonicalTarHeader(input.text()));
  if (checkpoint->format() == stguard::TorchFormat::kZip) CheckRecordSet(input);
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
