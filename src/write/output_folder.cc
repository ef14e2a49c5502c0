// SPDX-License-Identifier: Apache-2.0
// OutputFolder (write/output_folder.h): files staged in one folder, published together.
#include "write/output_folder.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "stguard/json_escape.h"

namespace stguard {

OutputFolder::~OutputFolder() {
  staged_.clear();  // aborts (removes) every temporary file not published
  if (fd_ >= 0) ::close(fd_);
}

Error OutputFolder::Open(const std::string& path) {
  path_ = path;
  fd_ = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd_ < 0) {
    return Error{ErrorCode::kIoError, 0, "cannot open output folder",
                 path + ": " + std::strerror(errno)};
  }
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

Error OutputFolder::StageWith(const std::string& name,
                              const std::function<Error(AtomicFile&)>& write_body) {
  struct stat info;
  const bool existed = ::fstatat(fd_, name.c_str(), &info, AT_SYMLINK_NOFOLLOW) == 0;
  Result<std::unique_ptr<AtomicFile>> file = AtomicFile::CreateInFolder(fd_, path_, name);
  if (!file.ok()) return file.error();
  if (Error error = write_body(**file); !error.ok()) return error;
  if (Error error = (*file)->Finish(); !error.ok()) return error;
  staged_.push_back({name, existed, std::move(file).value()});
  return {};
}

Error OutputFolder::Publish() {
  std::vector<std::string> created;
  for (Staged& staged : staged_) {
    if (Error error = staged.file->Publish(); !error.ok()) {
      for (const std::string& name : created) ::unlinkat(fd_, name.c_str(), 0);
      staged_.clear();
      return error;
    }
    if (!staged.existed) created.push_back(staged.name);
  }
  staged_.clear();
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
