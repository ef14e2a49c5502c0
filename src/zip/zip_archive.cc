// SPDX-License-Identifier: Apache-2.0
// The strict ZIP reader: end records, then the central directory, then each local header
// checked against its entry, then the tiling of the records (see zip_archive.h).
#include "zip/zip_archive.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "base/checked_math.h"
#include "base/little_endian.h"
#include "base/plain_name.h"
#include "base/source_read.h"
#include "base/utf8.h"
#include "zip/end_record.h"
#include "zip/inflate.h"

namespace stguard {
namespace {

constexpr uint32_t kLocalHeaderSignature = 0x04034b50;
constexpr uint32_t kCentralHeaderSignature = 0x02014b50;
constexpr uint32_t kEndSignature = 0x06054b50;
constexpr uint32_t kZip64EndSignature = 0x06064b50;
constexpr uint32_t kZip64LocatorSignature = 0x07064b50;
constexpr uint32_t kDataDescriptorSignature = 0x08074b50;
constexpr size_t kLocalHeaderLen = 30;
constexpr size_t kCentralHeaderLen = 46;
constexpr size_t kEndLen = kZipEndLen;
constexpr uint16_t kZip64ExtraId = 0x0001;
constexpr uint16_t kFlagDataDescriptor = 1u << 3;
constexpr uint16_t kFlagUtf8 = 1u << 11;
constexpr uint32_t kMax32 = 0xFFFFFFFF;
constexpr uint16_t kMax16 = 0xFFFF;
// kMaxExtractVersion is Python's zipfile's MAX_EXTRACT_VERSION (6.3, as APPNOTE writes it).
constexpr uint16_t kMaxExtractVersion = 63;

Error Fail(ErrorCode code, uint64_t offset, const char* message, std::string context = {}) {
  return Error{code, offset, message, std::move(context)};
}

// Reader is a bounds-checked little-endian view of the archive by absolute offsets, so
// that one set of rule functions serves both paths. Over a span (Open) it holds every byte.
// Over a ByteSource (OpenSource) it holds one window of bytes read, and when a rule looks
// outside it reads the block it needs (the rules bound every offset by the file's size
// before they read it). A read that fails is kept (io_error) and the zeros the rule then
// saw are never a verdict: OpenSource returns that error instead.
class Reader {
 public:
  explicit Reader(std::span<const std::byte> bytes) : window_(bytes), size_(bytes.size()) {}
  explicit Reader(const ByteSource& source) : source_(&source), size_(source.size()) {}
  // Fresh is a reader of the same archive that shares no window with this one.
  Reader Fresh() const { return source_ != nullptr ? Reader(*source_) : Reader(window_); }

  uint16_t U16(uint64_t offset) const { return Load<uint16_t>(offset); }
  uint32_t U32(uint64_t offset) const { return Load<uint32_t>(offset); }
  uint64_t U64(uint64_t offset) const { return Load<uint64_t>(offset); }
  // Text is valid until the reader's next read outside its window: compare it at once.
  std::string_view Text(uint64_t offset, uint64_t len) const {
    const std::byte* at = At(offset, len);
    return at == nullptr ? std::string_view()
                         : std::string_view(reinterpret_cast<const char*>(at),
                                            static_cast<size_t>(len));
  }
  uint64_t size() const { return size_; }

  // Read makes [offset, offset + len) the window (source only), one read.
  Error Read(uint64_t offset, uint64_t len) const {
    if (Error error = ReadRange(*source_, offset, len, &owned_); !error.ok()) {
      if (io_error_.ok()) io_error_ = error;
      window_ = {};
      return error;
    }
    Show(offset, owned_);
    return {};
  }
  // Show makes bytes the caller holds (the file's bytes from `offset` on) the window.
  void Show(uint64_t offset, std::span<const std::byte> bytes) const {
    base_ = offset;
    window_ = bytes;
  }
  // io_error is the first read that failed (ok when none did).
  const Error& io_error() const { return io_error_; }

 private:
  // kMissBlock: what a read outside the window brings in (a local header, its name and
  // extra field, or a data descriptor, in one read).
  static constexpr uint64_t kMissBlock = 4096;

  template <typename T>
  T Load(uint64_t offset) const {
    const std::byte* at = At(offset, sizeof(T));
    return at == nullptr ? T{0} : LoadLittleEndian<T>(at);
  }
  const std::byte* At(uint64_t offset, uint64_t len) const {
    if (offset >= base_ && offset - base_ <= window_.size() &&
        len <= window_.size() - (offset - base_)) {
      return window_.data() + (offset - base_);
    }
    if (source_ == nullptr || !io_error_.ok()) return nullptr;  // a span holds every byte
    const uint64_t left = offset <= size_ ? size_ - offset : 0;
    if (!Read(offset, std::min(left, std::max(len, kMissBlock))).ok() || len > window_.size()) {
      if (io_error_.ok()) {
        io_error_ = Error{ErrorCode::kIoError, offset, "read past the end of the source"};
      }
      return nullptr;
    }
    return window_.data();
  }

