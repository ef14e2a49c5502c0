// SPDX-License-Identifier: Apache-2.0
// zip_mutator.h: structure-aware mutation of torch checkpoints, for fuzz_zip and
// fuzz_torch_checkpoint.
//
// Why: a ZIP archive repeats every record's name, sizes, CRC-32 and offset in two places,
// so a byte-level change almost always breaks the archive before the pickle inside is
// read, and the archive's CRC-32 of data.pkl then refuses every pickle mutation. These
// functions decode the archive leniently (through the central directory when it can be
// found, else by walking local headers) into records (name, bytes), change them, and
// encode a fresh archive in torch's layout with every size, offset and CRC-32 recomputed:
// - most often data.pkl's pickle is mutated as a structure (pickle_mutator.h);
// - records are renamed (another or no top-level folder, "..", a duplicate, a twin
//   differing only in case, data.pkl moved), dropped, duplicated, reordered, or their
//   bytes cut or grown (storages that no longer match their element count); torch's
//   format records (version, .data/version, byteorder, .format_version,
//   .storage_alignment, .data/serialization_id) and TorchScript's (constants.pkl, code/)
//   come and go, with values torch writes and values it refuses or reads otherwise;
// - the archive is written with or without data descriptors and 64-byte alignment
//   padding, and 1 time in 8 one lie is told (a bad CRC-32, a central-directory name,
//   method or size that differs from the local header, compression, a wrong offset or
//   one escaped to 0xFFFFFFFF, bytes before or after the archive, a second end record
//   in the end record's comment).
// A legacy checkpoint (a run of pickles, then raw storage bytes) has its main pickle or
// storage-key list mutated and the rest kept. Anything else goes to the byte-level
// mutator half the time and is replaced by a small torch.save-like archive otherwise.
#ifndef STGUARD_FUZZ_ZIP_MUTATOR_H_
#define STGUARD_FUZZ_ZIP_MUTATOR_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mutator_json.h"

namespace stguard_fuzz::mutator {

// ZipRecordModel is one archive member: its full name and its stored bytes.
struct ZipRecordModel {
  std::string name;
  std::string bytes;
};

// DecodeZip reads the records of `bytes`, leniently. Returns false when no record is found.
bool DecodeZip(std::string_view bytes, std::vector<ZipRecordModel>* records);

// ZipLayout says how EncodeZip writes the archive.
struct ZipLayout {
  bool data_descriptors = false;  // torch's writer: zero sizes in local headers
  bool align_64 = false;          // torch's writer: data padded to 64 bytes (extra field)
};

// EncodeZip writes a stored, consistent archive of `records` in order.
std::string EncodeZip(const std::vector<ZipRecordModel>& records, const ZipLayout& layout);

// TorchArchive returns the records of a small torch.save archive: "archive/data.pkl"
// (pickle_mutator.h's StateDictPickle), "archive/data/0" (8 bytes), "archive/version".
std::vector<ZipRecordModel> TorchArchive();

// MutateTorchCheckpoint and CrossOverTorchCheckpoint are the bodies of the libFuzzer hooks
// of fuzz_zip and fuzz_torch_checkpoint.
size_t MutateTorchCheckpoint(uint8_t* data, size_t size, size_t max_size, unsigned seed);
size_t CrossOverTorchCheckpoint(const uint8_t* data1, size_t size1, const uint8_t* data2,
                                size_t size2, uint8_t* out, size_t max_out_size,
                                unsigned seed);

}  // namespace stguard_fuzz::mutator

#endif  // STGUARD_FUZZ_ZIP_MUTATOR_H_
