// SPDX-License-Identifier: Apache-2.0
// OutputFolder: several files written into one folder the user named, all or nothing.
//
// The folder is the user's path and is followed if it is a link; the names written in it
// are stguard's and are reached through the folder's descriptor, never through a link:
// each file is staged as a temporary file created there with O_EXCL and O_NOFOLLOW
// (AtomicFile::CreateInFolder), and all are renamed into place (renameat, within the
// folder) only once every one is complete. A name already present as a symbolic link or
// any other non-file is refused (kNotARegularFile). If a rename fails, the names this
// run had created are removed again; only files this run created are ever removed.
#ifndef STGUARD_SRC_WRITE_OUTPUT_FOLDER_H_
#define STGUARD_SRC_WRITE_OUTPUT_FOLDER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "stguard/error.h"
#include "stguard/writer.h"
#include "write/atomic_file.h"

namespace stguard {

class OutputFolder {
 public:
  OutputFolder() = default;
  OutputFolder(const OutputFolder&) = delete;
  OutputFolder& operator=(const OutputFolder&) = delete;
  // The destructor removes every temporary file not yet published.
  ~OutputFolder();

  // Open opens the user's folder (a link to a folder is followed: the user named it).
  [[nodiscard]] Error Open(const std::string& path);

  // Stage writes `writer`'s file, complete and synced, under a temporary name that
  // Publish renames to `name`. StageText does the same for a text file.
  [[nodiscard]] Error Stage(const std::string& name, const Writer& writer);
  [[nodiscard]] Error StageText(const std::string& name, const std::string& text);
  // StageWith writes the file's bytes with `write_body` into the staged file.
  [[nodiscard]] Error StageWith(const std::string& name,
                                const std::function<Error(AtomicFile&)>& write_body);

  // Publish renames every staged file into place, in staging order. If one rename fails,
  // the names published before it that did not exist before this run are removed again.
  [[nodiscard]] Error Publish();

 private:
  struct Staged {
    std::string name;
    bool existed;  // a file of that name was there before this run
    std::unique_ptr<AtomicFile> file;
  };

  std::string path_;
  int fd_ = -1;
  std::vector<Staged> staged_;
};

// SafetensorsIndexJson is model.safetensors.index.json's text: metadata.total_size and
// the weight map (tensor name -> shard file name), keys in byte order, one line.
std::string SafetensorsIndexJson(const std::map<std::string, std::string>& weight_map,
                                 uint64_t total_size);

}  // namespace stguard

#endif  // STGUARD_SRC_WRITE_OUTPUT_FOLDER_H_
