// SPDX-License-Identifier: Apache-2.0
// A whole hf:// repo checked as a model folder (stguard/remote.h, WHOLE REPOS), by the
// local folder's rules (CheckFolderWith) and without downloading the weights:
// - every listed file is opened by range requests under the remote policy and sniffed;
//   pickle-bearing, GGUF, npy and npz files are judged by CheckSource, as the local walk's
//   members are;
// - the folder's top level is laid out in a private temporary folder as sparse files of
//   the listed sizes holding only the bytes the folder rules read: each file's first
//   block, a .safetensors file's header, a .json file whole (within the header cap). The
//   checkpoint, index, config.json and name rules then run on it unchanged: they read
//   nothing else (the shards are opened headers only), so they see the repo's own bytes.
#include "front/check_remote.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "front/folder_members.h"
#include "stguard/folder_scan.h"
#include "stguard/options.h"
#include "stguard/remote.h"
#include "stguard/sniff.h"

namespace stguard {
namespace {

// kMaxRepoBytes bounds every byte received for one repo, over all its files (each file is
// also bounded by RemoteLimits::max_bytes).
constexpr uint64_t kMaxRepoBytes = uint64_t{256} << 20;

Error LayoutIoError(const char* message, const std::string& name, int err) {
  return Error{ErrorCode::kIoError, 0, message, name + ": " + std::strerror(err)};
}

CheckResult RepoErrorResult(const std::string& url, Error error) {
  CheckResult result;
  result.file = url;
  result.is_folder = true;
  result.error = std::move(error);
  result.verdict = VerdictForError(result.error);
  return result;
}

// Skeleton is the private temporary folder, removed with everything in it.
class Skeleton {
 public:
  Skeleton() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
                          "/stguard-repo-XXXXXX";
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~Skeleton() {
    for (const std::string& name : names_) ::unlink((path_ + "/" + name).c_str());
    if (!path_.empty()) ::rmdir(path_.c_str());
  }
  Skeleton(const Skeleton&) = delete;
  Skeleton& operator=(const Skeleton&) = delete;
  const std::string& path() const { return path_; }

  // Add creates `name` as a sparse file of `size` bytes holding `pieces` at their offsets.
  Error Add(const std::string& name, uint64_t size,
            const std::vector<std::pair<uint64_t, std::vector<std::byte>>>& pieces) {
    const std::string file = path_ + "/" + name;
    const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return LayoutIoError("cannot lay out the repo's file", name, errno);
    names_.push_back(name);
    bool ok = ::ftruncate(fd, static_cast<off_t>(size)) == 0;
    for (const auto& [offset, bytes] : pieces) {
      size_t done = 0;
      while (ok && done < bytes.size()) {
        const ssize_t n = ::pwrite(fd, bytes.data() + done, bytes.size() - done,
                                   static_cast<off_t>(offset + done));
        ok = n > 0;
        done += ok ? static_cast<size_t>(n) : 0;
      }
    }
    const int saved = errno;
    ::close(fd);
    return ok ? Error{} : LayoutIoError("cannot lay out the repo's file", name, saved);
  }

