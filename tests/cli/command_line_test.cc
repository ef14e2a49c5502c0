// SPDX-License-Identifier: Apache-2.0
// The command line as the command table (cli/command_table.cc) defines it: every option of
// every command gives the same result before, between and after the operands; values as
// "--opt V" or "--opt=V", checked against their kind; "--" ends the options; an option
// for another format is a usage error naming the formats it applies to; a mistyped name
// gets a suggestion; and "-" has one meaning per position.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "byte_source/npz_builder.h"
#include "stguard/formats.h"
#include "support/gguf_encoder.h"
#include "support/run_cli.h"
#include "support/temp_dir.h"
#include "support/test_files.h"

namespace stguard {
namespace {

using testing::CliRun;
using testing::RunCli;
using testing::ShellQuoted;
using testing::TempDir;
using testing::WriteFileBytes;

std::string Corpus(const std::string& name) { return std::string(STGUARD_CORPUS_DIR) + "/" + name; }

// NpyBytes is a .npy of four float32 (1, 2, 3, 4), C or Fortran order (shape (2, 2)).
std::string NpyBytes(bool fortran = false) {
  const std::string data = testing::Bytes({0, 0, 0x80, 0x3F, 0, 0, 0, 0x40, 0, 0, 0x40, 0x40,
                                           0, 0, 0x80, 0x40});  // 1, 2, 3, 4
  return testing::NpyFileBytes("<f4", "(2, 2)", data, fortran);
}

// SampleOfKind is corpus/formats/'s sample (WORD.EXT) of the first format of `kind` (a
// name the help prints, formats.def's "kind"); empty if there is none.
std::string SampleOfKind(const std::string& kind) {
  if (kind.empty()) return "";  // unknown's: no format the help names
  for (const FormatFacts& facts : kFormatFacts) {
    if (facts.kind != kind) continue;
    for (const auto& entry : std::filesystem::directory_iterator(Corpus("formats"))) {
      const std::string name = entry.path().filename().string();
      if (name.substr(0, name.find('.')) == facts.name) return entry.path().string();
    }
  }
  return "";
}

// Fixtures holds one input of each format, as the help names formats: its own for the
// kinds the tests below ask particular things of, else the kind's sample in corpus/formats/
// (so a format of a new kind is covered by the sample it adds there).
class Fixtures {
 public:
  Fixtures() {
    WriteFileBytes(dir_.File("w.npy"), NpyBytes());
    WriteFileBytes(dir_.File("w.npz"), testing::BuildNpz({{.key = "a", .elements = 4}}).Bytes());
    WriteFileBytes(dir_.File("m.gguf"), testing::Encode(testing::SimpleGgufModel()));
    WriteFileBytes(dir_.File("c.json"), "{\"model_type\": \"llama\"}");
    WriteFileBytes(dir_.File("inputs.txt"), "");  // --from: a list adding no input
    std::filesystem::create_directory(dir_.File("st"));
    std::filesystem::copy_file(Corpus("valid/worked_example.safetensors"),
                               dir_.File("st/model.safetensors"));
    std::filesystem::create_directory(dir_.File("pt"));
    std::filesystem::copy_file(Corpus("torch/valid/tied.zip.pt"),
                               dir_.File("pt/pytorch_model.bin"));
  }

  // For is the input of `format` (a name the help prints) for `command`; empty if none.
  std::string For(const std::string& command, const std::string& format) const {
    if (format == "safetensors") return Corpus("valid/worked_example.safetensors");
    if (format == "PyTorch") return Corpus("torch/valid/training.zip.pt");
    if (format == "GGUF") return dir_.File("m.gguf");
    if (format == ".npy") return dir_.File("w.npy");
    if (format == ".npz") return dir_.File("w.npz");
    if (format == "JSON") return dir_.File("c.json");
    if (format == "folder") return dir_.File(command == "convert" ? "pt" : "st");
    return SampleOfKind(format);
  }
  std::string File(const std::string& name) const { return dir_.File(name); }

