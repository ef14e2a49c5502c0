// SPDX-License-Identifier: Apache-2.0
// SniffFormat: a file's format from its bytes (see stguard/sniff.h for the rules).
#include "stguard/sniff.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

#include "base/little_endian.h"
#include "base/out_of_memory.h"
#include "base/prefixed_source.h"
#include "base/source_read.h"
#include "base/test_pause.h"
#include "sniff/sniff_source.h"
#include "stguard/gguf.h"
#include "stguard/mapped_file.h"
#include "stguard/npy.h"
#include "sniff/legacy_magic.h"
#include "sniff/pickle_walk.h"
#include "sniff/tar_probe.h"
#include "zip/end_record.h"

namespace stguard {
namespace {

bool StartsWith(std::span<const std::byte> bytes, std::string_view prefix) {
  return bytes.size() >= prefix.size() &&
         std::memcmp(bytes.data(), prefix.data(), prefix.size()) == 0;
}

uint8_t ByteAt(std::span<const std::byte> bytes, size_t at) {
  return static_cast<uint8_t>(bytes[at]);
}

// ---- ZIP ------------------------------------------------------------------------------

// kDirectoryChunkLen is how much of a central directory one read brings in.
constexpr uint64_t kDirectoryChunkLen = 64 * 1024;

// SourceWindow hands out ranges of a source through one buffered window, so a directory
// of many small entries costs a few reads, not one per entry.
class SourceWindow {
 public:
  explicit SourceWindow(const ByteSource& source) : source_(source) {}
  // Get points *out at [offset, offset + len), which the caller proved lies in the source.
  Error Get(uint64_t offset, uint64_t len, std::span<const std::byte>* out) {
    if (offset < start_ || offset - start_ > buffer_.size() ||
        buffer_.size() - (offset - start_) < len) {
      const uint64_t left = source_.size() - offset;
      if (Error e = ReadRange(source_, offset, std::min(left, std::max(len, kDirectoryChunkLen)),
                              &buffer_);
          !e.ok()) {
        return e;
      }
      start_ = offset;
    }
    *out = std::span<const std::byte>(buffer_).subspan(static_cast<size_t>(offset - start_),
                                                       static_cast<size_t>(len));
    return {};
  }

