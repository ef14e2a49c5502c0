// SPDX-License-Identifier: Apache-2.0
// zip/zip_archive.h: a strict reader for the ZIP archives torch.save writes.
//
// POLICY (APPNOTE.TXT 6.3, as torch's writer caffe2/serialize/inline_container.cc uses it)
// torch stores every record uncompressed, aligns each record's data to 64 bytes with an
// extra field "FB" in the local header, writes data descriptors (flag bit 3) and always
// ends with ZIP64 end records. ZipArchive::Open accepts exactly that family of archives
// and refuses everything a second reader could interpret differently:
// - the end of central directory record must end the file, with an empty comment (torch's
//   reader takes the last end signature it finds, so one hidden in a comment would point
//   it elsewhere), and the central directory must be followed directly by the end records:
//   no trailing bytes;
// - one disk only (entries on disk 0); entry counts that agree between the classic and the
//   ZIP64 records; a central directory under 4 GiB (torch's reader's limit);
// - what torch's reader checks on the 32-bit fields before it reads ZIP64 values: unless
//   the compressed size is escaped, the 32-bit offset plus a local header plus that size
//   lie inside the file (an offset escaped beside a 32-bit size is refused);
// - method 0 (stored) only, compressed size == uncompressed size; flags other than bit 3
//   (data descriptor) and bit 11 (UTF-8 names) refused, encryption included;
// - every local header agrees with its central directory entry: name byte for byte,
//   method, flags, and the CRC and sizes (in the local header, or, with bit 3, in a data
//   descriptor that must carry its signature); with bit 3 the local header holds zeros
//   or the same values;
// - the records tile the file: the first local header is at offset 0, each record (header,
//   name, extra, data, descriptor) ends where the next begins, and the last ends where the
//   central directory starts: no overlap, no gap, no leading bytes;
// - names are unique, also ignoring ASCII case (torch's lookup ignores case), and of the
//   form "<folder>/<path>" with one folder for all records (any name: torch uses the
//   file's stem, others "archive"); no empty, "." or ".." components, no backslash, no
//   NUL; "<folder>/data.pkl" must be present.
// Which records an archive may hold, and what they say, is torch's rule, checked above
// this layer (torch/zip_records.h).
// The npz flavor (ZipFlavor::kNpz, what numpy's savez and savez_compressed write through
// Python's zipfile) keeps every rule above except these:
// - members stored (method 0) or deflated (method 8, with flag bits 1-2, the compression
//   level hint, allowed); bzip2, LZMA and every other method refused; a deflated member
//   may not claim more than kDeflateMaxRatio bytes per compressed byte (zip/inflate.h);
// - names are a plain file name, no folder: no '/', '\', NUL or "..", not empty
//   (kNpzMemberName); they are unique byte for byte (numpy's keys are case-sensitive);
// - names decode as Python's zipfile decodes them: flagged UTF-8 (bit 11), valid UTF-8;
//   unflagged (zipfile reads cp437), ASCII (kNpzMemberName). torch's reader compares
//   names as bytes, so the torch flavor keeps any bytes;
// - "version needed to extract" (its low byte: zipfile reads one byte) at most 63, as
//   zipfile requires (kZipUnsupported); torch's reader ignores the field;
// - no data.pkl is needed (which names an npz holds is checked by stguard/npz.h), and an
//   archive with no record at all is accepted (np.savez() with no arrays writes one).
// CRC-32s are not checked by Open (that would read every byte twice); callers check each
// record when they read it, with Crc32 or ZipArchive::VerifyCrc.
//
// BY RANGES (OpenSource). The same rules, over a ByteSource: the end records in one read
// (the last 98 bytes; as far back as a comment can reach when they are not a plain end
// record), the central directory in one read, then each record's local header. The
// records the caller wants (a torch archive's data.pkl and format records) are read in
// runs, one read per run of adjacent records, header to next header, and kept for
// RecordBytes. On a remote source the other records' local headers are not read: their
// order and the least room each needs (header, name, data, descriptor) are still checked
// from the central directory, the rest of the tiling and the local header's agreement are
// not, and unchecked() counts them. MEMORY: the central directory (under 4 GiB, and at
// most the file) plus the bytes of the runs read (at most the file); READS: 1-2 for the
// end records, 1 for the directory, 1 per run, and on a local source 1-2 per other record.
// With ZipLocalHeaders::kEvery a remote source reads every record's local header too (1-2
// small reads per record, never its data), as an npz check does to find each member's data.
#ifndef STGUARD_SRC_ZIP_ZIP_ARCHIVE_H_
#define STGUARD_SRC_ZIP_ZIP_ARCHIVE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "stguard/byte_source.h"
#include "stguard/error.h"

