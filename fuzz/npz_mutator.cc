// SPDX-License-Identifier: Apache-2.0
// The .npz mutator (see npz_mutator.h): take the first member out, mutate it as a .npy,
// write a fresh archive around it (one member; sometimes two, or another name, flags or
// version needed, for the rules on names and keys).
#include "npz_mutator.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "npy_mutator.h"
#include "zip/zip_archive.h"

namespace stguard_fuzz::mutator {
namespace {

uint32_t Load32(const uint8_t* p) { return p[0] | p[1] << 8 | p[2] << 16 | uint32_t{p[3]} << 24; }
uint16_t Load16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }
void Put16(std::string* s, uint32_t v) {
  s->push_back(char(v & 0xFF));
  s->push_back(char(v >> 8 & 0xFF));
}
void Put32(std::string* s, uint32_t v) { Put16(s, v & 0xFFFF), Put16(s, v >> 16); }
void Put64(std::string* s, uint64_t v) { Put32(s, uint32_t(v)), Put32(s, uint32_t(v >> 32)); }

// FirstMember returns the data of the first local header's member (its stored bytes,
// whatever its method says), or the whole input when there is no readable header.
std::string FirstMember(const uint8_t* data, size_t size, std::string* name) {
  *name = "x.npy";
  if (size < 30 || Load32(data) != 0x04034b50) {
    return std::string(reinterpret_cast<const char*>(data), size);
  }
  const size_t name_len = Load16(data + 26), extra_len = Load16(data + 28);
  const size_t start = 30 + name_len + extra_len;
  if (start > size) return {};
  *name = std::string(reinterpret_cast<const char*>(data) + 30, name_len);
  size_t len = Load32(data + 18);
  if (len == 0 || len > size - start) len = size - start;
  return std::string(reinterpret_cast<const char*>(data) + start, len);
}

// BitWriter packs bits least-significant first, as DEFLATE reads them.
struct BitWriter {
  std::string out;
  uint32_t bits = 0;
  int count = 0;
  void Put(uint32_t value, int n) {
    bits |= value << count;
    count += n;
    while (count >= 8) {
      out.push_back(char(bits & 0xFF));
      bits >>= 8;
      count -= 8;
    }
  }
  void PutReversed(uint32_t code, int n) {  // Huffman codes go most-significant bit first
    for (int i = n - 1; i >= 0; --i) Put(code >> i & 1u, 1);
  }
  std::string Finish() {
    if (count > 0) out.push_back(char(bits & 0xFF));
    return out;
  }
};

// Deflate encodes `raw` as one fixed-Huffman block of literals, or as stored blocks.
std::string Deflate(const std::string& raw, bool fixed) {
  if (fixed) {
    BitWriter w;
    w.Put(1, 1);
    w.Put(1, 2);
    for (unsigned char c : raw) {
      if (c < 144) w.PutReversed(0x30 + c, 8); else w.PutReversed(0x190 + (c - 144), 9);
    }
    w.PutReversed(0, 7);  // end of block
    return w.Finish();
  }
  std::string out;
  size_t at = 0;
  do {
    const size_t n = std::min<size_t>(raw.size() - at, 65535);
    out.push_back(at + n == raw.size() ? 1 : 0);
    Put16(&out, uint32_t(n));
    Put16(&out, uint32_t(~n & 0xFFFF));
    out.append(raw, at, n);
    at += n;
  } while (at < raw.size());
  return out;
}

// ZipKnobs are the header fields the mutator varies beside the member: the UTF-8 flag
// (bit 11, both headers) and the central "version needed to extract" (Python's zipfile
// refuses above 63).
struct ZipKnobs {
  uint16_t flags = 0;
  uint16_t version = 20;
};

// Archive writes a ZIP as Python's zipfile writes it for numpy: one member per name in
// `names`, each holding the same bytes.
std::string Archive(const std::vector<std::string>& names, const std::string& raw,
                    const std::string& stored, bool deflated, bool zip64, ZipKnobs knobs) {
  const uint32_t crc = stguard::Crc32(0, std::as_bytes(std::span(raw.data(), raw.size())));
  std::string extra;
  if (zip64) {
    Put16(&extra, 1), Put16(&extra, 16), Put64(&extra, raw.size()), Put64(&extra, stored.size());
  }
  std::string s, central;
  for (const std::string& name : names) {
    const uint32_t at = uint32_t(s.size());
    Put32(&s, 0x04034b50), Put16(&s, 20), Put16(&s, knobs.flags), Put16(&s, deflated ? 8 : 0);
    Put32(&s, 0), Put32(&s, crc);
    Put32(&s, zip64 ? 0xFFFFFFFF : uint32_t(stored.size()));
    Put32(&s, zip64 ? 0xFFFFFFFF : uint32_t(raw.size()));
    Put16(&s, uint32_t(name.size())), Put16(&s, uint32_t(extra.size()));
    s += name + extra + stored;
    Put32(&central, 0x02014b50), Put16(&central, 20), Put16(&central, knobs.version);
    Put16(&central, knobs.flags), Put16(&central, deflated ? 8 : 0), Put32(&central, 0);
    Put32(&central, crc), Put32(&central, uint32_t(stored.size()));
    Put32(&central, uint32_t(raw.size())), Put16(&central, uint32_t(name.size()));
    Put16(&central, 0), Put16(&central, 0), Put16(&central, 0), Put16(&central, 0);
    Put32(&central, 0), Put32(&central, at);
    central += name;
  }
  const size_t directory = s.size();
  s += central;
  Put32(&s, 0x06054b50), Put16(&s, 0), Put16(&s, 0), Put16(&s, uint32_t(names.size()));
  Put16(&s, uint32_t(names.size())), Put32(&s, uint32_t(central.size()));
  Put32(&s, uint32_t(directory)), Put16(&s, 0);
  return s;
}

// MutateNames sometimes changes the member's name or adds a second member: names an
// extractor could misplace, non-ASCII names (flagged or not), invalid UTF-8, and a second
// member that answers to the same numpy key ("x.npy" beside "x.npy.npy").
std::vector<std::string> MutateNames(std::string name, std::mt19937& rng, ZipKnobs* knobs) {
  static const char* const kNames[] = {"../x.npy", "a", "\xc3\xa9.npy", "\x82.npy",
                                       "\xff.npy"};
  if (rng() % 8 == 0) name = kNames[rng() % std::size(kNames)];
  if (rng() % 4 == 0) knobs->flags = 0x800;
  if (rng() % 16 == 0) knobs->version = rng() % 2 ? 63 : 64;
  if (rng() % 8 != 0) return {name};
  if (rng() % 2) return {name, name + ".npy"};
  return {name, "y" + name};
}

}  // namespace

