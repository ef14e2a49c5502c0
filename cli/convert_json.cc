// SPDX-License-Identifier: Apache-2.0
// `stguard convert --json`: the input's envelope, then what the conversion wrote.
#include "convert_json.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "arguments.h"
#include "output.h"
#include "stguard/json_escape.h"
#include "stguard/verdict.h"
#include "verdict_output.h"

namespace stguard::cli {
namespace {

// TextToStderr sends what the conversion prints for a person (its summary, dropped
// aliases) to stderr while it lives, so that stdout carries the JSON result alone.
class TextToStderr {
 public:
  TextToStderr() {
    std::fflush(stdout);
    saved_ = ::dup(STDOUT_FILENO);
    if (saved_ >= 0) ::dup2(STDERR_FILENO, STDOUT_FILENO);
  }
  ~TextToStderr() {
    std::fflush(stdout);
    if (saved_ >= 0) {
      ::dup2(saved_, STDOUT_FILENO);
      ::close(saved_);
    }
  }
  TextToStderr(const TextToStderr&) = delete;
  TextToStderr& operator=(const TextToStderr&) = delete;

 private:
  int saved_ = -1;
};

// Operands returns the arguments that are not options or option values, as `convert`
// reads them: every value-taking option of `convert` consumes the next argument.
std::vector<std::string> Operands(Args args) {
  constexpr std::string_view kTakesValue[] = {"--dtype", "--key", "--name",
                                              "--max-output-ratio"};
  std::vector<std::string> operands;
  for (size_t i = 0; i < args.size(); ++i) {
    if (std::find(std::begin(kTakesValue), std::end(kTakesValue), args[i]) !=
        std::end(kTakesValue)) {
      ++i;
    } else if (!IsOption(args[i])) {
      operands.emplace_back(args[i]);
    }
  }
  return operands;
}

// WrittenFiles lists what OUT holds after a conversion: OUT itself, or a folder's files.
std::vector<std::string> WrittenFiles(const std::string& out) {
  std::error_code ignored;
  if (!std::filesystem::is_directory(out, ignored)) return {out};
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(out, ignored)) {
    if (entry.is_regular_file(ignored)) files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

void PrintJson(const CheckResult& input, const std::vector<std::string>& written,
               uint64_t tensors) {
  std::string line = "{";
  AppendResultJson(input, &line);
  line += ",\"output\":[";
  for (size_t i = 0; i < written.size(); ++i) {
    if (i > 0) line += ",";
    AppendJsonText(written[i], &line);
  }
  line += "],\"tensors\":" + std::to_string(tensors) + "}";
  PrintLine(line);
}

}  // namespace

int ConvertWithJson(Args args, const std::function<int(Args)>& convert) {
  const std::vector<std::string> operands = Operands(args);
  if (operands.size() != 2 || operands[1] == "-") {
    // Usage errors are the conversion's own to explain (with its usage text); JSON and a
    // file on standard output cannot share it.
    if (operands.size() == 2) {
      std::fputs("stguard convert: --json prints the result on standard output: OUT "
                 "cannot be -\n", stderr);
      return kExitUsage;
    }
    return convert(args);
  }
  const std::string& in = operands[0];
  const std::string& out = operands[1];
  // The input's verdict, in the words check gives: a file that is not valid is not
  // converted, so nothing is written for it.
  CheckResult input = CheckPath(in);
  if (!input.valid()) {
    PrintJson(input, {}, 0);
    return input.exit_status();
  }
  int status;
  {
    TextToStderr text;
    status = convert(args);
  }
  if (status != kExitOk) {
    // The file is valid, so its failure to convert is no verdict on it: the request could
    // not be carried out (a missing --key, a type with no decoder, OUT not writable), and
    // the conversion said why on stderr.
    input.verdict = Verdict::kError;
    input.error = Error{ErrorCode::kInvalidArgument, 0,
                        "the conversion failed (stderr says why)", out};
    PrintJson(input, {}, 0);
    return input.exit_status();
  }
  // Read back: what was written is checked as any input is, and its tensors counted.
  const CheckResult written = CheckPath(out);
  if (!written.valid()) {
    PrintJson(written, WrittenFiles(out), 0);
    return written.exit_status();
  }
  PrintJson(input, WrittenFiles(out), written.summary.tensors);
  return kExitOk;
}

}  // namespace stguard::cli
