// SPDX-License-Identifier: Apache-2.0
// CheckModelFolder: config.json, tie_word_embeddings against lm_head.weight, and pickle
// files beside the weights (see stguard/checkpoint_dir.h).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
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

// CodeRisk is one kind of file whose loading can run code, and what to tell the user.
struct CodeRisk {
  std::string_view suffix;  // lowercase, matched at the end of the lowercased name
  const char* message;
};

constexpr char kPickleMessage[] =
    "pickle-based weight file: loading it (torch.load, pickle.load) can run arbitrary code; "
    "prefer the .safetensors files";

// kCodeRisks lists formats that are read by running code from the file: pickle programs
// (torch.load, pickle.load, joblib.load), archives of them, and Keras files whose Lambda
// layers hold marshalled Python code. Longer suffixes first (".pth.tar" before ".tar" is
// considered at all). .npy and .npz are looked at separately (object arrays).
constexpr CodeRisk kCodeRisks[] = {
    {".pth.tar", kPickleMessage},
    {".bin", kPickleMessage},
    {".pt", kPickleMessage},
    {".pth", kPickleMessage},
    {".ckpt", kPickleMessage},
    {".pkl", kPickleMessage},
    {".pickle", kPickleMessage},
    {".joblib",
     "joblib file: joblib.load unpickles it, which can run arbitrary code"},
    {".pt2",
     "PyTorch export archive (.pt2): its loader unpickles parts of it, which can run "
     "arbitrary code"},
    {".h5",
     "Keras/HDF5 model: a Lambda layer holds marshalled Python code that loading can run "
     "(unless safe_mode)"},
    {".keras",
     "Keras model archive: a Lambda layer holds marshalled Python code that loading can run "
     "(unless safe_mode)"},
};

// kGzipSuffixes wrap another file; "model.pkl.gz" is a pickle once decompressed.
constexpr std::string_view kGzipSuffixes[] = {".gz", ".gzip"};

// CodeRiskMessage returns why loading a file of this (lowercased) name can run code, or
// nullptr. A gzip suffix is looked through: "x.pkl.gz" is a gzip-wrapped pickle.
const char* CodeRiskMessage(std::string_view lower) {
  for (std::string_view gzip : kGzipSuffixes) {
    if (EndsWith(lower, gzip)) {
      const std::string_view inner = lower.substr(0, lower.size() - gzip.size());
      for (const CodeRisk& risk : kCodeRisks) {
        if (EndsWith(inner, risk.suffix)) {
          return "gzip-compressed pickle: loading it (torch.load, pickle.load on the "
                 "decompressed bytes) can run arbitrary code";
        }
      }
      return nullptr;
    }
  }
  for (const CodeRisk& risk : kCodeRisks) {
    if (EndsWith(lower, risk.suffix)) return risk.message;
  }
  return nullptr;
}

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
  return Error{ErrorCode::kInvalidConfig, offset, message, std::move(context), {},
               "config.json"};
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

// IsValidatedShard says whether `name` in `folder` is one of the shards `weights` opened
// (shards() is sorted by name).
bool IsValidatedShard(const CheckpointDir& weights, const std::string& folder,
                      const std::string& name) {
  if (weights.folder() != folder) return false;
  const auto shards = weights.shards();
  const auto it = std::lower_bound(
      shards.begin(), shards.end(), name,
      [](const ShardFile& shard, const std::string& key) { return shard.name < key; });
  return it != shards.end() && it->name == name;
}

// ReadAt reads up to out.size() bytes at `offset`; returns how many it got.
size_t ReadAt(int fd, uint64_t offset, std::span<uint8_t> out) {
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t got =
        ::pread(fd, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    done += static_cast<size_t>(got);
  }
  return done;
}

uint32_t Load16(const uint8_t* p) { return p[0] | (p[1] << 8); }
uint32_t Load32(const uint8_t* p) {
  return p[0] | (p[1] << 8) | (p[2] << 16) | (static_cast<uint32_t>(p[3]) << 24);
}
uint64_t Load64(const uint8_t* p) { return Load32(p) | (uint64_t{Load32(p + 4)} << 32); }

// NpyHoldsObjects reads the .npy header at `offset` ("\x93NUMPY", version, length, then a
// Python dict literal) and says whether its dtype has object fields ('|O'), the ones
// np.load unpickles. A header it cannot read says no: NumPy cannot load it either.
bool NpyHoldsObjects(int fd, uint64_t offset) {
  uint8_t start[12];
  if (ReadAt(fd, offset, start) < 12 || std::memcmp(start, "\x93NUMPY", 6) != 0) return false;
  const bool v1 = start[6] == 1;
  const uint64_t header_len = v1 ? Load16(start + 8) : Load32(start + 8);
  const uint64_t header_start = offset + (v1 ? 10 : 12);
  constexpr uint64_t kMaxNpyHeader = 1 << 20;  // NumPy itself refuses far smaller ones
  if (header_len > kMaxNpyHeader) return false;
  std::vector<uint8_t> header(static_cast<size_t>(header_len));
  const size_t got = ReadAt(fd, header_start, header);
  const std::string_view text(reinterpret_cast<const char*>(header.data()), got);
  for (std::string_view object : {"'|O'", "'<O'", "'>O'", "'O'"}) {
    if (text.find(object) != std::string_view::npos) return true;
  }
  return false;
}

