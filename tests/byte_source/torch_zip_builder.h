// SPDX-License-Identifier: Apache-2.0
// TorchZipPieces: a PyTorch ZIP checkpoint of one float32 tensor of any length, laid
// out as torch.save writes it (data.pkl, byteorder, data/0, version; 64-byte aligned data,
// data descriptors, ZIP64 end records), as pieces at offsets: the storage's bytes are
// zeros and never written, so a file of any size is a sparse file.
#ifndef STGUARD_TESTS_BYTE_SOURCE_TORCH_ZIP_BUILDER_H_
#define STGUARD_TESTS_BYTE_SOURCE_TORCH_ZIP_BUILDER_H_

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "zip/zip_archive.h"

namespace stguard::testing {

struct TorchZipPieces {
  struct Piece {
    uint64_t offset;
    std::string bytes;
  };
  std::vector<Piece> pieces;
  uint64_t size = 0;
  uint64_t data_pkl_len = 0;
  uint64_t directory_len = 0;

  // Bytes returns the whole file (for small ones).
  std::string Bytes() const {
    std::string out(size, '\0');
    for (const Piece& piece : pieces) out.replace(piece.offset, piece.bytes.size(), piece.bytes);
    return out;
  }
  // WriteSparse writes the file at `path`, holes for the zeros.
  bool WriteSparse(const std::string& path) const {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) return false;
    bool ok = ::ftruncate(fd, static_cast<off_t>(size)) == 0;
    for (const Piece& piece : pieces) {
      ok = ok && ::pwrite(fd, piece.bytes.data(), piece.bytes.size(),
                          static_cast<off_t>(piece.offset)) ==
                     static_cast<ssize_t>(piece.bytes.size());
    }
    return ::close(fd) == 0 && ok;
  }
};

namespace torch_zip_detail {

inline void Put(std::string* s, uint64_t v, int bytes) {
  // Past the eighth byte the value has no bits left (a shift by 64 is undefined).
  for (int k = 0; k < bytes; ++k) {
    s->push_back(k < 8 ? static_cast<char>((v >> (8 * k)) & 0xFF) : '\0');
  }
}

// ZerosCrc is the CRC-32 of `len` zero bytes.
inline uint32_t ZerosCrc(uint64_t len) {
  const std::vector<std::byte> zeros(size_t{1} << 20);
  uint32_t crc = 0;
  for (uint64_t done = 0; done < len;) {
    const uint64_t n = std::min<uint64_t>(len - done, zeros.size());
    crc = Crc32(crc, std::span(zeros.data(), static_cast<size_t>(n)));
    done += n;
  }
  return crc;
}

// StateDictPickle is torch.save's pickle (protocol 2) of {name: float32 tensor of
// `elements`} whose storage is `key`, rebuilt by torch._utils.<rebuild>.
inline std::string StateDictPickle(const std::string& name, uint32_t elements,
                                   const std::string& rebuild, const std::string& key) {
  using namespace std::string_literals;
  std::string p = "\x80\x02"s;
  p += "ccollections\nOrderedDict\nq\x00)Rq\x01(X"s;
  Put(&p, name.size(), 4);
  p += name + "q\x02"s;
  p += "ctorch._utils\n"s + rebuild + "\nq\x03((X\x07\x00\x00\x00storageq\x04"s;
  p += "ctorch\nFloatStorage\nq\x05X"s;
  Put(&p, key.size(), 4);
  p += key + "q\x06X\x03\x00\x00\x00" "cpuq\x07J"s;
  Put(&p, elements, 4);
  p += "tq\x08QK\x00J"s;
  Put(&p, elements, 4);
  p += "\x85q\x09K\x01\x85q\x0a\x89h\x00)Rq\x0btq\x0cRq\x0du."s;
  return p;
}

}  // namespace torch_zip_detail

