// SPDX-License-Identifier: Apache-2.0
// stguard json FILE: the tokenizer alone, over a whole file.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "output.h"
#include "stguard/json_tokenizer.h"
#include "stguard/mapped_file.h"

namespace stguard::cli {

int RunJson(const CommandLine& line) {
  // MappedFile reads a file that reports size 0 (/proc/self/status) to its end.
  const std::string& path = line.operands[0];
  const Result<std::unique_ptr<MappedFile>> file = MappedFile::Open(path);
  if (!file.ok()) {
    PrintLine(PrintableText(path) + ": error: " + ErrorText(path, file.error()));
    return kExitUsage;
  }
  const std::span<const std::byte> bytes = (*file)->bytes();
  const Error error =
      ValidateJson(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  if (!error.ok()) {
    PrintLine(PrintableText(path) + ": invalid: " + error.ToString());
    return kExitInvalid;
  }
  PrintLine(PrintableText(path) + ": valid: one JSON text, " + Plural(bytes.size(), "byte"));
  return kExitOk;
}

}  // namespace stguard::cli
