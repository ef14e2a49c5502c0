// SPDX-License-Identifier: Apache-2.0
// stguard/npy.h: a strict reader for NumPy's .npy files (NEP 1), which never evaluates the
// header and never touches the data pages while validating.
//
// POLICY: a file is accepted when it is what numpy's own writer produces:
// - Magic "\x93NUMPY", version 1.0 (u16 header length), 2.0 or 3.0 (u32 header length);
//   the header at most kNpyMaxHeaderLen bytes (numpy's default max_header_size), inside
//   the file; magic + length + header a multiple of 16 bytes.           -> kNpyPreamble
// - The header is a dict literal read by a small parser of our own: '{', entries
//   'key': value separated by ',', an optional trailing ',', '}', then spaces and one final
//   '\n'. Only spaces separate tokens. Strings in single or double quotes without
//   backslashes; True/False; one tuple of decimal integers without sign, leading zeros
//   or suffix ("()" for 0-d, "(3,)" for 1-d). Calls, names, attribute access, nested
//   containers, other literals and non-ASCII bytes are refused; the nesting is fixed
//   (a tuple inside the dict), so no input can make the parser recurse.
//                                                                       -> kNpyHeaderSyntax
// - Exactly the keys descr, fortran_order and shape, each once, in any order; descr a
//   string, fortran_order True or False, shape a tuple of at most kNpyMaxDims (32)
//   dimensions (numpy 1.x refuses more; numpy 2 allows 64, but a file must load in
//   both: do not raise it).                                              -> kNpyHeaderKeys
// - descr a simple type string with its byte order ('<f4', '>i8', '|b1', '<U5', '|S4',
//   '<M8[s]'): byte order '<' or '>', or '|' for single-byte and byte-string types; kinds
//   b1, i1..i8, u1..u8, f2/f4/f8, c8/c16, f16/c32 (x86-64 long doubles), S<n>, U<n>,
//   V<n> (n may be 0), M8 and m8 with or without [unit]: every descr numpy 1.24 writes
//   for a dtype that is neither structured nor an object (convert refuses those
//   safetensors cannot hold, naming the descr: kInvalidDtype). A dtype name
//   ('float32'), structured dtypes (a list) and anything else:           -> kNpyDescr
//   'O' (object) means the data is a pickle that would run code:         -> kNpyObjectArray
// - The byte count of the non-zero dimensions, times item size, fits in numpy's signed
//   64-bit intp, as numpy checks even beside a 0 dimension (kValidationOverflow); the data is
//   exactly that many bytes: neither truncated nor followed by more.     -> kNpyDataLength
//
// BOUNDS: validation reads only the first 12 + kNpyMaxHeaderLen bytes, with memory and time
// linear in the header whatever the shape claims; the data is never read.
#ifndef STGUARD_NPY_H_
#define STGUARD_NPY_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "stguard/byte_source.h"
#include "stguard/dtype.h"
#include "stguard/error.h"
#include "stguard/export.h"

namespace stguard {

// kNpyMagic is the six bytes every .npy file begins with.
inline constexpr char kNpyMagic[] = "\x93NUMPY";
inline constexpr size_t kNpyMagicLen = 6;
// kNpyMaxHeaderLen is numpy's default max_header_size: numpy refuses longer headers.
inline constexpr uint32_t kNpyMaxHeaderLen = 10000;
// kNpyMaxDims is numpy 1.x's NPY_MAXDIMS: np.load refuses a shape of more dimensions.
// numpy 2 raised it to 64; stguard keeps 32 so that a file it accepts loads in both.
inline constexpr size_t kNpyMaxDims = 32;
// kNpyMaxPreambleLen is the longest magic + version + length prefix (versions 2.0, 3.0).
inline constexpr size_t kNpyMaxPreambleLen = 12;

// NpyByteOrder is the descr's first character.
enum class NpyByteOrder : uint8_t { kLittle, kBig, kNotApplicable };

// NpyType is a parsed descr: what the bytes of one element are.
struct STGUARD_API NpyType {
  char kind = 0;               // numpy's kind letter: b i u f c S U M m
  NpyByteOrder byte_order = NpyByteOrder::kNotApplicable;
  uint64_t itemsize = 0;       // bytes per element
  uint64_t scalar_size = 0;    // bytes per value to byte-swap (4 for U, 1 for S)
  std::optional<Dtype> dtype;  // the safetensors dtype holding it, if there is one
};

// NpyArrayInfo describes a valid .npy file. Offsets are absolute file offsets.
struct STGUARD_API NpyArrayInfo {
  uint8_t major_version = 0;
  uint8_t minor_version = 0;
  std::string descr;           // as written in the header ("<f4")
  NpyType type;
  bool fortran_order = false;
  std::vector<uint64_t> shape;
  uint64_t header_len = 0;     // the dict's bytes, padding and newline included
  uint64_t data_offset = 0;    // where the data begins: preamble + header
  uint64_t data_len = 0;       // element count times itemsize; data_offset + data_len is
                               // the file size
};

// HasNpyMagic says whether `bytes` begins with "\x93NUMPY" (detection by content, never by
// file name).
STGUARD_API bool HasNpyMagic(std::span<const std::byte> bytes);

// ParseNpyDescr parses a descr string ('<f4'). Returns kNpyDescr or kNpyObjectArray, with
// `offset` (where the string is in the file) as the error's offset.
STGUARD_API Result<NpyType> ParseNpyDescr(std::string_view descr, uint64_t offset);

// ParseNpy validates a .npy file given its first bytes (`prefix`: at least
// min(file_size, kNpyMaxPreambleLen + kNpyMaxHeaderLen) of them, more are ignored) and its
// total size. It never looks past the header.
STGUARD_API Result<NpyArrayInfo> ParseNpy(std::span<const std::byte> prefix,
                                          uint64_t file_size);

// ReadNpyFile opens `path` and validates it with ParseNpy, reading only its header with
// pread(2). kIoError / kNotARegularFile when the file cannot be read.
STGUARD_API Result<NpyArrayInfo> ReadNpyFile(const std::string& path);

// ReadNpySource validates an npy file read by ranges, as ReadNpyFile does (ReadNpyFile is
// this over the file): two reads, the preamble (12 bytes) and then the header it
// announces (at most kNpyMaxHeaderLen bytes); the data is never read.
STGUARD_API Result<NpyArrayInfo> ReadNpySource(const ByteSource& source);

}  // namespace stguard

#endif  // STGUARD_NPY_H_
