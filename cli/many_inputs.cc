// SPDX-License-Identifier: Apache-2.0
#include "many_inputs.h"

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "arguments.h"
#include "command_table.h"
#include "output.h"
#include "stguard/version.h"

namespace stguard::cli {
namespace {

// kMaxListedPath bounds one line of --from: no path a system opens is longer.
constexpr size_t kMaxListedPath = 4096;

// ReadList appends --from's inputs (one per line; empty lines skipped, a final newline
// optional, "\r\n" accepted) to *inputs; a message when the list cannot be read or holds
// a line that cannot be a path (a NUL byte, longer than kMaxListedPath).
std::optional<std::string> ReadList(const std::string& from, std::vector<std::string>* inputs) {
  std::FILE* file = from == "-" ? stdin : std::fopen(from.c_str(), "rb");
  if (file == nullptr) return "cannot read --from " + PrintableText(from);
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> closer(
      file == stdin ? nullptr : file, [](std::FILE* f) { return std::fclose(f); });
  std::string line;
  size_t number = 1;
  auto finish_line = [&]() -> std::optional<std::string> {
    if (line.ends_with('\r')) line.pop_back();
    if (line.size() > kMaxListedPath || line.find('\0') != std::string::npos) {
      return "--from " + PrintableText(from) + ": line " + std::to_string(number) +
             " is not a path (longer than " + std::to_string(kMaxListedPath) +
             " bytes, or holds a NUL byte)";
    }
    if (!line.empty()) inputs->push_back(std::move(line));
    line.clear();
    ++number;
    return std::nullopt;
  };
  for (int c = std::fgetc(file); c != EOF; c = std::fgetc(file)) {
    if (c != '\n') {
      if (line.size() <= kMaxListedPath) line += static_cast<char>(c);
      continue;
    }
    if (std::optional<std::string> bad = finish_line()) return bad;
  }
  if (std::ferror(file)) return "cannot read --from " + PrintableText(from);
  return finish_line();
}

void Print(const InputReport& report) {
  for (const std::string& text : report.lines) PrintLine(text);
  for (const std::string& text : report.errors) PrintErrorLine(text);
  std::fflush(stdout);  // a reader of the stream sees each input as soon as it is judged
}

}  // namespace

int RunManyInputs(std::string_view command, const CommandLine& line,
                  const std::function<InputReport(const std::string& input)>& judge) {
  const CommandRow& row = *FindCommand(command);
  std::vector<std::string> inputs = line.operands;
  if (!line.from.empty()) {
    if (std::optional<std::string> bad = ReadList(line.from, &inputs)) {
      return UsageError(row, *bad);
    }
  }
  if (inputs.empty()) return UsageError(row, "--from " + PrintableText(line.from) + " lists no input");
  if (line.jobs && (*line.jobs == 0 || *line.jobs > kMaxJobs)) {
    return UsageError(row, "--jobs takes 1 to " + std::to_string(kMaxJobs));
  }
  const unsigned jobs = line.jobs ? static_cast<unsigned>(*line.jobs) : DefaultJobs();
  std::vector<InputFinding> findings;
  const RunSummary summary =
      RunInputs(inputs, jobs, judge, [&](size_t, InputReport& report) {
        Print(report);
        if (!line.sarif.empty()) {
          for (InputFinding& finding : report.findings) findings.push_back(std::move(finding));
        }
      });
  if (inputs.size() > 1) PrintErrorLine(SummaryLine(summary));
  if (!line.sarif.empty()) {
    const Error error = WriteSarifFile(line.sarif, inputs, findings, stguard_version_string());
    if (!error.ok()) {
      PrintErrorLine("stguard " + std::string(command) + ": --sarif " +
                     PrintableText(line.sarif) + ": " + ErrorText(line.sarif, error));
      // No log is no verdict (error), which never hides a refused or invalid input.
      return VerdictExitStatus(WorseVerdict(summary.worst, Verdict::kError));
    }
  }
  return summary.exit_status();
}

}  // namespace stguard::cli