 private:
  TempDir dir_;
};

// HelpOption is one option line of a command's --help.
struct HelpOption {
  std::string name;      // "--dtype"
  std::string argument;  // "BF16|F16|F32", or empty
  std::string help;
  std::vector<std::string> formats;
};

std::vector<std::string> SplitFormats(const std::string& list) {
  std::vector<std::string> formats;
  std::istringstream in(list);
  for (std::string format; std::getline(in, format, ',');) {
    formats.push_back(format.substr(format.find_first_not_of(' ')));
  }
  return formats;
}

// OptionsOf reads a command's options from its --help: the formats each applies to are
// in brackets after its help, or else the command's ("reads: ..."). Help starts at
// column 34, on the next line when the option's spelling is longer.
std::vector<HelpOption> OptionsOf(const std::string& command) {
  constexpr size_t kHelpColumn = 34;
  std::istringstream help(RunCli("help " + command, testing::Streams::kStdoutOnly).output);
  std::vector<std::string> reads;
  std::vector<HelpOption> options;
  bool in_options = false;
  for (std::string line; std::getline(help, line);) {
    if (line.rfind("reads: ", 0) == 0) reads = SplitFormats(line.substr(7));
    if (line == "options:") in_options = true;
    if (!in_options) continue;
    if (line.rfind(std::string(kHelpColumn, ' '), 0) == 0 && !options.empty()) {
      options.back().help = line.substr(kHelpColumn);  // the help of a long spelling
    } else if (line.rfind("    -", 0) == 0) {
      std::istringstream words(line);
      HelpOption option;
      words >> option.name;
      if (option.name.back() == ',') words >> option.name;  // "-q, --quiet"
      if (option.name == "--help" || option.name == "--") continue;
      std::string next;
      words >> next;
      if (!next.empty() && std::isupper(static_cast<unsigned char>(next[0])) != 0) {
        option.argument = next;
      }
      if (line.size() > kHelpColumn) option.help = line.substr(kHelpColumn);
      options.push_back(option);
    } else {
      continue;
    }
    HelpOption& option = options.back();
    const size_t open = option.help.rfind(" [");
    option.formats =
        open != std::string::npos && option.help.back() == ']'
            ? SplitFormats(option.help.substr(open + 2, option.help.size() - open - 3))
            : reads;
  }
  return options;
}

// WithoutTimes replaces the seconds a run took ("in 0.01 s"), which differ between runs.
std::string WithoutTimes(const std::string& output) {
  static const std::regex seconds(R"([0-9]+\.[0-9]+ s\b)");
  return std::regex_replace(output, seconds, "T s");
}

// ValueFor is a value an option accepts.
std::string ValueFor(const HelpOption& option, const Fixtures& fixtures) {
  if (option.argument.empty()) return "";
  if (option.argument.find('|') != std::string::npos) return "F16";
  if (option.argument == "N") return "8";
  if (option.argument == "PATH") return fixtures.File("c.json");
  if (option.name == "--from") return fixtures.File("inputs.txt");
  if (option.name == "--sarif") return fixtures.File("out.sarif");
  return option.name == "--key" ? "state_dict" : "x";
}

// RunWords runs `stguard WORDS` (each word quoted), OUT removed first, and returns what it did.
CliRun RunWords(const std::vector<std::string>& words, const std::string& out) {
  std::error_code ignored;
  if (!out.empty()) std::filesystem::remove_all(out, ignored);
  std::string line;
  for (const std::string& word : words) line += ShellQuoted(word) + " ";
  return RunCli(line);
}

TEST(CommandLineTest, AKindWithoutAFixtureTakesItsSampleFromCorpusFormats) {
  EXPECT_EQ(SampleOfKind("GGUF"), Corpus("formats/gguf.gguf"));
  EXPECT_EQ(SampleOfKind("PyTorch"), Corpus("formats/pytorch-zip.pt"));  // its first format
  EXPECT_EQ(SampleOfKind("no such kind"), "");
  EXPECT_EQ(SampleOfKind(""), "");  // unknown's kind
}

TEST(CommandLineTest, EveryOptionGivesTheSameResultBeforeBetweenAndAfterTheOperands) {
  const Fixtures fixtures;
  const std::string out = fixtures.File("out.safetensors");
  size_t checked = 0;
  for (const std::string command : {"check", "inspect", "convert", "scan", "lint", "canon"}) {
    const bool takes_out = command == "convert" || command == "canon";
    for (const HelpOption& option : OptionsOf(command)) {
      for (const std::string& format : option.formats) {
        const std::string in = fixtures.For(command, format);
        ASSERT_FALSE(in.empty()) << command << " " << option.name << ": " << format;
        std::vector<std::string> given = {option.name};
        if (!option.argument.empty()) given.push_back(ValueFor(option, fixtures));
        // An option that works with another ("with --stats, ...") is given with it.
        if (option.help.rfind("with --", 0) == 0) {
          given.push_back(option.help.substr(5, option.help.find_first_of(" ,", 5) - 5));
        }
        if (command == "convert" && format == "safetensors" && option.name != "--dtype") {
          given.insert(given.end(), {"--dtype", "BF16"});
        }
        std::vector<std::string> operands = {in};
        if (takes_out) operands.push_back(out);
        std::vector<std::string> before = {command}, after = {command}, between = {command};
        before.insert(before.end(), given.begin(), given.end());
        before.insert(before.end(), operands.begin(), operands.end());
        after.insert(after.end(), operands.begin(), operands.end());
        after.insert(after.end(), given.begin(), given.end());
        between.push_back(operands[0]);
        between.insert(between.end(), given.begin(), given.end());
        between.insert(between.end(), operands.begin() + 1, operands.end());
        const CliRun first = RunWords(before, takes_out ? out : "");
        const std::string what = command + " " + option.name + " on " + format;
        // Applicable options are never a usage error.
        EXPECT_EQ(first.output.find("usage:"), std::string::npos) << what << ":\n"
                                                                   << first.output;
        EXPECT_EQ(first.output.find(" applies to "), std::string::npos) << what << ":\n"
                                                                         << first.output;
        for (const auto& words : {after, between}) {
          const CliRun run = RunWords(words, takes_out ? out : "");
          EXPECT_EQ(run.status, first.status) << what;
          EXPECT_EQ(WithoutTimes(run.output), WithoutTimes(first.output)) << what;
        }
        ++checked;
      }
    }
  }
  EXPECT_GE(checked, 40u);  // every row of the table, on every format it applies to
}

TEST(CommandLineTest, ValuesAreGivenEitherWayAndCheckedAgainstTheirKind) {
  const Fixtures fixtures;
  const std::string in = ShellQuoted(fixtures.For("convert", ".npy"));
  const std::string out = ShellQuoted(fixtures.File("o.safetensors"));
  const CliRun spaced = RunCli("convert --dtype F16 " + in + " " + out);
  EXPECT_EQ(spaced.status, 0) << spaced.output;
  const CliRun joined = RunCli("convert --dtype=F16 " + in + " " + out);
  EXPECT_EQ(joined.output, spaced.output);
  CliRun run = RunCli("convert --dtype F8_E4M3 " + in + " " + out);
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.output.find("--dtype must be one of BF16|F16|F32, not 'F8_E4M3'"),
            std::string::npos)
      << run.output;
  run = RunCli("scan --max-output-ratio=4x " + ShellQuoted(fixtures.For("scan", "PyTorch")));
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.output.find("--max-output-ratio takes a count, not '4x'"), std::string::npos);
  run = RunCli("check --json=yes " + in);
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.output.find("option '--json' takes no value"), std::string::npos);
  run = RunCli("convert " + in + " " + out + " --name");
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.output.find("option '--name' needs a value"), std::string::npos);
  // "--" ends the options: "--json" after it is a file name, which does not exist.
  run = RunCli("check -- --json");
  EXPECT_EQ(run.status, 2);
  EXPECT_EQ(run.output.find("unknown option"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("--json"), std::string::npos) << run.output;
}

