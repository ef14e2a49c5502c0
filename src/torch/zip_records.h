// SPDX-License-Identifier: Apache-2.0
// torch/zip_records.h: which records a torch ZIP archive may hold, and what its format
// records must say.
//
// POLICY (torch/serialization.py _save and caffe2/serialize/inline_container.cc, torch 1.13
// to 2.x). torch.save writes, under the archive's folder:
//   data.pkl                the pickle
//   data/<key>              one record per storage
//   version or .data/version  the format version, "3\n" (the writer adds one if the caller
//                           wrote neither; the reader prefers .data/version)
//   byteorder               "little" or "big" (torch 2.1+; torch 2.1+ byte-swaps "big")
//   .format_version         "1" (torch 2.x)
//   .storage_alignment      the data alignment, "64" by default (torch 2.x)
//   .data/serialization_id  digits identifying the save (torch 2.x)
// Any other record can change which loader torch runs (constants.pkl sends torch.load to
// torch.jit.load, which runs TorchScript code even under weights_only=True), so
// CheckTorchRecords refuses it, naming it (kZipUnexpectedRecord). It also refuses what
// torch cannot read or stguard would read otherwise:
// - no version record (torch refuses the archive: kZipMissingRecord); a version that is
//   not "<n>\n" with n from 1 to 10, the versions torch 1.13 and later read
//   (kZipUnsupportedVersion); version and .data/version both present and different (torch
//   reads one, older readers the other);
// - byteorder other than exactly "little" (stguard copies storage bytes as they are:
//   kStorageMismatch);
// - .format_version other than "1", .storage_alignment other than a power of two written
//   in decimal, .data/serialization_id other than up to 64 digits (kZipUnsupportedVersion).
// Each format record's CRC-32 is checked before its value is read (torch's reader checks it
// too, so a record failing it is one torch refuses).
#ifndef STGUARD_SRC_TORCH_ZIP_RECORDS_H_
#define STGUARD_SRC_TORCH_ZIP_RECORDS_H_

#include <string_view>

#include "stguard/error.h"
#include "zip/zip_archive.h"

namespace stguard {

// kMaxTorchFileFormatVersion is the highest format version torch's reader accepts
// (caffe2/serialize/versions.h kMaxSupportedFileFormatVersion, 10 from torch 1.13 on);
// the lowest is 1.
inline constexpr uint64_t kMaxTorchFileFormatVersion = 10;

// IsStorageRecordPath says whether a record's path under the folder is a storage's
// ("data/<key>"): the records a remote read skips (every other record is small, and
// needed for the verdict).
inline bool IsStorageRecordPath(std::string_view path) { return path.starts_with("data/"); }

// CheckTorchRecords applies the POLICY above to an opened archive.
Error CheckTorchRecords(const ZipArchive& archive);

}  // namespace stguard

#endif  // STGUARD_SRC_TORCH_ZIP_RECORDS_H_