 private:
  std::string path_;
  std::vector<std::string> names_;
};

// Piece reads [offset, offset + length) of `source` (clamped to its size).
Result<std::pair<uint64_t, std::vector<std::byte>>> Piece(const RemoteSource& source,
                                                          uint64_t offset, uint64_t length) {
  if (offset >= source.size()) return std::pair<uint64_t, std::vector<std::byte>>{offset, {}};
  length = std::min(length, source.size() - offset);
  std::vector<std::byte> bytes(static_cast<size_t>(length));
  if (Error error = source.ReadAt(offset, bytes); !error.ok()) return error;
  return std::pair{offset, std::move(bytes)};
}

// LayOut adds a top-level file to the skeleton with the bytes the folder rules read.
Error LayOut(Skeleton& skeleton, const RepoFile& file, const RemoteSource& source) {
  const uint64_t cap = std::min<uint64_t>(Options{}.max_header_len, RemoteLimits{}.max_bytes);
  const bool json = file.path.ends_with(".json");
  std::vector<std::pair<uint64_t, std::vector<std::byte>>> pieces;
  // A .json over the cap is laid out sparse: the folder rules refuse it by its size alone.
  auto first = Piece(source, 0, json && file.size <= cap ? file.size : RemoteLimits{}.block);
  if (!first.ok()) return first.error();
  pieces.push_back(std::move(*first));
  const std::vector<std::byte>& head = pieces.front().second;
  if (file.path.ends_with(".safetensors") && head.size() >= 8) {
    uint64_t header_len = 0;
    for (int k = 7; k >= 0; --k) header_len = (header_len << 8) | static_cast<uint8_t>(head[k]);
    // A header past the cap or the file is refused by the header's own rules, unread.
    if (header_len <= cap && header_len <= file.size - 8 && 8 + header_len > head.size()) {
      auto header = Piece(source, head.size(), 8 + header_len - head.size());
      if (!header.ok()) return header.error();
      pieces.push_back(std::move(*header));
    }
  }
  return skeleton.Add(file.path, file.size, pieces);
}

// Depth is the number of folders above `path`.
size_t Depth(const std::string& path) {
  size_t depth = 0;
  for (char c : path) depth += c == '/' ? 1 : 0;
  return depth;
}

// RepoWalk reads every listed file: the skeleton's top level, and the members.
struct RepoWalk {
  FolderMembers pickles;
  std::vector<CheckResult> others;
  uint64_t received = 0;
  uint64_t requests = 0;
};

Error WalkRepo(HttpTransport& transport, const RemoteRepo& repo,
               const std::vector<RepoFile>& files, const CheckOptions& options,
               Skeleton& skeleton, RepoWalk* walk) {
  for (const RepoFile& file : files) {
    if (Depth(file.path) > kDefaultFolderScanDepth) {
      return Error{ErrorCode::kFolderTooLarge, 0, "the repo's folders are nested too deep",
                   "file '" + file.path + "'", {}, file.path};
    }
    if (walk->received >= kMaxRepoBytes) {
      return Error{ErrorCode::kIoError, 0, "cannot read the repo",
                   "its checks need more than the repo budget of " +
                       std::to_string(kMaxRepoBytes) + " bytes"};
    }
    RemoteInput input;
    input.request = repo.listing;
    input.request.url = repo.file_prefix + UrlQuote(file.path, "/");
    input.hub = true;
    Result<std::unique_ptr<RemoteSource>> source = RemoteSource::Open(transport, input);
    if (!source.ok()) {
      Error error = source.error();
      error.context = "file '" + file.path + "'; " + error.context;
      return error;
    }
    const RemoteSource& bytes = **source;
    if (bytes.size() != file.size) {
      return Error{ErrorCode::kIoError, 0, "cannot read the repo",
                   "file '" + file.path + "' is " + std::to_string(bytes.size()) +
                       " bytes, the listing says " + std::to_string(file.size)};
    }
    Error error;
    if (file.path.find('/') == std::string::npos) error = LayOut(skeleton, file, bytes);
    const Result<Format> format = error.ok() ? SniffSource(bytes) : Result<Format>(error);
    if (!format.ok()) error = format.error();
    if (error.ok() && (IsPickleBearing(*format) || *format == Format::kGguf ||
                       *format == Format::kNpy || *format == Format::kNpz)) {
      CheckResult member = CheckSource(bytes, file.path, options);
      member.file = file.path;
      if (IsPickleBearing(*format)) {
        member.warnings.clear();  // the folder gives each pickle-bearing file its one warning
        walk->pickles.files.push_back(std::move(member));
      } else {
        walk->others.push_back(std::move(member));
      }
    }
    walk->received += bytes.bytes_received();
    walk->requests += bytes.requests();
    if (!error.ok()) return error;
  }
  return {};
}

// Rename puts the repo's name where the result names the skeleton.
void Rename(const std::string& skeleton, const std::string& url, CheckResult* result) {
  result->file = url;
  for (std::string* text : {&result->error.context, &result->summary.index}) {
    NameTheRepo(skeleton, url, text);
  }
  for (Warning& warning : result->warnings) NameTheRepo(skeleton, url, &warning.message);
  for (std::string& note : result->notes) NameTheRepo(skeleton, url, &note);
}

}  // namespace

void NameTheRepo(const std::string& folder, const std::string& url, std::string* text) {
  for (size_t at = 0; (at = text->find(folder, at)) != std::string::npos; at += url.size()) {
    text->replace(at, folder.size(), url);
  }
}

CheckResult CheckRemoteRepo(HttpTransport& transport, const std::string& url,
                            const CheckOptions& options, const LaidOut& laid_out) {
  const Result<RemoteRepo> repo = ResolveRemoteRepo(url, RemoteEnvironmentFromProcess());
  if (!repo.ok()) return RepoErrorResult(url, repo.error());
  const Result<std::vector<RepoFile>> files = ListRemoteRepo(transport, *repo);
  if (!files.ok()) return RepoErrorResult(url, files.error());
  Skeleton skeleton;
  if (skeleton.path().empty()) {
    return RepoErrorResult(url, LayoutIoError("cannot make a temporary folder", "TMPDIR", errno));
  }
  RepoWalk walk;
  if (Error error = WalkRepo(transport, *repo, *files, options, skeleton, &walk); !error.ok()) {
    return RepoErrorResult(url, std::move(error));
  }
  FolderMembers members = std::move(walk.pickles);
  for (CheckResult& other : walk.others) members.files.push_back(std::move(other));
  CheckResult result = CheckFolderWith(
      skeleton.path(), options,
      [&members](const std::string&, const CheckpointDir*, const MappedFile*) {
        return std::move(members);
      });
  if (laid_out) laid_out(skeleton.path(), result);
  Rename(skeleton.path(), url, &result);
  for (const CheckResult& member : result.files) {
    for (const std::string& unchecked : member.unchecked) {
      result.unchecked.push_back(member.file + ": " + unchecked);
    }
  }
  result.notes.push_back("remote: " + std::to_string(files->size()) + " files listed, " +
                         std::to_string(walk.requests) + " requests, " +
                         std::to_string(walk.received) + " bytes received");
  return result;
}

}  // namespace stguard
