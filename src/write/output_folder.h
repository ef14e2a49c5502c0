// SPDX-License-Identifier: Apache-2.0
// OutputFolder: a folder of files written together (a sharded conversion), staged as
// temporary files and published by rename at the end, with the folder itself created as
// `mkdir -p` would and removed again if the run does not publish.
#ifndef STGUARD_SRC_WRITE_OUTPUT_FOLDER_H_
#define STGUARD_SRC_WRITE_OUTPUT_FOLDER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "stguard/error.h"
#include "stguard/writer.h"
#include "write/atomic_file.h"

namespace stguard {

class OutputFolder {
 public:
  OutputFolder() = default;
  // The destructor removes every staged file not published and, unless Publish
  // succeeded, the folders Create made (innermost first; rmdir only removes an empty
  // folder, so nothing this run did not write can go with them).
  ~OutputFolder();
  OutputFolder(const OutputFolder&) = delete;
  OutputFolder& operator=(const OutputFolder&) = delete;

  // Create opens `path` as the output folder. Missing folders along the path are created
  // as `mkdir -p` does; each one made is created with mkdirat and opened with O_NOFOLLOW
  // through its parent's descriptor, so a link swapped in for it is never followed.
  // Folders that already exist are the user's path and are followed if they are links.
  // An existing output folder must be empty: the run then owns every name in it, and a
  // refusal can remove all it wrote. Errors (kIoError) say why, with strerror.
  Error Create(const std::string& path);

  // Stage writes `writer`'s file, complete and synced, under a temporary name, to become
  // `name` in the folder (a plain file name).
  Error Stage(const std::string& name, const Writer& writer);
  Error StageText(const std::string& name, const std::string& text);
  // StageStream stages the bytes `write` streams into the file it is given.
  Error StageStream(const std::string& name, const std::function<Error(ByteSink&)>& write);

  // Publish renames every staged file into place, in staging order (so the index, staged
  // last, appears last). If a rename fails, the names published before it are removed.
  Error Publish();

 private:
  // Made is one folder Create made: its parent's descriptor (owned) and its name there.
  struct Made {
    int parent_fd;
    std::string name;
  };
  struct Staged {
    std::string name;
    std::unique_ptr<AtomicFile> file;
  };

  template <typename WriteBody>
  Error StageWith(const std::string& name, WriteBody&& write_body);
  Error OpenStep(int parent_fd, const std::string& name, const std::string& shown, int* out);
  Error RequireEmpty() const;

  std::string path_;
  int fd_ = -1;
  bool published_ = false;
  std::vector<Made> made_;
  std::vector<Staged> staged_;
};

// SafetensorsIndexJson is model.safetensors.index.json's text: metadata.total_size and
// the weight map (tensor name -> shard file name), keys in byte order, one line.
std::string SafetensorsIndexJson(const std::map<std::string, std::string>& weight_map,
                                 uint64_t total_size);

}  // namespace stguard

#endif  // STGUARD_SRC_WRITE_OUTPUT_FOLDER_H_
