// SPDX-License-Identifier: Apache-2.0
// Each byte read once: every command (check, inspect, scan, lint, convert) on every format
// (safetensors file and folder, PyTorch ZIP and legacy, GGUF, npy, npz), run as a whole
// process by the tests' CLI, whose file source records each read (base/test_reads.h). A
// range of a file read twice fails (by pread, by a mapping, or one of each); so does a
// header-only check that reads more than the header and the sniff's first block. A mapping
// counts as a read of every byte it maps (its pages are read as touched, which no hook
// sees), so a pread of the sniff's first block and then a mapping of the same file is a
// second read of that block.
#include <sys/wait.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "byte_source/npz_builder.h"
#include "support/gguf_encoder.h"
#include "support/run_cli.h"
#include "support/temp_dir.h"
#include "support/test_files.h"

namespace stguard {
namespace {

using testing::ReadFileBytes;
using testing::ShellQuoted;
using testing::TempDir;
using testing::WriteFileBytes;

// kSniffBlockLen: the sniff's first read (a tar block), which may reach past a short
// header into the data.
constexpr uint64_t kSniffBlockLen = 512;

struct Read {
  std::string how;  // "pread", "map" or "slurp" (base/test_reads.h)
  uint64_t offset = 0;
  uint64_t len = 0;
};

// FileReads is one process's reads, by path.
using FileReads = std::map<std::string, std::vector<Read>>;

// RunRecorded runs the tests' CLI with `arguments` (shell text), its reads recorded.
FileReads RunRecorded(const TempDir& dir, const std::string& arguments) {
  const std::string log = dir.File("reads.log");
  std::remove(log.c_str());
  const std::string command = "STGUARD_TEST_READ_LOG=" + ShellQuoted(log) + " " +
                              ShellQuoted(STGUARD_PAUSING_CLI_PATH) + " " + arguments +
                              " >/dev/null 2>&1";
  const int status = std::system(command.c_str());
  EXPECT_TRUE(WIFEXITED(status)) << arguments;
  FileReads reads;
  std::ifstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    Read read;
    fields >> read.how >> read.offset >> read.len;
    std::string path;
    std::getline(fields >> std::ws, path);
    reads[path].push_back(read);
  }
  return reads;
}

// TwiceRead names the first range of a file read twice: two reads whose ranges overlap,
// whatever each is. A mapping counts for the whole range it maps (its pages are read as
// the reader touches them, which no hook sees, so the guard assumes the worst: every page
// of it), so a pread of the sniff's first block and then a mapping of the file it came
// from is a second read of that block, as is a pread of bytes a mapping already holds.
// Empty when every byte was read once.
std::string TwiceRead(const FileReads& reads) {
  for (const auto& [path, list] : reads) {
    for (size_t i = 0; i < list.size(); ++i) {
      for (size_t j = 0; j < i; ++j) {
        const Read& a = list[i];
        const Read& b = list[j];
        if (a.len != 0 && b.len != 0 && a.offset < b.offset + b.len &&
            b.offset < a.offset + a.len) {
          return path + ": " + a.how + " of " + std::to_string(a.len) + " bytes at " +
                 std::to_string(a.offset) + " overlaps " + b.how + " of " +
                 std::to_string(b.len) + " bytes at " + std::to_string(b.offset);
        }
      }
    }
  }
  return {};
}

uint64_t PreadBytes(const std::vector<Read>& list) {
  uint64_t total = 0;
  for (const Read& read : list) total += read.how == "pread" ? read.len : 0;
  return total;
}

// SafetensorsWithLargeHeader has `num_tensors` one-byte tensors: a header past 1 MiB for
// 20,000 (past what the sniff once shared with the reader, so a second read shows).
std::string SafetensorsWithLargeHeader(int num_tensors) {
  std::string header = "{";
  for (int i = 0; i < num_tensors; ++i) {
    header += "\"model.layers." + std::to_string(i) +
              ".mlp.experts.gate_proj.weight\":{\"dtype\":\"U8\",\"shape\":[1],"
              "\"data_offsets\":[" + std::to_string(i) + "," + std::to_string(i + 1) + "]},";
  }
  header.back() = '}';
  header += std::string((8 - header.size() % 8) % 8, ' ');
  return testing::FileWithHeader(header, std::string(static_cast<size_t>(num_tensors), '\0'));
}

// NpyBytes is a version 1.0 .npy of two float32, header padded to 64.
std::string NpyBytes() {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  header += std::string(63 - (10 + header.size()) % 64, ' ') + "\n";
  const auto len = static_cast<uint16_t>(header.size());
  return std::string("\x93NUMPY\x01\x00", 8) + std::string(reinterpret_cast<const char*>(&len), 2) +
         header + std::string(8, '\0');
}

class ReadOnceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string corpus = std::string(STGUARD_CORPUS_DIR) + "/";
    Write("large.safetensors", SafetensorsWithLargeHeader(20'000));
    Write("small.safetensors", ReadFileBytes(corpus + "valid/worked_example.safetensors"));
    Write("model/model.safetensors", ReadFileBytes(corpus + "sample.safetensors"));
    Write("model/config.json", "{}");
    Write("state.zip.pt", ReadFileBytes(corpus + "torch/valid/module_state_dict.zip.pt"));
    Write("state.legacy.pt", ReadFileBytes(corpus + "torch/valid/module_state_dict.legacy.pt"));
    Write("model.gguf", testing::Encode(testing::SimpleGgufModel()));
    Write("array.npy", NpyBytes());
    Write("arrays.npz", testing::BuildNpz({{"a", 10, {}}, {"b", 300, {}, true}}).Bytes());
  }
  void Write(const std::string& name, const std::string& bytes) {
    if (name.find('/') != std::string::npos) {
      std::filesystem::create_directories(dir_.File(name.substr(0, name.find('/'))));
    }
    ASSERT_TRUE(WriteFileBytes(dir_.File(name), bytes));
  }
  std::string In(const std::string& name) const { return ShellQuoted(dir_.File(name)); }
  TempDir dir_;
};

const char* const kInputs[] = {"large.safetensors", "small.safetensors", "model",
                               "state.zip.pt",      "state.legacy.pt",   "model.gguf",
                               "array.npy",         "arrays.npz"};

// SecondRead is a command on an input that still reads some bytes of it twice, and why.
struct SecondRead {
  const char* command;
  const char* input;
  const char* why;
};

// kSecondReads lists every command and input that reads a byte twice. The test fails on a
// double read not listed here, and on a listed one that no longer reads twice (so the list
// shrinks as they are fixed and never says more than is true).
// Why a command still reads some bytes twice (each names where the second read is made).
// (What no longer does: a folder's shards are sniffed by the walk from the heads their
// validation read (FolderScanOptions::known_heads), and config.json from the mapping the
// folder's rules read (ModelFolderReport::config), which lint reads too (CheckResult::
// config); inspect, inspect --stats and lint keep the check's readers (CheckOptions::
// keep_reader: a file's checkpoint, a folder's CheckpointDir) and read only what the check
// did not: the data.)
// kSniffBlockHoldsData: the sniff's first read is a whole tar block (512 bytes: the tar
// rule needs all of it), which for a header shorter than that reaches into the data; the
// data scan of inspect --stats then reads those data bytes again (under 512 bytes, once).
constexpr const char* kSniffBlockHoldsData = "the sniff's first block reaches into the data";
// kPickleStreamMapped: a legacy stream (as a bare pickle or a tar) is judged from one
// mapping of the whole file (the pickle is parsed in place, and must be read to its end
// before the storages after it can be placed; read into memory instead, a checkpoint of
// gigabytes would be held whole), so the sniff's first block, read by pread before the
// format was known, is mapped again.
constexpr const char* kPickleStreamMapped = "the sniff's block, then the stream's mapping";
// kGgufMapped: a local GGUF file is validated in place from one mapping (GgufFile::Open),
// which parses from byte 0: the sniff's first block is read again. Read through the
// sniff's source instead, the header is copied, and checking a 4.8 MB header took twice the
// time; a folder's GGUF files are read through their sniff's source (CheckSource).
constexpr const char* kGgufMapped = "the sniff's block, then GGUF's mapping";
// kNpzMapped: a local npz is validated from one mapping (ReadNpzFile), its stored
// members' CRC-32s computed in place: the sniff's first block, tail and directory are
// read again. Read through the sniff's source instead, every member is copied by pread,
// and checking a 200 MB npz took 40% longer; a folder's npz files are read through their
// sniff's source (CheckSource).
constexpr const char* kNpzMapped = "the sniff's reads, then npz's mapping";
// kScanMapsZipThenStorages: scan judges a PyTorch ZIP from one mapping (its sniff, records
// and data.pkl) and reads each storage by pread to check its CRC-32 (a file truncated
// meanwhile is then an I/O error, not a SIGBUS). The storages' pages are not touched
// through the mapping, but the guard counts a mapping for every byte it maps.
constexpr const char* kScanMapsZipThenStorages = "scan maps the ZIP, then preads storages";
// kConvertSniffsThenOpens: the same for a folder, whose shards' heads the converter reads
// again after the sniff's mapping (seen since a mapping counts for every byte it maps).
constexpr const char* kConvertSniffsThenOpens =
    "convert sniffs, then the converter opens the path again";
// kSniffMapsZip: convert sniffs a ZIP (PyTorch's, an npz) through a mapping, as its reader
// maps it: read by ranges, the sniff's copy of the tail (64 KiB) would stay on the heap
// under the conversion's peak. The converter, which opens the path itself, maps it again.
// (Every other file is sniffed by ranges: a safetensors file's checkpoint starts from the
// sniff's bytes; a legacy .pt, a .npy and a GGUF are mapped once by their converter.)
constexpr const char* kSniffMapsZip = "convert's sniff maps a ZIP, the reader maps it again";
// kConvertMapsTheData: convert reads a .npy's head by pread (the sniff), then its
// converter maps the whole file to stream the data. The header's pages are not touched
// through that mapping, but the guard counts a mapping for every byte it maps (an .npy this
// small is its header and data in one page, read twice). (A safetensors file is read once:
// its checkpoint reads on from the file the sniff opened, by pread, never mapped.)
constexpr const char* kConvertMapsTheData = "convert preads the head, then maps the data";

const SecondRead kSecondReads[] = {
    {"check", "state.legacy.pt", kPickleStreamMapped},
    {"check --json", "state.legacy.pt", kPickleStreamMapped},
    {"inspect", "state.legacy.pt", kPickleStreamMapped},
    {"inspect --json", "state.legacy.pt", kPickleStreamMapped},
    {"inspect --stats", "state.legacy.pt", kPickleStreamMapped},
    {"inspect --stats", "small.safetensors", kSniffBlockHoldsData},
    {"lint", "state.legacy.pt", kPickleStreamMapped},
    {"check", "model.gguf", kGgufMapped},
    {"check --json", "model.gguf", kGgufMapped},
    {"inspect", "model.gguf", kGgufMapped},
    {"inspect --json", "model.gguf", kGgufMapped},
    {"inspect --stats", "model.gguf", kGgufMapped},
    {"lint", "model.gguf", kGgufMapped},
    {"check", "arrays.npz", kNpzMapped},
    {"check --json", "arrays.npz", kNpzMapped},
    {"inspect", "arrays.npz", kNpzMapped},
    {"inspect --json", "arrays.npz", kNpzMapped},
    {"inspect --stats", "arrays.npz", kNpzMapped},
    {"lint", "arrays.npz", kNpzMapped},
    {"scan", "state.zip.pt", kScanMapsZipThenStorages},
    {"convert", "model", kConvertSniffsThenOpens},
    {"convert --dtype F16", "model", kConvertSniffsThenOpens},
    {"convert", "state.legacy.pt", kPickleStreamMapped},
    {"convert", "array.npy", kConvertMapsTheData},
    {"convert --dtype F16", "state.legacy.pt", kPickleStreamMapped},
    {"convert --dtype F16", "array.npy", kConvertMapsTheData},
    {"convert", "state.zip.pt", kSniffMapsZip},
    {"convert", "arrays.npz", kSniffMapsZip},
    {"convert --dtype F16", "state.zip.pt", kSniffMapsZip},
    {"convert --dtype F16", "arrays.npz", kSniffMapsZip},
    // The sniff's block reaches into the data of these short files (the GGUF's begins at 448),
    // which the conversion then reads.
    {"convert", "model.gguf", kSniffBlockHoldsData},
    {"convert --dtype F16", "model.gguf", kSniffBlockHoldsData},
    {"convert --dtype F16", "small.safetensors", kSniffBlockHoldsData},
};

const SecondRead* Listed(const std::string& command, const std::string& input) {
  for (const SecondRead& entry : kSecondReads) {
    if (command == entry.command && input == entry.input) return &entry;
  }
  return nullptr;
}

// Every command on every input: the verdict does not matter (scan of an npy is an error),
// only that no byte was read twice getting it.
TEST_F(ReadOnceTest, EveryCommandReadsEachByteOnce) {
  const std::vector<std::string> commands = {
      "check",        "check --json", "inspect",  "inspect --json", "inspect --stats",
      "scan",         "lint",         "convert",  "convert --dtype F16"};
  for (const std::string& command : commands) {
    for (const char* input : kInputs) {
      const std::string out = command.starts_with("convert") ? " " + In("out.safetensors") : "";
      const std::string arguments = command + " " + In(input) + out;
      std::string twice = TwiceRead(RunRecorded(dir_, arguments));
      for (size_t at; (at = twice.find(dir_.path() + "/")) != std::string::npos;) {
        twice.erase(at, dir_.path().size() + 1);
      }
      const SecondRead* listed = Listed(command, input);
      if (listed == nullptr) {
        EXPECT_EQ(twice, "") << "{\"" << command << "\", \"" << input << "\", \"\"},";
      } else {
        EXPECT_NE(twice, "") << command << " " << input << " reads once now: unlist it";
      }
      std::filesystem::remove_all(dir_.File("out.safetensors"));
    }
  }
}

// A header-only check reads the header and the sniff's first block, no more: for the
// large header, each byte of it once.
TEST_F(ReadOnceTest, CheckOfSafetensorsReadsOnlyTheHeader) {
  for (const char* name : {"large.safetensors", "small.safetensors"}) {
    const std::string path = dir_.File(name);
    const std::string bytes = ReadFileBytes(path);
    uint64_t header_len = 0;
    for (int i = 7; i >= 0; --i) header_len = header_len << 8 | static_cast<uint8_t>(bytes[i]);
    FileReads reads = RunRecorded(dir_, "check " + ShellQuoted(path));
    ASSERT_EQ(reads.count(path), 1u) << name;
    EXPECT_LE(PreadBytes(reads[path]), 8 + header_len + kSniffBlockLen) << name;
    EXPECT_GE(PreadBytes(reads[path]), 8 + header_len) << name;
    EXPECT_EQ(TwiceRead(reads), "") << name;
  }
}

// A check of a .npy reads its header and no data: at most the sniff's first block, which
// here holds the whole header (a 128-byte header, then 1 MiB of data), and no mapping.
TEST_F(ReadOnceTest, CheckOfNpyReadsOnlyTheHeader) {
  std::string npy = NpyBytes();
  const std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (262144,), }";
  npy = npy.substr(0, 10) + header + std::string(117 - header.size(), ' ') + "\n";
  npy[8] = static_cast<char>(118);
  npy += std::string(size_t{1} << 20, '\0');
  Write("big.npy", npy);
  const std::string path = dir_.File("big.npy");
  FileReads reads = RunRecorded(dir_, "check " + ShellQuoted(path));
  ASSERT_EQ(reads.count(path), 1u);
  for (const Read& read : reads[path]) EXPECT_EQ(read.how, "pread") << "mapped by check";
  EXPECT_LE(PreadBytes(reads[path]), kSniffBlockLen);
  EXPECT_EQ(TwiceRead(reads), "");
}

