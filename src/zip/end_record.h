// SPDX-License-Identifier: Apache-2.0
// zip/end_record.h: the one search for a ZIP archive's end of central directory record,
// shared by the sniffer's lenient reading (what a loader takes the archive to hold) and the
// strict reader (zip_archive.h), and the one decoding of its fields.
//
// The record (APPNOTE 4.3.16) is 22 bytes, then a comment of up to 65,535 bytes, so it
// starts within the last 22 + 65,535 bytes of the file. Readers differ on which signature
// they take: miniz (torch's reader) and Python's zipfile take the last one scanning back,
// whatever its comment length says (kLastSignature); the strict reader takes the last one
// whose comment ends exactly at the end of the file (kEndsFile), and then refuses any
// comment, so that both readers see the same record.
#ifndef STGUARD_SRC_ZIP_END_RECORD_H_
#define STGUARD_SRC_ZIP_END_RECORD_H_

#include <cstddef>
#include <cstdint>
#include <span>

namespace stguard {

inline constexpr size_t kZipEndLen = 22;
inline constexpr size_t kZipMaxCommentLen = 0xFFFF;
// kZipEndSearchLen is how far from the end of the file the record can start.
inline constexpr size_t kZipEndSearchLen = kZipEndLen + kZipMaxCommentLen;
inline constexpr size_t kZip64LocatorLen = 20;
inline constexpr size_t kZip64EndLen = 56;

enum class ZipEndRule : uint8_t { kLastSignature, kEndsFile };

// FindZipEnd returns the absolute offset of the end record `rule` takes, searching `tail`,
// the last bytes of a file of `file_size` bytes (the search covers what of the last
// kZipEndSearchLen bytes `tail` holds); UINT64_MAX when there is none.
uint64_t FindZipEnd(std::span<const std::byte> tail, uint64_t file_size, ZipEndRule rule);

// ZipEndFields are the classic record's fields (the 0xFFFF.. escapes kept as they are).
struct ZipEndFields {
  uint16_t disk;
  uint16_t directory_disk;
  uint64_t entries_here;
  uint64_t entries;
  uint64_t directory_len;
  uint64_t directory_offset;
  uint16_t comment_len;
};

// ReadZipEndFields decodes the kZipEndLen bytes at `record` (the signature included).
ZipEndFields ReadZipEndFields(const std::byte* record);

}  // namespace stguard

#endif  // STGUARD_SRC_ZIP_END_RECORD_H_
