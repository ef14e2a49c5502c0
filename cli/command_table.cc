// SPDX-License-Identifier: Apache-2.0
// The command and option rows, and the help text printed from them.
#include "command_table.h"

namespace stguard::cli {
namespace {

constexpr Formats kSafetensorsOrFolder = kSafetensors | kFolder;

constexpr CommandRow kCommandRows[] = {
    {"check", "FILE|DIR...",
     "validate safetensors, GGUF and .npy files, folders and sharded indexes strictly",
     kSafetensorsOrFolder | kGguf | kNpy, RunCheck},
    {"inspect", "FILE|DIR", "show metadata, tensors in file order and totals",
     kSafetensorsOrFolder | kGguf | kNpy, RunInspect},
    {"json", "FILE", "is FILE exactly one valid JSON text? (RFC 8259)", kJsonText, RunJson},
    {"canon", "IN OUT|-", "rewrite IN in canonical form to OUT (may be IN)", kSafetensors,
     RunCanon},
    {"convert", "IN OUT|-",
     "convert floats (--dtype), or PyTorch (file, folder), .npy or GGUF to safetensors",
     kSafetensors | kTorch | kNpy | kGguf, RunConvert},
    {"scan", "FILE|DIR...",
     "static report on PyTorch checkpoints: globals, tensors, storages, first refusal",
     kTorch, RunScan},
    {"lint", "DIR|FILE", "compare a model folder with its config.json and the format's contracts",
     kSafetensorsOrFolder, RunLint},
    {"--version", "", "print the library's version", 0, RunVersion},
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
    {"scan", "--json", "", "", false, "one JSON object per input", kTorch},
    {"scan", "--key", "", "NAME", true,
     "select root[NAME] as the state dict (repeat: deeper)", kTorch},
    {"scan", "--max-output-ratio", "", "N", false,
     "refuse views asking > N x the file's size (default 4; 0: none)", kTorch},
    {"scan", "--allow-external-symlinks", "", "", false,
     "in a folder, read files through links out of it", kTorch | kFolder},
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

std::string OptionSpelling(const OptionRow& option) {
  std::string text;
  // Appends only: g++ 12 warns (-Wrestrict, a false positive) on "literal" + string.
  if (!option.short_name.empty()) text.append(option.short_name).append(", ");
  text += option.name;
  if (!option.argument.empty()) text.append(" ").append(option.argument);
  return text;
}

}  // namespace

std::span<const CommandRow> CommandRows() { return kCommandRows; }
std::span<const OptionRow> OptionRows() { return kOptionRows; }

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
      std::string help(option.help);
      if (option.formats != command.formats) {
        help.append(" [").append(FormatNames(option.formats)) += "]";
      }
      std::string spelling(kOptionIndent);
      spelling += OptionSpelling(option);
      AppendPadded(spelling, help, &block);
    }
  }
  return block;
}

std::string TopLevelHelp() {
  return "usage: stguard <command> [options] OPERAND...\n"
         "\n" +
         CommandBlock() +
         "\n"
         "OUT may be - for standard output (not a terminal). '--' ends the options.\n"
         "exit status: 0 valid, 1 invalid, 2 usage, I/O error or out of memory\n";
}

}  // namespace stguard::cli
