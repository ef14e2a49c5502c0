// SPDX-License-Identifier: Apache-2.0
// The .npz reader: the strict ZIP reader (npz flavor) for the archive, then each member
// read once, inflated through the bounded decoder when deflated, its CRC-32 checked and its
// first bytes validated as a .npy (see stguard/npz.h).
#include "stguard/npz.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "base/source_read.h"
#include "stguard/mapped_file.h"
#include "zip/inflate.h"
#include "zip/zip_archive.h"

namespace stguard {
namespace {

constexpr std::string_view kNpySuffix = ".npy";
constexpr size_t kNpyPrefixLen = kNpyMaxPreambleLen + kNpyMaxHeaderLen;

// KeyOf returns the member's key, or kNpzMemberName when its name is not "<key>.npy".
Result<std::string> KeyOf(const ZipRecord& record) {
  const std::string_view name = record.name;
  if (name.size() <= kNpySuffix.size() || !name.ends_with(kNpySuffix)) {
    return Error{ErrorCode::kNpzMemberName, record.header_offset,
                 "an npz member is named \"<key>.npy\"", record.name, {}};
  }
  return std::string(name.substr(0, name.size() - kNpySuffix.size()));
}

// CheckKeysAnswerOnce refuses two members that numpy answers to one key. NpzFile.files
// drops ".npy" from each name, and NpzFile[key] looks the raw name up first: with members
// "x.npy" and "x.npy.npy" (np.savez(f, x=A, **{"x.npy": B}) writes them), the keys are
// "x" and "x.npy" and both give A, B being unreachable. Every member is "<key>.npy"
// (KeyOf), so that happens exactly when a member's key is another member's name.
Error CheckKeysAnswerOnce(const ZipArchive& archive) {
  for (const ZipRecord& record : archive.records()) {
    const std::string_view name = record.name;
    if (name.size() <= 2 * kNpySuffix.size() || !name.ends_with(kNpySuffix)) continue;
    const std::string_view key = name.substr(0, name.size() - kNpySuffix.size());
    if (!key.ends_with(kNpySuffix) || archive.Find(key) == nullptr) continue;
    return Error{ErrorCode::kZipDuplicateName, record.header_offset,
                 "two members answer to one numpy key (NpzFile looks the raw member name up "
                 "first: the key of the longer name gives the shorter one's array)",
                 std::string(key) + " and " + record.name, {}};
  }
  return {};
}

// MemberError places an error found inside a member's .npy: at its absolute offset when
// the member is stored, at the member's data when it is deflated (the offset inside the
// inflated bytes goes into the context).
Error MemberError(Error error, const ZipRecord& record, const std::string& key) {
  if (record.method == kZipStored) {
    error.offset += record.data_offset;
  } else {
    error.context = "at byte " + std::to_string(error.offset) + " of the inflated member" +
                    (error.context.empty() ? "" : ": " + error.context);
    error.offset = record.data_offset;
  }
  error.tensor = key;
  return error;
}

// InflateMember inflates a deflated record, keeping its first kNpyPrefixLen bytes in
// *prefix and checking its CRC-32; with NpzDepth::kHeaders it stops once the prefix is
// full (the stream and CRC are then checked by StreamNpzMember).
// `early`: the decoder hands over its first kNpyPrefixLen bytes as soon as it has them
// (rather than at its first full chunk), so a stream cut after them yields the header.
Error InflateMember(std::span<const std::byte> stored, const ZipRecord& record,
                    NpzDepth depth, std::vector<std::byte>* prefix, bool early = false) {
  uint32_t crc = 0;
  bool prefix_full = false;
  const InflateSink sink = [&](std::span<const std::byte> chunk) {
    const size_t keep = std::min(chunk.size(), kNpyPrefixLen - prefix->size());
    prefix->insert(prefix->end(), chunk.begin(), chunk.begin() + static_cast<ptrdiff_t>(keep));
    crc = Crc32(crc, chunk);
    prefix_full = prefix->size() == kNpyPrefixLen;
    if (prefix_full && depth == NpzDepth::kHeaders) {
      return Error{ErrorCode::kInvalidArgument, 0, "stop: the header is read"};
    }
    return Error{};
  };
  const uint64_t early_emit_at = early ? kNpyPrefixLen : UINT64_MAX;
  if (Error e = Inflate(stored, record.data_offset, record.size, sink, early_emit_at);
      !e.ok()) {
    if (prefix_full && depth == NpzDepth::kHeaders) return {};
    if (e.tensor.empty()) e.tensor = record.name;
    return e;
  }
  if (crc != record.crc32) {
    return Error{ErrorCode::kZipChecksum, record.data_offset,
                 "member bytes fail their CRC-32 once inflated", record.name, {}};
  }
  return {};
}

// MemberOf describes a record whose .npy header `array` describes.
NpzMember MemberOf(const ZipRecord& record, std::string key, NpyArrayInfo array) {
  NpzMember member;
  member.key = std::move(key);
  member.compressed = record.method != kZipStored;
  member.header_offset = record.header_offset;
  member.data_offset = record.data_offset;
  member.compressed_size = record.compressed_size;
  member.crc32 = record.crc32;
  member.array = std::move(array);
  return member;
}

// ReadMember validates one record as a .npy member.
Result<NpzMember> ReadMember(const ZipArchive& archive, const ZipRecord& record,
                             NpzDepth depth, std::vector<std::byte>* prefix) {
  Result<std::string> key = KeyOf(record);
  if (!key.ok()) return key.error();
  std::span<const std::byte> head;
  if (record.method == kZipStored) {
    if (Error e = archive.VerifyCrc(record); !e.ok()) return e;
    head = archive.Data(record);
  } else {
    prefix->clear();
    if (Error e = InflateMember(archive.Data(record), record, depth, prefix); !e.ok()) return e;
    head = *prefix;
  }
  Result<NpyArrayInfo> array = ParseNpy(head, record.size);
  if (!array.ok()) return MemberError(array.error(), record, *key);
  return MemberOf(record, std::move(*key), std::move(*array));
}

// WindowSource is the range [offset, offset + size) of another source, as a source of its
// own: a stored member's .npy, read by the npy reader's own growing reads.
class WindowSource final : public ByteSource {
 public:
  WindowSource(const ByteSource& source, uint64_t offset, uint64_t size)
      : source_(source), offset_(offset), size_(size) {}
  uint64_t size() const override { return size_; }
  Error ReadAt(uint64_t offset, std::span<std::byte> out) const override {
    if (Error error = SourceRangeError(size_, offset, out.size(), "member"); !error.ok()) {
      return error;
    }
    return source_.ReadAt(offset_ + offset, out);
  }
  bool remote() const override { return source_.remote(); }