size_t MutateNpz(uint8_t* data, size_t size, size_t max_size, unsigned seed) {
  std::mt19937 rng(seed);
  std::string name;
  std::string member = FirstMember(data, size, &name);
  // The member's own mutation, in a buffer of the caps the archive leaves room for.
  const size_t overhead = 256 + 2 * name.size();  // headers, names, extra, end record
  const size_t room = max_size > overhead ? (max_size - overhead) / 2 : 0;
  if (room == 0) return size;
  member.resize(std::min(member.size(), room));
  std::string buffer = member;
  buffer.resize(room);
  const size_t mutated =
      MutateNpy(reinterpret_cast<uint8_t*>(buffer.data()), member.size(), room, rng());
  buffer.resize(std::min(mutated, room));
  ZipKnobs knobs;
  const std::vector<std::string> names = MutateNames(name, rng, &knobs);
  const unsigned method = rng() % 3;  // stored, stored blocks, fixed literals
  const std::string stored = method == 0 ? buffer : Deflate(buffer, method == 2);
  if (names.size() * stored.size() > max_size) return size;
  std::string out = Archive(names, buffer, stored, method != 0, rng() % 2 == 0, knobs);
  if (out.size() > max_size) return size;
  if (rng() % 8 == 0 && !out.empty()) out[rng() % out.size()] ^= char(1u << (rng() % 8));
  std::memcpy(data, out.data(), out.size());
  return out.size();
}

}  // namespace stguard_fuzz::mutator