TEST(CommandLineTest, AnOptionForAnotherFormatNamesTheFormatsItAppliesTo) {
  const Fixtures fixtures;
  const std::string out = ShellQuoted(fixtures.File("o.safetensors"));
  const std::string gguf = ShellQuoted(fixtures.For("convert", "GGUF"));
  CliRun run = RunCli("convert --name foo " + gguf + " " + out);
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.output.find("--name applies to .npy, not to GGUF"), std::string::npos)
      << run.output;
  run = RunCli("convert --json --all-metadata " + ShellQuoted(fixtures.For("convert", ".npy")) +
               " " + out);
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.output.find("--all-metadata applies to GGUF, not to .npy"), std::string::npos)
      << run.output;
  // Accept: each on its own format, whatever the position.
  EXPECT_EQ(RunCli("convert --all-metadata " + gguf + " " + out).status, 0);
  run = RunCli("convert --name foo " + ShellQuoted(fixtures.For("convert", ".npy")) + " " + out);
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("('foo')"), std::string::npos) << run.output;
}

TEST(CommandLineTest, AMistypedNameGetsTheNearestOne) {
  CliRun run = RunCli("chek x");
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.output.find("unknown command 'chek' (did you mean check?)"), std::string::npos)
      << run.output;
  run = RunCli("check --jsno x");
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.output.find("unknown option '--jsno' (did you mean --json?)"),
            std::string::npos)
      << run.output;
  run = RunCli("help convrt");
  EXPECT_NE(run.output.find("did you mean convert?"), std::string::npos) << run.output;
  // Nothing within two edits: no suggestion.
  run = RunCli("frobnicate x");
  EXPECT_EQ(run.status, 2);
  EXPECT_EQ(run.output.find("did you mean"), std::string::npos) << run.output;
  run = RunCli("check --entirely-else x");
  EXPECT_EQ(run.output.find("did you mean"), std::string::npos) << run.output;
}

