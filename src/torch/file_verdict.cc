// SPDX-License-Identifier: Apache-2.0
// The verdict on a pickle-bearing file (see stguard/file_verdict.h).
#include "stguard/file_verdict.h"

#include <utility>

#include "base/source_read.h"
#include "pickle/allowlist.h"
#include "pickle/opcodes.h"
#include "pickle/pickle_reader.h"
#include "sniff/pickle_walk.h"
#include "sniff/tar_probe.h"
#include "stguard/mapped_file.h"
#include "torch/containers.h"
#include "torch/scan_loaded.h"
#include "torch/zip_records.h"
#include "torch/zip_source_verdict.h"
#include "zip/zip_archive.h"

namespace stguard {
namespace {

// kMaxKeyPathVisits bounds the dicts the key-path search looks into: one dict can be
// referenced many times (memo), so the search counts visits, not distinct dicts.
constexpr size_t kMaxKeyPathVisits = 4096;

bool IsStateDict(const PickleResult& p, const PickleValue& dict) {
  if (dict.kind != ValueKind::kDict || dict.items.empty()) return false;
  for (size_t k = 0; k + 1 < dict.items.size(); k += 2) {
    if (p.at(dict.items[k]).kind != ValueKind::kString ||
        p.at(dict.items[k + 1]).kind != ValueKind::kTensor) {
      return false;
    }
  }
  return true;
}

// KeyPathSearch finds the paths of string keys from the root to state dicts.
struct KeyPathSearch {
  const PickleResult& p;
  std::vector<std::vector<std::string>>* found;
  size_t visits = 0;
  std::vector<std::string> path;

