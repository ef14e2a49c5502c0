// SPDX-License-Identifier: Apache-2.0
// fuzz_zip: arbitrary bytes through the strict ZIP reader. A rejection has an offset
// inside the input; an accepted archive's records tile the file, have distinct names under
// one folder, include data.pkl, and can be CRC-checked without reading out of bounds.
#include <cstddef>
#include <cstdint>
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
  std::set<std::string> names;
  uint64_t covered = 0;
  for (const stguard::ZipRecord& record : archive->records()) {
    FUZZ_CHECK(names.insert(record.name).second);
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
