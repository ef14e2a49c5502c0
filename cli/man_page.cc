// SPDX-License-Identifier: Apache-2.0
// stguard(1), written in roff from the command table.
#include <algorithm>
#include <string>
#include <string_view>

#include "command_table.h"
#include "docs.h"
#include "stguard/version.h"

namespace stguard::cli {
namespace {

// Roff escapes text for roff: a backslash is \e, a hyphen \- (a minus sign, so that
// options can be searched and copied), and a line that would start with a control
// character ('.' or ') starts with the zero-width \& instead.
std::string Roff(std::string_view text) {
  std::string out;
  bool line_start = true;
  for (const char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else {
      out += c;
    }
    line_start = c == '\n';
  }
  return out;
}

// AppendTagged appends one ".TP" paragraph: `tag` in bold, then `text`.
void AppendTagged(std::string_view tag, std::string_view text, std::string* page) {
  page->append(".TP\n.B ").append(Roff(tag)).append("\n").append(Roff(text)).append("\n");
}

// AppendDetails appends a command's operand lines ("FILE  what it is", continued by
// indented lines) as tagged paragraphs.
void AppendDetails(std::string_view details, std::string* page) {
  std::string tag;
  std::string text;
  auto flush = [&] {
    if (!tag.empty()) AppendTagged(tag, text, page);
    tag.clear();
    text.clear();
  };
  while (!details.empty()) {
    const size_t end = std::min(details.find('\n'), details.size());
    std::string_view line = details.substr(0, end);
    details.remove_prefix(std::min(end + 1, details.size()));
    const size_t words = line.find_first_not_of(' ');
    if (words == std::string_view::npos) continue;
    if (words == 0) {  // a new operand: its name, then its description
      flush();
      const size_t gap = std::min(line.find(' '), line.size());
      tag = line.substr(0, gap);
      line.remove_prefix(gap);
    }
    const size_t start = line.find_first_not_of(' ');
    if (start == std::string_view::npos) continue;
    if (!text.empty()) text += ' ';
    text += line.substr(start);
  }
  flush();
}

void AppendCommand(const CommandRow& command, std::string* page) {
  page->append(".SS \"").append(Roff(command.name)).append("\"\n");
  page->append(".B ").append(Roff(Synopsis(command))).append("\n.PP\n");
  page->append(Roff(command.summary)).append(".\n");
  if (command.formats != 0) {
    page->append("Reads: ").append(Roff(FormatSetNames(command.formats))).append(".\n");
  }
  AppendDetails(command.details, page);
  for (const OptionRow& option : OptionRows()) {
    if (option.command != command.name) continue;
    std::string help(option.help);
    if (option.formats != command.formats) {
      help.append(" [").append(FormatSetNames(option.formats)) += "]";
    }
    AppendTagged(OptionSpelling(option), help, page);
  }
}

}  // namespace

std::string ManPage() {
  std::string page = ".\\\" Generated from stguard's command table (cli/command_table.cc).\n";
  page.append(".TH STGUARD 1 \"\" \"stguard ").append(VersionString()).append("\" \"User Commands\"\n");
  page += ".SH NAME\nstguard \\- validate, inspect and convert model checkpoints without trusting them\n";
  page += ".SH SYNOPSIS\n.B stguard\n.I command\n[\\fIoptions\\fR] \\fIoperand\\fR...\n";
  page += ".SH DESCRIPTION\n";
  page += Roff(
      "stguard reads safetensors, GGUF, NumPy .npy and .npz and PyTorch checkpoints without ever "
      "trusting them: nothing in a file is executed, every error names its code, the "
      "absolute byte offset and the tensor concerned, and memory and time are linear in "
      "the input.\n");
  page += ".SH COMMANDS\n";
  for (const CommandRow& command : CommandRows()) AppendCommand(command, &page);
  page += ".SH \"OPTIONS OF EVERY COMMAND\"\n";
  for (const CommonOption& option : kOptionsEveryCommandTakes) {
    AppendTagged(option.spelling, option.help, &page);
  }
  std::string dash(kDashHelp);
  std::replace(dash.begin(), dash.end(), '\n', ' ');
  page += ".PP\n" + Roff(dash) + "\n";
  page += ".SH \"EXIT STATUS\"\n";
  for (const ExitStatusRow& row : kExitStatuses) {
    AppendTagged(std::to_string(row.status), row.details, &page);
  }
  return page;
}

}  // namespace stguard::cli
