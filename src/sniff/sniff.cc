// SPDX-License-Identifier: Apache-2.0
// SniffFormat: a file's format from its bytes (see stguard/sniff.h for the rules).
#include "stguard/sniff.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string_view>

#include "base/little_endian.h"
#include "stguard/gguf.h"
#include "stguard/mapped_file.h"
#include "stguard/npy.h"
#include "sniff/pickle_walk.h"
#include "sniff/tar_probe.h"

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

// kMaxEocdSearch is how far from the end the end-of-central-directory record can be: its
// 22 bytes plus a comment of at most 65,535.
constexpr size_t kEocdLen = 22;
constexpr size_t kMaxEocdSearch = kEocdLen + 0xFFFF;

// ZipCentralDirectory finds where the central directory starts and how many entries it
// claims, through the ZIP64 records when the classic fields are saturated. Returns false
// when the archive's end cannot be read.
bool ZipCentralDirectory(std::span<const std::byte> bytes, uint64_t* out_offset,
                         uint64_t* out_count) {
  if (bytes.size() < kEocdLen) return false;
  const size_t lowest = bytes.size() > kMaxEocdSearch ? bytes.size() - kMaxEocdSearch : 0;
  for (size_t at = bytes.size() - kEocdLen + 1; at-- > lowest;) {
    if (!StartsWith(bytes.subspan(at), "PK\x05\x06")) continue;
    const std::byte* eocd = bytes.data() + at;
    *out_count = LoadLittleEndian<uint16_t>(eocd + 10);
    *out_offset = LoadLittleEndian<uint32_t>(eocd + 16);
    if (*out_count != 0xFFFF && *out_offset != 0xFFFFFFFF) return true;
    // ZIP64: a 20-byte locator just before, pointing at the 56-byte ZIP64 record.
    if (at < 20 || !StartsWith(bytes.subspan(at - 20), "PK\x06\x07")) return false;
    const uint64_t record = LoadLittleEndian<uint64_t>(eocd - 20 + 8);
    if (record > bytes.size() || bytes.size() - record < 56 ||
        !StartsWith(bytes.subspan(record), "PK\x06\x06")) {
      return false;
    }
    *out_count = LoadLittleEndian<uint64_t>(bytes.data() + record + 32);
    *out_offset = LoadLittleEndian<uint64_t>(bytes.data() + record + 48);
    return true;
  }
  return false;
}

// ZipKind is what an archive's central directory names.
enum class ZipKind : uint8_t { kPytorch, kNpz, kOther };