namespace stguard {

// ZipRecord is one stored file of the archive.
struct ZipRecord {
  std::string name;          // the full name, folder included
  uint64_t header_offset;    // where its local header starts
  uint64_t data_offset;      // where its bytes start (absolute)
  uint64_t size;             // its byte count (uncompressed)
  uint32_t crc32;            // the CRC-32 the central directory gives
  uint16_t method = 0;       // 0 stored, 8 deflated (the npz flavor only)
  uint64_t compressed_size;  // its byte count in the file (== size when stored)
  // local_checked: its local header was read and checked (false only for the records a
  // remote source skips, whose data_offset is then 0: unknown).
  bool local_checked = true;
};

// ZipFlavor chooses the family of archives Open accepts (see POLICY).
enum class ZipFlavor : uint8_t { kTorch, kNpz };

// kZipStored and kZipDeflated are the two compression methods stguard reads.
inline constexpr uint16_t kZipStored = 0;
inline constexpr uint16_t kZipDeflated = 8;

// kMaxZipRecords bounds the central directory (torch writes one record per storage).
inline constexpr uint64_t kMaxZipRecords = 1u << 24;

// ZipLocalHeaders says which local headers OpenSource reads from a remote source: only the
// wanted records' (kWanted), or every record's (kEvery: 1-2 small reads each, no data).
enum class ZipLocalHeaders : uint8_t { kWanted, kEvery };

class ZipArchive {
 public:
  // RecordFilter says, from a record's path under the folder ("data.pkl"), whether
  // OpenSource reads it even from a remote source.
  using RecordFilter = std::function<bool(std::string_view path)>;

  // Open checks the whole structure of `bytes` (see POLICY) and indexes the records. The
  // bytes are not copied and must outlive the archive.
  static Result<ZipArchive> Open(std::span<const std::byte> bytes,
                                 ZipFlavor flavor = ZipFlavor::kTorch);
  // OpenSource checks the archive `source` holds by ranges (see BY RANGES); `source`
  // must outlive the archive. *unchecked (when given) counts the records whose local
  // header was not read, also when a rule checked after them fails.
  static Result<ZipArchive> OpenSource(const ByteSource& source, ZipFlavor flavor,
                                       const RecordFilter& wanted,
                                       uint64_t* unchecked = nullptr,
                                       ZipLocalHeaders headers = ZipLocalHeaders::kWanted);

  // folder is the common top-level folder, without the slash.
  const std::string& folder() const { return folder_; }
  const std::vector<ZipRecord>& records() const { return records_; }
  // Find returns the record "<folder>/<path>", or nullptr.
  const ZipRecord* Find(std::string_view path) const;
  // directory_offset is where the central directory starts.
  uint64_t directory_offset() const { return directory_offset_; }
  // unchecked counts the records whose local header OpenSource did not read (remote).
  uint64_t unchecked() const { return unchecked_; }
  // Data returns a record's bytes as they are in the file (compressed when deflated), for
  // an archive opened over a span (Open) only.
  std::span<const std::byte> Data(const ZipRecord& record) const {
    return bytes_.subspan(record.data_offset, record.compressed_size);
  }
  // RecordBytes returns them for either path: over a source, from the runs kept or read
  // once and kept (valid as long as the archive). A record a remote source skipped is
  // kInvalidArgument.
  Result<std::span<const std::byte>> RecordBytes(const ZipRecord& record) const;
  // VerifyCrc computes a stored record's CRC-32 and returns kZipChecksum (at the record's
  // data offset) when it differs from the central directory's.
  Error VerifyCrc(const ZipRecord& record) const;

 private:
  friend struct ZipOpener;
  struct KeptBytes {
    uint64_t offset;
    std::vector<std::byte> bytes;
  };
  bool Kept(uint64_t offset, uint64_t len) const;
  std::span<const std::byte> KeptFrom(uint64_t offset) const;
  Error Keep(uint64_t offset, uint64_t len) const;

  std::span<const std::byte> bytes_;
  const ByteSource* source_ = nullptr;
  mutable std::vector<KeptBytes> kept_;  // over a source: the byte runs read
  std::vector<bool> wanted_;             // per record: the filter's answer
  uint64_t directory_offset_ = 0;
  uint64_t unchecked_ = 0;
  std::string folder_;
  std::vector<ZipRecord> records_;
  std::unordered_map<std::string, size_t> by_name_;  // full name -> index in records_
};

// Crc32 continues a CRC-32 (zlib's crc32; start with 0) over `bytes`.
uint32_t Crc32(uint32_t crc, std::span<const std::byte> bytes);

// Crc32OfRange computes the CRC-32 of `len` bytes at `offset` of `source`, read in chunks
// of at most 1 MiB (memory stays one chunk whatever `len`); a failed read is its error.
Result<uint32_t> Crc32OfRange(const ByteSource& source, uint64_t offset, uint64_t len);

}  // namespace stguard

#endif  // STGUARD_SRC_ZIP_ZIP_ARCHIVE_H_
