// Small helpers shared by the subcommands for printing results.
#ifndef STGUARD_CLI_OUTPUT_H_
#define STGUARD_CLI_OUTPUT_H_

#include <cstdio>
#include <string>
#include <string_view>

#include "stguard/error.h"

namespace stguard::cli {

// IsIoError says whether an error is about reaching the file rather than its contents;
// such errors exit with status 2, content errors with 1.
inline bool IsIoError(const Error& error) {
  return error.code == ErrorCode::kIoError || error.code == ErrorCode::kNotARegularFile;
}

// AppendErrorJson appends {"code":...,"offset":...,"message":...,"context":...,
// "tensor":...} to *out.
void AppendErrorJson(const Error& error, std::string* out);

// PrintFileError prints "stguard COMMAND: PATH: error: ..." to stderr.
inline void PrintFileError(std::string_view command, std::string_view path, const Error& error) {
  const std::string line = "stguard " + std::string(command) + ": " + PrintableText(path) +
                           ": error: " + error.ToString() + "\n";
  std::fputs(line.c_str(), stderr);
}

inline void PrintLine(const std::string& line) {
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fputc('\n', stdout);
}

}  // namespace stguard::cli

#endif  // STGUARD_CLI_OUTPUT_H_