// RunSplit runs `stguard ARGUMENTS` with standard output and standard error kept apart.
struct SplitRun {
  int status = -1;
  std::string out;
  std::string err;
};
SplitRun RunSplit(const std::string& arguments) {
  const TempDir scratch;
  const std::string command = std::string(STGUARD_CLI_PATH) + " " + arguments + " >" +
                              ShellQuoted(scratch.File("out")) + " 2>" +
                              ShellQuoted(scratch.File("err"));
  const int status = std::system(command.c_str());
  SplitRun run;
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.out = testing::ReadFileBytes(scratch.File("out"));
  run.err = testing::ReadFileBytes(scratch.File("err"));
  return run;
}

TEST(CommandLineTest, DashAsOutIsStandardOutputForEveryOneFileOutput) {
  Fixtures fixtures;
  WriteFileBytes(fixtures.File("f.npy"), NpyBytes(/*fortran=*/true));
  const std::string file = fixtures.File("o.safetensors");
  for (const std::string& arguments :
       {"convert --dtype F16 " + ShellQuoted(fixtures.For("convert", "safetensors")),
        "convert " + ShellQuoted(fixtures.For("convert", ".npy")),
        "convert " + ShellQuoted(fixtures.File("f.npy")),  // Fortran order: built, then copied
        "convert " + ShellQuoted(fixtures.For("convert", ".npz")),
        "convert " + ShellQuoted(fixtures.For("convert", "GGUF")),
        "convert --key state_dict " + ShellQuoted(fixtures.For("convert", "PyTorch")),
        "canon " + ShellQuoted(fixtures.For("canon", "safetensors"))}) {
    const SplitRun to_file = RunSplit(arguments + " " + ShellQuoted(file));
    ASSERT_EQ(to_file.status, 0) << arguments << ": " << to_file.err;
    const SplitRun to_stdout = RunSplit(arguments + " -");
    EXPECT_EQ(to_stdout.status, 0) << arguments << ": " << to_stdout.err;
    EXPECT_EQ(to_stdout.out, testing::ReadFileBytes(file)) << arguments;
    // The summary goes to standard error, naming "-", never a temporary file.
    if (arguments.rfind("convert", 0) == 0) {
      EXPECT_EQ(to_stdout.err.rfind("-: ", 0), 0u) << arguments << ": " << to_stdout.err;
    }
    EXPECT_EQ(to_stdout.err.find("stguard-convert-"), std::string::npos) << to_stdout.err;
  }
  // A folder output refuses "-", with a message.
  const SplitRun folder = RunSplit("convert " + ShellQuoted(fixtures.For("convert", "folder")) +
                                   " -");
  EXPECT_EQ(folder.status, 2);
  EXPECT_TRUE(folder.out.empty());
  EXPECT_NE(folder.err.find("a folder converts to a folder: OUT cannot be -"),
            std::string::npos)
      << folder.err;
}

TEST(CommandLineTest, DashAsAnInputIsRefused) {
  const Fixtures fixtures;
  for (const std::string& arguments : std::vector<std::string>{
           "check -", "inspect -", "scan -", "lint -", "json -", "canon - out.safetensors",
        "convert - out.safetensors", "check " + ShellQuoted(fixtures.File("w.npy")) + " -"}) {
    const CliRun run = RunCli(arguments);
    EXPECT_EQ(run.status, 2) << arguments;
    EXPECT_NE(run.output.find("standard input is not supported: give a path"),
              std::string::npos)
        << arguments << ": " << run.output;
  }
  // After "--", "-" is still a file name, and still not standard input.
  EXPECT_EQ(RunCli("check -- -").status, 2);
}