 private:
  const ByteSource& source_;
  std::vector<std::byte> buffer_;
  uint64_t start_ = 0;
};

// ZipCentralDirectory finds where the central directory starts and how many entries it
// claims, through the ZIP64 records when the classic fields are saturated. Sets *found to
// false when the archive's end cannot be read; an error is the source failing.
Error ZipCentralDirectory(const ByteSource& source, bool* found, uint64_t* out_offset,
                          uint64_t* out_count) {
  *found = false;
  const uint64_t size = source.size();
  if (size < kZipEndLen) return {};
  const uint64_t tail_len = std::min<uint64_t>(size, kZipEndSearchLen + kZip64LocatorLen);
  const uint64_t tail_start = size - tail_len;
  std::vector<std::byte> tail;
  if (Error e = ReadRange(source, tail_start, tail_len, &tail); !e.ok()) return e;
  const std::span<const std::byte> bytes(tail);
  // The record a loader takes: the last signature (zip/end_record.h).
  const uint64_t at = FindZipEnd(bytes, size, ZipEndRule::kLastSignature);
  if (at == UINT64_MAX) return {};
  const size_t here = static_cast<size_t>(at - tail_start);
  const ZipEndFields fields = ReadZipEndFields(bytes.data() + here);
  *out_count = fields.entries;
  *out_offset = fields.directory_offset;
  if (*out_count != 0xFFFF && *out_offset != 0xFFFFFFFF) {
    *found = true;
    return {};
  }
  // ZIP64: a 20-byte locator just before, pointing at the 56-byte ZIP64 record.
  if (here < kZip64LocatorLen ||
      !StartsWith(bytes.subspan(here - kZip64LocatorLen), "PK\x06\x07")) {
    return {};
  }
  const uint64_t record = LoadLittleEndian<uint64_t>(bytes.data() + here - kZip64LocatorLen + 8);
  if (record > size || size - record < kZip64EndLen) return {};
  std::vector<std::byte> zip64;
  if (Error e = ReadRange(source, record, kZip64EndLen, &zip64); !e.ok()) return e;
  if (!StartsWith(zip64, "PK\x06\x06")) return {};
  *out_count = LoadLittleEndian<uint64_t>(zip64.data() + 32);
  *out_offset = LoadLittleEndian<uint64_t>(zip64.data() + 48);
  *found = true;
  return {};
}

// ZipKind is what an archive's central directory names.
enum class ZipKind : uint8_t { kPytorch, kNpz, kOther };

// ClassifyZip reads the central directory leniently (no check beyond bounds), as a loader
// might. A ".pkl" record anywhere makes it PyTorch's (torch.load unpickles it), and so does
// a directory this walk cannot read (a loader more forgiving than this walk could find one:
// fail closed). Members all named "*.npy" make an npz; anything else is another archive.
// Reads the archive's tail and its directory only, by ranges.
Result<ZipKind> ClassifyZip(const ByteSource& source) {
  uint64_t at = 0;
  uint64_t count = 0;
  bool found = false;
  if (Error e = ZipCentralDirectory(source, &found, &at, &count); !e.ok()) return e;
  if (!found) return ZipKind::kPytorch;
  constexpr size_t kEntryLen = 46;
  const uint64_t size = source.size();
  SourceWindow window(source);
  bool all_npy = count > 0;
  for (uint64_t k = 0; k < count; ++k) {
    std::span<const std::byte> entry;
    if (at > size || size - at < kEntryLen) return ZipKind::kPytorch;
    if (Error e = window.Get(at, kEntryLen, &entry); !e.ok()) return e;
    if (!StartsWith(entry, "PK\x01\x02")) return ZipKind::kPytorch;
    const uint64_t name_len = LoadLittleEndian<uint16_t>(entry.data() + 28);
    const uint64_t rest = name_len + LoadLittleEndian<uint16_t>(entry.data() + 30) +
                          LoadLittleEndian<uint16_t>(entry.data() + 32);
    if (size - at - kEntryLen < rest) return ZipKind::kPytorch;
    std::span<const std::byte> name_bytes;
    if (Error e = window.Get(at + kEntryLen, name_len, &name_bytes); !e.ok()) return e;
    const std::string_view name(reinterpret_cast<const char*>(name_bytes.data()), name_len);
    if (name.ends_with(".pkl")) return ZipKind::kPytorch;
    all_npy = all_npy && name.ends_with(".npy");
    at += kEntryLen + rest;
  }
  return all_npy ? ZipKind::kNpz : ZipKind::kOther;
}

// ---- tar ------------------------------------------------------------------------------

// A tar is what Python's tarfile would open (sniff/tar_probe.h: the test torch.load's
// first try applies, so the sniffer and the torch reader cannot disagree), except a first
// block of NULs: tarfile opens that as an empty archive, with no member to unpickle (torch
// then fails to find its "storages"), so for the sniffer it is no format at all.
bool LooksLikeTar(std::span<const std::byte> bytes) {
  if (!PassesTarHeaderTest(bytes)) return false;
  const auto first_block = bytes.first(kTarBlockLen);
  return std::any_of(first_block.begin(), first_block.end(),
                     [](std::byte b) { return b != std::byte{0}; });
}

// ---- safetensors ----------------------------------------------------------------------

// LooksLikeSafetensors reads the prefix's first 10 bytes (it has them when the file does)
// and compares the length with the whole file's size.
bool LooksLikeSafetensors(std::span<const std::byte> prefix, uint64_t file_size) {
  if (file_size < 10 || prefix.size() < 10) return false;
  const uint64_t header_len = LoadLittleEndian<uint64_t>(prefix.data());
  return header_len >= 2 && header_len <= file_size - 8 && ByteAt(prefix, 8) == '{';
}

// ---- json -----------------------------------------------------------------------------

// LooksLikeJson: the first byte after JSON whitespace (and a UTF-8 byte order mark, which
// Python's json refuses but editors write) opens an object or an array, and what follows
// can begin its contents ('[PAD]' opening a vocab.txt cannot). When the prefix ends in
// whitespace before either byte and the file goes on, *undecided is set instead.
bool LooksLikeJson(std::span<const std::byte> bytes, uint64_t file_size, bool* undecided) {
  std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  const bool more = bytes.size() < file_size;
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  constexpr std::string_view kSpace = " \t\r\n";
  const size_t first = text.find_first_not_of(kSpace);
  *undecided = first == std::string_view::npos && more;
  if (first == std::string_view::npos || (text[first] != '{' && text[first] != '[')) return false;
  const size_t second = text.find_first_not_of(kSpace, first + 1);
  *undecided = second == std::string_view::npos && more;
  if (second == std::string_view::npos) return false;
  const std::string_view starts = text[first] == '{' ? "\"}" : "{[\"-0123456789tfn]";
  return starts.find(text[second]) != std::string_view::npos;
}

}  // namespace

namespace {

// SniffStep decides from `prefix`, the first bytes of `source` (a whole file's bytes, or
// what a range reader has read so far), or sets *need to the length of prefix it must see
// first (always more than it has, never more than the file). Growing the prefix never
// changes a decision already made: every rule below reads at most `need` bytes, so the
// mapped path (whole file in hand) and the range path decide alike.
Result<Format> SniffStep(std::span<const std::byte> prefix, const ByteSource& source,
                         uint64_t* need) {
  const uint64_t size = source.size();
  *need = 0;
  const auto wants = [&](uint64_t len) {
    len = std::min(len, size);
    if (prefix.size() >= len) return false;
    *need = len;
    return true;
  };
  // Every rule up to the safetensors one reads at most a tar block.
  if (wants(kTarBlockLen)) return Format::kUnknown;
  // torch.load takes any file starting with a local file header for a ZIP.
  if (StartsWith(prefix, "PK\x03\x04")) {
    // The tail of a small archive includes the prefix already read: served from it.
    const PrefixedSource prefixed(source, prefix);
    Result<ZipKind> kind = ClassifyZip(prefixed);
    if (!kind.ok()) return kind.error();
    switch (*kind) {
      case ZipKind::kPytorch: return Format::kPytorchZip;
      case ZipKind::kNpz: return Format::kNpz;
      case ZipKind::kOther: break;
    }
    return Format::kZip;
  }
  // An archive with no member starts with its end record: np.savez(f) with no array
  // writes one, and np.load opens a file starting "PK\5\6" as an npz (torch.load takes
  // only "PK\3\4" for a ZIP). The npz reader then requires exactly an empty archive.
  if (StartsWith(prefix, "PK\x05\x06")) return Format::kNpz;
  if (LegacyMagicLen(prefix) != 0) return Format::kPytorchLegacy;
  // torch.load tries a tar before a pickle.
  if (LooksLikeTar(prefix)) return Format::kTar;
  if (LooksLikeSafetensors(prefix, size)) {
    // Its length prefix can spell a short pickle that stops ("N." is 11,854): the header
    // decides then. One that calls out within the prefix and header (what the reader
    // reads anyway) is a pickle whatever follows. The header is read only as far as the
    // walk goes (almost always it rejects within the first bytes): what was read is handed
    // to the reader, which reads the rest once.
    const uint64_t header_end = 8 + LoadLittleEndian<uint64_t>(prefix.data());
    const PickleWalkResult walk =
        WalkPickle(prefix.first(static_cast<size_t>(std::min<uint64_t>(prefix.size(), header_end))));
    if (walk.ran_out && wants(std::min(header_end, 2 * uint64_t{prefix.size()}))) {
      return Format::kUnknown;
    }
    return walk.outcome == PickleWalk::kCalls ? Format::kPickle : Format::kSafetensors;
  }
  // Walk a bounded prefix: a file still reading as a pickle when it ends is one.
  const uint64_t window = std::min<uint64_t>(size, kMaxSniffWalkLen);
  const PickleWalkResult walk =
      WalkPickle(prefix.first(static_cast<size_t>(std::min<uint64_t>(prefix.size(), window))));
  if (walk.ran_out && wants(std::min(window, 8 * uint64_t{prefix.size()}))) {
    return Format::kUnknown;
  }
  // A GGUF or npy magic names the format only when torch.load, reading the same bytes as
  // a pickle, would not reach a call: a file that is both is a pickle (fail closed).
  // (npy's first byte is STACK_GLOBAL on an empty stack, so it never is.)
  if (walk.outcome == PickleWalk::kCalls) return Format::kPickle;
  if (gguf::LooksLikeGguf(prefix)) return Format::kGguf;
  if (HasNpyMagic(prefix)) return Format::kNpy;
  if (walk.outcome != PickleWalk::kRejected) return Format::kPickle;
  if (walk.ran_out && window < size) return Format::kPickle;
  bool undecided = false;
  const bool json = LooksLikeJson(prefix, size, &undecided);
  if (undecided && wants(2 * uint64_t{prefix.size()})) return Format::kUnknown;
  return json ? Format::kJson : Format::kUnknown;
}

}  // namespace

Format SniffFormat(std::span<const std::byte> bytes) {
  const MemorySource source(bytes);
  uint64_t need = 0;
  // The whole file is in hand, so no step asks for more. A memory source cannot fail; an
  // allocation failure (the ZIP tail's copy) fails closed, as an archive torch would load.
  const Result<Format> format = SniffStep(bytes, source, &need);
  return format.ok() ? *format : Format::kPytorchZip;
}

Result<Format> SniffSourcePrefix(const ByteSource& source, std::vector<std::byte>* prefix) {
  return CatchOutOfMemory("out of memory while sniffing the format", [&]() -> Result<Format> {
    for (;;) {
      uint64_t need = 0;
      Result<Format> format = SniffStep(*prefix, source, &need);
      if (!format.ok() || need == 0) return format;
      if (!prefix->empty()) PauseForTestingAt("header");  // first bytes read, not the rest
      if (Error e = AppendRange(source, need, prefix); !e.ok()) return e;
    }
  });
}

Result<Format> SniffSource(const ByteSource& source) {
  std::vector<std::byte> prefix;
  return SniffSourcePrefix(source, &prefix);
}

Result<Format> SniffFile(const std::string& path) {
  Result<std::unique_ptr<MappedFile>> file = MappedFile::Open(path);
  if (!file.ok()) return file.error();
  return SniffFormat((*file)->bytes());
}

}  // namespace stguard
