// SPDX-License-Identifier: Apache-2.0
// CheckModelFolder: config.json, tie_word_embeddings against lm_head.weight, and pickle
// files beside the weights (see stguard/checkpoint_dir.h).
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <memory>

#include "base/out_of_memory.h"
#include "folder/folder_util.h"
#include "folder/index_file.h"
#include "stguard/checkpoint_dir.h"
#include "stguard/json_tokenizer.h"
#include "stguard/mapped_file.h"

namespace stguard {
namespace {

using folder::EndsWith;
using folder::FolderIoError;
using folder::JoinPath;
using folder::ListFolder;

constexpr std::string_view kConfigName = "config.json";

// kPickleSuffixes are the extensions of formats that torch.load / pickle.load read by
// running a pickle program, which can call any Python function.
constexpr std::string_view kPickleSuffixes[] = {".bin", ".pt", ".pth", ".ckpt", ".pkl",
                                                ".pickle"};

std::string Lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

Error ConfigError(uint64_t offset, const char* message, std::string detail = {}) {
  std::string context = "file 'config.json'";
  if (!detail.empty()) context += "; " + detail;
  return Error{ErrorCode::kInvalidConfig, offset, message, std::move(context)};
}

// TieSetting is what config.json says about tie_word_embeddings at its top level.
enum class TieSetting : uint8_t { kAbsent, kTrue, kFalse, kNotBool };

// CheckConfig validates config.json's text and reads its top-level tie_word_embeddings.
// The text was validated as JSON first, so the token walk cannot fail.
Error CheckConfig(std::string_view text, const Options& options, TieSetting* out_tie,
                  std::vector<Warning>* warnings) {
  if (Error error = ValidateJson(text, options.max_depth); !error.ok()) {
    return ConfigError(error.offset, "config.json is not valid JSON",
                       std::string(ErrorCodeName(error.code)) + ": " + error.message);
  }
  if (Error error = ValidateJsonUniqueKeys(text, options.max_depth); !error.ok()) {
    warnings->push_back(Warning{WarningKind::kConfigDuplicateKey, std::string(kConfigName), {},
                                "config.json repeats the key \"" + PrintableText(error.context) +
                                    "\" (at byte " + std::to_string(error.offset) +
                                    "); Python's json keeps the last value"});
  }
  JsonTokenizer tokens(text, 0, options.max_depth);
  Token token;
  if (!tokens.Next(&token)) return tokens.error();
  if (token.kind != TokenKind::kBeginObject) {
    return ConfigError(token.offset, "config.json is not a JSON object");
  }
  bool next_is_tie = false;
  while (tokens.Next(&token) && token.kind != TokenKind::kEndOfInput) {
    if (next_is_tie) {  // the value of a top-level tie_word_embeddings; the last one wins
      next_is_tie = false;
      *out_tie = token.kind == TokenKind::kTrue    ? TieSetting::kTrue
                 : token.kind == TokenKind::kFalse ? TieSetting::kFalse
                                                   : TieSetting::kNotBool;
      continue;
    }
    if (token.kind == TokenKind::kKey && tokens.depth() == 1) {
      std::string scratch;
      next_is_tie = TokenText(token, &scratch) == "tie_word_embeddings";
    }
  }
  return tokens.error();
}

// CheckModelFolderOrThrow is CheckModelFolder, letting std::bad_alloc escape.
ModelFolderReport CheckModelFolderOrThrow(const std::string& folder,
                                          const CheckpointDir* weights,
                                          const Options& options);

}  // namespace

ModelFolderReport CheckModelFolder(const std::string& folder, const CheckpointDir* weights,
                                   const Options& options) {
  try {
    return CheckModelFolderOrThrow(folder, weights, options);
  } catch (const std::bad_alloc&) {
    ModelFolderReport report;  // no allocation: an Error with a static message
    report.error = OutOfMemoryError("out of memory while checking the model folder");
    return report;
  }
}

namespace {

ModelFolderReport CheckModelFolderOrThrow(const std::string& folder,
                                          const CheckpointDir* weights,
                                          const Options& options) {
  ModelFolderReport report;
  TieSetting tie = TieSetting::kAbsent;
  const std::string config_path = JoinPath(folder, kConfigName);
  struct stat info;
  if (::stat(config_path.c_str(), &info) == 0) {
    // Checked before opening: open(2) on a FIFO would wait for a writer forever.
    if (!S_ISREG(info.st_mode)) {
      report.error = ConfigError(0, "config.json is not a regular file");
      return report;
    }
    Result<std::unique_ptr<MappedFile>> mapping = MappedFile::Open(config_path);
    if (!mapping.ok()) {
      report.error = mapping.error();
      return report;
    }
    const std::span<const std::byte> bytes = (*mapping)->bytes();
    const uint64_t cap = std::min(options.max_header_len, kMaxHeaderLen);
    if (bytes.size() > cap) {
      report.error = ConfigError(0, "config.json is larger than the cap",
                                 std::to_string(bytes.size()) + " > " + std::to_string(cap));
      return report;
    }
    const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    report.error = CheckConfig(text, options, &tie, &report.warnings);
    if (!report.error.ok()) return report;
  } else if (errno != ENOENT) {
    report.error = FolderIoError("cannot open", config_path, errno);
    return report;
  }

  if (tie == TieSetting::kNotBool) {
    report.warnings.push_back(Warning{WarningKind::kTieWordEmbeddingsNotBool,
                                      std::string(kConfigName), {},
                                      "config.json's tie_word_embeddings is not true or false"});
  }
  if (tie == TieSetting::kFalse && weights != nullptr &&
      weights->Find("lm_head.weight") == nullptr) {
    report.warnings.push_back(Warning{
        WarningKind::kLmHeadMissing, std::string(kConfigName), "lm_head.weight",
        "config.json sets tie_word_embeddings to false, but no tensor is named "
        "lm_head.weight: the output layer would be left uninitialised"});
  }

  Result<std::vector<std::string>> names = ListFolder(folder);
  if (!names.ok()) {
    report.error = names.error();
    return report;
  }
  for (const std::string& name : *names) {
    const std::string lower = Lowercase(name);
    for (std::string_view suffix : kPickleSuffixes) {
      if (EndsWith(lower, suffix)) {
        report.warnings.push_back(Warning{
            WarningKind::kPickleFile, name, {},
            "pickle-based weight file: loading it (torch.load, pickle.load) can run "
            "arbitrary code; prefer the .safetensors files"});
        break;
      }
    }
  }
  return report;
}

}  // namespace

}  // namespace stguard