// The guard itself: a log with a range read twice (the sniff's header, then the reader's;
// the sniff's block, then a mapping of the file; a mapping, then a pread of its bytes) is
// caught, and one with disjoint reads (or reads of different files) is not.
TEST(ReadOnceRuleTest, OverlapAndSecondMappingAreCaught) {
  EXPECT_EQ(TwiceRead({{"f", {{"pread", 0, 512}, {"pread", 512, 100}}}}), "");
  EXPECT_NE(TwiceRead({{"f", {{"pread", 0, 512}, {"pread", 8, 600}}}}), "");
  EXPECT_NE(TwiceRead({{"f", {{"map", 0, 10}, {"map", 0, 10}}}}), "");
  EXPECT_EQ(TwiceRead({{"f", {{"map", 0, 10}}}, {"g", {{"map", 0, 10}}}}), "");
}

TEST(ReadOnceRuleTest, PreadAndMappingOfTheSameBytesAreCaught) {
  EXPECT_NE(TwiceRead({{"f", {{"pread", 0, 512}, {"map", 0, 4096}}}}), "");
  EXPECT_NE(TwiceRead({{"f", {{"map", 0, 4096}, {"pread", 4000, 8}}}}), "");
  EXPECT_EQ(TwiceRead({{"f", {{"pread", 0, 512}}}, {"g", {{"map", 0, 4096}}}}), "");
  EXPECT_EQ(TwiceRead({{"f", {{"map", 0, 4096}, {"pread", 4096, 8}}}}), "");
}

}  // namespace
}  // namespace stguard
