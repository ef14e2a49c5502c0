// SPDX-License-Identifier: Apache-2.0
// InspectPath (stguard/inspect.h): what `inspect` describes, for every input `check`
// accepts: a file, a folder, an index file (as its folder), and a file whose bytes are
// not what its name suggests.
#include "stguard/inspect.h"

#include <sys/stat.h>

#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "folder/index_file.h"
#include "front/contents.h"
#include "stguard/checkpoint_dir.h"
#include "stguard/mapped_file.h"

namespace stguard {
namespace {

// kMaxSniffedJson bounds the JSON text read to tell a shard index from other JSON: an
// index of a few hundred thousand tensors is a few tens of MB; past this it is not read.
constexpr uint64_t kMaxSniffedJson = 64ull << 20;

bool IsInspectedDirectory(const std::string& path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

std::string FolderOfFile(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// WhatTheTextIs says what a file the sniff found to be JSON text is: a shard index (it
// parses as one) or other JSON; nullptr when it cannot be read (the check said why).
const char* WhatTheTextIs(const std::string& path) {
  struct stat info;
  if (::stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode) ||
      static_cast<uint64_t>(info.st_size) > kMaxSniffedJson) {
    return nullptr;
  }
  Result<std::unique_ptr<MappedFile>> file = MappedFile::Open(path);
  if (!file.ok()) return nullptr;
  const std::span<const std::byte> bytes = (*file)->bytes();
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  IndexFile index;
  if (ParseIndexFile(text, Options{}, &index).ok()) {
    return "this is a shard index (JSON text), not a checkpoint: inspect its folder, or the "
           "index under a name ending in .index.json";
  }
  return "this is JSON text, not a checkpoint";
}

// Disguise is the note for a valid file of another format than its name says.
std::string Disguise(const std::string& path, Format format) {
  if (!path.ends_with(".safetensors") || format == Format::kSafetensors) return {};
  if (format == Format::kPytorchZip || format == Format::kPytorchLegacy) {
    return "this is a PyTorch checkpoint, named like a safetensors file";
  }
  return "this is a " + std::string(FormatName(format)) + " file, named like a safetensors file";
}

void Add(CheckResult file, InspectResult* out) {
  out->num_tensors += file.tensors.size();
  for (const TensorEntry& tensor : file.tensors) out->data_bytes += tensor.bytes;
  file.files.clear();
  out->files.push_back(std::move(file));
}

// ListFolder lists a valid folder's weight files: its safetensors shards (from the
// headers the folder check kept), then what the folder check examined, pickle-bearing
// files listed from their scan reports.
void ListFolderFiles(InspectResult* out) {
  // Taken out of the result: the headers are freed once listed, not carried with it.
  const std::shared_ptr<const CheckpointDir> weights = std::move(out->check.checkpoint_dir);
  if (weights != nullptr) {
    for (const ShardFile& shard : weights->shards()) {
      CheckResult file;
      file.file = shard.name;
      file.format = Format::kSafetensors;
      file.verdict = Verdict::kValid;
      ListSafetensors(shard.checkpoint, &file);
      Add(std::move(file), out);
    }
  }
  for (const CheckResult& member : out->check.files) {
    CheckResult file = member;
    if (file.pickle.has_value() && file.tensors.empty()) ListPickle(*file.pickle, &file);
    Add(std::move(file), out);
  }
}

}  // namespace

InspectResult InspectPath(const std::string& path, const CheckOptions& options) {
  InspectResult out;
  CheckOptions check_options = options;
  out.inspected = path;
  if (IsFolderPath(path)) {
    // A folder's listing is built from its files' contents; a single file is described
    // from the reader the check keeps, without a second copy of every name and shape
    // (inspect stays within the 2N memory bound of tests/memory/).
    check_options.list_contents = true;
    check_options.keep_reader = true;  // the shards' headers, listed without reading them again
    out.is_folder = true;
    if (!IsInspectedDirectory(path)) {
      out.inspected = FolderOfFile(path);
      out.note = "an index file: inspected as its folder " + out.inspected;
    }
    out.check = CheckFolder(out.inspected, check_options);
    if (out.check.valid()) ListFolderFiles(&out);
    return out;
  }
  check_options.keep_reader = true;
  out.check = CheckFile(path, check_options);
  if (out.check.valid()) {
    out.note = Disguise(path, out.check.format);
  } else if (out.check.format == Format::kJson) {
    // Read as safetensors, JSON text gives an absurd header length. There is nothing to
    // describe: the request is not usable (error), and the result says what the file is.
    if (const char* what = WhatTheTextIs(path); what != nullptr) {
      out.note = what;
      out.check.verdict = Verdict::kError;
      out.check.error = Error{ErrorCode::kInvalidArgument, 0, what};
    }
  }
  return out;
}

}  // namespace stguard
