// SPDX-License-Identifier: Apache-2.0
// NpzPieces: an .npz of stored float32 arrays of any length, laid out as Python's zipfile
// writes np.savez (local header, .npy, ..., central directory, end record), as pieces at
// offsets: the arrays' data are zeros and never written, so a file of any size is sparse.
#ifndef STGUARD_TESTS_BYTE_SOURCE_NPZ_BUILDER_H_
#define STGUARD_TESTS_BYTE_SOURCE_NPZ_BUILDER_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "byte_source/torch_zip_builder.h"
#include "zip/zip_archive.h"

namespace stguard::testing {

// NpzArray is one member: its key, and either a shape of float32 zeros or a whole .npy
// header (`header`, preamble included) given as it is; deflated (as DEFLATE stored blocks,
// its bytes then written out) or stored.
struct NpzArray {
  std::string key;
  uint64_t elements = 0;
  std::string header;  // empty: the valid header of `elements` float32s
  bool deflated = false;
};

namespace npz_detail {

// NpyHeader is numpy's version 1.0 header of a 1-D float32 array, padded to 64 bytes.
inline std::string NpyHeader(uint64_t elements) {
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (" +
                     std::to_string(elements) + ",), }";
  const size_t total = (10 + dict.size() + 1 + 63) / 64 * 64;
  dict.append(total - 10 - dict.size() - 1, ' ');
  dict += '\n';
  std::string out = "\x93NUMPY\x01";
  out.push_back('\0');
  torch_zip_detail::Put(&out, dict.size(), 2);
  return out + dict;
}

// ZerosCrcAfter continues `crc` over `len` zero bytes.
inline uint32_t ZerosCrcAfter(uint32_t crc, uint64_t len) {
  const std::vector<std::byte> zeros(size_t{1} << 20);
  for (uint64_t done = 0; done < len;) {
    const uint64_t n = std::min<uint64_t>(len - done, zeros.size());
    crc = Crc32(crc, std::span(zeros.data(), static_cast<size_t>(n)));
    done += n;
  }
  return crc;
}

// StoredBlocks is a valid DEFLATE stream of `bytes` made of stored blocks (BTYPE 00) of
// kStoredBlockLen bytes (a decoder needs a stored block whole before it outputs any).
inline constexpr size_t kStoredBlockLen = 4096;
inline std::string StoredBlocks(const std::string& bytes) {
  std::string out;
  size_t at = 0;
  do {
    const size_t len = std::min<size_t>(bytes.size() - at, kStoredBlockLen);
    out.push_back(at + len == bytes.size() ? '\x01' : '\x00');
    torch_zip_detail::Put(&out, len, 2);
    torch_zip_detail::Put(&out, ~len & 0xFFFF, 2);
    out.append(bytes, at, len);
    at += len;
  } while (at < bytes.size());
  return out;
}

}  // namespace npz_detail

// BuildNpz lays out the members `arrays` (sizes under 4 GiB: no ZIP64).
inline TorchZipPieces BuildNpz(const std::vector<NpzArray>& arrays) {
  using torch_zip_detail::Put;
  TorchZipPieces out;
  std::string directory;
  uint64_t at = 0;
  for (const NpzArray& array : arrays) {
    const std::string name = array.key + ".npy";
    const std::string npy =
        array.header.empty() ? npz_detail::NpyHeader(array.elements) : array.header;
    const uint64_t size = npy.size() + array.elements * 4;
    const uint32_t crc = npz_detail::ZerosCrcAfter(
        Crc32(0, std::as_bytes(std::span(npy.data(), npy.size()))), array.elements * 4);
    const std::string data =
        array.deflated
            ? npz_detail::StoredBlocks(npy + std::string(array.elements * 4, '\0'))
            : npy;  // stored: the zeros after it are holes
    const uint64_t csize = array.deflated ? data.size() : size;
    std::string fields;  // version, flags, method, time, date, CRC, sizes, name length
    Put(&fields, 20, 2);
    Put(&fields, 0, 2);
    Put(&fields, array.deflated ? 8 : 0, 2);
    Put(&fields, 0, 4);
    Put(&fields, crc, 4);
    Put(&fields, csize, 4);
    Put(&fields, size, 4);
    Put(&fields, name.size(), 2);
    Put(&fields, 0, 2);  // no extra field
    std::string local;
    Put(&local, 0x04034b50, 4);
    out.pieces.push_back({at, local + fields + name + data});
    std::string central;
    Put(&central, 0x02014b50, 4);
    Put(&central, 20, 2);  // made by
    central += fields;
    Put(&central, 0, 2);  // comment length
    Put(&central, 0, 2);  // disk
    Put(&central, 0, 2);  // internal attributes
    Put(&central, 0, 4);  // external attributes
    Put(&central, at, 4);
    directory += central + name;
    at += 30 + name.size() + csize;
  }
  std::string end;
  Put(&end, 0x06054b50, 4);
  Put(&end, 0, 4);
  Put(&end, arrays.size(), 2);
  Put(&end, arrays.size(), 2);
  Put(&end, directory.size(), 4);
  Put(&end, at, 4);
  Put(&end, 0, 2);
  out.directory_len = directory.size();
  out.pieces.push_back({at, directory + end});
  out.size = at + directory.size() + end.size();
  return out;
}

}  // namespace stguard::testing

#endif  // STGUARD_TESTS_BYTE_SOURCE_NPZ_BUILDER_H_
