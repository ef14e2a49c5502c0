// SPDX-License-Identifier: Apache-2.0
// The facts of stguard/formats.def, and what a path names for the commands.
#include <sys/stat.h>

#include <algorithm>
#include <string>
#include <vector>

#include "stguard/formats.h"
#include "stguard/sniff.h"

namespace stguard {

std::string_view FormatName(Format format) { return FactsOf(format).name; }

bool IsPickleBearing(Format format) { return FactsOf(format).pickle_bearing; }

std::string FormatSetNames(FormatSet set) {
  std::string names;
  std::vector<std::string_view> named;  // formats of one kind share its name: said once
  const auto add = [&](std::string_view name) {
    if (std::find(named.begin(), named.end(), name) != named.end()) return;
    named.push_back(name);
    if (!names.empty()) names += ", ";
    names += name;
  };
  for (size_t i = 0; i < std::size(kFormatFacts); ++i) {
    if ((set & FormatBit(static_cast<Format>(i))) != 0 && !kFormatFacts[i].kind.empty()) {
      add(kFormatFacts[i].kind);
    }
  }
  if ((set & kFolderInput) != 0) add("folder");
  return names;
}

Result<PathFormat> FormatOfPath(const std::string& path, std::optional<Format> sniffed) {
  PathFormat found;
  struct stat info;
  if (::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
    found.is_folder = true;
    return found;
  }
  if (sniffed.has_value()) {
    found.format = *sniffed;
  } else {
    Result<Format> format = SniffFile(path);
    if (!format.ok()) return format.error();
    found.format = *format;
  }
  // An index is JSON by its bytes; its name says it stands for the folder of its shards.
  found.is_folder = found.format == Format::kJson && path.ends_with(".index.json");
  return found;
}

}  // namespace stguard
