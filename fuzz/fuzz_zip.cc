// SPDX-License-Identifier: Apache-2.0
// fuzz_zip: arbitrary bytes through the strict ZIP reader. A rejection has an offset
// inside the input; an accepted archive's records tile the file, have distinct names under
// one folder (distinct also ignoring ASCII case, as torch's lookup does), include
// data.pkl, and can be CRC-checked without reading out of bounds; its end record is the
// file's last 22 bytes, without a comment, so torch's reader (which takes the last end
// signature a backward scan meets) lands on the same record.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>

#include "fuzz_support.h"
#include "zip_mutator.h"
#include "zip/zip_archive.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const stguard_fuzz::ExactCopy input(data, size);
  stguard::Result<stguard::ZipArchive> archive = stguard::ZipArchive::Open(input.bytes());
  stguard_fuzz::CountExecution(archive.ok());  // the checks on accepted archives below
  if (!archive.ok()) {
    FUZZ_CHECK_MSG(archive.error().offset <= size, archive.error().ToString());
    return 0;
  }
  FUZZ_CHECK(archive->Find("data.pkl") != nullptr);
  FUZZ_CHECK(size >= 22 && std::memcmp(data + size - 22, "PK\x05\x06", 4) == 0 &&
             data[size - 2] == 0 && data[size - 1] == 0);
  std::set<std::string> names;
  std::set<std::string> folded_names;
  uint64_t covered = 0;
  for (const stguard::ZipRecord& record : archive->records()) {
    FUZZ_CHECK(names.insert(record.name).second);
    std::string folded = record.name;
    for (char& c : folded) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c;
    FUZZ_CHECK_MSG(folded_names.insert(folded).second, record.name);
    FUZZ_CHECK(record.name.rfind(archive->folder() + "/", 0) == 0);
    FUZZ_CHECK(record.data_offset <= size && record.size <= size - record.data_offset);
    FUZZ_CHECK(record.header_offset < record.data_offset);
    FUZZ_CHECK(archive->Find(record.name.substr(archive->folder().size() + 1)) == &record);
    covered += record.data_offset + record.size - record.header_offset;
    const stguard::Error crc = archive->VerifyCrc(record);
    FUZZ_CHECK(crc.ok() || crc.code == stguard::ErrorCode::kZipChecksum);
  }
  FUZZ_CHECK(covered <= size);
  return 0;
}

// Structure-aware mutation (zip_mutator.h): most inputs stay well-formed enough to reach the checks.
STGUARD_FUZZ_CUSTOM_MUTATORS(stguard_fuzz::mutator::MutateTorchCheckpoint,
                             stguard_fuzz::mutator::CrossOverTorchCheckpoint)