// NpzMayHoldObjects walks the local file headers of a .npz (a ZIP of .npy files) and says
// whether any member holds object arrays, or may: a compressed member, or one whose
// size the local header does not give, cannot be looked into without inflating it.
bool NpzMayHoldObjects(int fd) {
  constexpr int kMaxMembers = 1 << 16;
  uint64_t offset = 0;
  for (int member = 0; member < kMaxMembers; ++member) {
    uint8_t local[30];
    if (ReadAt(fd, offset, local) < 30 || Load32(local) != 0x04034b50) return false;
    const uint32_t flags = Load16(local + 6);
    const uint32_t method = Load16(local + 8);
    uint64_t compressed = Load32(local + 18);
    const uint32_t name_len = Load16(local + 26);
    const uint32_t extra_len = Load16(local + 28);
    if (compressed == 0xFFFFFFFF) {  // ZIP64: the sizes are in the 0x0001 extra field
      std::vector<uint8_t> extra(extra_len);
      if (ReadAt(fd, offset + 30 + name_len, extra) < extra_len) return true;
      compressed = UINT64_MAX;
      for (size_t at = 0; at + 4 <= extra.size();) {
        const uint32_t id = Load16(&extra[at]);
        const uint32_t len = Load16(&extra[at + 2]);
        if (id == 0x0001 && len >= 16 && at + 4 + 16 <= extra.size()) {
          compressed = Load64(&extra[at + 4 + 8]);
        }
        at += 4 + len;
      }
      if (compressed == UINT64_MAX) return true;
    }
    if ((flags & 0x8) != 0 && compressed == 0) return true;  // sizes after the data
    if (method != 0) return true;                             // compressed: cannot look
    const uint64_t data = offset + 30 + name_len + extra_len;
    if (NpyHoldsObjects(fd, data)) return true;
    if (compressed > UINT64_MAX - data) return true;
    offset = data + compressed;
  }
  return true;  // more members than we look at
}

// NumpyMayHoldObjects opens a .npy or .npz file and looks for object arrays.
bool NumpyMayHoldObjects(const std::string& path) {
  struct stat info;
  if (::stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) return false;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  const bool npz = EndsWith(Lowercase(path), ".npz");
  const bool holds = npz ? NpzMayHoldObjects(fd) : NpyHoldsObjects(fd, 0);
  ::close(fd);
  return holds;
}

// CheckModelFolderOrThrow is CheckModelFolder, letting std::bad_alloc escape.
ModelFolderReport CheckModelFolderOrThrow(const std::string& folder,
                                          const CheckpointDir* weights,
                                          const Options& options,
                                          bool allow_external_symlinks);

}  // namespace

ModelFolderReport CheckModelFolder(const std::string& folder, const CheckpointDir* weights,
                                   const Options& options, bool allow_external_symlinks) {
  try {
    return CheckModelFolderOrThrow(folder, weights, options, allow_external_symlinks);
  } catch (const std::bad_alloc&) {
    ModelFolderReport report;  // no allocation: an Error with a static message
    report.error = OutOfMemoryError("out of memory while checking the model folder");
    return report;
  }
}

