// SPDX-License-Identifier: Apache-2.0
// The command and option rows, and the help text printed from them.
#include "command_table.h"

#include <algorithm>

namespace stguard::cli {
namespace {

constexpr Formats kSafetensorsOrFolder = kSafetensors | kFolder;

constexpr CommandRow kCommandRows[] = {
    {"check", "FILE|DIR...",
     "validate safetensors, GGUF and .npy files, folders and sharded indexes strictly",
     "FILE  a .safetensors file, validated strictly; a GGUF or .npy file, told by its magic\n"
     "DIR   a checkpoint folder or a *.safetensors.index.json: the index, every shard and\n"
     "      every other *.safetensors file, config.json; pickle files are warnings",
     kSafetensorsOrFolder | kGguf | kNpy, RunCheck},
    {"inspect", "FILE|DIR", "show metadata, tensors in file order and totals",
     "FILE  a .safetensors, GGUF or .npy file\n"
     "DIR   with --stats: a checkpoint folder or a *.safetensors.index.json",
     kSafetensorsOrFolder | kGguf | kNpy, RunInspect},
    {"json", "FILE", "is FILE exactly one valid JSON text? (RFC 8259)",
     "FILE  any file; it is valid when it holds exactly one JSON text", kJsonText, RunJson},
    {"canon", "IN OUT|-", "rewrite IN in canonical form to OUT (may be IN)",
     "IN    a valid .safetensors file\n"
     "OUT   the file written (atomically: a whole file or none), or - for standard output",
     kSafetensors, RunCanon},
    {"convert", "IN OUT|-",
     "convert floats (--dtype), or PyTorch (file, folder), .npy, .npz or GGUF to safetensors",
     "IN    a .safetensors file (with --dtype); a PyTorch .bin/.pt/.pth/.ckpt, read without\n"
     "      running its pickle; a folder of them (pytorch_model.bin[.index.json]); a .npy or\n"
     "      .npz file; a GGUF file (the first part of a split model converts to a folder)\n"
     "OUT   the file (or, for a folder, the folder) written, or - for standard output",
     kSafetensors | kTorch | kNpy | kGguf, RunConvert},
    {"scan", "FILE|DIR...",
     "static report on PyTorch checkpoints: globals, tensors, storages, first refusal",
     "FILE  a PyTorch checkpoint, read without running its pickle\n"
     "DIR   a folder: every checkpoint file in it",
     kTorch, RunScan},
    {"lint", "DIR|FILE", "compare a model folder with its config.json and the format's contracts",
     "DIR   a model folder with config.json\n"
     "FILE  a .safetensors file or a *.safetensors.index.json, with config.json beside it",
     kSafetensorsOrFolder, RunLint},
    {"help", "[COMMAND]", "show the help of stguard or of one command",
     "COMMAND  the command whose options are explained", 0, RunHelp},
    {"version", "", "print the library's version", "", 0, RunVersion},
};

constexpr OptionRow kOptionRows[] = {
    {"check", "--quiet", "-q", "", false, "print only what is invalid", kSafetensorsOrFolder},
    {"check", "--json", "", "", false, "one JSON object per input", kSafetensorsOrFolder},
    {"check", "--canonical", "", "", false, "also require the bytes canon would write",
     kSafetensors},
    {"check", "--aligned", "", "", false, "also require each tensor aligned to its element size",
     kSafetensorsOrFolder},
    {"check", "--allow-external-symlinks", "", "", false,
     "follow symbolic links out of the folder", kFolder},
    {"inspect", "--json", "", "", false, "print JSON", kSafetensorsOrFolder},
    {"inspect", "--stats", "", "", false, "scan the data: min, max, mean, NaN/+inf/-inf",
     kSafetensorsOrFolder},
    {"inspect", "--allow-external-symlinks", "", "", false,
     "with --stats, follow symbolic links out of the folder", kFolder},
    {"convert", "--dtype", "", "BF16|F16|F32", false,
     "the dtype floating tensors (F64, F32, F16, BF16) become", kSafetensors | kTorch | kNpy | kGguf},
    {"convert", "--key", "", "NAME", true,
     "select root[NAME] as the state dict (repeat: deeper)", kTorch},
    {"convert", "--drop-aliases", "", "", false,
     "keep one name per tied tensor (the first); list the others", kTorch},
    {"convert", "--max-output-ratio", "", "N", false,
     "refuse views asking > N x the file's size (default 4; 0: none)", kTorch},
    {"convert", "--allow-external-symlinks", "", "", false,
     "read a folder's shards through links out of it", kTorch | kFolder},
    {"convert", "--name", "", "NAME", false,
     "the tensor's name (default: IN's file name without .npy)", kNpy},
    {"convert", "--all-metadata", "", "", false,
     "keep GGUF metadata arrays longer than 1024 elements", kGguf},
    {"convert", "--json", "", "", false,
     "one JSON result: IN's verdict, the files written, their tensors",
     kSafetensors | kTorch | kNpy | kGguf},
    {"scan", "--json", "", "", false, "one JSON object per input", kTorch},
    {"scan", "--key", "", "NAME", true,
     "select root[NAME] as the state dict (repeat: deeper)", kTorch},
    {"scan", "--max-output-ratio", "", "N", false,
     "refuse views asking > N x the file's size (default 4; 0: none)", kTorch},
    {"scan", "--allow-external-symlinks", "", "", false,
     "in a folder, read files through links out of it", kTorch | kFolder},
    {"scan", "--require-convertible", "", "", false,
     "also exit 1 when a file would not convert as it is (needs --key...)", kTorch},
    {"lint", "--json", "", "", false, "print JSON", kSafetensorsOrFolder},
    {"lint", "--config", "", "PATH", false, "read this config.json instead of the folder's",
     kSafetensorsOrFolder},
    {"lint", "--allow-external-symlinks", "", "", false,
     "follow symbolic links out of the folder", kFolder},
};

constexpr std::string_view kFormatNames[] = {"safetensors", "folder", "torch", "json", "gguf",
                                             "npy"};

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
    help.append(" [").append(FormatNames(option.formats)) += "]";
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

std::string OptionSpelling(const OptionRow& option) {
  std::string text;
  // Appends only: g++ 12 warns (-Wrestrict, a false positive) on "literal" + string.
  if (!option.short_name.empty()) text.append(option.short_name).append(", ");
  text += option.name;
  if (!option.argument.empty()) text.append(" ").append(option.argument);
  return text;
}

std::string FormatNames(Formats formats) {
  std::string names;
  for (size_t bit = 0; bit < std::size(kFormatNames); ++bit) {
    if ((formats & (1u << bit)) == 0) continue;
    if (!names.empty()) names += ", ";
    names += kFormatNames[bit];
  }
  return names;
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
    if (command.formats != 0) summary.append(" [").append(FormatNames(command.formats)) += "]";
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

std::string TopLevelHelp() {
  std::string help = "usage: stguard <command> [options] OPERAND...\n\n";
  help.append(CommandBlock())
      .append("\nOUT may be - for standard output (not a terminal). '--' ends the options.\n")
      .append("'stguard help COMMAND' (or 'stguard COMMAND --help') explains its options;\n")
      .append("'stguard --version' is 'stguard version'.\n")
      .append(kExitStatusHelp)
      .append("\n");
  return help;
}

std::string CommandHelp(const CommandRow& command) {
  std::string help = "usage: ";
  help.append(Synopsis(command)).append("\n\n").append(command.summary).append("\n");
  if (command.formats != 0) help.append("reads: ").append(FormatNames(command.formats)) += "\n";
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
  help.append("\n").append(kExitStatusHelp) += "\n";
  return help;
}

}  // namespace stguard::cli
