// SPDX-License-Identifier: Apache-2.0
// OutputFolder: create the output folder as `mkdir -p` does, stage files in it through
// its descriptor, publish them by rename, and undo only what this run made.
#include "write/output_folder.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "stguard/json_escape.h"

namespace stguard {
namespace {

Error FolderError(const char* message, const std::string& path, int err) {
  return Error{ErrorCode::kIoError, 0, message, path + ": " + std::strerror(err)};
}

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;

}  // namespace

OutputFolder::~OutputFolder() {
  staged_.clear();  // aborts (removes) every temporary file not published
  if (fd_ >= 0) ::close(fd_);
  for (auto made = made_.rbegin(); made != made_.rend(); ++made) {
    if (!published_) ::unlinkat(made->parent_fd, made->name.c_str(), AT_REMOVEDIR);
    ::close(made->parent_fd);
  }
}

// OpenStep opens `name` under `parent_fd`, creating it when it is missing (and recording
// it in made_, which then owns a duplicate of `parent_fd`).
Error OutputFolder::OpenStep(int parent_fd, const std::string& name, const std::string& shown,
                             int* out) {
  // An existing entry is part of the path the user typed: followed, as mkdir -p does.
  *out = ::openat(parent_fd, name.c_str(), kDirFlags);
  if (*out >= 0) return {};
  if (errno != ENOENT) return FolderError("cannot open folder", shown, errno);
  if (::mkdirat(parent_fd, name.c_str(), 0777) != 0) {
    return FolderError("cannot create folder", shown, errno);
  }
  const int parent_copy = ::fcntl(parent_fd, F_DUPFD_CLOEXEC, 0);
  if (parent_copy < 0) return FolderError("cannot create folder", shown, errno);
  made_.push_back({parent_copy, name});
  // Made by this run: never followed if something else now stands at its name.
  *out = ::openat(parent_fd, name.c_str(), kDirFlags | O_NOFOLLOW);
  if (*out < 0) return FolderError("cannot open the folder just created", shown, errno);
  return {};
}

Error OutputFolder::Create(const std::string& path) {
  path_ = path;
  if (path.empty()) return Error{ErrorCode::kIoError, 0, "empty output folder path"};
  int fd = ::open(path[0] == '/' ? "/" : ".", kDirFlags);
  if (fd < 0) return FolderError("cannot open folder", path[0] == '/' ? "/" : ".", errno);
  std::string shown = path[0] == '/' ? "/" : "";
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    const std::string name = path.substr(start, end - start);
    start = end + 1;
    if (name.empty() || name == ".") continue;
    shown += (shown.empty() || shown.back() == '/' ? "" : "/") + name;
    int next = -1;
    const Error error = OpenStep(fd, name, shown, &next);
    ::close(fd);
    if (!error.ok()) return error;
    fd = next;
  }
  fd_ = fd;
  return made_.empty() ? RequireEmpty() : Error{};
}

// RequireEmpty refuses an existing folder that holds anything: a conversion writes into
// a folder of its own, so that a refusal can take back everything it wrote.
Error OutputFolder::RequireEmpty() const {
  const int copy = ::fcntl(fd_, F_DUPFD_CLOEXEC, 0);
  if (copy < 0) return FolderError("cannot list output folder", path_, errno);
  DIR* dir = ::fdopendir(copy);
  if (dir == nullptr) {
    const int err = errno;
    ::close(copy);
    return FolderError("cannot list output folder", path_, err);
  }
  std::string first;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string_view name = entry->d_name;
    if (name != "." && name != "..") {
      first = name;
      break;
    }
  }
  ::closedir(dir);
  if (first.empty()) return {};
  return Error{ErrorCode::kIoError, 0,
               "the output folder is not empty (name a new or empty folder)",
               path_ + ": holds '" + first + "'"};
}

template <typename WriteBody>
Error OutputFolder::StageWith(const std::string& name, WriteBody&& write_body) {
  Result<std::unique_ptr<AtomicFile>> file = AtomicFile::CreateInFolder(fd_, path_, name);
  if (!file.ok()) return file.error();
  if (Error error = write_body(**file); !error.ok()) return error;
  if (Error error = (*file)->Finish(); !error.ok()) return error;
  staged_.push_back({name, std::move(file).value()});
  return {};
}

Error OutputFolder::Stage(const std::string& name, const Writer& writer) {
  return StageWith(name, [&writer](AtomicFile& file) { return writer.WriteTo(file); });
}

Error OutputFolder::StageText(const std::string& name, const std::string& text) {
  return StageWith(name, [&text](AtomicFile& file) {
    return file.Write(std::as_bytes(std::span(text.data(), text.size())));
  });
}

Error OutputFolder::StageStream(const std::string& name,
                                const std::function<Error(ByteSink&)>& write) {
  return StageWith(name, [&write](AtomicFile& file) { return write(file); });
}

Error OutputFolder::Publish() {
  // The folder was empty (or new), so every name published is this run's to remove.
  std::vector<std::string> published;
  for (Staged& staged : staged_) {
    if (Error error = staged.file->Publish(); !error.ok()) {
      for (const std::string& name : published) ::unlinkat(fd_, name.c_str(), 0);
      staged_.clear();
      return error;
    }
    published.push_back(staged.name);
  }
  staged_.clear();
  published_ = true;
  return {};
}

std::string SafetensorsIndexJson(const std::map<std::string, std::string>& weight_map,
                                 uint64_t total_size) {
  std::string json = "{\"metadata\":{\"total_size\":" + std::to_string(total_size) +
                     "},\"weight_map\":{";
  bool first = true;
  for (const auto& [tensor, shard] : weight_map) {
    if (!first) json += ',';
    first = false;
    AppendJsonString(tensor, &json);
    json += ':';
    AppendJsonString(shard, &json);
  }
  return json + "}}\n";
}

}  // namespace stguard
