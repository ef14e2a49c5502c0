// SPDX-License-Identifier: Apache-2.0
// Structure-aware mutation of torch checkpoints (see zip_mutator.h).
#include "zip_mutator.h"

#include <algorithm>
#include <cstring>
#include <span>
#include <utility>

#include "pickle_mutator.h"
#include "safetensors_mutator.h"  // ByteLevelMutate, ByteLevelOnly, CopyOut
#include "zip/zip_archive.h"      // Crc32 (zlib)

namespace stguard_fuzz::mutator {
namespace {

constexpr uint32_t kLocalSignature = 0x04034b50;
constexpr uint32_t kCentralSignature = 0x02014b50;
constexpr uint32_t kEndSignature = 0x06054b50;
constexpr uint32_t kDescriptorSignature = 0x08074b50;
constexpr size_t kLocalHeaderLen = 30;
constexpr size_t kCentralHeaderLen = 46;
constexpr size_t kEndLen = 22;

uint64_t Le(std::string_view bytes, size_t at, size_t width) {
  uint64_t value = 0;
  for (size_t i = 0; i < width; ++i) {
    value |= uint64_t{static_cast<unsigned char>(bytes[at + i])} << (8 * i);
  }
  return value;
}

void Put(uint64_t value, size_t width, std::string* out) {
  for (size_t i = 0; i < width; ++i) out->push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
}

uint32_t Crc(std::string_view bytes) {
  return stguard::Crc32(0, std::as_bytes(std::span(bytes.data(), bytes.size())));
}

// LocalData finds a record's bytes from its local header at `at` and a size; false when
// they are not inside `bytes`.
bool LocalData(std::string_view bytes, uint64_t at, uint64_t size, std::string* out) {
  if (at > bytes.size() || bytes.size() - at < kLocalHeaderLen ||
      Le(bytes, at, 4) != kLocalSignature) {
    return false;
  }
  const uint64_t data = at + kLocalHeaderLen + Le(bytes, at + 26, 2) + Le(bytes, at + 28, 2);
  if (data > bytes.size() || size > bytes.size() - data) return false;
  *out = std::string(bytes.substr(data, size));
  return true;
}

// DecodeCentral reads the records the central directory lists.
bool DecodeCentral(std::string_view bytes, std::vector<ZipRecordModel>* records) {
  if (bytes.size() < kEndLen) return false;
  const size_t end = bytes.rfind("PK\x05\x06");
  if (end == std::string_view::npos || bytes.size() - end < kEndLen) return false;
  const uint64_t count = Le(bytes, end + 10, 2);
  uint64_t at = Le(bytes, end + 16, 4);
  for (uint64_t k = 0; k < count; ++k) {
    if (at > bytes.size() || bytes.size() - at < kCentralHeaderLen ||
        Le(bytes, at, 4) != kCentralSignature) {
      return false;
    }
    const uint64_t name_len = Le(bytes, at + 28, 2);
    const uint64_t variable = name_len + Le(bytes, at + 30, 2) + Le(bytes, at + 32, 2);
    if (bytes.size() - at - kCentralHeaderLen < variable) return false;
    ZipRecordModel record;
    record.name = std::string(bytes.substr(at + kCentralHeaderLen, name_len));
    if (!LocalData(bytes, Le(bytes, at + 42, 4), Le(bytes, at + 20, 4), &record.bytes)) {
      return false;
    }
    records->push_back(std::move(record));
    at += kCentralHeaderLen + variable;
  }
  return !records->empty();
}

// DecodeLocal walks local headers from the start, sizes from the local header.
bool DecodeLocal(std::string_view bytes, std::vector<ZipRecordModel>* records) {
  uint64_t at = 0;
  while (bytes.size() - at >= kLocalHeaderLen && Le(bytes, at, 4) == kLocalSignature) {
    ZipRecordModel record;
    const uint64_t name_len = Le(bytes, at + 26, 2);
    if (bytes.size() - at - kLocalHeaderLen < name_len) break;
    record.name = std::string(bytes.substr(at + kLocalHeaderLen, name_len));
    const uint64_t size = Le(bytes, at + 18, 4);
    if (!LocalData(bytes, at, size, &record.bytes)) break;
    at += kLocalHeaderLen + name_len + Le(bytes, at + 28, 2) + size;
    records->push_back(std::move(record));
  }
  return !records->empty();
}

// Folder returns the top-level folder of the first record ("archive" if none).
std::string Folder(const std::vector<ZipRecordModel>& records) {
  if (records.empty()) return "archive";
  const size_t slash = records[0].name.find('/');
  return slash == std::string::npos ? "archive" : records[0].name.substr(0, slash);
}

ZipRecordModel* FindPickle(std::vector<ZipRecordModel>* records) {
  for (ZipRecordModel& record : *records) {
    if (record.name.ends_with("data.pkl")) return &record;
  }
  return nullptr;
}

void MutatePickleBytes(std::string* bytes, Rng& rng) {
  std::vector<PickleOp> ops;
  DecodePickle(*bytes, &ops);
  if (ops.empty()) ops = StateDictPickle();
  MutatePickleOps(&ops, rng);
  *bytes = EncodePickle(ops);
}

// CaseTwin flips the ASCII case of one letter of `name` (torch's lookup ignores case, so
// the twin collides with the original); the name unchanged when it has no letter.
std::string CaseTwin(std::string name, Rng& rng) {
  std::vector<size_t> letters;
  for (size_t i = 0; i < name.size(); ++i) {
    if ((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z')) {
      letters.push_back(i);
    }
  }
  if (!letters.empty()) name[letters[rng.Below(letters.size())]] ^= 0x20;
  return name;
}

// The records torch.save writes beside data.pkl and data/<key>, and some it never writes
// (TorchScript's, which send torch.load to torch.jit.load), each with values torch writes
// and values it refuses or reads otherwise.
struct FormatRecord {
  const char* path;
  const char* values[4];
};
constexpr FormatRecord kFormatRecords[] = {
    {"version", {"3\n", "10\n", "99\n", "03\n"}},
    {".data/version", {"3\n", "0\n", "4\n", "3"}},
    {"byteorder", {"little", "big", "LITTLE", "little\n"}},
    {".format_version", {"1", "2", "01", ""}},
    {".storage_alignment", {"64", "4096", "48", "0"}},
    {".data/serialization_id", {"0123456789", "12ab", "7", ""}},
    {"constants.pkl", {"\x80\x02).", "", "x", "\x80\x02]."}},
    {"code/__torch__.py", {"", "def f(): pass\n", "x", ""}},
};

// SetFormatRecord adds (or replaces) one of kFormatRecords with one of its values.
void SetFormatRecord(std::vector<ZipRecordModel>* records, Rng& rng) {
  const FormatRecord& format = kFormatRecords[rng.Below(std::size(kFormatRecords))];
  const std::string name = Folder(*records) + "/" + format.path;
  const std::string value = format.values[rng.Below(4)];
  for (ZipRecordModel& record : *records) {
    if (record.name == name) {
      record.bytes = value;
      return;
    }
  }
  records->push_back({name, value});
}

std::string RecordName(const std::vector<ZipRecordModel>& records, Rng& rng) {
  const std::string folder = Folder(records);
  switch (rng.Below(10)) {
    case 7:
      return records.empty() ? folder + "/DATA.PKL"
                             : CaseTwin(records[rng.Below(records.size())].name, rng);
    case 8: return folder + "/" + kFormatRecords[rng.Below(std::size(kFormatRecords))].path;
    case 0: return "other/data.pkl";
    case 1: return folder + "/data/" + std::to_string(rng.Below(4));
    case 2: return folder + "/../data.pkl";
    case 3: return "data.pkl";
    case 4: return records.empty() ? folder + "/data.pkl" : records[rng.Below(records.size())].name;
    case 5: return folder + "/version";
    case 6: return folder + "/data.pkl";
    default: return folder + "/" + RandomName(rng);
  }
}

void MutateRecords(std::vector<ZipRecordModel>* records, Rng& rng) {
  const size_t at = records->empty() ? 0 : rng.Below(records->size());
  switch (rng.Below(10)) {
    case 0:
      if (!records->empty()) (*records)[at].name = RecordName(*records, rng);
      break;
    case 1:
      if (records->size() > 1) records->erase(records->begin() + static_cast<ptrdiff_t>(at));
      break;
    case 2:
      if (!records->empty()) records->push_back((*records)[at]);
      break;
    case 3:
      if (records->size() > 1) std::swap((*records)[at], (*records)[rng.Below(records->size())]);
      break;
    case 4: {  // a storage cut or grown by a few elements' worth of bytes
      if (records->empty()) break;
      std::string& bytes = (*records)[at].bytes;
      const size_t step = size_t{1} << rng.Below(4);
      if (rng.OneIn(2) && bytes.size() >= step) {
        bytes.resize(bytes.size() - step);
      } else {
        bytes.append(step, static_cast<char>(rng.Below(256)));
      }
      break;
    }
    case 5:
      records->push_back({Folder(*records) + "/data/" + std::to_string(rng.Below(8)),
                          std::string(4u << rng.Below(4), '\x3f')});
      break;
    case 6:  // a format record, TorchScript's records, versions and byte orders
      SetFormatRecord(records, rng);
      break;
    case 7:  // a twin of a record whose name differs only in case
      if (!records->empty()) {
        records->push_back({CaseTwin((*records)[at].name, rng), (*records)[at].bytes});
      }
      break;
    default:  // the top-level folder renamed everywhere (any name is allowed)
      for (ZipRecordModel& record : *records) {
        const size_t slash = record.name.find('/');
        if (slash != std::string::npos) record.name = "m" + record.name.substr(slash);
      }
      break;
  }
}

void Put32At(uint32_t value, size_t at, std::string* out) {
  if (at > out->size() || out->size() - at < 4) return;
  for (size_t i = 0; i < 4; ++i) (*out)[at + i] = static_cast<char>((value >> (8 * i)) & 0xFF);
}

// AddEndRecordComment gives the archive's end record (its last 22 bytes, as EncodeZip
// writes it) a comment holding a copy of that record (so it points at the same central
// directory) followed by a few bytes, or just a few bytes.
void AddEndRecordComment(std::string* archive, Rng& rng) {
  if (archive->size() < kEndLen) return;
  const size_t end = archive->size() - kEndLen;
  if (Le(*archive, end, 4) != kEndSignature) return;
  std::string comment;
  if (!rng.OneIn(4)) comment = archive->substr(end, kEndLen - 2) + std::string(2, '\0');
  comment.append(1 + rng.Below(3), 'c');
  (*archive)[end + 20] = static_cast<char>(comment.size() & 0xFF);
  (*archive)[end + 21] = static_cast<char>(comment.size() >> 8);
  *archive += comment;
}

// TellALie changes one field of an encoded archive, so each disagreement is reached.
void TellALie(std::string* archive, Rng& rng) {
  if (archive->size() < kEndLen) return;
  const size_t central = archive->rfind("PK\x01\x02");
  const size_t local = archive->find("PK\x03\x04");
  switch (rng.Below(9)) {
    case 0:  // a bad CRC-32 in the central directory
      if (central != std::string::npos) (*archive)[central + 16] ^= 0x01;
      break;
    case 1:  // the central directory names another file
      if (central != std::string::npos && archive->size() > central + kCentralHeaderLen) {
        (*archive)[central + kCentralHeaderLen] ^= 0x20;
      }
      break;
    case 2:  // "deflated"
      if (local != std::string::npos) (*archive)[local + 8] = 8;
      if (central != std::string::npos) (*archive)[central + 10] = 8;
      break;
    case 3:  // a size off by one
      if (central != std::string::npos) (*archive)[central + 20] ^= 0x01;
      break;
    case 4:  // a local header offset off by one
      if (central != std::string::npos) (*archive)[central + 42] ^= 0x01;
      break;
    case 5:
      archive->insert(0, "garbage");
      break;
    case 6:
      archive->append(1 + rng.Below(8), '\0');
      break;
    case 7:  // a second end record in the end record's comment, its own comment not
             // reaching the end of the file (the last signature a backward scan meets)
      AddEndRecordComment(archive, rng);
      break;
    default:  // a header offset escaped to 0xFFFFFFFF beside 32-bit sizes
      if (central != std::string::npos) Put32At(0xFFFFFFFF, central + 42, archive);
      break;
  }
}

// Legacy checkpoints: five pickles (magic number, protocol, system information, main,
// storage keys), then the storages' bytes.
bool DecodeLegacy(std::string_view bytes, std::vector<std::string>* pickles,
                  std::string* rest) {
  size_t at = 0;
  for (int k = 0; k < 5; ++k) {
    std::vector<PickleOp> ops;
    const size_t used = DecodePickle(bytes.substr(at), &ops);
    if (used == 0) return false;
    pickles->emplace_back(bytes.substr(at, used));
    at += used;
  }
  *rest = std::string(bytes.substr(at));
  return true;
}

}  // namespace

bool DecodeZip(std::string_view bytes, std::vector<ZipRecordModel>* records) {
  if (DecodeCentral(bytes, records)) return true;
  records->clear();
  return DecodeLocal(bytes, records);
}

std::string EncodeZip(const std::vector<ZipRecordModel>& records, const ZipLayout& layout) {
  std::string out;
  std::string central;
  for (const ZipRecordModel& record : records) {
    const uint64_t header_at = out.size();
    const uint32_t crc = Crc(record.bytes);
    const uint16_t flags = layout.data_descriptors ? 0x08 : 0;
    // The extra field that pads the data to a multiple of 64, as torch's writer does.
    std::string extra;
    if (layout.align_64) {
      const size_t unpadded = header_at + kLocalHeaderLen + record.name.size() + 4;
      const size_t padding = (64 - unpadded % 64) % 64;
      Put(0x4246, 2, &extra);  // "FB"
      Put(padding, 2, &extra);
      extra.append(padding, 'Z');
    }
    Put(kLocalSignature, 4, &out);
    Put(0, 2, &out);  // version needed
    Put(flags, 2, &out);
    Put(0, 2, &out);  // stored
    Put(0, 4, &out);  // time and date
    Put(layout.data_descriptors ? 0 : crc, 4, &out);
    Put(layout.data_descriptors ? 0 : record.bytes.size(), 4, &out);
    Put(layout.data_descriptors ? 0 : record.bytes.size(), 4, &out);
    Put(record.name.size(), 2, &out);
    Put(extra.size(), 2, &out);
    out += record.name;
    out += extra;
    out += record.bytes;
    if (layout.data_descriptors) {
      Put(kDescriptorSignature, 4, &out);
      Put(crc, 4, &out);
      Put(record.bytes.size(), 4, &out);
      Put(record.bytes.size(), 4, &out);
    }
    Put(kCentralSignature, 4, &central);
    Put(0, 2, &central);  // version made by
    Put(0, 2, &central);  // version needed
    Put(flags, 2, &central);
    Put(0, 2, &central);
    Put(0, 4, &central);
    Put(crc, 4, &central);
    Put(record.bytes.size(), 4, &central);
    Put(record.bytes.size(), 4, &central);
    Put(record.name.size(), 2, &central);
    Put(0, 2, &central);  // extra
    Put(0, 2, &central);  // comment
    Put(0, 2, &central);  // disk
    Put(0, 2, &central);  // internal attributes
    Put(0, 4, &central);  // external attributes
    Put(header_at, 4, &central);
    central += record.name;
  }
  const uint64_t central_at = out.size();
  out += central;
  Put(kEndSignature, 4, &out);
  Put(0, 2, &out);
  Put(0, 2, &out);
  Put(records.size(), 2, &out);
  Put(records.size(), 2, &out);
  Put(central.size(), 4, &out);
  Put(central_at, 4, &out);
  Put(0, 2, &out);
  return out;
}

std::vector<ZipRecordModel> TorchArchive() {
  return {{"archive/data.pkl", EncodePickle(StateDictPickle())},
          {"archive/data/0", std::string("\0\0\x80?\0\0\0@", 8)},  // 1.0f, 2.0f
          {"archive/version", "3\n"}};
}

size_t MutateTorchCheckpoint(uint8_t* data, size_t size, size_t max_size, unsigned seed) {
  Rng rng(seed);
  if (ByteLevelOnly() || rng.OneIn(16)) return ByteLevelMutate(data, size, max_size, seed);
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::string output;
  std::vector<ZipRecordModel> records;
  std::vector<std::string> pickles;
  std::string rest;
  if (!input.starts_with("PK") && DecodeLegacy(input, &pickles, &rest)) {
    // The main pickle (index 3) most of the time, else the storage-key list or the header.
    const size_t which = rng.OneIn(4) ? rng.Below(5) : 3;
    MutatePickleBytes(&pickles[which], rng);
    for (const std::string& pickle : pickles) output += pickle;
    output += rest;
  } else {
    if (!DecodeZip(input, &records)) {
      if (rng.OneIn(2)) return ByteLevelMutate(data, size, max_size, seed);
      records = TorchArchive();
    }
    ZipRecordModel* pickle = FindPickle(&records);
    if (pickle != nullptr && !rng.OneIn(4)) {
      MutatePickleBytes(&pickle->bytes, rng);
    } else {
      MutateRecords(&records, rng);
    }
    output = EncodeZip(records, ZipLayout{rng.OneIn(2), rng.OneIn(2)});
    if (rng.OneIn(8)) TellALie(&output, rng);
  }
  // Whatever else it is, a file whose first block is a tar header is read as a tar by torch.
  if (rng.OneIn(32)) MakeTarShaped(&output);
  if (output != input) {
    if (const size_t out = CopyOut(output, data, max_size); out != 0) return out;
  }
  return ByteLevelMutate(data, size, max_size, seed);
}

size_t CrossOverTorchCheckpoint(const uint8_t* data1, size_t size1, const uint8_t* data2,
                                size_t size2, uint8_t* out, size_t max_out_size,
                                unsigned seed) {
  Rng rng(seed);
  std::vector<ZipRecordModel> first;
  std::vector<ZipRecordModel> second;
  const std::string_view one(reinterpret_cast<const char*>(data1), size1);
  const std::string_view two(reinterpret_cast<const char*>(data2), size2);
  if (ByteLevelOnly() || !DecodeZip(one, &first) || !DecodeZip(two, &second)) {
    return CrossOverPickle(data1, size1, data2, size2, out, max_out_size, seed);
  }
  // The first archive's pickle with the second's storages (renamed into one folder), or
  // the pickles crossed over opcode by opcode.
  ZipRecordModel* pickle = FindPickle(&first);
  const ZipRecordModel* other = FindPickle(&second);
  if (pickle != nullptr && other != nullptr && rng.OneIn(2)) {
    std::string crossed(pickle->bytes.size() + other->bytes.size(), '\0');
    const size_t crossed_len = CrossOverPickle(
        reinterpret_cast<const uint8_t*>(pickle->bytes.data()), pickle->bytes.size(),
        reinterpret_cast<const uint8_t*>(other->bytes.data()), other->bytes.size(),
        reinterpret_cast<uint8_t*>(crossed.data()), crossed.size(), seed);
    crossed.resize(crossed_len);
    pickle->bytes = std::move(crossed);
  } else {
    const std::string folder = Folder(first);
    for (ZipRecordModel& record : second) {
      if (record.name.ends_with("data.pkl")) continue;
      const size_t slash = record.name.find('/');
      record.name = folder + (slash == std::string::npos ? "/" + record.name
                                                        : record.name.substr(slash));
      first.push_back(std::move(record));
    }
  }
  const std::string encoded = EncodeZip(first, ZipLayout{rng.OneIn(2), rng.OneIn(2)});
  if (encoded.size() > max_out_size) return 0;
  std::memcpy(out, encoded.data(), encoded.size());
  return encoded.size();
}

}  // namespace stguard_fuzz::mutator
