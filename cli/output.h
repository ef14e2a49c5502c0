// SPDX-License-Identifier: Apache-2.0
// Small helpers shared by the subcommands for printing results.
#ifndef STGUARD_CLI_OUTPUT_H_
#define STGUARD_CLI_OUTPUT_H_

#include <cstdio>
#include <string>
#include <span>
#include <string_view>
#include <vector>

#include "stguard/error.h"
#include "stguard/inputs.h"  // AppendErrorJson, ErrorText
#include "stguard/io_error.h"  // IsIoError: an I/O error exits 2, a content error 1
#include "stguard/json_escape.h"  // AppendJsonText, AppendJsonString
#include "stguard/plural.h"
#include "stguard/shape.h"
#include "stguard/verdict.h"
#include "stguard/writer.h"

namespace stguard::cli {

// AboutOutput is `error`, met writing the file `out`, told with the user's path: when
// OUT's folder does not exist, "output folder nodir/sub does not exist" instead of the
// name of the temporary file the writer could not create beside OUT.
Error AboutOutput(const std::string& out, Error error);

// StdoutSink writes a file's bytes to standard output, for OUT given as "-".
class StdoutSink final : public ByteSink {
 public:
  Error Write(std::span<const std::byte> bytes) override;
};

// StdoutRefusal returns why a binary file must not go to standard output (it is a
// terminal), or an empty string.
std::string StdoutRefusal();

// PrintLeftoverNotes names temporary files that killed earlier writes to `out` left
// beside it (see FindLeftoverTemporaryFiles in stguard/writer.h).
void PrintLeftoverNotes(std::string_view command, const std::string& out);


// AppendErrorJson and ErrorText are the library's (stguard/inputs.h).

// PrintFileError prints "stguard COMMAND: PATH: VERDICT: ..." to stderr, with the verdict's
// word as check says it ("invalid", "refused"; "error" for I/O).
inline void PrintFileError(std::string_view command, std::string_view path, const Error& error) {
  const Verdict verdict =
      IsIoError(error, OutOfMemoryIs::kIoError) ? Verdict::kError : VerdictForError(error);
  const std::string line = "stguard " + std::string(command) + ": " + PrintableText(path) +
                           ": " + std::string(VerdictName(verdict)) + ": " +
                           ErrorText(path, error) + "\n";
  std::fputs(line.c_str(), stderr);
}

// ShapeText renders a shape as "[2, 3]" (or with another separator, "[2,3]").
std::string ShapeText(std::span<const uint64_t> shape, const char* separator = ", ");
std::string ShapeText(const stguard::Shape& shape, const char* separator = ", ");

// ShapeTextWidth is ShapeText(shape, separator).size(), computed without building the
// text: a hostile shape of 49 million dims would make it a 150 MB string.
size_t ShapeTextWidth(const stguard::Shape& shape, std::string_view separator = ", ");

// TableCell is one cell of a streamed table row: its text, or when `is_shape` a shape that
// is written dim by dim (never built as one string).
struct TableCell {
  std::string text;
  stguard::Shape shape;
  bool is_shape = false;
  size_t width() const { return is_shape ? ShapeTextWidth(shape) : text.size(); }
};

// PrintTableRow prints what PrintLine(FormatRow(...)) would for the same cells, writing
// shapes piece by piece, so no row costs memory in proportion to its shape's rank.
void PrintTableRow(const std::vector<TableCell>& cells, const std::vector<size_t>& widths);

// JsonStreamOut collects JSON output in a small buffer written to stdout whenever it fills,
// so an output as large as the header is never held in memory at once.
class JsonStreamOut {
 public:
  std::string& text() { return buffer_; }
  // Flush writes the buffer out when it has grown past a few pages (force: always).
  void Flush(bool force = false) {
    if (!force && buffer_.size() < (size_t{1} << 16)) return;
    std::fwrite(buffer_.data(), 1, buffer_.size(), stdout);
    buffer_.clear();
  }

 private:
  std::string buffer_;
};

// AppendJsonShape appends `shape` as a JSON array of numbers ("[2,3]"), flushing between
// dims: a hostile shape of 49 million dims is streamed, never held as one string.
void AppendJsonShape(const stguard::Shape& shape, JsonStreamOut* stream);

// ColumnWidths returns each column's width: the widest of its heading and its cells.
std::vector<size_t> ColumnWidths(const std::vector<std::string>& headings,
                                 const std::vector<std::vector<std::string>>& rows);

// FormatRow lays out one table row, indented two spaces, each cell padded to its column's
// width except the last; trailing spaces are dropped.
std::string FormatRow(const std::vector<std::string>& cells, const std::vector<size_t>& widths);

inline void PrintLine(const std::string& line) {
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fputc('\n', stdout);
}

inline void PrintErrorLine(const std::string& line) {
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fputc('\n', stderr);
}

}  // namespace stguard::cli

#endif  // STGUARD_CLI_OUTPUT_H_