namespace {

// ReadFolderConfig checks config.json when present (a link out of the folder is refused
// unless allowed; not a regular file, over the cap or not one JSON object: an error) and
// sets *tie from it; its warnings go to report->warnings.
Error ReadFolderConfig(const std::string& folder, const Options& options,
                       bool allow_external_symlinks, TieSetting* tie, ModelFolderReport* report) {
  const std::string config_path = JoinPath(folder, kConfigName);
  struct stat info;
  if (!allow_external_symlinks && ::lstat(config_path.c_str(), &info) == 0 &&
      S_ISLNK(info.st_mode)) {
    // The same containment rule as for shards: a downloaded folder must not make stguard
    // read (and quote in a warning) another file on the machine.
    if (Error error = folder::ContainInFolder(folder, std::string(kConfigName)); !error.ok()) {
      return error;
    }
  }
  if (::stat(config_path.c_str(), &info) != 0) {
    return errno == ENOENT ? Error{} : FolderIoError("cannot open", config_path, errno);
  }
  // Checked before opening: open(2) on a FIFO would wait for a writer forever.
  if (!S_ISREG(info.st_mode)) return ConfigError(0, "config.json is not a regular file");
  Result<std::unique_ptr<MappedFile>> mapping = MappedFile::Open(config_path);
  if (!mapping.ok()) return mapping.error();
  const std::span<const std::byte> bytes = (*mapping)->bytes();
  const uint64_t cap = std::min(options.max_header_len, kMaxHeaderLen);
  if (bytes.size() > cap) {
    return ConfigError(0, "config.json is larger than the cap",
                       std::to_string(bytes.size()) + " > " + std::to_string(cap));
  }
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  report->config = std::move(*mapping);
  return CheckConfig(text, options, tie, &report->warnings);
}

// WarnAboutTying warns when tie_word_embeddings is not a bool, or is false while the
// weights have no lm_head.weight.
void WarnAboutTying(TieSetting tie, const CheckpointDir* weights, ModelFolderReport* report) {
  if (tie == TieSetting::kNotBool) {
    report->warnings.push_back(Warning{WarningKind::kTieWordEmbeddingsNotBool,
                                       std::string(kConfigName), {},
                                       "config.json's tie_word_embeddings is not true or false"});
  }
  if (tie == TieSetting::kFalse && weights != nullptr &&
      weights->Find("lm_head.weight") == nullptr) {
    report->warnings.push_back(Warning{
        WarningKind::kLmHeadMissing, std::string(kConfigName), "lm_head.weight",
        "config.json sets tie_word_embeddings to false, but no tensor is named "
        "lm_head.weight: the output layer would be left uninitialised"});
  }
}

// WarnAboutCodeRisks flags the files whose names say their loading can run code, and the
// NumPy files that hold (or may hold) object arrays.
void WarnAboutCodeRisks(const std::string& folder, const std::vector<std::string>& names,
                        ModelFolderReport* report) {
  for (const std::string& name : names) {
    const std::string lower = Lowercase(name);
    if (const char* message = CodeRiskMessage(lower); message != nullptr) {
      report->warnings.push_back(Warning{WarningKind::kPickleFile, name, {}, message});
    } else if (EndsWith(lower, ".npy") || EndsWith(lower, ".npz")) {
      if (NumpyMayHoldObjects(JoinPath(folder, name))) {
        report->warnings.push_back(Warning{
            WarningKind::kPickleFile, name, {},
            "NumPy file that may contain pickles: it holds (or may hold) object arrays, "
            "which np.load(allow_pickle=True) unpickles, running arbitrary code"});
      }
    }
  }
}

// CheckEverySafetensors validates every *.safetensors file the weights did not, whatever
// the index says: loaders try model.safetensors before an index, so it may be what
// actually loads.
Error CheckEverySafetensors(const std::string& folder, const std::vector<std::string>& names,
                            const CheckpointDir* weights, const Options& options,
                            bool allow_external_symlinks) {
  for (const std::string& name : names) {
    if (!EndsWith(name, ".safetensors")) continue;
    if (weights != nullptr && IsValidatedShard(*weights, folder, name)) continue;
    const std::string path = JoinPath(folder, name);
    if (!allow_external_symlinks) {
      if (Error error = folder::ContainInFolder(folder, name); !error.ok()) return error;
    }
    struct stat file_info;
    if (::stat(path.c_str(), &file_info) != 0 || !S_ISREG(file_info.st_mode)) {
      return Error{ErrorCode::kMissingShard, 0,
                   "a .safetensors name in the folder is not a regular file",
                   "file '" + name + "'", {}, name};
    }
    Result<Checkpoint> checkpoint = Checkpoint::OpenHeader(path, options);
    if (!checkpoint.ok()) {
      Error error = checkpoint.error();
      error.context = "file '" + name + "'" + (error.context.empty() ? "" : "; " + error.context);
      error.file = name;
      return error;
    }
  }
  return {};
}

ModelFolderReport CheckModelFolderOrThrow(const std::string& folder,
                                          const CheckpointDir* weights,
                                          const Options& options,
                                          bool allow_external_symlinks) {
  ModelFolderReport report;
  TieSetting tie = TieSetting::kAbsent;
  report.error = ReadFolderConfig(folder, options, allow_external_symlinks, &tie, &report);
  if (!report.error.ok()) return report;
  WarnAboutTying(tie, weights, &report);
  Result<std::vector<std::string>> names = ListFolder(folder);
  if (!names.ok()) {
    report.error = names.error();
    return report;
  }
  WarnAboutCodeRisks(folder, *names, &report);
  report.error = CheckEverySafetensors(folder, *names, weights, options, allow_external_symlinks);
  return report;
}

}  // namespace

}  // namespace stguard
