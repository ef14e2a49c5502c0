// SPDX-License-Identifier: Apache-2.0
// stguard/npz.h: a strict reader for NumPy's .npz archives (np.savez, np.savez_compressed),
// which never evaluates anything and inflates with a bounded decoder of its own.
//
// POLICY: an .npz is accepted when it is a ZIP archive of the family Python's zipfile
// writes for numpy, every rule of the strict ZIP reader applying (src/zip/zip_archive.h,
// npz flavor): end record ending the file without comment, no byte before the first
// record, between records or after the end record, local and central headers agreeing,
// ZIP64 extra fields and data descriptors accepted, one disk. In addition:
// - every member is stored or deflated (bzip2, LZMA, encryption: kZipUnsupported), and a
//   deflated member's stream is valid DEFLATE ending exactly at its last byte and giving
//   exactly its declared size (kDeflateData; src/zip/inflate.h);
// - every member's CRC-32 matches (kZipChecksum): check reads the whole archive (a remote
//   source's check does not: see ReadNpzSource);
// - every member is named "<key>.npy", the key non-empty and without '/', '\', NUL or
//   "..", each name once (kNpzMemberName, kZipDuplicateName);
// - a name is its key as Python's zipfile decodes it: flagged UTF-8 (bit 11), valid UTF-8
//   (zipfile refuses others); unflagged, ASCII (zipfile reads it as cp437, so its bytes
//   would not be numpy's key, and two names could become one) (kNpzMemberName); the
//   local header's name and flags equal the central directory's (kZipHeaderMismatch);
//   a central record's "version needed to extract" low byte at most 63, zipfile's
//   MAX_EXTRACT_VERSION (kZipUnsupported);
// - no two members answer to one numpy key: NpzFile[key] looks the raw member name up
//   before "<key>.npy", so members "x.npy" and "x.npy.npy" (np.savez(f, x=A,
//   **{"x.npy": B})) both answer to key "x.npy" (kZipDuplicateName);
// - an archive with no member (np.savez(f), which starts "PK\5\6") is valid: no array;
// - every member is a valid .npy (stguard/npy.h, every rule; an object array is
//   kNpyObjectArray: loading it would unpickle, and so run, code).
//
// BOUNDS: a deflated member may claim at most kDeflateMaxRatio (1,032) bytes per
// compressed byte, what DEFLATE itself can reach, and inflating stops at the declared size:
// time is linear in the archive (at most 1,032 output bytes per input byte). Memory is the
// central directory's index plus one fixed buffer (about 110 KiB: the inflate window and
// chunk, and one .npy header), whatever a member's size.
#ifndef STGUARD_NPZ_H_
#define STGUARD_NPZ_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "stguard/byte_source.h"
#include "stguard/error.h"
#include "stguard/export.h"
#include "stguard/npy.h"

namespace stguard {

// NpzMember is one array of a valid .npz.
struct STGUARD_API NpzMember {
  std::string key;               // the member's name without ".npy"
  bool compressed = false;       // deflated (else stored)
  uint64_t header_offset = 0;    // the member's local header in the archive
  uint64_t data_offset = 0;      // where its bytes (compressed or not) start in the archive
  uint64_t compressed_size = 0;  // its bytes in the archive
  uint32_t crc32 = 0;            // the CRC-32 of its .npy bytes
  // array describes the member's .npy; its offsets count from the start of the .npy
  // (add data_offset for a stored member's place in the archive).
  NpyArrayInfo array;
};

// NpzInfo is a valid .npz: its members in central directory order.
struct STGUARD_API NpzInfo {
  std::vector<NpzMember> members;
};

// NpzDepth says how much of each deflated member ParseNpz reads. kWhole: all of it (the
// stream and the CRC-32 checked: the archive is valid). kHeaders: only the first bytes,
// enough for its .npy header (every rule but the stream's end and the CRC-32); the caller
// must then pass every deflated member through StreamNpzMember, which checks the rest,
// and treat nothing as valid before it has. A converter uses it to inflate once.
enum class NpzDepth { kWhole, kHeaders };

// ParseNpz validates the archive `bytes` (see POLICY), reading every member once (only
// the headers of deflated members with NpzDepth::kHeaders).
STGUARD_API Result<NpzInfo> ParseNpz(std::span<const std::byte> bytes,
                                     NpzDepth depth = NpzDepth::kWhole);

// ReadNpzFile maps `path` and validates it with ParseNpz. kIoError / kNotARegularFile
// when the file cannot be read.
STGUARD_API Result<NpzInfo> ReadNpzFile(const std::string& path);

// ReadNpzSource validates the archive `source` holds by ranges, with ParseNpz's rules: the
// end records and central directory, every member's local header (and data descriptor), a
// stored member's .npy header (its data never read) and a deflated member's stream. A local
// source reads every deflated stream whole and computes every CRC-32 (stored members' in
// 1 MiB chunks): its verdict is ParseNpz's. A remote source reads no stored member's CRC,
// and inflates a deflated member of at least kNpyMaxPreambleLen + kNpyMaxHeaderLen bytes
// only from growing reads of its stream until that much comes out (an error counts once
// the whole stream was given, so it is ParseNpz's); *crc_unread counts the members whose
// CRC-32 went unchecked (set once the archive's structure is read, also when a member's
// rule then fails). MEMORY: the central directory, one .npy header, and the compressed
// bytes read of one deflated member.
STGUARD_API Result<NpzInfo> ReadNpzSource(const ByteSource& source, uint64_t* crc_unread);

// NpzChunkSink receives a member's bytes in order, in chunks of at most 64 KiB when the
// member is deflated; a non-ok Error stops the stream and is returned.
using NpzChunkSink = std::function<Error(std::span<const std::byte>)>;

// StreamNpzMember passes the .npy bytes of `member` (of the archive `bytes` that
// ParseNpz accepted), from `from` (an offset in the .npy) to the end, to `sink`; a stored
// member is passed as one span of the archive, a deflated one through the fixed buffer,
// its CRC-32 checked again.
[[nodiscard]] STGUARD_API Error StreamNpzMember(std::span<const std::byte> bytes,
                                                const NpzMember& member, uint64_t from,
                                                const NpzChunkSink& sink);

}  // namespace stguard

#endif  // STGUARD_NPZ_H_