// Commands taking "FILE..." take any number of them: a hub checks a whole upload in one
// run, far more than 255 files.
TEST(CommandLineTest, ManyOperandsAreAllRead) {
  const std::string safetensors = ShellQuoted(Corpus("valid/worked_example.safetensors"));
  const std::string torch = ShellQuoted(Corpus("torch/valid/tied.zip.pt"));
  for (const auto& [command, file] : {std::pair{"check -q", safetensors}, {"scan", torch}}) {
    std::string arguments = command;
    for (int i = 0; i < 300; ++i) arguments += " " + file;
    EXPECT_EQ(RunCli(arguments + " >/dev/null").status, 0) << command;
  }
  std::string too_many = "inspect";
  for (int i = 0; i < 2; ++i) too_many += " " + safetensors;
  EXPECT_EQ(RunCli(too_many).status, 2);
}

TEST(CommandLineTest, HelpSaysWhatDashMeansAndEveryExitStatus) {
  for (const std::string command : {"convert", "check", "canon"}) {
    const std::string help = RunCli("help " + command, testing::Streams::kStdoutOnly).output;
    EXPECT_NE(help.find("- as OUT is standard output"), std::string::npos) << help;
    EXPECT_NE(help.find("- as an input is refused"), std::string::npos) << help;
    EXPECT_NE(help.find("1 invalid or refused"), std::string::npos) << help;
  }
  const std::string check = RunCli("help check", testing::Streams::kStdoutOnly).output;
  for (const std::string format : {"safetensors", "PyTorch", ".bin", "GGUF", ".npy", ".npz",
                                   "folder"}) {
    EXPECT_NE(check.find(format), std::string::npos) << format << "\n" << check;
  }
  const std::string man = RunCli("--man", testing::Streams::kStdoutOnly).output;
  const size_t exit_status = man.find(".SH \"EXIT STATUS\"");
  ASSERT_NE(exit_status, std::string::npos);
  EXPECT_NE(man.find("refused", exit_status), std::string::npos);
  EXPECT_NE(man.find("standard input is not supported"), std::string::npos);
}

TEST(CommandLineTest, MessagesNameTheUsersPathsAndTheVerdictsWord) {
  const Fixtures fixtures;
  // A missing output folder is named as given, never by a temporary file's name.
  const std::string missing = fixtures.File("nodir/sub");
  for (const std::string& arguments :
       {"convert " + ShellQuoted(fixtures.For("convert", "PyTorch")) + " --key state_dict",
        "canon " + ShellQuoted(fixtures.For("canon", "safetensors"))}) {
    const CliRun run = RunCli(arguments + " " + ShellQuoted(missing + "/out.safetensors"));
    EXPECT_EQ(run.status, 2) << arguments;
    EXPECT_NE(run.output.find("output folder " + missing + " does not exist"), std::string::npos)
        << run.output;
    EXPECT_EQ(run.output.find(".stguard-"), std::string::npos) << run.output;
  }
  // An existing folder: written (accept).
  EXPECT_EQ(RunCli("convert " + ShellQuoted(fixtures.For("convert", ".npy")) + " " +
                   ShellQuoted(fixtures.File("here.safetensors")))
                .status,
            0);
  // A refusal says "refused:", as check says it; a valid file says "valid:".
  const std::string evil = Corpus("torch/refuse/PickleGlobalRefused__zip_eval.pt");
  CliRun run = RunCli("convert " + ShellQuoted(evil) + " " +
                      ShellQuoted(fixtures.File("evil.safetensors")));
  EXPECT_EQ(run.status, 1);
  EXPECT_NE(run.output.find(": refused: "), std::string::npos) << run.output;
  EXPECT_EQ(run.output.find(": error: "), std::string::npos) << run.output;
  run = RunCli("check " + ShellQuoted(fixtures.For("check", ".npy")));
  EXPECT_EQ(run.status, 0);
  EXPECT_NE(run.output.find(": valid: "), std::string::npos) << run.output;
}

}  // namespace
}  // namespace stguard