// BuildTorchZip lays out the checkpoint of one tensor named `name` whose storage is
// data/<key>; `rebuild` names the pickle's rebuild function (a name outside the allowlist
// makes a file torch.load would run code for).
inline TorchZipPieces BuildTorchZip(uint32_t elements,
                                    const std::string& rebuild = "_rebuild_tensor_v2",
                                    const std::string& name = "w",
                                    const std::string& key = "0") {
  using torch_zip_detail::Put;
  struct Record {
    std::string name;
    std::string data;  // empty for the storage: zeros of `len`
    uint64_t len;
    uint32_t crc;
    uint64_t offset = 0;
  };
  const std::string pkl = torch_zip_detail::StateDictPickle(name, elements, rebuild, key);
  const uint64_t storage_len = uint64_t{elements} * 4;
  auto crc_of = [](const std::string& s) {
    return Crc32(0, std::as_bytes(std::span(s.data(), s.size())));
  };
  std::vector<Record> records = {
      {"archive/data.pkl", pkl, pkl.size(), crc_of(pkl)},
      {"archive/byteorder", "little", 6, crc_of("little")},
      {"archive/data/" + key, "", storage_len, torch_zip_detail::ZerosCrc(storage_len)},
      {"archive/version", "3\n", 2, crc_of("3\n")},
  };
  TorchZipPieces out;
  out.data_pkl_len = pkl.size();
  uint64_t at = 0;
  for (Record& r : records) {
    r.offset = at;
    std::string h;
    Put(&h, 0x04034b50, 4);
    Put(&h, 45, 2);
    Put(&h, 0x0808, 2);
    Put(&h, 0, 2);
    Put(&h, 0, 4);
    Put(&h, 0, 12);  // CRC and sizes in the data descriptor
    Put(&h, r.name.size(), 2);
    const uint64_t unpadded = at + 30 + r.name.size() + 4;
    const uint64_t pad = (64 - unpadded % 64) % 64;
    Put(&h, 4 + pad, 2);
    h += r.name;
    Put(&h, 0x4246, 2);
    Put(&h, pad, 2);
    h.append(pad, 'Z');
    h += r.data;
    out.pieces.push_back({at, h});
    at += h.size() + (r.data.empty() ? r.len : 0);
    std::string d;
    Put(&d, 0x08074b50, 4);
    Put(&d, r.crc, 4);
    Put(&d, r.len, 4);
    Put(&d, r.len, 4);
    out.pieces.push_back({at, d});
    at += d.size();
  }
  std::string tail;
  const uint64_t directory = at;
  for (const Record& r : records) {
    Put(&tail, 0x02014b50, 4);
    Put(&tail, 45, 2);
    Put(&tail, 45, 2);
    Put(&tail, 0x0808, 2);
    Put(&tail, 0, 2);
    Put(&tail, 0, 4);
    Put(&tail, r.crc, 4);
    Put(&tail, r.len, 4);
    Put(&tail, r.len, 4);
    Put(&tail, r.name.size(), 2);
    Put(&tail, 0, 8);  // extra, comment, disk, internal attributes
    Put(&tail, 0, 4);  // external attributes
    Put(&tail, r.offset, 4);
    tail += r.name;
  }
  out.directory_len = tail.size();
  const uint64_t record = directory + tail.size();
  Put(&tail, 0x06064b50, 4);
  Put(&tail, 44, 8);
  Put(&tail, 45, 2);
  Put(&tail, 45, 2);
  Put(&tail, 0, 8);
  Put(&tail, records.size(), 8);
  Put(&tail, records.size(), 8);
  Put(&tail, out.directory_len, 8);
  Put(&tail, directory, 8);
  Put(&tail, 0x07064b50, 4);
  Put(&tail, 0, 4);
  Put(&tail, record, 8);
  Put(&tail, 1, 4);
  Put(&tail, 0x06054b50, 4);
  Put(&tail, 0, 4);
  Put(&tail, records.size(), 2);
  Put(&tail, records.size(), 2);
  Put(&tail, out.directory_len, 4);
  Put(&tail, directory, 4);
  Put(&tail, 0, 2);
  out.pieces.push_back({directory, tail});
  out.size = directory + tail.size();
  return out;
}

}  // namespace stguard::testing

#endif  // STGUARD_TESTS_BYTE_SOURCE_TORCH_ZIP_BUILDER_H_