  void Visit(const PickleValue& dict) {
    if (++visits > kMaxKeyPathVisits || found->size() >= kMaxKeyPaths) return;
    for (size_t k = 0; k + 1 < dict.items.size(); k += 2) {
      const PickleValue& key = p.at(dict.items[k]);
      const PickleValue& value = p.at(dict.items[k + 1]);
      if (key.kind != ValueKind::kString || value.kind != ValueKind::kDict) continue;
      path.push_back(key.text);
      if (IsStateDict(p, value)) {
        if (found->size() < kMaxKeyPaths) found->push_back(path);
      } else if (path.size() < kMaxKeyPathDepth) {
        Visit(value);
      }
      path.pop_back();
    }
  }
};

std::vector<std::vector<std::string>> KeyPathsOf(const PickleResult& p) {
  std::vector<std::vector<std::string>> found;
  if (p.values.empty() || p.at(p.root).kind != ValueKind::kDict) return found;
  KeyPathSearch search{p, &found};
  search.Visit(p.at(p.root));
  return found;
}

std::vector<std::vector<std::string>> FindKeyPaths(Format sniffed,
                                                  std::span<const std::byte> bytes) {
  LoadedPickle loaded;
  std::vector<GlobalUse> uses;
  if (!LoadTorchContainer(sniffed, bytes, &loaded, &uses).ok()) return {};
  return KeyPathsOf(loaded.pickle);
}

// DecideReport is the one rule from a scan's outcome to the verdict, for both paths (the
// whole file's bytes, a ZIP read by ranges): `opcode` is the byte at the reason's offset
// (DecidePickleVerdict's second argument). It says whether the key paths are wanted.
bool DecideReport(uint8_t opcode, PickleFileReport* report) {
  report->reason = report->scan.error;
  report->verdict = DecidePickleVerdict(report->reason, opcode);
  return report->verdict == FileVerdict::kNeedsKey;
}

// ScanBarePickle reads a pickle the torch scan did not recognise (protocols 0 and 1
// have no magic) for its globals and its first refusal.
void ScanBarePickle(std::span<const std::byte> bytes, TorchScanReport* scan) {
  std::vector<GlobalUse> uses;
  Result<PickleResult> pickle = ReadPickle(bytes, PickleReadOptions{}, &uses);
  scan->globals.clear();
  for (const GlobalUse& use : uses) {
    scan->globals.push_back({use.module, use.name, use.allowed, use.offset});
  }
  scan->error = pickle.ok() ? BarePickleError(*pickle, bytes) : pickle.error();
  if (pickle.ok() || scan->error.code == ErrorCode::kPickleGlobalRefused) return;
  // The reader stopped before any call (a protocol 0 or 1 pickle, which it does not
  // read): the walk names the first call, so that a global outside the allowlist is
  // reported as the code it names rather than as unreadable.
  const PickleWalkResult walk = WalkPickle(bytes);
  if (walk.outcome != PickleWalk::kCalls) return;
  const OpcodeInfo* info = FindOpcode(walk.opcode);
  if (info->arg == ArgKind::kTwoLines) {  // GLOBAL, INST: an import by name
    const bool allowed = FindAllowedGlobal(walk.module, walk.name) != nullptr;
    scan->globals.push_back({walk.module, walk.name, allowed, walk.offset});
    if (allowed) return;
    scan->error = Error{ErrorCode::kPickleGlobalRefused, walk.offset,
                        "global outside the allowlist, in a pickle of protocol 0 or 1",
                        walk.module + "." + walk.name};
  } else {
    scan->error = Error{ErrorCode::kPickleOpcodeRefused, walk.offset,
                        "an opcode that calls out of the pickle machine",
                        std::string(info->name)};
  }
}

// Judge sniffs `bytes` once, scans them as that format and decides the verdict. `file`,
// when given, holds them (ScanTorchSniffed).
PickleFileReport Judge(std::span<const std::byte> bytes, const MappedFile* file,
                       const TorchOptions& options) {
  PickleFileReport report;
  report.format = SniffFormat(bytes);
  report.scan = ScanTorchSniffed(report.format, bytes, file, options);
  if (report.format == Format::kTar) {
    report.scan.error = CheckNotTarShaped(bytes);  // kTarAmbiguous
  } else if (report.format == Format::kPickle &&
             report.scan.format == TorchFormat::kUnknown) {
    ScanBarePickle(bytes, &report.scan);
  }
  const uint64_t at = report.scan.error.offset;
  const uint8_t opcode = at < bytes.size() ? static_cast<uint8_t>(bytes[at]) : 0;
  if (DecideReport(opcode, &report)) report.key_paths = FindKeyPaths(report.format, bytes);
  return report;
}

}  // namespace

std::string_view FileVerdictName(FileVerdict verdict) {
  switch (verdict) {
    case FileVerdict::kClean: return "clean";
    case FileVerdict::kNeedsKey: return "needs-key";
    case FileVerdict::kNamesCode: return "names-code";
    case FileVerdict::kCannotProveSafe: break;
  }
  return "cannot-prove-safe";
}

bool VerdictFailsFolder(FileVerdict verdict) {
  return verdict == FileVerdict::kNamesCode || verdict == FileVerdict::kCannotProveSafe;
}

std::string KeyPathText(const std::vector<std::string>& path) {
  std::string text;
  for (const std::string& key : path) {
    if (!text.empty()) text += ' ';
    text += "--key " + PrintableText(key);
  }
  return text;
}

std::string DescribeVerdict(const PickleFileReport& report) {
  const std::string format(FormatName(report.format));
  switch (report.verdict) {
    case FileVerdict::kClean:
      if (report.reason.code == ErrorCode::kRawPickle) {
        return "clean: a bare pickle (" + format +
               ") naming nothing outside the allowlist; it holds no tensor data";
      }
      return "clean: " + format + " checkpoint of " + std::to_string(report.scan.tensors.size()) +
             (report.scan.tensors.size() == 1 ? " tensor" : " tensors") +
             ", nothing outside the allowlist; convert it with `stguard convert`";
    case FileVerdict::kNeedsKey: {
      if (report.key_paths.empty()) {
        // A list of state dicts, a dict of dicts deeper than the search: safe to load,
        // but no --key makes it convert.
        return "needs --key: nothing outside the allowlist, safe to load; conversion needs a "
               "state dict, and neither the root nor any key found leads to a mapping of "
               "names to tensors (" + report.reason.ToString() + ")";
      }
      std::string keys;
      for (const std::vector<std::string>& path : report.key_paths) {
        keys += (keys.empty() ? "" : ", ") + KeyPathText(path);
      }
      return "needs --key: nothing outside the allowlist; the tensors sit under a key: " + keys;
    }
    case FileVerdict::kNamesCode:
      return "names code: loading it (torch.load, pickle.load) runs code the file chose: " +
             report.reason.ToString();
    case FileVerdict::kCannotProveSafe:
      break;
  }
  if (!IsPickleBearing(report.format) && report.reason.code == ErrorCode::kNotATorchCheckpoint) {
    return "not a pickle-bearing file: " + report.reason.ToString();
  }
  return "cannot be proven safe: the static scan could not read it to its end, and loaders "
         "may still run it: " + report.reason.ToString();
}

FileVerdict DecidePickleVerdict(const Error& scan_error, uint8_t opcode) {
  switch (scan_error.code) {
    case ErrorCode::kOk:
    case ErrorCode::kRawPickle:  // read to its STOP, nothing refused
      return FileVerdict::kClean;
    case ErrorCode::kNotAStateDict:  // read whole; the tensors are elsewhere
      return FileVerdict::kNeedsKey;
    case ErrorCode::kPickleGlobalRefused:
    case ErrorCode::kPickleBadArguments:   // an allowed callable made to do something else
    case ErrorCode::kPickleMemoConflict:   // Python's memo would hand back another object
      return FileVerdict::kNamesCode;
    case ErrorCode::kPickleOpcodeRefused:
      return CallsOut(opcode) ? FileVerdict::kNamesCode : FileVerdict::kCannotProveSafe;
    default:
      return FileVerdict::kCannotProveSafe;
  }
}

PickleFileReport JudgePickleBytes(std::span<const std::byte> bytes,
                                  const TorchOptions& options) {
  return Judge(bytes, nullptr, options);
}

PickleFileReport JudgePickleZipSource(const ByteSource& source, const TorchOptions& options,
                                      uint64_t* unread_records) {
  PickleFileReport report;
  report.format = Format::kPytorchZip;
  LoadedPickle loaded;
  loaded.format = TorchFormat::kZip;  // the sniff saw a local header first
  std::vector<GlobalUse> uses;
  // First, as torch.load tries it first: a tar header wins (its first block only).
  std::vector<std::byte> head;
  Error error = ReadRange(source, 0, std::min<uint64_t>(source.size(), kTarBlockLen), &head);
  if (error.ok()) error = CheckNotTarShaped(head);
  uint8_t opcode = 0;
  if (error.ok()) {
    Result<ZipArchive> archive = ZipArchive::OpenSource(
        source, ZipFlavor::kTorch,
        [](std::string_view path) { return !IsStorageRecordPath(path); }, unread_records);
    error = archive.ok() ? LoadZipArchive(*archive, &loaded, &uses) : archive.error();
    // A refused opcode is in data.pkl: its byte, for DecidePickleVerdict.
    const ZipRecord* pkl = archive.ok() ? archive->Find("data.pkl") : nullptr;
    if (pkl != nullptr && error.offset >= pkl->data_offset &&
        error.offset - pkl->data_offset < pkl->size) {
      Result<std::span<const std::byte>> bytes = archive->RecordBytes(*pkl);
      if (bytes.ok()) opcode = static_cast<uint8_t>((*bytes)[error.offset - pkl->data_offset]);
    }
  }
  // A remote source reads no storage: their CRC-32s are not checked (the caller says so).
  report.scan = ScanLoaded(error, loaded, uses, source.size(),
                           source.remote() ? nullptr : &source, options);
  if (DecideReport(opcode, &report)) report.key_paths = KeyPathsOf(loaded.pickle);
  return report;
}

PickleFileReport JudgePickleFile(const std::string& path, const TorchOptions& options) {
  Result<std::unique_ptr<MappedFile>> file = MappedFile::Open(path);
  if (!file.ok()) {
    PickleFileReport report;
    report.reason = file.error();
    report.scan.error = file.error();
    return report;
  }
  return JudgePickleMapped(**file, options);
}

PickleFileReport JudgePickleMapped(const MappedFile& file, const TorchOptions& options) {
  // One mapping for the verdict and the scan. The scan reads storages with pread (a file
  // truncated meanwhile is kIoError).
  return Judge(file.bytes(), &file, options);
}

}  // namespace stguard
