// SPDX-License-Identifier: Apache-2.0
// LintModel: the file-system part of lint. Opens the checkpoint as `check` does (an
// invalid file is an error finding and ends the run), reads config.json (the named one,
// or the one beside the weights) and notes whether tokenizer.json is there, then runs the
// engine (lint_engine.cc).
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <memory>

#include "folder/folder_util.h"
#include "lint/engine.h"
#include "stguard/checkpoint_dir.h"
#include "stguard/io_error.h"
#include "stguard/mapped_file.h"

namespace stguard {
namespace {

// ConfigText is config.json as read: absent, or its bytes (kept mapped).
struct ConfigText {
  bool present = false;
  std::unique_ptr<MappedFile> mapping;
  std::string_view text;
};

// KeptConfig takes config.json's text from the mapping the check made of it, when there
// is one within the cap: the same bytes ReadConfigFile would map again.
bool KeptConfig(const MappedFile* kept, const Options& limits, ConfigText* out) {
  if (kept == nullptr || kept->size() > std::min(limits.max_header_len, kMaxHeaderLen)) {
    return false;
  }
  const std::span<const std::byte> bytes = kept->bytes();
  out->present = true;
  out->text = std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  return true;
}

// ReadConfigFile maps `path`. An absent file is not an error unless `required` (the user
// named it). Returns an I/O error, or ok with *out filled.
Error ReadConfigFile(const std::string& path, bool required, const Options& limits,
                     ConfigText* out, lint::Findings* findings) {
  struct stat info;
  if (::stat(path.c_str(), &info) != 0) {
    if (errno == ENOENT && !required) return Error{};
    return folder::FolderIoError("cannot open config", path, errno);
  }
  // Checked before opening: open(2) on a FIFO would wait for a writer forever.
  if (!S_ISREG(info.st_mode)) {
    return Error{ErrorCode::kNotARegularFile, 0, "config.json is not a regular file", path};
  }
  const uint64_t cap = std::min(limits.max_header_len, kMaxHeaderLen);
  if (static_cast<uint64_t>(info.st_size) > cap) {
    findings->Error("config-invalid-json", {}, "at most " + std::to_string(cap) + " bytes",
                    std::to_string(info.st_size) + " bytes", "config.json is larger than the cap",
                    "config.json");
    return Error{};
  }
  Result<std::unique_ptr<MappedFile>> mapping = MappedFile::Open(path);
  if (!mapping.ok()) return mapping.error();
  out->present = true;
  out->mapping = std::move(*mapping);
  const std::span<const std::byte> bytes = out->mapping->bytes();
  out->text = std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  return Error{};
}

// InsideFolder says whether `path` resolves to a file directly in `folder_path` (or is a
// hub cache snapshot's link to its blob): the folder layer's one containment rule.
bool InsideFolder(const std::string& path, const std::string& folder_path) {
  std::string real_folder;
  return folder::RealPath(folder_path, &real_folder) &&
         folder::PlaceInFolder(real_folder, path) == folder::Placement::kInside;
}

// InvalidCheckpointFinding is the one finding of a run whose checkpoint `check` rejects:
// the file is the one the error is in, the whole error is the message.
LintFinding InvalidCheckpointFinding(const Error& error) {
  LintFinding finding;
  finding.severity = LintSeverity::kError;
  finding.rule = "invalid-checkpoint";
  finding.file = error.file;
  finding.tensor = error.tensor;
  finding.found = std::string(ErrorCodeName(error.code));
  finding.message = "`stguard check` rejects the checkpoint: " + error.ToString();
  return finding;
}

// NameConfigAs makes the findings about config.json name the file lint read instead, when
// the user named another one (--config).
void NameConfigAs(const std::string& config_path, std::vector<LintFinding>* findings) {
  for (LintFinding& finding : *findings) {
    if (finding.file == "config.json") finding.file = config_path;
  }
}

}  // namespace

namespace {

// LintShardsIn lints validated shards against the config.json of `folder_path` (or the
// one options name): the part of lint after the checkpoint is open.
// `kept` is config.json as the check read it beside the shards, or null.
LintReport LintShardsIn(const std::string& folder_path, const std::vector<lint::ShardRef>& shards,
                        const MappedFile* kept, const LintOptions& options) {
  LintReport report;
  std::vector<LintFinding> early;
  lint::Findings findings(&early);
  ConfigText config;
  const bool named = !options.config_path.empty();
  const std::string config_path =
      named ? options.config_path : folder::JoinPath(folder_path, "config.json");
  bool config_usable = true;
  struct stat link_info;
  if (!named && ::lstat(config_path.c_str(), &link_info) == 0 &&
      !options.dir.allow_external_symlinks && !InsideFolder(config_path, folder_path)) {
    // As for shards: a downloaded folder must not make lint read any file on the machine.
    findings.Error("config-unsafe", {}, "a file in the model folder", "a link out of it",
                   "config.json is a symbolic link out of the folder "
                   "(--allow-external-symlinks reads it)",
                   "config.json");
    config_usable = false;
  }
  const bool from_check = config_usable && !named && KeptConfig(kept, options.dir.reader, &config);
  if (config_usable && !from_check) {
    report.error = ReadConfigFile(config_path, named, options.dir.reader, &config, &findings);
    if (!report.error.ok()) return report;
  }
  struct stat info;
  const bool has_tokenizer =
      ::stat(folder::JoinPath(folder_path, "tokenizer.json").c_str(), &info) == 0;
  const bool config_read_failed = config_usable && !config.present && !early.empty();
  report.findings = std::move(early);
  if (!config_usable || config_read_failed) {
    // The config exists but cannot be used: lint what needs no config, without the
    // config-missing warning.
    std::vector<LintFinding> rest;
    LintReport partial;
    lint::LintShards(shards, false, {}, lint::TokenizerFile::kUnknown,
                     options.dir.reader.max_depth, &partial);
    for (LintFinding& finding : partial.findings) {
      if (finding.rule != "config-missing") report.findings.push_back(std::move(finding));
    }
    report.num_tensors = partial.num_tensors;
    report.num_shards = partial.num_shards;
    if (named) NameConfigAs(config_path, &report.findings);
    return report;
  }
  lint::LintShards(shards, config.present, config.text,
                   has_tokenizer ? lint::TokenizerFile::kPresent : lint::TokenizerFile::kAbsent,
                   options.dir.reader.max_depth, &report);
  if (named) NameConfigAs(config_path, &report.findings);
  return report;
}

}  // namespace

LintReport LintModel(const std::string& path, const LintOptions& options) {
  Result<CheckpointDir> checkpoint = CheckpointDir::Open(path, options.dir);
  if (!checkpoint.ok()) {
    LintReport report;
    // Out of memory while opening the checkpoint is the invalid-checkpoint finding, not a
    // path lint could not reach.
    if (IsIoError(checkpoint.error(), OutOfMemoryIs::kNotIoError)) {
      report.error = checkpoint.error();
    } else {
      report.findings.push_back(InvalidCheckpointFinding(checkpoint.error()));
    }
    return report;
  }
  return LintModel(*checkpoint, options);
}

LintReport LintModel(const CheckpointDir& checkpoint, const LintOptions& options) {
  return LintModel(checkpoint, nullptr, options);
}

LintReport LintModel(const CheckpointDir& checkpoint, const MappedFile* config,
                     const LintOptions& options) {
  std::vector<lint::ShardRef> shards;
  for (const ShardFile& shard : checkpoint.shards()) {
    shards.push_back(lint::ShardRef{shard.name, &shard.checkpoint});
  }
  return LintShardsIn(checkpoint.folder(), shards, config, options);
}

LintReport LintModel(const std::string& file_path, const Checkpoint& file,
                     const LintOptions& options) {
  std::string folder;
  std::string name;
  folder::SplitPath(file_path, &folder, &name);
  return LintShardsIn(folder, {lint::ShardRef{name, &file}}, nullptr, options);
}

}  // namespace stguard
