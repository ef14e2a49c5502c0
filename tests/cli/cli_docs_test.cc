// SPDX-License-Identifier: Apache-2.0
// The help, the man page and the bash completion are written from the command table
// (cli/command_table.cc): every command and every option of `stguard --help` must be in
// each of them, and the files the build wrote (and `cmake --install` installs) must be
// what the CLI prints.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "support/run_cli.h"
#include "support/temp_dir.h"

namespace stguard {
namespace {

using testing::RunCli;
using testing::ShellQuoted;
using testing::Streams;

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// TableCommands maps each command of `stguard --help`'s block to the options its synopsis
// names ("-q" for "-q, --quiet": the long names come from the option lines).
std::map<std::string, std::set<std::string>> TableCommands() {
  std::map<std::string, std::set<std::string>> commands;
  std::istringstream help(RunCli("--help", Streams::kStdoutOnly).output);
  static const std::regex option(R"(^    (-[a-z], )?(--[a-z][a-z-]*))");
  std::string current;
  for (std::string line; std::getline(help, line);) {
    if (line.rfind("stguard ", 0) == 0) {
      current = line.substr(8, line.find(' ', 8) - 8);
      commands[current];
      continue;
    }
    std::smatch match;
    if (current.empty() || !std::regex_search(line, match, option)) continue;
    if (match[1].matched) commands[current].insert(match[1].str().substr(0, 2));
    commands[current].insert(match[2]);
  }
  return commands;
}

// RoffOption is how the man page spells an option: each '-' is the roff minus "\-".
std::string RoffOption(const std::string& option) {
  return std::regex_replace(option, std::regex("-"), "\\-");
}

std::string BuiltFile(const std::string& name) {
  const std::string cli = STGUARD_CLI_PATH;
  return cli.substr(0, cli.rfind('/') + 1) + name;
}

TEST(CliDocsTest, TheTableHasEveryCommand) {
  const auto commands = TableCommands();
  for (const char* name : {"check", "inspect", "json", "canon", "convert", "scan", "lint",
                           "help", "version"}) {
    EXPECT_TRUE(commands.contains(name)) << name;
  }
  EXPECT_TRUE(commands.at("check").contains("-q"));
  EXPECT_TRUE(commands.at("check").contains("--quiet"));
}

TEST(CliDocsTest, HelpCommandPrintsTheSameHelpAsDashDashHelp) {
  EXPECT_EQ(RunCli("help", Streams::kStdoutOnly).output,
            RunCli("--help", Streams::kStdoutOnly).output);
  for (const auto& [command, options] : TableCommands()) {
    const testing::CliRun help = RunCli("help " + command, Streams::kStdoutOnly);
    EXPECT_EQ(help.status, 0) << command;
    EXPECT_EQ(help.output, RunCli(command + " --help", Streams::kStdoutOnly).output) << command;
    EXPECT_EQ(help.output.rfind("usage: stguard " + command, 0), 0u) << help.output;
  }
  const testing::CliRun unknown = RunCli("help no-such-command");
  EXPECT_EQ(unknown.status, 2);
  EXPECT_NE(unknown.output.find("unknown command 'no-such-command'"), std::string::npos);
  EXPECT_EQ(RunCli("help check lint").status, 2);
}

// Every option is explained on a line of its own in its command's --help: its spelling,
// then at least a word of help.
TEST(CliDocsTest, EachCommandsHelpExplainsEveryOption) {
  for (const auto& [command, options] : TableCommands()) {
    const std::string help = RunCli(command + " --help", Streams::kStdoutOnly).output;
    for (std::string option : options) {
      if (option.size() == 2) continue;  // "-q": shown as "-q, --quiet"
      const std::regex explained("\n    (-[a-z], )?" + option + "( [A-Z0-9|]+)? +[a-z]");
      EXPECT_TRUE(std::regex_search(help, explained)) << command << " " << option << ":\n"
                                                      << help;
    }
    for (const char* common : {"-h, --help", "--  "}) {
      EXPECT_NE(help.find(common), std::string::npos) << command;
    }
  }
}

TEST(CliDocsTest, VersionCommandAndOptionAgree) {
  const testing::CliRun version = RunCli("version", Streams::kStdoutOnly);
  EXPECT_EQ(version.status, 0);
  EXPECT_EQ(version.output, "stguard " STGUARD_EXPECTED_VERSION "\n");
  EXPECT_EQ(RunCli("--version", Streams::kStdoutOnly).output, version.output);
  EXPECT_EQ(RunCli("version extra").status, 2);
}

TEST(CliDocsTest, ManPageHasEveryCommandAndOption) {
  const testing::CliRun man = RunCli("--man", Streams::kStdoutOnly);
  ASSERT_EQ(man.status, 0);
  EXPECT_EQ(man.output.rfind(".\\\" Generated", 0), 0u);
  EXPECT_NE(man.output.find(".TH STGUARD 1 \"\" \"stguard " STGUARD_EXPECTED_VERSION "\""),
            std::string::npos);
  for (const auto& [command, options] : TableCommands()) {
    EXPECT_NE(man.output.find(".SS \"" + command + "\""), std::string::npos) << command;
    for (const std::string& option : options) {
      // The option is under its own command's heading, not only under another's.
      const size_t heading = man.output.find(".SS \"" + command + "\"");
      const size_t next = man.output.find(".SS ", heading + 1);
      const std::string section = man.output.substr(heading, next - heading);
      EXPECT_NE(section.find(RoffOption(option)), std::string::npos) << command << " " << option;
    }
  }
  // The file the build wrote, which `cmake --install` installs, is this page.
  EXPECT_EQ(ReadText(BuiltFile("stguard.1")), man.output);
}

// groff, when installed, reads the page without a warning (-ww: every warning).
TEST(CliDocsTest, ManPageIsCleanRoff) {
  if (std::system("command -v groff > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "groff is not installed: the man page's roff is not checked";
  }
  const testing::CliRun groff = RunCli("--man | groff -man -Tutf8 -ww -z");
  EXPECT_EQ(groff.status, 0);
  EXPECT_EQ(groff.output, "");
}

// Complete runs the completion function as bash would for `words` (the last one being
// completed) and returns the candidates, space-separated.
std::string Complete(const std::string& script, const std::vector<std::string>& words) {
  std::string array;
  for (const std::string& word : words) array += ShellQuoted(word) + " ";
  const std::string command =
      "bash -c " + ShellQuoted("source " + ShellQuoted(script) + " && COMP_WORDS=(" + array +
                               ") && COMP_CWORD=" + std::to_string(words.size() - 1) +
                               " && _stguard && echo \"${COMPREPLY[*]}\"") +
      " 2>&1";
  std::string output;
  if (FILE* pipe = popen(command.c_str(), "r")) {
    char buffer[4096];
    for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) output.append(buffer, n);
    pclose(pipe);
  }
  if (!output.empty() && output.back() == '\n') output.pop_back();
  return output;
}

std::set<std::string> Words(const std::string& text) {
  std::istringstream in(text);
  std::set<std::string> words;
  for (std::string word; in >> word;) words.insert(word);
  return words;
}

TEST(CliDocsTest, BashCompletionOffersEveryCommandAndOption) {
  const std::string script = BuiltFile("stguard.bash-completion");
  ASSERT_EQ(ReadText(script), RunCli("--bash-completion", Streams::kStdoutOnly).output)
      << "the build's completion script is not what the CLI prints";
  const auto commands = TableCommands();
  const std::set<std::string> offered = Words(Complete(script, {"stguard", ""}));
  for (const auto& [command, options] : commands) {
    EXPECT_TRUE(offered.contains(command)) << command;
    std::set<std::string> expected = options;
    expected.insert({"-h", "--help", "--"});
    EXPECT_EQ(Words(Complete(script, {"stguard", command, "-"})), expected) << command;
  }
  // Prefixes, values with a few choices, help's operand, and files after "--".
  EXPECT_EQ(Complete(script, {"stguard", "ch"}), "check");
  EXPECT_EQ(Complete(script, {"stguard", "check", "--al"}), "--aligned --allow-external-symlinks");
  EXPECT_EQ(Complete(script, {"stguard", "convert", "--dtype", ""}), "BF16 F16 F32");
  EXPECT_EQ(Complete(script, {"stguard", "convert", "--dtype", "F"}), "F16 F32");
  EXPECT_EQ(Complete(script, {"stguard", "help", "li"}), "lint");
  EXPECT_EQ(Complete(script, {"stguard", "check", "--", "-"}), "");
  testing::TempDir dir;
  ASSERT_TRUE(testing::WriteFileBytes(dir.File("model.safetensors"), "x"));
  EXPECT_EQ(Complete(script, {"stguard", "check", dir.path() + "/mod"}),
            dir.path() + "/model.safetensors");
}

}  // namespace
}  // namespace stguard