 private:
  const ByteSource& source_;
  uint64_t offset_;
  uint64_t size_;
};

// VerifyStoredCrc computes a stored record's CRC-32 from the source (Crc32OfRange: memory
// stays one chunk whatever the member's size).
Error VerifyStoredCrc(const ByteSource& source, const ZipRecord& record) {
  const Result<uint32_t> crc = Crc32OfRange(source, record.data_offset, record.size);
  if (!crc.ok()) return crc.error();
  if (*crc != record.crc32) {
    return Error{ErrorCode::kZipChecksum, record.data_offset, "record bytes fail their CRC-32",
                 record.name, {}};
  }
  return {};
}

// StreamReadOnlyToItsHeader says whether a remote source reads a deflated member only as
// far as its .npy header: when the header is not the whole member (a shorter one is
// read whole, its stream's end and CRC-32 checked).
bool StreamReadOnlyToItsHeader(const ByteSource& source, const ZipRecord& record) {
  return source.remote() && record.method != kZipStored && record.size >= kNpyPrefixLen;
}

// kFirstDeflatedRead is how much of a deflated member a remote source reads first.
constexpr uint64_t kFirstDeflatedRead = uint64_t{16} << 10;

// ReadDeflatedHead puts a deflated member's first kNpyPrefixLen bytes (all of it when
// shorter) in *prefix. A local source reads and inflates the whole stream (its end and
// CRC-32 checked). A remote one inflates growing prefixes of the stream (16 KiB, then
// doubling) until the header comes out: an error counts only once the whole stream was
// given (a cut stream fails where it is cut), so it is always the whole read's error.
Error ReadDeflatedHead(const ByteSource& source, const ZipRecord& record,
                       std::vector<std::byte>* prefix) {
  const WindowSource member(source, record.data_offset, record.compressed_size);
  const bool partial = StreamReadOnlyToItsHeader(source, record);
  uint64_t len = partial ? std::min(record.compressed_size, kFirstDeflatedRead)
                         : record.compressed_size;
  std::vector<std::byte> stored;
  for (;;) {
    if (Error e = AppendRange(member, len, &stored); !e.ok()) {
      e.offset += record.data_offset;
      return e;
    }
    prefix->clear();
    const NpzDepth depth = partial ? NpzDepth::kHeaders : NpzDepth::kWhole;
    Error error = InflateMember(stored, record, depth, prefix, partial);
    if (error.ok() || len == record.compressed_size) return error;
    len = std::min(record.compressed_size, len * 2);
  }
}

// ReadMemberSource is ReadMember over a source: a stored member's .npy header read by
// ranges (its CRC-32 computed only when the source is local), a deflated member's header
// inflated by ReadDeflatedHead.
Result<NpzMember> ReadMemberSource(const ByteSource& source, const ZipRecord& record,
                                   std::vector<std::byte>* prefix) {
  Result<std::string> key = KeyOf(record);
  if (!key.ok()) return key.error();
  if (record.method != kZipStored) {
    if (Error e = ReadDeflatedHead(source, record, prefix); !e.ok()) return e;
    Result<NpyArrayInfo> array = ParseNpy(*prefix, record.size);
    if (!array.ok()) return MemberError(array.error(), record, *key);
    return MemberOf(record, std::move(*key), std::move(*array));
  }
  if (!source.remote()) {
    if (Error e = VerifyStoredCrc(source, record); !e.ok()) return e;
  }
  Result<NpyArrayInfo> array =
      ReadNpySource(WindowSource(source, record.data_offset, record.size));
  if (!array.ok()) return MemberError(array.error(), record, *key);
  return MemberOf(record, std::move(*key), std::move(*array));
}

}  // namespace

Result<NpzInfo> ParseNpz(std::span<const std::byte> bytes, NpzDepth depth) {
  Result<ZipArchive> archive = ZipArchive::Open(bytes, ZipFlavor::kNpz);
  if (!archive.ok()) return archive.error();
  if (Error error = CheckKeysAnswerOnce(*archive); !error.ok()) return error;
  NpzInfo info;
  info.members.reserve(archive->records().size());
  std::vector<std::byte> prefix;
  prefix.reserve(kNpyPrefixLen);
  for (const ZipRecord& record : archive->records()) {
    Result<NpzMember> member = ReadMember(*archive, record, depth, &prefix);
    if (!member.ok()) return member.error();
    info.members.push_back(std::move(*member));
  }
  return info;
}

Result<NpzInfo> ReadNpzFile(const std::string& path) {
  Result<std::unique_ptr<MappedFile>> file = MappedFile::Open(path);
  if (!file.ok()) return file.error();
  return ParseNpz((*file)->bytes());
}

Result<NpzInfo> ReadNpzSource(const ByteSource& source, uint64_t* crc_unread) {
  *crc_unread = 0;
  // No record's data is wanted whole: each local header is read alone, then each member's
  // first bytes (stored) or stream (deflated) by ReadMemberSource.
  Result<ZipArchive> archive = ZipArchive::OpenSource(
      source, ZipFlavor::kNpz, {}, nullptr, ZipLocalHeaders::kEvery);
  if (!archive.ok()) return archive.error();
  if (source.remote()) {
    for (const ZipRecord& record : archive->records()) {
      *crc_unread += record.method == kZipStored || StreamReadOnlyToItsHeader(source, record);
    }
  }
  if (Error error = CheckKeysAnswerOnce(*archive); !error.ok()) return error;
  NpzInfo info;
  info.members.reserve(archive->records().size());
  std::vector<std::byte> prefix;
  prefix.reserve(kNpyPrefixLen);
  for (const ZipRecord& record : archive->records()) {
    Result<NpzMember> member = ReadMemberSource(source, record, &prefix);
    if (!member.ok()) return member.error();
    info.members.push_back(std::move(*member));
  }
  return info;
}

Error StreamNpzMember(std::span<const std::byte> bytes, const NpzMember& member, uint64_t from,
                      const NpzChunkSink& sink) {
  const uint64_t size = member.array.data_offset + member.array.data_len;
  if (from > size || member.data_offset > bytes.size() ||
      bytes.size() - member.data_offset < member.compressed_size) {
    return Error{ErrorCode::kInvalidArgument, member.data_offset,
                 "member outside the archive given", member.key, {}};
  }
  const std::span<const std::byte> stored = bytes.subspan(member.data_offset,
                                                          member.compressed_size);
  if (!member.compressed) {
    if (from == size) return {};
    return sink(stored.subspan(from));
  }
  uint64_t at = 0;
  uint32_t crc = 0;
  const InflateSink skip_then_pass = [&](std::span<const std::byte> chunk) {
    crc = Crc32(crc, chunk);
    const uint64_t start = at;
    at += chunk.size();
    if (at <= from) return Error{};
    return sink(chunk.subspan(from > start ? from - start : 0));
  };
  if (Error e = Inflate(stored, member.data_offset, size, skip_then_pass); !e.ok()) return e;
  if (crc != member.crc32) {
    return Error{ErrorCode::kZipChecksum, member.data_offset,
                 "member bytes fail their CRC-32 once inflated", member.key, {}};
  }
  return {};
}

}  // namespace stguard
