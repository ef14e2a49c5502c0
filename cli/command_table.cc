// SPDX-License-Identifier: Apache-2.0
// The command and option rows, and the help text printed from them.
#include "command_table.h"

#include <algorithm>

#include "arguments.h"
#include "stguard/conversion.h"
#include "stguard/dtype.h"

namespace stguard::cli {
namespace {

// The sets the rows name, from the facts of stguard/formats.def: a new format is read by
// the commands its row says, and takes the options of its kind. convert's options take
// the library's sets (ConvertOptionFormats): the library refuses an inapplicable one.
constexpr FormatSet kFolder = kFolderInput;
constexpr FormatSet kSafetensors = FormatBit(Format::kSafetensors);
constexpr FormatSet kSafetensorsOrFolder = kSafetensors | kFolder;
constexpr FormatSet kEveryCheckpoint = FormatsWith(&FormatFacts::inspectable) | kFolder;
constexpr FormatSet kConverted = FormatsWith(&FormatFacts::convertible);
constexpr FormatSet kScanned = FormatsWith(&FormatFacts::scannable) | kFolder;
constexpr FormatSet kTorch = FormatsOfKind(Format::kPytorchZip);
constexpr FormatSet kJsonText = FormatBit(Format::kJson);

constexpr CommandRow kCommandRows[] = {
    {"check", "FILE|DIR...",
     "validate checkpoint files and folders strictly",
     "FILE  a .safetensors file, validated strictly; a PyTorch .bin/.pt/.pth/.ckpt (ZIP,\n"
     "      legacy or a bare pickle), read without running its pickle: valid when it holds\n"
     "      nothing outside the allowlist, refused otherwise; a GGUF, .npy or .npz file;\n"
     "      each told by its bytes, not its name\n"
     "DIR   a checkpoint folder or a *.safetensors.index.json: the index, every shard and\n"
     "      every other *.safetensors file, config.json, and every PyTorch, GGUF, .npy and\n"
     "      .npz file in it\n"
     "URL   http(s)://... or hf://ORG/NAME[@REV]/FILE: a file read by range requests\n"
     "      (HF_ENDPOINT, HF_TOKEN), the checks it skipped listed on its verdict",
     kEveryCheckpoint, 1, kAnyNumber, false, RunCheck},
    {"inspect", "FILE|DIR", "show metadata, tensors in file order and totals",
     "FILE  a file of a format it reads (check's verdict first), or\n"
     "      its URL (http(s)://, hf://ORG/NAME[@REV]/FILE)\n"
     "DIR   with --stats: a checkpoint folder or a *.safetensors.index.json",
     kEveryCheckpoint, 1, 1, false, RunInspect},
    {"json", "FILE", "is FILE exactly one valid JSON text? (RFC 8259)",
     "FILE  any file; it is valid when it holds exactly one JSON text", kJsonText, 1, 1, false,
     RunJson},
    {"canon", "IN OUT|-", "rewrite IN in canonical form to OUT (may be IN)",
     "IN    a valid .safetensors file\n"
     "OUT   the file written (atomically: a whole file or none), or - for standard output",
     kSafetensors, 2, 2, true, RunCanon},
    {"convert", "IN OUT|-",
     "convert floats (--dtype), or PyTorch (file, folder), .npy, .npz or GGUF to safetensors",
     "IN    a .safetensors file or model folder (with --dtype; the index rewritten); a\n"
     "      PyTorch .bin/.pt/.pth/.ckpt, read without running its pickle; a folder of them\n"
     "      (pytorch_model.bin[.index.json]); a .npy or .npz file; a GGUF file (the first\n"
     "      part of a split model converts to a folder); told by its bytes, before any\n"
     "      option is applied\n"
     "OUT   the file written (atomically), or - for standard output (every file IN; built\n"
     "      in a private temporary file and copied when its writer seeks, nothing left); a\n"
     "      folder for a folder or a split GGUF model (new or empty, created with its\n"
     "      parents; never -). OUT must not be IN (the same path, a hard link or a symbolic\n"
     "      link: exit 2, nothing written), except a safetensors file converted in place\n"
     "      with --dtype (crash-safe, as canon IN IN)\n"
     "Converted tensors (\"N of M converted\", Python's converted) are those whose dtype\n"
     "changed, for every format; a GGUF block type dequantized counts as changed.",
     kConverted | kFolder, 2, 2, true, RunConvert},
    {"scan", "FILE|DIR...",
     "static report on PyTorch checkpoints: globals, tensors, storages, first refusal",
     "FILE  a PyTorch checkpoint, read without running its pickle; a .npy or .npz file\n"
     "DIR   a folder: every checkpoint file in it\n"
     "Verdicts: clean and needs-key are safe to load (exit 0; needs-key: converting needs\n"
     "--key); names-code and cannot-prove-safe exit 1. --json adds \"convertible\".",
     kScanned, 1, kAnyNumber, false, RunScan},
    {"lint", "DIR|FILE...", "compare a model folder with its config.json and the format's contracts",
     "DIR   a model folder with config.json\n"
     "FILE  a .safetensors file or a *.safetensors.index.json, with config.json beside it",
     kSafetensorsOrFolder, 1, kAnyNumber, false, RunLint},
    {"help", "[COMMAND]", "show the help of stguard or of one command",
     "COMMAND  the command whose options are explained", 0, 0, 1, false, RunHelp},
    {"version", "", "print the library's version", "", 0, 0, 0, false, RunVersion},
};

// The setters: each row says which field of the command line it sets.
void SetQuiet(CommandLine& line, std::string_view) { line.quiet = true; }
void SetJson(CommandLine& line, std::string_view) { line.json = true; }
void SetCanonical(CommandLine& line, std::string_view) { line.canonical = true; }
void SetAligned(CommandLine& line, std::string_view) { line.aligned = true; }
void SetAllowExternal(CommandLine& line, std::string_view) {
  line.allow_external_symlinks = true;
}
void SetStats(CommandLine& line, std::string_view) { line.stats = true; }
void SetRequireConvertible(CommandLine& line, std::string_view) {
  line.require_convertible = true;
}
void SetDropAliases(CommandLine& line, std::string_view) { line.drop_aliases = true; }
void SetAllMetadata(CommandLine& line, std::string_view) { line.all_metadata = true; }
void SetDtype(CommandLine& line, std::string_view value) { line.dtype = ParseDtype(value); }
void SetKey(CommandLine& line, std::string_view value) { line.keys.emplace_back(value); }
void SetMaxOutputRatio(CommandLine& line, std::string_view value) {
  line.max_output_ratio = ParseCount(value);
}
void SetName(CommandLine& line, std::string_view value) { line.name = std::string(value); }
void SetConfig(CommandLine& line, std::string_view value) { line.config = std::string(value); }
void SetTimeout(CommandLine& line, std::string_view value) {
  line.timeout_seconds = ParseCount(value);
}
void SetJobs(CommandLine& line, std::string_view value) { line.jobs = ParseCount(value); }
void SetFrom(CommandLine& line, std::string_view value) { line.from = std::string(value); }
void SetSarif(CommandLine& line, std::string_view value) { line.sarif = std::string(value); }

using enum ValueKind;

// The options of every command that judges many inputs (check, scan, lint: RunManyInputs),
// worded once; ForCommand gives each command its row, with the inputs it reads.
constexpr OptionRow kJobsOption = {
    "", "--jobs", "-j", "N", kCount, false,
    "judge N inputs at once (default: one per core); output stays in order", 0, SetJobs};
constexpr OptionRow kFromOption = {
    "", "--from", "", "FILE", kText, false,
    "read more inputs from FILE, one per line (- for standard input)", 0, SetFrom};
constexpr OptionRow kSarifOption = {
    "", "--sarif", "", "FILE", kText, false,
    "also write a SARIF 2.1.0 log of what is not valid to FILE", 0, SetSarif};

constexpr OptionRow ForCommand(std::string_view command, FormatSet formats, OptionRow row) {
  row.command = command;
  row.formats = formats;
  return row;
}

constexpr OptionRow kOptionRows[] = {
    {"check", "--quiet", "-q", "", kFlag, false, "print only what is not valid",
     kEveryCheckpoint, SetQuiet},
    {"check", "--json", "", "", kFlag, false,
     "as JSON Lines: one JSON object per line, one per input", kEveryCheckpoint, SetJson},
    {"check", "--canonical", "", "", kFlag, false, "also require the bytes canon would write",
     kSafetensors, SetCanonical},
    {"check", "--aligned", "", "", kFlag, false,
     "also require each tensor aligned to its element size", kSafetensorsOrFolder, SetAligned},
    {"check", "--allow-external-symlinks", "", "", kFlag, false,
     "follow symbolic links out of the folder", kFolder, SetAllowExternal},
    {"check", "--timeout", "", "N", kCount, false,
     "for a URL: give up after N s connecting or stalled (default 30)",
     kEveryCheckpoint, SetTimeout},
    ForCommand("check", kEveryCheckpoint, kJobsOption),
    ForCommand("check", kEveryCheckpoint, kFromOption),
    ForCommand("check", kEveryCheckpoint, kSarifOption),
    {"inspect", "--json", "", "", kFlag, false, "print JSON", kEveryCheckpoint, SetJson},
    {"inspect", "--stats", "", "", kFlag, false, "scan the data: min, max, mean, NaN/+inf/-inf",
     kSafetensorsOrFolder, SetStats},
    {"inspect", "--allow-external-symlinks", "", "", kFlag, false,
     "follow symbolic links out of the folder", kFolder, SetAllowExternal},
    {"inspect", "--timeout", "", "N", kCount, false,
     "for a URL: give up after N s connecting or stalled (default 30)",
     kEveryCheckpoint, SetTimeout},
    {"convert", "--dtype", "", "BF16|F16|F32", kChoice, false,
     "the dtype floating tensors (F64, F32, F16, BF16) become", ConvertOptionFormats("--dtype"),
     SetDtype},
    {"convert", "--key", "", "NAME", kText, true,
     "select root[NAME] as the state dict (repeat: deeper)", ConvertOptionFormats("--key"),
     SetKey},
    {"convert", "--drop-aliases", "", "", kFlag, false,
     "keep one name per tied tensor (the first); list the others",
     ConvertOptionFormats("--drop-aliases"),
     SetDropAliases},
    {"convert", "--max-output-ratio", "", "N", kCount, false,
     "refuse views asking > N x the file's size (default 4; 0: none)",
     ConvertOptionFormats("--max-output-ratio"), SetMaxOutputRatio},
    {"convert", "--allow-external-symlinks", "", "", kFlag, false,
     "read a folder's shards through links out of it",
     ConvertOptionFormats("--allow-external-symlinks"), SetAllowExternal},
    {"convert", "--name", "", "NAME", kText, false,
     "the tensor's name (default: IN's file name without .npy)",
     ConvertOptionFormats("--name"), SetName},
    {"convert", "--all-metadata", "", "", kFlag, false,
     "keep GGUF metadata arrays longer than 1024 elements",
     ConvertOptionFormats("--all-metadata"), SetAllMetadata},
    {"convert", "--json", "", "", kFlag, false,
     "one JSON result: IN's verdict, the files written, their tensors", kConverted | kFolder,
     SetJson},
    {"scan", "--json", "", "", kFlag, false,
     "as JSON Lines: one JSON object per line, one per file", kScanned, SetJson},
    {"scan", "--key", "", "NAME", kText, true,
     "select root[NAME] as the state dict (repeat: deeper)", kTorch | kFolder, SetKey},
    {"scan", "--max-output-ratio", "", "N", kCount, false,
     "refuse views asking > N x the file's size (default 4; 0: none)", kTorch | kFolder,
     SetMaxOutputRatio},
    {"scan", "--allow-external-symlinks", "", "", kFlag, false,
     "in a folder, read files through links out of it", kFolder, SetAllowExternal},
    {"scan", "--require-convertible", "", "", kFlag, false,
     "also exit 1 when a file would not convert as it is (needs --key...)",
     kScanned, SetRequireConvertible},
    ForCommand("scan", kScanned, kJobsOption),
    ForCommand("scan", kScanned, kFromOption),
    ForCommand("scan", kScanned, kSarifOption),
    {"lint", "--json", "", "", kFlag, false,
     "as JSON Lines: one JSON object per line, one per input", kSafetensorsOrFolder, SetJson},
    {"lint", "--config", "", "PATH", kText, false,
     "read this config.json instead of the folder's", kSafetensorsOrFolder, SetConfig},
    {"lint", "--allow-external-symlinks", "", "", kFlag, false,
     "follow symbolic links out of the folder", kFolder, SetAllowExternal},
    ForCommand("lint", kSafetensorsOrFolder, kJobsOption),
    ForCommand("lint", kSafetensorsOrFolder, kFromOption),
    ForCommand("lint", kSafetensorsOrFolder, kSarifOption),
};

// Column where summaries and option help start, and the indent of option lines.
constexpr size_t kHelpColumn = 34;
constexpr std::string_view kOptionIndent = "    ";

void AppendPadded(std::string_view left, std::string_view right, std::string* out) {
  *out += left;
  if (left.size() + 1 < kHelpColumn) {
    out->append(kHelpColumn - left.size(), ' ');
  } else {
    *out += '\n';
    out->append(kHelpColumn, ' ');
  }
  *out += right;
  *out += '\n';
}

// OptionHelp is an option's help, with the formats it applies to when they are not all
// of its command's.
std::string OptionHelp(const CommandRow& command, const OptionRow& option) {
  std::string help(option.help);
  if (option.formats != command.formats) {
    help.append(" [").append(FormatSetNames(option.formats)) += "]";
  }
  return help;
}

}  // namespace

std::span<const CommandRow> CommandRows() { return kCommandRows; }
std::span<const OptionRow> OptionRows() { return kOptionRows; }

const CommandRow* FindCommand(std::string_view name) {
  for (const CommandRow& command : kCommandRows) {
    if (command.name == name) return &command;
  }
  return nullptr;
}

const OptionRow* FindOption(std::string_view command, std::string_view name) {
  for (const OptionRow& option : kOptionRows) {
    if (option.command == command && (option.name == name || option.short_name == name)) {
      return &option;
    }
  }
  return nullptr;
}

std::string OptionSpelling(const OptionRow& option) {
  std::string text;
  // Appends only: g++ 12 warns (-Wrestrict, a false positive) on "literal" + string.
  if (!option.short_name.empty()) text.append(option.short_name).append(", ");
  text += option.name;
  if (!option.argument.empty()) text.append(" ").append(option.argument);
  return text;
}

std::string Synopsis(const CommandRow& command) {
  std::string line = "stguard ";
  line += command.name;
  for (const OptionRow& option : kOptionRows) {
    if (option.command != command.name) continue;
    line.append(" [").append(option.short_name.empty() ? option.name : option.short_name);
    if (!option.argument.empty()) line.append(" ").append(option.argument);
    line += option.repeatable ? "]..." : "]";
  }
  if (!command.operands.empty()) line.append(" ").append(command.operands);
  return line;
}

std::string CommandBlock() {
  std::string block;
  for (const CommandRow& command : kCommandRows) {
    block.append(Synopsis(command)).append("\n");
    std::string summary(command.summary);
    if (command.formats != 0) summary.append(" [").append(FormatSetNames(command.formats)) += "]";
    block.append(kOptionIndent).append(summary).append("\n");
    for (const OptionRow& option : kOptionRows) {
      if (option.command != command.name) continue;
      std::string spelling(kOptionIndent);
      spelling += OptionSpelling(option);
      AppendPadded(spelling, OptionHelp(command, option), &block);
    }
  }
  return block;
}

std::string ExitStatusHelp() {
  std::string line = "exit status:";
  for (const ExitStatusRow& row : kExitStatuses) {
    line.append(row.status == kExitOk ? " " : ", ").append(std::to_string(row.status));
    line.append(" ").append(row.meaning);
  }
  return line;
}

std::string TopLevelHelp() {
  std::string help = "usage: stguard <command> [options] OPERAND...\n\n";
  help.append(CommandBlock())
      .append("\n")
      .append(kDashHelp)
      .append("\n")
      .append("'stguard help COMMAND' (or 'stguard COMMAND --help') explains its options;\n")
      .append("'stguard --version' is 'stguard version'.\n")
      .append(ExitStatusHelp())
      .append("\n");
  return help;
}

std::string CommandHelp(const CommandRow& command) {
  std::string help = "usage: ";
  help.append(Synopsis(command)).append("\n\n").append(command.summary).append("\n");
  if (command.formats != 0) help.append("reads: ").append(FormatSetNames(command.formats)) += "\n";
  if (!command.details.empty()) {
    help += "\n";
    std::string_view details = command.details;
    while (!details.empty()) {  // each line indented like the options
      const size_t end = std::min(details.find('\n'), details.size());
      help.append(kOptionIndent).append(details.substr(0, end)) += "\n";
      details.remove_prefix(std::min(end + 1, details.size()));
    }
  }
  help += "\noptions:\n";
  for (const OptionRow& option : kOptionRows) {
    if (option.command != command.name) continue;
    std::string spelling(kOptionIndent);
    spelling += OptionSpelling(option);
    AppendPadded(spelling, OptionHelp(command, option), &help);
  }
  for (const CommonOption& option : kOptionsEveryCommandTakes) {
    std::string spelling(kOptionIndent);
    spelling += option.spelling;
    AppendPadded(spelling, option.help, &help);
  }
  help.append("\n").append(kDashHelp).append("\n").append(ExitStatusHelp()) += "\n";
  return help;
}

}  // namespace stguard::cli
