// SPDX-License-Identifier: Apache-2.0
// The command table (cli/command_table.cc) is what users see: README's command block is
// the block `stguard --help` prints from it, each command's own --help names the options
// its rows name, and each command accepts every option its rows name.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "support/run_cli.h"

namespace stguard {
namespace {

using testing::RunCli;

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// ReadmeCommandBlock is the fenced block under README's "## Command line".
std::string ReadmeCommandBlock() {
  const std::string readme = ReadText(STGUARD_SOURCE_DIR "/README.md");
  const size_t section = readme.find("## Command line\n");
  if (section == std::string::npos) return {};
  const size_t open = readme.find("```\n", section);
  const size_t close = readme.find("```\n", open + 4);
  if (open == std::string::npos || close == std::string::npos) return {};
  return readme.substr(open + 4, close - open - 4);
}

// HelpCommandBlock is the part of `stguard --help` between the usage line and the notes.
std::string HelpCommandBlock() {
  const std::string help = RunCli("--help", testing::Streams::kStdoutOnly).output;
  const size_t begin = help.find("\n\n");
  const size_t end = help.find("\n\n- as OUT");
  if (begin == std::string::npos || end == std::string::npos) return {};
  return help.substr(begin + 2, end + 1 - begin - 2);
}

// OptionsIn lists the options a usage text names ("-q", "--json"; not "--" alone).
std::set<std::string> OptionsIn(const std::string& text) {
  static const std::regex option(R"((^|[\[ ])(--?[a-z][a-z-]*))");
  std::set<std::string> found;
  for (std::sregex_iterator it(text.begin(), text.end(), option), end; it != end; ++it) {
    found.insert((*it)[2]);
  }
  return found;
}

// TableSections maps each command to its lines in the help's command block: its synopsis,
// its summary and one line per option ("-q, --quiet ...").
std::map<std::string, std::string> TableSections() {
  std::map<std::string, std::string> sections;
  std::istringstream block(HelpCommandBlock());
  std::string command;
  for (std::string line; std::getline(block, line);) {
    if (line.rfind("stguard ", 0) == 0) command = line.substr(8, line.find(' ', 8) - 8);
    sections[command] += line + "\n";
  }
  return sections;
}

// TableSynopses maps each command to its synopsis line in the help's command block.
std::map<std::string, std::string> TableSynopses() {
  std::map<std::string, std::string> synopses;
  std::istringstream block(HelpCommandBlock());
  for (std::string line; std::getline(block, line);) {
    if (line.rfind("stguard ", 0) != 0) continue;
    const std::string rest = line.substr(8);
    synopses[rest.substr(0, rest.find(' '))] = rest;
  }
  return synopses;
}

TEST(CommandTableTest, ReadmeShowsTheBlockThatHelpPrints) {
  const std::string help_block = HelpCommandBlock();
  ASSERT_FALSE(help_block.empty());
  EXPECT_EQ(ReadmeCommandBlock(), help_block)
      << "README.md's block under \"## Command line\" must be exactly:\n"
      << help_block;
}

TEST(CommandTableTest, EachCommandsHelpNamesTheOptionsOfItsRows) {
  const std::map<std::string, std::string> sections = TableSections();
  ASSERT_GE(sections.size(), 7u);
  for (const auto& [command, section] : sections) {
    const std::string help = RunCli(command + " --help", testing::Streams::kStdoutOnly).output;
    std::set<std::string> from_table = OptionsIn(section);
    from_table.erase(command);
    from_table.insert({"-h", "--help"});  // every command takes them
    EXPECT_EQ(OptionsIn(help), from_table) << "stguard " << command << " --help:\n" << help;
  }
}

// Every option of the table is known to its command's parser: all of a command's options
// given at once (with a value where one is taken, so that options which need another, as
// --allow-external-symlinks needs --stats, are all there) are never an "unknown option";
// the run then fails on the missing files or the mix, which is not what is checked here.
TEST(CommandTableTest, EachCommandAcceptsTheOptionsOfItsRows) {
  const std::regex option_with_argument(R"(\[(--?[a-z][a-z-]*)( [A-Z0-9|]+)?\])");
  for (const auto& [command, synopsis] : TableSynopses()) {
    std::string arguments = command;
    for (std::sregex_iterator it(synopsis.begin(), synopsis.end(), option_with_argument), end;
         it != end; ++it) {
      arguments += " " + std::string((*it)[1]);
      if ((*it)[2].matched) arguments += (*it)[1] == "--max-output-ratio" ? " 4" : " F16";
    }
    const testing::CliRun run = RunCli(arguments + " /nonexistent/in /nonexistent/out");
    EXPECT_EQ(run.output.find("unknown option"), std::string::npos) << arguments << ": "
                                                                     << run.output;
  }
  // The check itself: an option no row names is refused.
  EXPECT_NE(RunCli("check --no-such-option x").output.find("unknown option"), std::string::npos);
}

}  // namespace
}  // namespace stguard
