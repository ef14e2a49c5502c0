// stguard check [-q] [--json] FILE...
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "commands.h"
#include "output.h"
#include "stguard/json_escape.h"
#include "stguard/reader.h"

namespace stguard::cli {

int RunCheck(Args args) {
  bool quiet = false;
  bool json = false;
  std::vector<std::string_view> files;
  for (std::string_view arg : args) {
    if (arg == "-q" || arg == "--quiet") {
      quiet = true;
    } else if (arg == "--json") {
      json = true;
    } else if (arg.size() > 1 && arg[0] == '-') {
      std::fprintf(stderr, "stguard check: unknown option '%.*s'\n",
                   static_cast<int>(arg.size()), arg.data());
      return kExitUsage;
    } else {
      files.push_back(arg);
    }
  }
  if (files.empty()) {
    std::fputs("usage: stguard check [-q] [--json] FILE...\n", stderr);
    return kExitUsage;
  }

  int status = kExitOk;
  for (std::string_view file : files) {
    const std::string path(file);
    const Result<Checkpoint> checkpoint = Checkpoint::Open(path);
    if (!checkpoint.ok()) {
      status = std::max(status, IsIoError(checkpoint.error()) ? kExitUsage : kExitInvalid);
    } else if (quiet) {
      continue;
    }
    std::string line;
    if (json) {
      line = "{\"file\":";
      AppendJsonString(path, &line);
      if (checkpoint.ok()) {
        line += ",\"ok\":true,\"tensors\":" + std::to_string(checkpoint->num_tensors()) +
                ",\"header_bytes\":" + std::to_string(checkpoint->header_len()) + "}";
      } else {
        line += ",\"ok\":false,\"error\":";
        AppendErrorJson(checkpoint.error(), &line);
        line += "}";
      }
    } else {
      line = PrintableText(path) + ": ";
      if (checkpoint.ok()) {
        line += "ok (" + std::to_string(checkpoint->num_tensors()) + " tensors, " +
                std::to_string(checkpoint->header_len()) + " header bytes)";
      } else {
        line += "error: " + checkpoint.error().ToString();
      }
    }
    PrintLine(line);
  }
  return status;
}

}  // namespace stguard::cli