// ClassifyZip reads the central directory leniently (no check beyond bounds), as a loader
// might. A ".pkl" record anywhere makes it PyTorch's (torch.load unpickles it), and so does
// a directory this walk cannot read (a loader more forgiving than this walk could find one:
// fail closed). Members all named "*.npy" make an npz; anything else is another archive.
ZipKind ClassifyZip(std::span<const std::byte> bytes) {
  uint64_t at = 0;
  uint64_t count = 0;
  if (!ZipCentralDirectory(bytes, &at, &count)) return ZipKind::kPytorch;
  constexpr size_t kEntryLen = 46;
  bool all_npy = count > 0;
  for (uint64_t k = 0; k < count; ++k) {
    if (at > bytes.size() || bytes.size() - at < kEntryLen ||
        !StartsWith(bytes.subspan(at), "PK\x01\x02")) {
      return ZipKind::kPytorch;
    }
    const std::byte* entry = bytes.data() + at;
    const uint64_t name_len = LoadLittleEndian<uint16_t>(entry + 28);
    const uint64_t rest = name_len + LoadLittleEndian<uint16_t>(entry + 30) +
                          LoadLittleEndian<uint16_t>(entry + 32);
    if (bytes.size() - at - kEntryLen < rest) return ZipKind::kPytorch;
    const std::string_view name(reinterpret_cast<const char*>(entry + kEntryLen), name_len);
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

bool LooksLikeSafetensors(std::span<const std::byte> bytes) {
  if (bytes.size() < 10) return false;
  const uint64_t header_len = LoadLittleEndian<uint64_t>(bytes.data());
  return header_len >= 2 && header_len <= bytes.size() - 8 && ByteAt(bytes, 8) == '{';
}

// ---- json -----------------------------------------------------------------------------

// LooksLikeJson: the first byte after JSON whitespace (and a UTF-8 byte order mark, which
// Python's json refuses but editors write) opens an object or an array.
bool LooksLikeJson(std::span<const std::byte> bytes) {
  std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  const size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && (text[first] == '{' || text[first] == '[');
}

// The legacy stream's first pickle: PROTO 2, LONG1 of the magic 0x1950a86a20f9469cfc6c,
// STOP (torch/serialization.py MAGIC_NUMBER).
constexpr std::string_view kLegacyMagic(
    "\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19\x2e", 15);

}  // namespace

std::string_view FormatName(Format format) {
  switch (format) {
    case Format::kSafetensors: return "safetensors";
    case Format::kPytorchZip: return "pytorch-zip";
    case Format::kPytorchLegacy: return "pytorch-legacy";
    case Format::kPickle: return "pickle";
    case Format::kTar: return "tar";
    case Format::kZip: return "zip";
    case Format::kGguf: return "gguf";
    case Format::kNpy: return "npy";
    case Format::kNpz: return "npz";
    case Format::kJson: return "json";
    case Format::kUnknown: case Format::kNumFormats: break;
  }
  return "unknown";
}

bool IsPickleBearing(Format format) {
  return format == Format::kPytorchZip || format == Format::kPytorchLegacy ||
         format == Format::kPickle || format == Format::kTar;
}

Format SniffFormat(std::span<const std::byte> bytes) {
  // torch.load takes any file starting with a local file header for a ZIP.
  if (StartsWith(bytes, "PK\x03\x04")) {
    switch (ClassifyZip(bytes)) {
      case ZipKind::kPytorch: return Format::kPytorchZip;
      case ZipKind::kNpz: return Format::kNpz;
      case ZipKind::kOther: break;
    }
    return Format::kZip;
  }
  if (StartsWith(bytes, "PK\x05\x06")) return Format::kZip;  // an empty archive
  if (StartsWith(bytes, kLegacyMagic)) return Format::kPytorchLegacy;
  // torch.load tries a tar before a pickle.
  if (LooksLikeTar(bytes)) return Format::kTar;
  if (LooksLikeSafetensors(bytes)) {
    // Its length prefix can spell a short pickle that stops ("N." is 11,854): the header
    // decides then. One that calls out within the prefix and header (what the reader
    // reads anyway) is a pickle whatever follows.
    const uint64_t header_end = 8 + LoadLittleEndian<uint64_t>(bytes.data());
    const PickleWalk walk = WalkPickle(bytes.first(header_end)).outcome;
    return walk == PickleWalk::kCalls ? Format::kPickle : Format::kSafetensors;
  }
  // Walk a bounded prefix: a file still reading as a pickle when it ends is one.
  const size_t window = std::min(bytes.size(), kMaxSniffWalkLen);
  const PickleWalkResult walk = WalkPickle(bytes.first(window));
  // A GGUF or npy magic names the format only when torch.load, reading the same bytes as
  // a pickle, would not reach a call: a file that is both is a pickle (fail closed).
  // (npy's first byte is STACK_GLOBAL on an empty stack, so it never is.)
  if (walk.outcome == PickleWalk::kCalls) return Format::kPickle;
  if (gguf::LooksLikeGguf(bytes)) return Format::kGguf;
  if (HasNpyMagic(bytes)) return Format::kNpy;
  if (walk.outcome != PickleWalk::kRejected) return Format::kPickle;
  if (walk.ran_out && window < bytes.size()) return Format::kPickle;
  return LooksLikeJson(bytes) ? Format::kJson : Format::kUnknown;
}

Result<Format> SniffFile(const std::string& path) {
  Result<std::unique_ptr<MappedFile>> file = MappedFile::Open(path);
  if (!file.ok()) return file.error();
  return SniffFormat((*file)->bytes());
}

}  // namespace stguard