  const ByteSource* source_ = nullptr;
  mutable std::vector<std::byte> owned_;
  mutable std::span<const std::byte> window_;
  mutable uint64_t base_ = 0;
  uint64_t size_;
  mutable Error io_error_;
};

// Zip64Fields are the values an entry's ZIP64 extra field replaces (APPNOTE 4.5.3): only
// those whose 32-bit field is 0xFFFFFFFF are present, in this order.
struct Zip64Fields {
  bool want_size = false, want_csize = false, want_offset = false;
  uint64_t size = 0, csize = 0, offset = 0;
  bool present = false;
};

// ParseExtra walks an extra-field area: a sequence of (id, length, data) that must fill it
// exactly. It reads the ZIP64 field into *zip64 and refuses duplicate ZIP64 fields.
Error ParseExtra(const Reader& in, uint64_t start, uint64_t len, Zip64Fields* zip64) {
  uint64_t at = start;
  const uint64_t end = start + len;
  while (at < end) {
    if (end - at < 4) return Fail(ErrorCode::kZipFormat, at, "truncated extra field");
    const uint16_t id = in.U16(at);
    const uint16_t field_len = in.U16(at + 2);
    if (end - at - 4 < field_len) {
      return Fail(ErrorCode::kZipFormat, at, "extra field longer than its area");
    }
    if (id == kZip64ExtraId) {
      if (zip64->present) return Fail(ErrorCode::kZipFormat, at, "two ZIP64 extra fields");
      zip64->present = true;
      uint64_t field = at + 4;
      const uint64_t field_end = field + field_len;
      auto take = [&](bool wanted, uint64_t* out) {
        if (!wanted) return true;
        if (field_end - field < 8) return false;
        *out = in.U64(field);
        field += 8;
        return true;
      };
      if (!take(zip64->want_size, &zip64->size) || !take(zip64->want_csize, &zip64->csize) ||
          !take(zip64->want_offset, &zip64->offset)) {
        return Fail(ErrorCode::kZipFormat, at, "ZIP64 extra field lacks a value it must hold");
      }
    }
    at += 4 + uint64_t{field_len};
  }
  if ((zip64->want_size || zip64->want_csize || zip64->want_offset) && !zip64->present) {
    return Fail(ErrorCode::kZipFormat, start, "0xFFFFFFFF field without a ZIP64 extra field");
  }
  return {};
}

// CheckName accepts "<folder>/<path>": no empty, "." or ".." component, no backslash, no
// NUL, no leading slash. It returns the folder in *folder.
Error CheckName(std::string_view name, uint64_t offset, std::string_view* folder) {
  if (name.empty()) return Fail(ErrorCode::kZipBadName, offset, "empty record name");
  if (name.find('\\') != std::string_view::npos || name.find('\0') != std::string_view::npos) {
    return Fail(ErrorCode::kZipBadName, offset, "record name with a backslash or NUL",
                std::string(name));
  }
  const size_t slash = name.find('/');
  if (slash == std::string_view::npos) {
    return Fail(ErrorCode::kZipBadName, offset, "record outside a top-level folder",
                std::string(name));
  }
  size_t begin = 0;
  while (begin <= name.size()) {
    size_t end = name.find('/', begin);
    if (end == std::string_view::npos) end = name.size();
    const std::string_view part = name.substr(begin, end - begin);
    if (part.empty() || part == "." || part == "..") {
      return Fail(ErrorCode::kZipBadName, offset, "record name with an empty, '.' or '..' part",
                  std::string(name));
    }
    begin = end + 1;
  }
  *folder = name.substr(0, slash);
  return {};
}

// CheckNameEncoding accepts an npz member's name as Python's zipfile decodes it, so that
// its bytes are the key numpy gives: flagged UTF-8 (bit 11), it must be UTF-8 (zipfile
// decodes it strictly and fails); unflagged, zipfile decodes it as cp437, which gives
// other characters than its UTF-8 reading for every byte above 0x7F ("\xc3\xa9" is "├⌐",
// not "é", and two names could become one), so it must be ASCII. Python's zipfile writes
// every non-ASCII name flagged, so numpy never writes one that this refuses.
Error CheckNameEncoding(std::string_view name, uint16_t flags, uint64_t offset) {
  size_t bad = 0;
  if ((flags & kFlagUtf8) != 0) {
    if (!IsValidUtf8(name, &bad)) {
      return Fail(ErrorCode::kNpzMemberName, offset,
                  "member name flagged UTF-8 that is not UTF-8 (Python's zipfile refuses it)",
                  "byte " + std::to_string(bad) + " of the name");
    }
    return {};
  }
  for (size_t i = 0; i < name.size(); ++i) {
    if (static_cast<unsigned char>(name[i]) > 0x7F) {
      return Fail(ErrorCode::kNpzMemberName, offset,
                  "non-ASCII member name without the UTF-8 flag (Python's zipfile reads it as "
                  "cp437: numpy's key would not be these bytes read as UTF-8)",
                  "byte " + std::to_string(i) + " of the name");
    }
  }
  return {};
}

// EndRecords is what the end of central directory records say.
struct EndRecords {
  uint64_t num_entries;
  uint64_t directory_offset;
  uint64_t directory_len;
  uint64_t directory_end_limit;  // where the central directory must end
};

Error ReadEndRecords(const Reader& in, EndRecords* out) {
  // The classic record ends the file; its comment, if any, runs to the very end
  // (zip/end_record.h, kEndsFile). A plain record is in the last kEndLen bytes, which a
  // source's first read holds: only when it is not there does the search reach back over
  // a comment's length (ReadTail read that far then).
  if (in.size() < kEndLen) return Fail(ErrorCode::kZipFormat, 0, "too short for a ZIP archive");
  uint64_t end_at = UINT64_MAX;
  const uint64_t reach = std::min<uint64_t>(in.size(), kZipEndSearchLen);
  for (const uint64_t len : {uint64_t{kEndLen}, reach}) {
    const std::string_view tail = in.Text(in.size() - len, len);
    end_at = FindZipEnd(std::as_bytes(std::span(tail.data(), tail.size())), in.size(),
                        ZipEndRule::kEndsFile);
    if (end_at != UINT64_MAX) break;
  }
  if (end_at == UINT64_MAX) {
    return Fail(ErrorCode::kZipFormat, in.size(),
                "no end of central directory record ending the file (truncated, or trailing "
                "bytes)");
  }
  const std::string_view end_bytes = in.Text(end_at, kEndLen);
  const ZipEndFields fields =
      ReadZipEndFields(reinterpret_cast<const std::byte*>(end_bytes.data()));
  // torch's reader (miniz) takes the last end signature it meets scanning back, whatever
  // its comment length says: a second end record inside a comment would send torch to
  // another central directory. torch writes no comment, and without one the backward
  // scan can only stop on this record.
  if (fields.comment_len != 0) {
    return Fail(ErrorCode::kZipLayout, end_at + kEndLen,
                "end of central directory record with a comment (torch writes none; torch's "
                "reader could take an end record hidden in it)",
                std::to_string(fields.comment_len) + " comment bytes");
  }
  const uint16_t disk = fields.disk, directory_disk = fields.directory_disk;
  uint64_t entries_here = fields.entries_here, entries = fields.entries;
  uint64_t directory_len = fields.directory_len, directory_offset = fields.directory_offset;
  uint64_t directory_end_limit = end_at;

  const bool has_locator = end_at >= kZip64LocatorLen &&
                           in.U32(end_at - kZip64LocatorLen) == kZip64LocatorSignature;
  if (has_locator) {
    const uint64_t locator = end_at - kZip64LocatorLen;
    const uint64_t record = in.U64(locator + 8);
    if (in.U32(locator + 4) != 0 || in.U32(locator + 16) != 1) {
      return Fail(ErrorCode::kZipUnsupported, locator, "multi-disk ZIP64 archive");
    }
    // The ZIP64 end record (with no extensible data) sits right before the locator.
    if (locator < kZip64EndLen || record != locator - kZip64EndLen ||
        in.U32(record) != kZip64EndSignature) {
      return Fail(ErrorCode::kZipLayout, locator,
                  "ZIP64 end record not directly before its locator");
    }
    if (in.U64(record + 4) != kZip64EndLen - 12) {
      return Fail(ErrorCode::kZipFormat, record, "ZIP64 end record with extensible data");
    }
    if (in.U32(record + 16) != 0 || in.U32(record + 20) != 0) {
      return Fail(ErrorCode::kZipUnsupported, record, "multi-disk ZIP64 archive");
    }
    const uint64_t entries64_here = in.U64(record + 24), entries64 = in.U64(record + 32);
    const uint64_t len64 = in.U64(record + 40), offset64 = in.U64(record + 48);
    // Classic fields hold either the same value or the 0xFFFF.. escape.
    auto agrees = [](uint64_t classic, uint64_t wide, uint64_t escape) {
      return classic == escape || classic == wide;
    };
    if (!agrees(entries_here, entries64_here, kMax16) || !agrees(entries, entries64, kMax16) ||
        !agrees(directory_len, len64, kMax32) || !agrees(directory_offset, offset64, kMax32)) {
      return Fail(ErrorCode::kZipHeaderMismatch, end_at,
                  "the end record and the ZIP64 end record disagree");
    }
    entries_here = entries64_here;
    entries = entries64;
    directory_len = len64;
    directory_offset = offset64;
    directory_end_limit = record;
  } else if (disk != 0 || directory_disk != 0) {
    return Fail(ErrorCode::kZipUnsupported, end_at, "multi-disk ZIP archive");
  } else if (entries == kMax16 || directory_len == kMax32 || directory_offset == kMax32) {
    return Fail(ErrorCode::kZipFormat, end_at, "ZIP64 values without a ZIP64 end record");
  }
  if (has_locator && (disk != 0 && disk != kMax16)) {
    return Fail(ErrorCode::kZipUnsupported, end_at, "multi-disk ZIP archive");
  }
  if (entries_here != entries) {
    return Fail(ErrorCode::kZipUnsupported, end_at, "multi-disk ZIP archive");
  }
  uint64_t directory_end = 0;
  if (!CheckedAdd(directory_offset, directory_len, &directory_end) ||
      directory_end != directory_end_limit) {
    return Fail(ErrorCode::kZipLayout, end_at,
                "the central directory does not end where the end records begin");
  }
  if (directory_len > kMax32) {
    // miniz (torch's reader) refuses a central directory of 4 GiB or more.
    return Fail(ErrorCode::kZipUnsupported, end_at, "central directory of 4 GiB or more");
  }
  if (entries > directory_len / kCentralHeaderLen || entries > kMaxZipRecords) {
    return Fail(ErrorCode::kZipFormat, end_at, "more entries than the central directory holds",
                std::to_string(entries));
  }
  *out = {entries, directory_offset, directory_len, directory_end_limit};
  return {};
}

// CentralEntry is one central directory entry before its local header is checked.
struct CentralEntry {
  uint64_t at;  // offset of the central header
  uint16_t flags, method;
  uint32_t crc;
  uint64_t size, csize, header_offset;
  std::string_view name;
};

// CheckRawOffset applies torch's reader's own check of an entry's 32-bit fields (miniz
// checks them before it reads any ZIP64 value): unless the compressed size is escaped, the
// 32-bit header offset plus a local header plus that size must lie inside the file. So an
// offset escaped to 0xFFFFFFFF beside a 32-bit size, in a file under 4 GiB, is an archive
// torch refuses; stguard refuses it too rather than read what torch cannot.
Error CheckRawOffset(const Reader& in, const CentralEntry& e, uint32_t raw_csize,
                     uint32_t raw_offset) {
  if (raw_csize != kMax32 &&
      uint64_t{raw_offset} + kLocalHeaderLen + raw_csize > in.size()) {
    return Fail(ErrorCode::kZipFormat, e.at,
                raw_offset == kMax32
                    ? "ZIP64-escaped header offset beside a 32-bit size: torch's reader checks "
                      "0xFFFFFFFF itself as the offset and refuses the archive"
                    : "entry's header offset and size reach past the end of the file",
                std::string(e.name));
  }
  return {};
}

// CheckMethod applies the flavor's rule on compression: torch stores every record; an npz
// member is stored or deflated, and a deflated one claims no more than DEFLATE can give.
Error CheckMethod(const CentralEntry& e, ZipFlavor flavor) {
  const std::string name(e.name);
  if (flavor == ZipFlavor::kTorch) {
    if (e.method != kZipStored || e.csize != e.size) {
      return Fail(ErrorCode::kZipUnsupported, e.at, "compressed entry (torch stores records)",
                  name);
    }
    return {};
  }
  if (e.method == kZipStored) {
    if (e.csize != e.size) {
      return Fail(ErrorCode::kZipFormat, e.at, "stored entry whose sizes differ", name);
    }
    return {};
  }
  if (e.method != kZipDeflated) {
    return Fail(ErrorCode::kZipUnsupported, e.at,
                e.method == 12 || e.method == 14
                    ? "bzip2 or LZMA member (an npz member is stored or deflated)"
                    : "compression method other than stored or deflate",
                name + " (method " + std::to_string(e.method) + ")");
  }
  if (e.size / kDeflateMaxRatio > e.csize) {
    return Fail(ErrorCode::kZipFormat, e.at,
                "member claims more bytes than DEFLATE can produce from its compressed size",
                name + ": " + std::to_string(e.csize) + " -> " + std::to_string(e.size));
  }
  return {};
}

Error ReadCentralEntry(const Reader& in, uint64_t at, uint64_t directory_end, ZipFlavor flavor,
                       CentralEntry* e, uint64_t* next) {
  if (directory_end - at < kCentralHeaderLen || in.U32(at) != kCentralHeaderSignature) {
    return Fail(ErrorCode::kZipFormat, at, "bad central directory entry");
  }
  e->at = at;
  e->flags = in.U16(at + 8);
  e->method = in.U16(at + 10);
  e->crc = in.U32(at + 16);
  e->csize = in.U32(at + 20);
  e->size = in.U32(at + 24);
  const uint16_t name_len = in.U16(at + 28), extra_len = in.U16(at + 30),
                 comment_len = in.U16(at + 32), disk = in.U16(at + 34);
  e->header_offset = in.U32(at + 42);
  const uint64_t variable = uint64_t{name_len} + extra_len + comment_len;
  if (directory_end - at - kCentralHeaderLen < variable) {
    return Fail(ErrorCode::kZipFormat, at, "central directory entry runs past the directory");
  }
  e->name = in.Text(at + kCentralHeaderLen, name_len);
  Zip64Fields zip64;
  zip64.want_size = e->size == kMax32;
  zip64.want_csize = e->csize == kMax32;
  zip64.want_offset = e->header_offset == kMax32;
  if (Error error = ParseExtra(in, at + kCentralHeaderLen + name_len, extra_len, &zip64);
      !error.ok()) {
    return error;
  }
  if (zip64.want_size) e->size = zip64.size;
  if (zip64.want_csize) e->csize = zip64.csize;
  if (zip64.want_offset) e->header_offset = zip64.offset;
  // Disk 0 only: torch's reader refuses 0xFFFF even with a ZIP64 field.
  if (disk != 0) {
    return Fail(ErrorCode::kZipUnsupported, at, "entry on another disk", std::string(e->name));
  }
  if (Error error = CheckRawOffset(in, *e, in.U32(at + 20), in.U32(at + 42));
      !error.ok()) {
    return error;
  }
  if ((e->flags & 1u) != 0 || (e->flags & (1u << 6)) != 0 || (e->flags & (1u << 13)) != 0) {
    return Fail(ErrorCode::kZipUnsupported, at, "encrypted entry", std::string(e->name));
  }
  // Python's zipfile reads "version needed to extract" as one byte (then a reserved one)
  // and refuses an archive whose central directory gives above 63 (6.3, its
  // MAX_EXTRACT_VERSION): numpy cannot open it. torch's reader (miniz) ignores the field.
  if (flavor == ZipFlavor::kNpz && (in.U16(at + 6) & 0xFF) > kMaxExtractVersion) {
    return Fail(ErrorCode::kZipUnsupported, at,
                "entry needing a ZIP version above 6.3 to extract (Python's zipfile refuses it)",
                std::string(e->name) + " (version " + std::to_string(in.U16(at + 6) & 0xFF) +
                    ")");
  }
  // An npz names a bzip2 or LZMA member as such, whatever flags that method sets.
  if (flavor == ZipFlavor::kNpz) {
    if (Error error = CheckMethod(*e, flavor); !error.ok()) return error;
  }
  // Bits 1-2 only hint at a deflated member's compression level.
  const uint16_t level_hint =
      flavor == ZipFlavor::kNpz && e->method == kZipDeflated ? 0x6 : 0;
  if ((e->flags & ~(kFlagDataDescriptor | kFlagUtf8 | level_hint)) != 0) {
    return Fail(ErrorCode::kZipUnsupported, at, "entry with unsupported flags",
                std::string(e->name));
  }
  if (Error error = CheckMethod(*e, flavor); !error.ok()) return error;
  *next = at + kCentralHeaderLen + variable;
  return {};
}

// CheckLocalRecord checks the local header (and data descriptor) of `e` against it and
// returns the record's data offset and the offset just past the record.
Error CheckLocalRecord(const Reader& in, const CentralEntry& e, uint64_t limit,
                       uint64_t* data_offset, uint64_t* record_end) {
  const uint64_t at = e.header_offset;
  const std::string name(e.name);
  if (at >= limit || limit - at < kLocalHeaderLen || in.U32(at) != kLocalHeaderSignature) {
    return Fail(ErrorCode::kZipFormat, at, "no local header where the central directory says",
                name);
  }
  const uint16_t flags = in.U16(at + 6), method = in.U16(at + 8);
  const uint32_t crc = in.U32(at + 14);
  uint64_t csize = in.U32(at + 18), size = in.U32(at + 22);
  const uint16_t name_len = in.U16(at + 26), extra_len = in.U16(at + 28);
  if (limit - at - kLocalHeaderLen < uint64_t{name_len} + extra_len) {
    return Fail(ErrorCode::kZipFormat, at, "local header runs past its record", name);
  }
  if (flags != e.flags || method != e.method) {
    return Fail(ErrorCode::kZipHeaderMismatch, at,
                "local header flags or method differ from the central directory", name);
  }
  if (in.Text(at + kLocalHeaderLen, name_len) != e.name) {
    return Fail(ErrorCode::kZipHeaderMismatch, at,
                "local header names another file than the central directory",
                name + " vs " + std::string(in.Text(at + kLocalHeaderLen, name_len)));
  }
  Zip64Fields zip64;
  zip64.want_size = size == kMax32;
  zip64.want_csize = csize == kMax32;
  if (Error error = ParseExtra(in, at + kLocalHeaderLen + name_len, extra_len, &zip64);
      !error.ok()) {
    return error;
  }
  if (zip64.want_size) size = zip64.size;
  if (zip64.want_csize) csize = zip64.csize;
  const uint64_t data = at + kLocalHeaderLen + name_len + extra_len;
  if (limit - data < e.csize) {
    return Fail(ErrorCode::kZipLayout, data, "record data runs past its bounds", name);
  }
  uint64_t end = data + e.csize;
  if ((flags & kFlagDataDescriptor) != 0) {
    // With a data descriptor the local header holds zeros (torch's writer) or the same
    // values as the central directory; the descriptor after the data holds the values.
    const bool zeros = crc == 0 && csize == 0 && size == 0;
    const bool same = crc == e.crc && csize == e.csize && size == e.size;
    if (!zeros && !same) {
      return Fail(ErrorCode::kZipHeaderMismatch, at,
                  "local header CRC or sizes differ from the central directory", name);
    }
    const bool wide = zip64.present;
    const uint64_t descriptor_len = wide ? 24 : 16;
    if (limit - end < descriptor_len || in.U32(end) != kDataDescriptorSignature) {
      return Fail(ErrorCode::kZipFormat, end, "missing data descriptor (with its signature)",
                  name);
    }
    const uint32_t d_crc = in.U32(end + 4);
    const uint64_t d_csize = wide ? in.U64(end + 8) : in.U32(end + 8);
    const uint64_t d_size = wide ? in.U64(end + 16) : in.U32(end + 12);
    if (d_crc != e.crc || d_csize != e.csize || d_size != e.size) {
      return Fail(ErrorCode::kZipHeaderMismatch, end,
                  "data descriptor differs from the central directory", name);
    }
    end += descriptor_len;
  } else if (crc != e.crc || csize != e.csize || size != e.size) {
    return Fail(ErrorCode::kZipHeaderMismatch, at,
                "local header CRC or sizes differ from the central directory", name);
  }
  *data_offset = data;
  *record_end = end;
  return {};
}

// AsciiLower folds A-Z only, as torch's reader (miniz) does when it compares names.
std::string AsciiLower(std::string_view name) {
  std::string out(name);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// IndexNames maps each record's name to its index. torch looks records up ignoring ASCII
// case, so two names that differ only in case would let torch read either: both count as
// one name, refused like an exact duplicate. numpy's keys are case-sensitive: an npz
// refuses exact duplicates only.
Error IndexNames(const std::vector<ZipRecord>& records, const std::vector<CentralEntry>& entries,
                 ZipFlavor flavor, std::unordered_map<std::string, size_t>* by_name) {
  std::unordered_map<std::string, size_t> folded;
  folded.reserve(records.size());
  by_name->reserve(records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    const auto [it, added] = folded.emplace(
        flavor == ZipFlavor::kTorch ? AsciiLower(records[i].name) : records[i].name, i);
    if (!added) {
      const std::string& first = records[it->second].name;
      return Fail(ErrorCode::kZipDuplicateName, entries[i].at,
                  first == records[i].name
                      ? "two records of one name"
                      : "two records whose names differ only in case (torch's lookup ignores "
                        "case and could read either)",
                  first == records[i].name ? first : first + " and " + records[i].name);
    }
    by_name->emplace(records[i].name, i);
  }
  return {};
}

}  // namespace

// CheckNames applies the flavor's naming rule to every entry: torch's records share one
// top-level folder, an npz's members have none.
Error CheckNames(const std::vector<CentralEntry>& entries, ZipFlavor flavor,
                 std::string* folder) {
  for (size_t i = 0; i < entries.size(); ++i) {
    const CentralEntry& entry = entries[i];
    if (flavor == ZipFlavor::kNpz) {
      if (Error error = CheckNameEncoding(entry.name, entry.flags, entry.at); !error.ok()) {
        return error;
      }
      // A plain file name, so that no extractor can place it outside its folder.
      if (const char* problem = PlainNameProblem(entry.name); problem != nullptr) {
        return Fail(ErrorCode::kNpzMemberName, entry.at, problem,
                    "member '" + std::string(entry.name) + "'");
      }
      continue;
    }
    std::string_view entry_folder;
    if (Error error = CheckName(entry.name, entry.at, &entry_folder); !error.ok()) return error;
    if (i == 0) {
      *folder = std::string(entry_folder);
    } else if (entry_folder != *folder) {
      return Fail(ErrorCode::kZipBadName, entry.at, "records under two top-level folders",
                  *folder + " and " + std::string(entry_folder));
    }
  }
  return {};
}

namespace {

// kTailLen: the end record, the ZIP64 locator and the ZIP64 end record that end a torch
// archive; a source's first read.
constexpr uint64_t kTailLen = kEndLen + kZip64LocatorLen + kZip64EndLen;

// ReadTail brings the archive's end records into `tail`'s window in one read: its last
// kTailLen bytes, or, when they do not end in a plain end record, as far back as an end
// record's comment can reach (the rules then scan there for the error to give).
Error ReadTail(const Reader& tail) {
  const uint64_t size = tail.size();
  const uint64_t len = std::min(size, kTailLen);
  if (Error error = tail.Read(size - len, len); !error.ok()) return error;
  if (size >= kEndLen && tail.U32(size - kEndLen) == kEndSignature && tail.U16(size - 2) == 0) {
    return {};
  }
  const uint64_t reach = std::min<uint64_t>(size, kTailLen + kMax16);
  return tail.Read(size - reach, reach);
}

// ReadDirectory reads the end records from `tail` and the central directory's entries from
// `directory` (a source reads it whole, in one read), names checked. The entries' names
// point into `directory`'s window.
Error ReadDirectory(const Reader& tail, const Reader& directory, bool from_source,
                    ZipFlavor flavor, EndRecords* end, std::vector<CentralEntry>* entries,
                    std::string* folder) {
  if (from_source) {
    if (Error error = ReadTail(tail); !error.ok()) return error;
  }
  if (Error error = ReadEndRecords(tail, end); !error.ok()) {
    return tail.io_error().ok() ? error : tail.io_error();
  }
  if (from_source) {
    if (Error error = directory.Read(end->directory_offset, end->directory_len); !error.ok()) {
      return error;
    }
  }
  entries->reserve(end->num_entries);
  uint64_t at = end->directory_offset;
  const uint64_t directory_end = end->directory_offset + end->directory_len;
  for (uint64_t i = 0; i < end->num_entries; ++i) {
    CentralEntry entry;
    if (Error error = ReadCentralEntry(directory, at, directory_end, flavor, &entry, &at);
        !error.ok()) {
      return error;
    }
    entries->push_back(entry);
  }
  if (Error error = CheckNames(*entries, flavor, folder); !error.ok()) return error;
  if (at != directory_end) {
    return Fail(ErrorCode::kZipLayout, at, "bytes after the last central directory entry");
  }
  return {};
}

// SkippedRecordEnd is the least offset at which a record whose local header was not read
// can end: its fixed header, its name (the local one must equal it), its data, and a data
// descriptor when its flags announce one. UINT64_MAX when that overflows.
uint64_t SkippedRecordEnd(const CentralEntry& e) {
  uint64_t end = 0;
  const uint64_t fixed = kLocalHeaderLen + e.name.size() +
                         ((e.flags & kFlagDataDescriptor) != 0 ? 16 : 0);
  if (!CheckedAdd(e.header_offset, fixed, &end) || !CheckedAdd(end, e.csize, &end)) {
    return UINT64_MAX;
  }
  return end;
}

// RunExtent is where a run of records read together ends: at the next record's local
// header (or the central directory), but never further than the run's records could reach
// with the longest extra fields, so that a central directory with a gap cannot make one
// read cover bytes no record holds.
uint64_t RunExtent(const std::vector<CentralEntry>& entries, const std::vector<size_t>& order,
                   size_t first, size_t end_k, uint64_t directory_offset) {
  uint64_t reach = entries[order[first]].header_offset;
  for (size_t k = first; k < end_k; ++k) {
    const CentralEntry& e = entries[order[k]];
    const uint64_t most = kLocalHeaderLen + uint64_t{kMax16} + e.name.size() + 24;
    if (!CheckedAdd(reach, most, &reach) || !CheckedAdd(reach, e.csize, &reach)) {
      return directory_offset;
    }
  }
  const uint64_t next =
      end_k < order.size() ? entries[order[end_k]].header_offset : directory_offset;
  return std::min({reach, next, directory_offset});
}

}  // namespace

// ZipOpener builds a ZipArchive (it is the archive's friend): the rules above over a
// Reader, whichever path the bytes come from.
struct ZipOpener {
  // CheckRecords checks each local header against its entry and that the records tile
  // [0, directory_offset). `read` says which records a remote source reads: the others
  // keep only the checks the central directory allows (their order and the least room
  // each needs), and are counted in unchecked_. A source reads each run of records the
  // filter wants in one read, kept for RecordBytes.
  static Error CheckRecords(ZipArchive& archive, const Reader& in,
                            const std::vector<CentralEntry>& entries, uint64_t directory_offset,
                            const std::vector<bool>& read);
  // Open reads the directory, then the records (see zip_archive.h, BY RANGES).
  static Result<ZipArchive> Open(const Reader& in, const ByteSource* source, ZipFlavor flavor,
                                 const ZipArchive::RecordFilter& wanted, uint64_t* unchecked,
                                 ZipLocalHeaders headers);
};

Error ZipOpener::CheckRecords(ZipArchive& archive, const Reader& in,
                              const std::vector<CentralEntry>& entries,
                              uint64_t directory_offset, const std::vector<bool>& read) {
  std::vector<size_t> order(entries.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return entries[a].header_offset < entries[b].header_offset;
  });
  archive.records_.resize(entries.size());
  uint64_t expected = 0;
  bool exact = true;  // false after a record not read: expected is then a lower bound
  for (size_t k = 0; k < order.size(); ++k) {
    const CentralEntry& entry = entries[order[k]];
    if (exact ? entry.header_offset != expected : entry.header_offset < expected) {
      return Fail(ErrorCode::kZipLayout, std::min(entry.header_offset, expected),
                  entry.header_offset < expected
                      ? "records overlap"
                      : (expected == 0 ? "bytes before the first record"
                                       : "gap between records"),
                  std::string(entry.name));
    }
    ZipRecord& record = archive.records_[order[k]];
    record = ZipRecord{std::string(entry.name), entry.header_offset, 0, entry.size,
                       entry.crc, entry.method, entry.csize};
    if (!read[order[k]]) {
      record.local_checked = false;
      ++archive.unchecked_;
      expected = SkippedRecordEnd(entry);
      exact = false;
      continue;
    }
    if (archive.source_ != nullptr && !archive.Kept(entry.header_offset, kLocalHeaderLen)) {
      size_t end_k = k + 1;
      while (end_k < order.size() && read[order[end_k]] && archive.wanted_[order[end_k]]) {
        ++end_k;
      }
      if (archive.wanted_[order[k]]) {
        const uint64_t extent = RunExtent(entries, order, k, end_k, directory_offset);
        if (extent > entry.header_offset) {
          if (Error error = archive.Keep(entry.header_offset, extent - entry.header_offset);
              !error.ok()) {
            return error;
          }
        }
      }
    }
    if (archive.source_ != nullptr) {
      const std::span<const std::byte> kept = archive.KeptFrom(entry.header_offset);
      if (!kept.empty()) in.Show(entry.header_offset, kept);
    }
    uint64_t record_end = 0;
    Error error = CheckLocalRecord(in, entry, directory_offset, &record.data_offset,
                                   &record_end);
    if (!in.io_error().ok()) return in.io_error();
    if (!error.ok()) return error;
    expected = record_end;
    exact = true;
  }
  if (exact && expected != directory_offset) {
    return Fail(ErrorCode::kZipLayout, expected,
                "bytes between the last record and the central directory");
  }
  return {};
}

Result<ZipArchive> ZipOpener::Open(const Reader& in, const ByteSource* source, ZipFlavor flavor,
                                   const ZipArchive::RecordFilter& wanted, uint64_t* unchecked,
                                   ZipLocalHeaders headers) {
  ZipArchive archive;
  archive.source_ = source;
  const Reader directory = in.Fresh();
  EndRecords end;
  std::vector<CentralEntry> entries;
  if (Error error = ReadDirectory(in, directory, source != nullptr, flavor, &end, &entries,
                                  &archive.folder_);
      !error.ok()) {
    return directory.io_error().ok() ? error : directory.io_error();
  }
  archive.directory_offset_ = end.directory_offset;
  // Which records are read: all, but on a remote source only those `wanted` names.
  archive.wanted_.resize(entries.size());
  std::vector<bool> read(entries.size());
  const size_t prefix = archive.folder_.empty() ? 0 : archive.folder_.size() + 1;
  for (size_t i = 0; i < entries.size(); ++i) {
    archive.wanted_[i] = wanted && wanted(entries[i].name.substr(
                                       std::min(prefix, entries[i].name.size())));
    read[i] = source == nullptr || !source->remote() || archive.wanted_[i] ||
              headers == ZipLocalHeaders::kEvery;
  }
  const Error records = CheckRecords(archive, in.Fresh(), entries, end.directory_offset, read);
  if (unchecked != nullptr) *unchecked = archive.unchecked_;
  if (!records.ok()) return records;
  if (Error error = IndexNames(archive.records_, entries, flavor, &archive.by_name_);
      !error.ok()) {
    return error;
  }
  if (flavor == ZipFlavor::kTorch && archive.Find("data.pkl") == nullptr) {
    return Fail(ErrorCode::kZipMissingRecord, end.directory_offset, "no data.pkl record",
                archive.folder_ + "/data.pkl");
  }
  return archive;
}

Result<ZipArchive> ZipArchive::Open(std::span<const std::byte> bytes, ZipFlavor flavor) {
  Result<ZipArchive> archive =
      ZipOpener::Open(Reader(bytes), nullptr, flavor, {}, nullptr, ZipLocalHeaders::kEvery);
  if (archive.ok()) archive->bytes_ = bytes;
  return archive;
}

Result<ZipArchive> ZipArchive::OpenSource(const ByteSource& source, ZipFlavor flavor,
                                          const RecordFilter& wanted, uint64_t* unchecked,
                                          ZipLocalHeaders headers) {
  if (unchecked != nullptr) *unchecked = 0;
  return ZipOpener::Open(Reader(source), &source, flavor, wanted, unchecked, headers);
}

bool ZipArchive::Kept(uint64_t offset, uint64_t len) const {
  for (const KeptBytes& kept : kept_) {
    if (offset >= kept.offset && offset - kept.offset <= kept.bytes.size() &&
        len <= kept.bytes.size() - (offset - kept.offset)) {
      return true;
    }
  }
  return false;
}

std::span<const std::byte> ZipArchive::KeptFrom(uint64_t offset) const {
  for (const KeptBytes& kept : kept_) {
    if (offset >= kept.offset && offset - kept.offset < kept.bytes.size()) {
      return std::span<const std::byte>(kept.bytes).subspan(
          static_cast<size_t>(offset - kept.offset));
    }
  }
  return {};
}

Error ZipArchive::Keep(uint64_t offset, uint64_t len) const {
  std::vector<std::byte> bytes;
  if (Error error = ReadRange(*source_, offset, len, &bytes); !error.ok()) return error;
  kept_.push_back({offset, std::move(bytes)});
  return {};
}

Result<std::span<const std::byte>> ZipArchive::RecordBytes(const ZipRecord& record) const {
  if (source_ == nullptr) return Data(record);
  if (!record.local_checked) {
    return Fail(ErrorCode::kInvalidArgument, record.header_offset,
                "record not read from the remote source", record.name);
  }
  if (!Kept(record.data_offset, record.compressed_size)) {
    if (Error error = Keep(record.data_offset, record.compressed_size); !error.ok()) {
      return error;
    }
  }
  return KeptFrom(record.data_offset).first(static_cast<size_t>(record.compressed_size));
}

const ZipRecord* ZipArchive::Find(std::string_view path) const {
  std::string full = folder_;
  if (!full.empty()) full += '/';
  full += path;
  const auto it = by_name_.find(full);
  return it == by_name_.end() ? nullptr : &records_[it->second];
}

Error ZipArchive::VerifyCrc(const ZipRecord& record) const {
  Result<std::span<const std::byte>> bytes = RecordBytes(record);
  if (!bytes.ok()) return bytes.error();
  if (Crc32(0, *bytes) != record.crc32) {
    return Fail(ErrorCode::kZipChecksum, record.data_offset, "record bytes fail their CRC-32",
                record.name);
  }
  return {};
}

}  // namespace stguard
