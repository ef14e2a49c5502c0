// SPDX-License-Identifier: Apache-2.0
// The record set of a torch ZIP archive and the values of its format records (see
// zip_records.h).
#include "torch/zip_records.h"

#include <algorithm>
#include <string>
#include <string_view>

namespace stguard {
namespace {

// kMaxFormatRecordLen bounds the format records (version, byteorder, ...): torch writes a
// few bytes in each; a longer one is refused before its CRC is computed.
constexpr uint64_t kMaxFormatRecordLen = 64;
constexpr uint64_t kMaxStorageAlignment = uint64_t{1} << 30;

std::string_view PathOf(const ZipArchive& archive, const ZipRecord& record) {
  return std::string_view(record.name).substr(archive.folder().size() + 1);
}

// IsTorchSaveRecord says whether torch.save writes a record of this path.
bool IsTorchSaveRecord(std::string_view path) {
  if (path == "data.pkl" || path == "version" || path == ".data/version" ||
      path == "byteorder" || path == ".format_version" || path == ".storage_alignment" ||
      path == ".data/serialization_id") {
    return true;
  }
  // data/<key>: one storage, directly under data/ (the ZIP reader refused empty parts).
  constexpr std::string_view kData = "data/";
  return path.starts_with(kData) && path.find('/', kData.size()) == std::string_view::npos;
}

// ParseDecimal reads `text` as a decimal number without sign, spaces or leading zeros
// (what torch writes), up to 2^62; false otherwise.
bool ParseDecimal(std::string_view text, uint64_t* value) {
  if (text.empty() || text.size() > 18 || (text[0] == '0' && text.size() > 1)) return false;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  *value = v;
  return true;
}

// ReadFormatRecord returns a small record's bytes after checking its size and CRC-32.
Error ReadFormatRecord(const ZipArchive& archive, const ZipRecord& record,
                       std::string_view* text) {
  if (record.size > kMaxFormatRecordLen) {
    return Error{ErrorCode::kZipUnsupportedVersion, record.data_offset,
                 "format record longer than torch writes", record.name};
  }
  if (Error error = archive.VerifyCrc(record); !error.ok()) return error;
  Result<std::span<const std::byte>> read = archive.RecordBytes(record);
  if (!read.ok()) return read.error();
  const std::span<const std::byte> bytes = *read;
  *text = {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
  return {};
}

Error VersionError(const ZipRecord& record, std::string_view text) {
  return Error{ErrorCode::kZipUnsupportedVersion, record.data_offset,
               "not a format version torch reads (\"<n>\\n\", n from 1 to 10)",
               record.name + ": \"" + std::string(text.substr(0, 16)) + "\""};
}

// CheckVersions: version and/or .data/version, each "<n>\n" with n in [1, 10], the same
// text when both are present.
// A missing record is reported at the central directory (where it would be listed), as a
// missing data.pkl is: an offset both paths know, also when a remote source did not read
// the storage records' local headers.
Error CheckVersions(const ZipArchive& archive) {
  const ZipRecord* records[] = {archive.Find("version"), archive.Find(".data/version")};
  if (records[0] == nullptr && records[1] == nullptr) {
    return Error{ErrorCode::kZipMissingRecord, archive.directory_offset(),
                 "no version record (torch refuses an archive without one)",
                 archive.folder() + "/version"};
  }
  std::string_view texts[2];
  for (int k = 0; k < 2; ++k) {
    if (records[k] == nullptr) continue;
    if (Error error = ReadFormatRecord(archive, *records[k], &texts[k]); !error.ok()) {
      return error;
    }
    uint64_t version = 0;
    if (!texts[k].ends_with('\n') ||
        !ParseDecimal(texts[k].substr(0, texts[k].size() - 1), &version) || version < 1 ||
        version > kMaxTorchFileFormatVersion) {
      return VersionError(*records[k], texts[k]);
    }
  }
  if (records[0] != nullptr && records[1] != nullptr && texts[0] != texts[1]) {
    return Error{ErrorCode::kZipUnsupportedVersion, records[1]->data_offset,
                 "version and .data/version differ (torch reads one, older readers the other)",
                 records[1]->name};
  }
  return {};
}

// CheckOtherFormatRecords: byteorder, .format_version, .storage_alignment,
// .data/serialization_id, where present.
Error CheckOtherFormatRecords(const ZipArchive& archive) {
  std::string_view text;
  if (const ZipRecord* order = archive.Find("byteorder"); order != nullptr) {
    if (order->size > kMaxFormatRecordLen) {
      return Error{ErrorCode::kStorageMismatch, order->data_offset,
                   "storages are not little-endian (byteorder record)", order->name};
    }
    if (Error error = ReadFormatRecord(archive, *order, &text); !error.ok()) return error;
    if (text != "little") {
      return Error{ErrorCode::kStorageMismatch, order->data_offset,
                   "storages are not little-endian (byteorder record)",
                   order->name + ": \"" + std::string(text.substr(0, 16)) + "\""};
    }
  }
  if (const ZipRecord* format = archive.Find(".format_version"); format != nullptr) {
    if (Error error = ReadFormatRecord(archive, *format, &text); !error.ok()) return error;
    if (text != "1") {
      return Error{ErrorCode::kZipUnsupportedVersion, format->data_offset,
                   ".format_version is not \"1\", the one torch.save writes", format->name};
    }
  }
  if (const ZipRecord* align = archive.Find(".storage_alignment"); align != nullptr) {
    if (Error error = ReadFormatRecord(archive, *align, &text); !error.ok()) return error;
    uint64_t value = 0;
    if (!ParseDecimal(text, &value) || value == 0 || value > kMaxStorageAlignment ||
        (value & (value - 1)) != 0) {
      return Error{ErrorCode::kZipUnsupportedVersion, align->data_offset,
                   ".storage_alignment is not a power of two written in decimal",
                   align->name};
    }
  }
  if (const ZipRecord* id = archive.Find(".data/serialization_id"); id != nullptr) {
    if (Error error = ReadFormatRecord(archive, *id, &text); !error.ok()) return error;
    const bool digits =
        !text.empty() && text.find_first_not_of("0123456789") == std::string_view::npos;
    if (!digits) {
      return Error{ErrorCode::kZipUnsupportedVersion, id->data_offset,
                   ".data/serialization_id is not digits", id->name};
    }
  }
  return {};
}

}  // namespace

Error CheckTorchRecords(const ZipArchive& archive) {
  for (const ZipRecord& record : archive.records()) {
    if (!IsTorchSaveRecord(PathOf(archive, record))) {
      return Error{ErrorCode::kZipUnexpectedRecord, record.header_offset,
                   "record torch.save never writes (it can send torch.load down another "
                   "path, e.g. constants.pkl to torch.jit.load)",
                   record.name};
    }
  }
  if (Error error = CheckVersions(archive); !error.ok()) return error;
  return CheckOtherFormatRecords(archive);
}

}  // namespace stguard
