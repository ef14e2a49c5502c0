// SPDX-License-Identifier: Apache-2.0
// Validation of a whole .npy file from its header alone: the preamble (magic, version,
// header length), the dict (dict_literal.cc), its three keys, the descr (descr_table.cc)
// and the data length the shape implies, compared with the file size. The data itself is
// never read, so a mapped file's data pages are never touched.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

#include "base/checked_math.h"
#include "base/source_read.h"
#include "npy/dict_literal.h"
#include "stguard/mapped_file.h"
#include "stguard/npy.h"

namespace stguard {

namespace {

Error PreambleError(uint64_t offset, const char* message, std::string context = {}) {
  return Error{ErrorCode::kNpyPreamble, offset, message, std::move(context), {}};
}

Error KeyError(uint64_t offset, const char* message, std::string context = {}) {
  return Error{ErrorCode::kNpyHeaderKeys, offset, message, std::move(context), {}};
}

// Preamble is what precedes the header: magic, version and the header's length.
struct Preamble {
  uint8_t major = 0;
  uint8_t minor = 0;
  uint64_t header_offset = 0;
  uint64_t header_len = 0;
};

Result<Preamble> ReadPreamble(std::span<const std::byte> prefix, uint64_t file_size) {
  if (!HasNpyMagic(prefix)) return PreambleError(0, "the file does not begin with \\x93NUMPY");
  if (prefix.size() < 8) return PreambleError(prefix.size(), "the file ends in the preamble");
  Preamble preamble;
  preamble.major = static_cast<uint8_t>(prefix[6]);
  preamble.minor = static_cast<uint8_t>(prefix[7]);
  if (preamble.minor != 0 || preamble.major < 1 || preamble.major > 3) {
    return PreambleError(6, "a version other than 1.0, 2.0 or 3.0",
                         std::to_string(preamble.major) + "." + std::to_string(preamble.minor));
  }
  // Version 1.0 has a u16 length; 2.0 and 3.0 a u32 (little-endian both).
  const size_t length_bytes = preamble.major == 1 ? 2 : 4;
  preamble.header_offset = 8 + length_bytes;
  if (prefix.size() < preamble.header_offset) {
    return PreambleError(prefix.size(), "the file ends in the header length");
  }
  for (size_t i = length_bytes; i-- > 0;) {
    preamble.header_len = (preamble.header_len << 8) | static_cast<uint8_t>(prefix[8 + i]);
  }
  if (preamble.header_len > kNpyMaxHeaderLen) {
    return PreambleError(8, "a header longer than 10,000 bytes (numpy's max_header_size)",
                         std::to_string(preamble.header_len));
  }
  if (preamble.header_len > file_size - preamble.header_offset ||
      preamble.header_len > prefix.size() - preamble.header_offset) {
    return PreambleError(8, "the header length reaches past the end of the file",
                         std::to_string(preamble.header_len));
  }
  // numpy pads to 64 bytes, older writers and cnpy to 16: 16 is what every writer keeps,
  // and what lets a reader map the data aligned.
  if ((preamble.header_offset + preamble.header_len) % 16 != 0) {
    return PreambleError(8, "magic, length and header are not a multiple of 16 bytes",
                         std::to_string(preamble.header_offset + preamble.header_len));
  }
  return preamble;
}

// ApplyEntries checks that the dict holds exactly descr, fortran_order and shape, each
// once and of its type, and stores them in `info`.
Error ApplyEntries(std::vector<npy::DictEntry>& entries, uint64_t header_offset,
                   NpyArrayInfo* info) {
  bool seen[3] = {false, false, false};
  for (npy::DictEntry& entry : entries) {
    constexpr std::array<std::string_view, 3> kKeys = {"descr", "fortran_order", "shape"};
    const auto found = std::find(kKeys.begin(), kKeys.end(), entry.key);
    if (found == kKeys.end()) {
      return KeyError(entry.key_offset, "a key other than descr, fortran_order and shape",
                      entry.key.substr(0, 64));
    }
    const size_t index = static_cast<size_t>(found - kKeys.begin());
    // numpy keeps the last of two equal keys; two readers could then disagree on which
    // one counts, so a repeated key is refused.
    if (seen[index]) return KeyError(entry.key_offset, "a key given twice", entry.key);
    seen[index] = true;
    const npy::LiteralKind expected[3] = {npy::LiteralKind::kString, npy::LiteralKind::kBool,
                                          npy::LiteralKind::kIntTuple};
    if (entry.kind != expected[index]) {
      static constexpr const char* kTypeMessages[3] = {
          "descr is not a string (structured dtypes are refused)",
          "fortran_order is not True or False", "shape is not a tuple of integers"};
      return KeyError(entry.value_offset, kTypeMessages[index]);
    }
    if (index == 0) {
      info->descr = std::move(entry.text);
      Result<NpyType> type = ParseNpyDescr(info->descr, entry.value_offset);
      if (!type.ok()) return type.error();
      info->type = *type;
    } else if (index == 1) {
      info->fortran_order = entry.flag;
    } else {
      // numpy 1.x arrays have at most 32 dimensions (NPY_MAXDIMS): np.load refuses more.
      // numpy 2 raised the limit to 64; the file must load in both.
      if (entry.integers.size() > kNpyMaxDims) {
        return KeyError(entry.value_offset,
                        "a shape of more than 32 dimensions (numpy 1.x refuses it: \"maximum "
                        "supported dimension for an ndarray is 32\")");
      }
      info->shape = std::move(entry.integers);
    }
  }
  for (size_t i = 0; i < 3; ++i) {
    if (!seen[i]) {
      static constexpr const char* kMissing[3] = {"the header has no descr",
                                                  "the header has no fortran_order",
                                                  "the header has no shape"};
      return KeyError(header_offset, kMissing[i]);
    }
  }
  return {};
}

// CheckDataLength computes element count times itemsize without overflow and compares it
// with the bytes after the header. numpy holds sizes in a signed 64-bit intp and checks
// the byte count of the non-zero dimensions even when one dimension is 0, so (0, 2**63)
// is refused by numpy and is refused here too: every such product stays below 2**63.
// The element count is an intp too (np.load multiplies the shape in int64 and reshapes),
// so items of 0 bytes (V0) count as 1 here: (2**63,) or (2, 2**62) of V0 is refused, as
// np.load refuses it, instead of being an empty array whatever its shape.
Error CheckDataLength(uint64_t file_size, NpyArrayInfo* info) {
  constexpr uint64_t kMaxIntp = uint64_t{INT64_MAX};
  uint64_t nonzero_bytes = std::max<uint64_t>(info->type.itemsize, 1);
  bool has_zero = false;
  for (uint64_t dim : info->shape) {
    if (dim == 0) {
      has_zero = true;
      continue;
    }
    if (!CheckedMul(nonzero_bytes, dim, &nonzero_bytes) || nonzero_bytes > kMaxIntp) {
      return Error{ErrorCode::kValidationOverflow, info->data_offset,
                   "the array's byte count does not fit in 63 bits (numpy's intp)", {}, {}};
    }
  }
  if (nonzero_bytes > kMaxIntp) {
    return Error{ErrorCode::kValidationOverflow, info->data_offset,
                 "the item size does not fit in 63 bits (numpy's intp)", {}, {}};
  }
  info->data_len = has_zero || info->type.itemsize == 0 ? 0 : nonzero_bytes;
  const uint64_t present = file_size - info->data_offset;
  if (present != info->data_len) {
    // numpy ignores bytes after the data; two readers could then disagree on what the
    // file holds, so trailing bytes are refused like missing ones.
    return Error{ErrorCode::kNpyDataLength,
                 present < info->data_len ? file_size : info->data_offset + info->data_len,
                 present < info->data_len ? "the data is shorter than shape and descr imply"
                                          : "bytes follow the array's data",
                 "expected " + std::to_string(info->data_len) + " data bytes, found " +
                     std::to_string(present),
                 {}};
  }
  return {};
}

}  // namespace

bool HasNpyMagic(std::span<const std::byte> bytes) {
  return bytes.size() >= kNpyMagicLen && std::memcmp(bytes.data(), kNpyMagic, kNpyMagicLen) == 0;
}

Result<NpyArrayInfo> ParseNpy(std::span<const std::byte> prefix, uint64_t file_size) {
  prefix = prefix.first(static_cast<size_t>(std::min<uint64_t>(prefix.size(), file_size)));
  Result<Preamble> preamble = ReadPreamble(prefix, file_size);
  if (!preamble.ok()) return preamble.error();
  NpyArrayInfo info;
  info.major_version = preamble->major;
  info.minor_version = preamble->minor;
  info.header_len = preamble->header_len;
  info.data_offset = preamble->header_offset + preamble->header_len;
  // Version 1.x and 2.x headers are latin-1, 3.0 UTF-8; the parser accepts only ASCII,
  // which reads the same in both, so the encoding never changes the verdict.
  const std::string_view header(reinterpret_cast<const char*>(prefix.data()) +
                                    preamble->header_offset,
                                static_cast<size_t>(preamble->header_len));
  Result<std::vector<npy::DictEntry>> entries =
      npy::ParseDictLiteral(header, preamble->header_offset);
  if (!entries.ok()) return entries.error();
  if (Error e = ApplyEntries(*entries, preamble->header_offset, &info); !e.ok()) return e;
  if (Error e = CheckDataLength(file_size, &info); !e.ok()) return e;
  return info;
}

// AnnouncedHeaderEnd is where the header ends by the preamble in `prefix`, capped at the
// longest preamble and header the format allows (a longer one is refused from the
// preamble alone), or 0 when the preamble is not there to say.
static uint64_t AnnouncedHeaderEnd(std::span<const std::byte> prefix) {
  if (!HasNpyMagic(prefix) || prefix.size() < 8) return 0;
  const size_t length_bytes = static_cast<uint8_t>(prefix[6]) == 1 ? 2 : 4;
  if (prefix.size() < 8 + length_bytes) return 0;
  uint64_t header_len = 0;
  for (size_t i = length_bytes; i-- > 0;) {
    header_len = (header_len << 8) | static_cast<uint8_t>(prefix[8 + i]);
  }
  return 8 + length_bytes + std::min<uint64_t>(header_len, kNpyMaxHeaderLen);
}

Result<NpyArrayInfo> ReadNpySource(const ByteSource& source) {
  const uint64_t size = source.size();
  std::vector<std::byte> prefix;
  // Two reads: the preamble, then exactly the header it announces (within the file).
  if (Error e = ReadRange(source, 0, std::min<uint64_t>(size, kNpyMaxPreambleLen), &prefix);
      !e.ok()) {
    return e;
  }
  const uint64_t header_end = std::min(AnnouncedHeaderEnd(prefix), size);
  if (Error e = AppendRange(source, header_end, &prefix); !e.ok()) return e;
  return ParseNpy(prefix, size);
}

Result<NpyArrayInfo> ReadNpyFile(const std::string& path) {
  Result<std::unique_ptr<MappedFile>> file = MappedFile::OpenUnmapped(path);
  if (!file.ok()) return file.error();
  return ReadNpySource(**file);
}

}  // namespace stguard
