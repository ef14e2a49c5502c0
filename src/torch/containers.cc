// SPDX-License-Identifier: Apache-2.0
// The container path for a sniffed format, the ZIP container and the legacy stream (see torch_checkpoint.h).
#include "torch/containers.h"

#include <cstring>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "base/checked_math.h"
#include "base/little_endian.h"
#include "pickle/opcodes.h"
#include "sniff/legacy_magic.h"
#include "sniff/tar_probe.h"
#include "torch/zip_records.h"
#include "zip/zip_archive.h"

namespace stguard {
namespace {

constexpr int64_t kLegacyProtocolVersion = 1001;

uint64_t BytesPerElement(Dtype dtype) { return DtypeBits(dtype) / 8; }

// FindString returns the value stored under string key `key` in dict `dict`, or nullptr.
const PickleValue* FindString(const PickleResult& p, const PickleValue& dict,
                              std::string_view key) {
  for (size_t k = 0; k + 1 < dict.items.size(); k += 2) {
    const PickleValue& item = p.at(dict.items[k]);
    if (item.kind == ValueKind::kString && item.text == key) return &p.at(dict.items[k + 1]);
  }
  return nullptr;
}

}  // namespace

Error LoadZipArchive(const ZipArchive& archive, LoadedPickle* out,
                     std::vector<GlobalUse>* globals) {
  const ZipRecord& pkl = *archive.Find("data.pkl");
  // Only the records torch.save writes, with values torch reads as stguard does.
  if (Error error = CheckTorchRecords(archive); !error.ok()) return error;
  if (Error error = archive.VerifyCrc(pkl); !error.ok()) return error;
  Result<std::span<const std::byte>> pkl_bytes = archive.RecordBytes(pkl);
  if (!pkl_bytes.ok()) return pkl_bytes.error();
  PickleReadOptions options;
  options.persistent_ids = PersistentIds::kZip;
  options.base_offset = pkl.data_offset;
  Result<PickleResult> pickle = ReadPickle(*pkl_bytes, options, globals);
  if (!pickle.ok()) return pickle.error();
  if (pickle->end != pkl.data_offset + pkl.size) {
    return Error{ErrorCode::kPickleCorrupt, pickle->end, "bytes after STOP in data.pkl"};
  }
  out->format = TorchFormat::kZip;
  out->pickle = std::move(pickle).value();
  for (const StorageRef& storage : out->pickle.storages) {
    const ZipRecord* record = archive.Find("data/" + storage.key);
    if (record == nullptr) {
      return Error{ErrorCode::kZipMissingRecord, storage.offset,
                   "persistent id names a storage record that is not in the archive",
                   archive.folder() + "/data/" + storage.key};
    }
    uint64_t want = 0;
    if (!CheckedMul(storage.num_elements, BytesPerElement(storage.dtype), &want) ||
        want != record->size) {
      return Error{ErrorCode::kStorageMismatch, storage.offset,
                   "storage element count does not match its record's byte count",
                   storage.key + ": " + std::to_string(storage.num_elements) +
                       " elements, record of " + std::to_string(record->size) + " bytes"};
    }
    out->placements.push_back({record->data_offset, record->size, true, record->crc32});
  }
  return {};
}

namespace {

Error LoadZip(std::span<const std::byte> bytes, LoadedPickle* out,
              std::vector<GlobalUse>* globals) {
  Result<ZipArchive> archive = ZipArchive::Open(bytes);
  if (!archive.ok()) return archive.error();
  return LoadZipArchive(*archive, out, globals);
}

// ReadHeaderPickle runs one of the legacy stream's small pickles (no globals, no ids).
Result<PickleResult> ReadHeaderPickle(std::span<const std::byte> bytes, uint64_t at) {
  PickleReadOptions options;
  options.allow_globals = false;
  options.base_offset = at;
  return ReadPickle(bytes.subspan(at), options);
}

Error LegacyHeaderError(uint64_t at, const char* message) {
  return Error{ErrorCode::kLegacyHeader, at, message};
}

Error LoadLegacy(std::span<const std::byte> bytes, LoadedPickle* out,
                 std::vector<GlobalUse>* globals) {
  uint64_t at = LegacyMagicLen(bytes);  // the magic number, checked by the caller
  // Protocol version.
  Result<PickleResult> version = ReadHeaderPickle(bytes, at);
  if (!version.ok()) return version.error();
  const PickleValue& v = version->at(version->root);
  if (v.kind != ValueKind::kInt || v.integer != kLegacyProtocolVersion) {
    return LegacyHeaderError(at, "legacy protocol version is not 1001");
  }
  at = version->end;
  // System information: {"protocol_version": 1001, "little_endian": True,
  // "type_sizes": {"short": 2, "int": 4, "long": 4 or 8}}, nothing else.
  Result<PickleResult> info = ReadHeaderPickle(bytes, at);
  if (!info.ok()) return info.error();
  {
    const PickleResult& p = *info;
    const PickleValue& root = p.at(p.root);
    auto int_is = [](const PickleValue* value, int64_t a, int64_t b) {
      return value != nullptr && value->kind == ValueKind::kInt &&
             (value->integer == a || value->integer == b);
    };
    if (root.kind != ValueKind::kDict || root.items.size() != 6) {
      return LegacyHeaderError(at, "system information is not a dict of three entries");
    }
    const PickleValue* protocol = FindString(p, root, "protocol_version");
    const PickleValue* little = FindString(p, root, "little_endian");
    const PickleValue* sizes = FindString(p, root, "type_sizes");
    if (!int_is(protocol, kLegacyProtocolVersion, kLegacyProtocolVersion)) {
      return LegacyHeaderError(at, "system information: protocol_version is not 1001");
    }
    if (little == nullptr || little->kind != ValueKind::kBool || !little->flag) {
      return LegacyHeaderError(at, "system information: not little-endian");
    }
    if (sizes == nullptr || sizes->kind != ValueKind::kDict || sizes->items.size() != 6 ||
        !int_is(FindString(p, *sizes, "short"), 2, 2) ||
        !int_is(FindString(p, *sizes, "int"), 4, 4) ||
        !int_is(FindString(p, *sizes, "long"), 4, 8)) {
      return LegacyHeaderError(
          at, "system information: type_sizes is not {short: 2, int: 4, long: 4 or 8}");
    }
  }
  at = info->end;
  // The main pickle.
  PickleReadOptions options;
  options.persistent_ids = PersistentIds::kLegacy;
  options.base_offset = at;
  Result<PickleResult> pickle = ReadPickle(bytes.subspan(at), options, globals);
  if (!pickle.ok()) return pickle.error();
  out->format = TorchFormat::kLegacy;
  out->pickle = std::move(pickle).value();
  at = out->pickle.end;
  // The storage keys, then each storage: int64 element count, bytes.
  Result<PickleResult> keys = ReadHeaderPickle(bytes, at);
  if (!keys.ok()) return keys.error();
  const PickleValue& list = keys->at(keys->root);
  if (list.kind != ValueKind::kList) {
    return LegacyHeaderError(at, "storage key list is not a list");
  }
  std::unordered_map<std::string, size_t> by_key;
  for (size_t k = 0; k < out->pickle.storages.size(); ++k) {
    by_key.emplace(out->pickle.storages[k].key, k);
  }
  out->placements.assign(out->pickle.storages.size(), StoragePlacement{});
  std::vector<bool> placed(out->pickle.storages.size(), false);
  at = keys->end;
  for (ValueId id : list.items) {
    const PickleValue& key = keys->at(id);
    if (key.kind != ValueKind::kString) {
      return LegacyHeaderError(keys->end, "storage key that is not a string");
    }
    const auto it = by_key.find(key.text);
    if (it == by_key.end() || placed[it->second]) {
      return Error{ErrorCode::kStorageMismatch, key.offset,
                   it == by_key.end() ? "storage key the pickle never names"
                                      : "storage key listed twice",
                   key.text};
    }
    const StorageRef& storage = out->pickle.storages[it->second];
    if (bytes.size() - at < 8) {
      return Error{ErrorCode::kUnexpectedEnd, at, "truncated storage element count", key.text};
    }
    const uint64_t count = LoadLittleEndian<uint64_t>(bytes.data() + at);
    // An untyped storage (torch 2.x) is written as bytes: its count is its byte count,
    // which is the persistent id's (num_elements was divided from it, so no overflow).
    const uint64_t count_unit = storage.untyped ? 1 : BytesPerElement(storage.dtype);
    const uint64_t expected = storage.untyped
                                  ? storage.num_elements * BytesPerElement(storage.dtype)
                                  : storage.num_elements;
    if (count != expected) {
      return Error{ErrorCode::kStorageMismatch, at,
                   "storage element count differs from the pickle's", key.text};
    }
    at += 8;
    uint64_t len = 0;
    if (!CheckedMul(count, count_unit, &len) || bytes.size() - at < len) {
      return Error{ErrorCode::kUnexpectedEnd, at, "storage bytes run past the end", key.text};
    }
    out->placements[it->second] = {at, len, false, 0};
    placed[it->second] = true;
    at += len;
  }
  for (size_t k = 0; k < placed.size(); ++k) {
    if (!placed[k]) {
      return Error{ErrorCode::kZipMissingRecord, out->pickle.storages[k].offset,
                   "persistent id names a storage the stream does not hold",
                   out->pickle.storages[k].key};
    }
  }
  if (at != bytes.size()) {
    return Error{ErrorCode::kTrailingContent, at, "bytes after the last storage"};
  }
  return {};
}

}  // namespace

Error BarePickleError(const PickleResult& pickle, std::span<const std::byte> bytes) {
  if (pickle.end == bytes.size()) {
    return Error{ErrorCode::kRawPickle, 0,
                 "a bare pickle, not a torch checkpoint: it holds no tensor data"};
  }
  return Error{ErrorCode::kTrailingContent, pickle.end,
               "bytes after the pickle's STOP: a loader that calls pickle.load again on the "
               "stream would run them",
               std::to_string(bytes.size() - pickle.end) + " bytes"};
}

TorchFormat ContainerOf(Format sniffed, std::span<const std::byte> bytes) {
  switch (sniffed) {
    case Format::kPytorchZip:
    case Format::kZip:
    case Format::kNpz:
      // torch.load takes any file starting with a local header for a ZIP (an npz or a
      // ZIP without data.pkl is one its reader refuses); an npz starting with its end
      // record is no ZIP to torch.
      return bytes.size() >= 4 && std::memcmp(bytes.data(), "PK\x03\x04", 4) == 0
                 ? TorchFormat::kZip
                 : TorchFormat::kUnknown;
    case Format::kPytorchLegacy:
      return TorchFormat::kLegacy;
    case Format::kPickle:
      // The reader reads protocols 2-5 (PROTO first); protocols 0 and 1 are scanned by
      // file_verdict.cc's walk.
      return bytes.size() >= 2 && static_cast<uint8_t>(bytes[0]) == op::kProto &&
                     static_cast<uint8_t>(bytes[1]) >= 2 && static_cast<uint8_t>(bytes[1]) <= 5
                 ? TorchFormat::kRawPickle
                 : TorchFormat::kUnknown;
    default:
      return TorchFormat::kUnknown;
  }
}

std::string_view TorchFormatName(TorchFormat format) {
  switch (format) {
    case TorchFormat::kZip: return "zip";
    case TorchFormat::kLegacy: return "legacy";
    case TorchFormat::kRawPickle: return "raw-pickle";
    case TorchFormat::kUnknown: break;
  }
  return "unknown";
}

Error LoadTorchContainer(Format sniffed, std::span<const std::byte> bytes, LoadedPickle* out,
                         std::vector<GlobalUse>* globals) {
  out->format = ContainerOf(sniffed, bytes);
  // First, as torch.load tries it first: whatever else the file is, a tar header wins.
  if (Error error = CheckNotTarShaped(bytes); !error.ok()) return error;
  switch (out->format) {
    case TorchFormat::kZip:
      return LoadZip(bytes, out, globals);
    case TorchFormat::kLegacy:
      return LoadLegacy(bytes, out, globals);
    case TorchFormat::kRawPickle: {
      // Read it for the report; even a harmless one holds no tensor data.
      Result<PickleResult> pickle = ReadPickle(bytes, PickleReadOptions{}, globals);
      if (!pickle.ok()) return pickle.error();
      return BarePickleError(*pickle, bytes);
    }
    case TorchFormat::kUnknown:
      break;
  }
  return Error{ErrorCode::kNotATorchCheckpoint, 0,
               "not a torch checkpoint (neither a ZIP archive, a legacy stream nor a pickle)"};
}

}  // namespace stguard
