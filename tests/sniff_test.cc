// SPDX-License-Identifier: Apache-2.0
// SniffFormat: every format recognised from its bytes, whatever the name; pickles of
// every protocol found (protocols 0 and 1 have no magic), and text and images that a
// model folder holds never taken for one.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "stguard/sniff.h"
#include "support/test_files.h"

namespace stguard {
namespace {

using testing::ReadFileBytes;

const std::string kCorpus = std::string(STGUARD_CORPUS_DIR) + "/";

Format Sniff(std::string_view bytes) {
  return SniffFormat(std::as_bytes(std::span(bytes.data(), bytes.size())));
}

void PutU16(std::string* out, uint16_t v) {
  out->push_back(static_cast<char>(v & 0xff));
  out->push_back(static_cast<char>(v >> 8));
}
void PutU32(std::string* out, uint32_t v) {
  PutU16(out, static_cast<uint16_t>(v & 0xffff));
  PutU16(out, static_cast<uint16_t>(v >> 16));
}

// StoredZip builds a ZIP archive of empty stored records with these names.
std::string StoredZip(std::initializer_list<std::string_view> names) {
  std::string zip;
  std::string directory;
  for (std::string_view name : names) {
    const uint32_t offset = static_cast<uint32_t>(zip.size());
    zip += "PK\x03\x04";
    PutU16(&zip, 20); PutU16(&zip, 0); PutU16(&zip, 0); PutU16(&zip, 0); PutU16(&zip, 0);
    PutU32(&zip, 0); PutU32(&zip, 0); PutU32(&zip, 0);
    PutU16(&zip, static_cast<uint16_t>(name.size())); PutU16(&zip, 0);
    zip += name;
    directory += "PK\x01\x02";
    PutU16(&directory, 20); PutU16(&directory, 20);
    for (int k = 0; k < 4; ++k) PutU16(&directory, 0);
    PutU32(&directory, 0); PutU32(&directory, 0); PutU32(&directory, 0);
    PutU16(&directory, static_cast<uint16_t>(name.size()));
    for (int k = 0; k < 4; ++k) PutU16(&directory, 0);
    PutU32(&directory, 0); PutU32(&directory, offset);
    directory += name;
  }
  const uint32_t directory_at = static_cast<uint32_t>(zip.size());
  zip += directory;
  zip += "PK\x05\x06";
  PutU16(&zip, 0); PutU16(&zip, 0);
  PutU16(&zip, static_cast<uint16_t>(names.size())); PutU16(&zip, static_cast<uint16_t>(names.size()));
  PutU32(&zip, static_cast<uint32_t>(directory.size())); PutU32(&zip, directory_at);
  PutU16(&zip, 0);
  return zip;
}

// TarHeader builds a 512-byte tar header for `name` with a correct checksum.
std::string TarHeader(std::string_view name) {
  std::string block(512, '\0');
  std::memcpy(block.data(), name.data(), name.size());
  std::memcpy(block.data() + 100, "0000644", 7);
  std::memcpy(block.data() + 124, "00000000000", 11);
  std::memcpy(block.data() + 148, "        ", 8);
  unsigned sum = 0;
  for (unsigned char c : block) sum += c;
  char field[8];
  std::snprintf(field, sizeof(field), "%06o", sum);
  std::memcpy(block.data() + 148, field, 7);
  return block;
}

TEST(SniffTest, CheckpointFormats) {
  EXPECT_EQ(Sniff(ReadFileBytes(kCorpus + "sample.safetensors")), Format::kSafetensors);
  EXPECT_EQ(Sniff(ReadFileBytes(kCorpus + "torch/valid/dtypes.zip.pt")), Format::kPytorchZip);
  EXPECT_EQ(Sniff(ReadFileBytes(kCorpus + "torch/valid/dtypes.legacy.pt")),
            Format::kPytorchLegacy);
  EXPECT_EQ(Sniff(ReadFileBytes(kCorpus + "torch/refuse/PickleGlobalRefused__raw_os_system.pt")),
            Format::kPickle);
  // A deflated data.pkl is still a pytorch ZIP: the record's name decides, not its method.
  EXPECT_EQ(Sniff(ReadFileBytes(kCorpus + "torch/refuse/ZipUnsupported__deflated.pt")),
            Format::kPytorchZip);
}

// The legacy stream's magic pickle in every form torch.save writes it (pickle_protocol
// 0-5, bytes as torch 1.13 wrote them), then the protocol-version pickle: a legacy stream to
// the sniffer, as to torch.load, whatever the protocol.
TEST(SniffTest, LegacyMagicAtEveryProtocol) {
  using namespace std::string_literals;
  const std::string long1 = "\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19\x2e"s;
  const std::string frame = "\x95\x0d\x00\x00\x00\x00\x00\x00\x00"s;
  const std::string text = "L119547037146038801333356L\n."s;
  EXPECT_EQ(Sniff(text + "I1001\n."), Format::kPytorchLegacy);           // protocol 0
  EXPECT_EQ(Sniff(text + "M\xe9\x03."s), Format::kPytorchLegacy);        // protocol 1
  for (char protocol : {'\x02', '\x03'}) {
    EXPECT_EQ(Sniff("\x80"s + protocol + long1 + "\x80"s + protocol + "M\xe9\x03."s),
              Format::kPytorchLegacy) << int{protocol};
  }
  for (char protocol : {'\x04', '\x05'}) {
    EXPECT_EQ(Sniff("\x80"s + protocol + frame + long1 + "\x80"s + protocol + "M\xe9\x03."s),
              Format::kPytorchLegacy) << int{protocol};
  }
  // Reject: a frame that does not hold exactly the magic, another number, a protocol no
  // pickler writes. Each is still a pickle (it stops), so a bare pickle, not a stream.
  std::string short_frame = frame;
  short_frame[1] = '\x0c';
  EXPECT_EQ(Sniff("\x80\x04"s + short_frame + long1), Format::kPickle);
  std::string other = long1;
  other[2] = '\x6d';
  EXPECT_EQ(Sniff("\x80\x02"s + other), Format::kPickle);
  EXPECT_EQ(Sniff("L119547037146038801333357L\n."s), Format::kPickle);
  EXPECT_NE(Sniff("\x80\x06"s + long1), Format::kPytorchLegacy);
}

TEST(SniffTest, ZipHoldingAPickleRecord) {
  EXPECT_EQ(Sniff(StoredZip({"archive/data.pkl", "archive/data/0"})), Format::kPytorchZip);
  // No member at all: what np.savez(f) writes, which np.load opens as an npz.
  EXPECT_EQ(Sniff(StoredZip({})), Format::kNpz);
  // A ZIP whose directory cannot be read: a loader may read more than this walk does.
  EXPECT_EQ(Sniff(std::string("PK\x03\x04") + std::string(100, 'x')), Format::kPytorchZip);
}

TEST(SniffTest, NpzIsAZipOfNpyMembersOnly) {
  EXPECT_EQ(Sniff(StoredZip({"arr_0.npy", "arr_1.npy"})), Format::kNpz);
  EXPECT_EQ(Sniff(StoredZip({"weights.npy"})), Format::kNpz);
  // Neither: a member that is no .npy makes it some other archive.
  EXPECT_EQ(Sniff(StoredZip({"arr_0.npy", "notes.txt"})), Format::kZip);
  EXPECT_EQ(Sniff(StoredZip({"model.keras"})), Format::kZip);
  // Both: a .pkl record beside .npy members is what torch.load unpickles.
  EXPECT_EQ(Sniff(StoredZip({"arr_0.npy", "archive/data.pkl"})), Format::kPytorchZip);
}

TEST(SniffTest, GgufNpyAndJsonByTheirFirstBytes) {
  EXPECT_EQ(Sniff(std::string("GGUF\x03\x00\x00\x00", 8) + std::string(16, '\0')), Format::kGguf);
  EXPECT_EQ(Sniff("GGU"), Format::kUnknown);
  EXPECT_EQ(Sniff(std::string("\x93NUMPY\x01\x00\x76\x00{'descr': '<f4'}", 26)), Format::kNpy);
  EXPECT_EQ(Sniff("\x93NUMP"), Format::kUnknown);
  EXPECT_EQ(Sniff("{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": 4096}\n"),
            Format::kJson);
  EXPECT_EQ(Sniff(" \n[1, 2]"), Format::kJson);
  EXPECT_EQ(Sniff("\xEF\xBB\xBF{}"), Format::kJson);
  EXPECT_EQ(Sniff("x{}"), Format::kUnknown);
  // A vocabulary whose first token is bracketed is no JSON array.
  EXPECT_EQ(Sniff("[PAD]\n[UNK]\n"), Format::kUnknown);
  EXPECT_EQ(Sniff("{PAD}"), Format::kUnknown);
  EXPECT_EQ(Sniff("[{\"a\": 1}]"), Format::kJson);
  // A GGUF magic that torch.load would read as a pickle calling out is a pickle:
  // 'G' BINFLOAT takes 8 bytes, then a protocol 0 GLOBAL and REDUCE.
  EXPECT_EQ(Sniff(std::string("GGUF\x03\x00\x00\x00\x00", 9) + "cos\nsystem\n(S'x'\ntR."),
            Format::kPickle);
}

TEST(SniffTest, TarByItsChecksum) {
  const std::string tar = TarHeader("storages") + std::string(1024, '\0');
  EXPECT_EQ(Sniff(tar), Format::kTar);
  std::string broken = tar;
  broken[0] = 'X';  // the checksum no longer holds
  EXPECT_NE(Sniff(broken), Format::kTar);
  EXPECT_EQ(Sniff(std::string(1024, '\0')), Format::kUnknown);  // zeros: no member
}

TEST(SniffTest, PicklesOfEveryProtocol) {
  // Protocol 0: os.system through GLOBAL; a plain dict; None.
  EXPECT_EQ(Sniff("cos\nsystem\n(S'touch marker'\ntR."), Format::kPickle);
  EXPECT_EQ(Sniff("(dp0\nS'a'\np1\nI1\ns."), Format::kPickle);
  EXPECT_EQ(Sniff("N."), Format::kPickle);
  // Code runs as the opcodes are read: junk after the call does not matter.
  EXPECT_EQ(Sniff("cos\nsystem\n(S'x'\ntR\xff\xff garbage"), Format::kPickle);
  // INST imports and calls at once.
  EXPECT_EQ(Sniff("(S'x'\nios\nsystem\n."), Format::kPickle);
  // Protocol 1: EMPTY_DICT, BINPUT, MARK, SHORT_BINSTRING, BININT1, SETITEMS, STOP.
  EXPECT_EQ(Sniff(std::string("}q\x00(U\x01" "aK\x01u.", 11)), Format::kPickle);
  // Protocol 2+: PROTO.
  EXPECT_EQ(Sniff(std::string("\x80\x02}q\x00.", 6)), Format::kPickle);
  // Calls are reached only with their operands on the stack (the table's stack_before):
  // OBJ takes a mark and a class above it, REDUCE two values, NEWOBJ_EX three.
  EXPECT_EQ(Sniff("(K\x01o"), Format::kPickle);
  EXPECT_EQ(Sniff("(o"), Format::kUnknown);
  EXPECT_EQ(Sniff("NNR"), Format::kPickle);
  EXPECT_EQ(Sniff("NR"), Format::kUnknown);
  EXPECT_EQ(Sniff("NNN\x92"), Format::kPickle);
  EXPECT_EQ(Sniff("NN\x92"), Format::kUnknown);
  // Many marks: not text, not an image; treated as a pickle.
  EXPECT_EQ(Sniff(std::string(70000, '(')), Format::kPickle);
}

TEST(SniffTest, TextAndImagesAreNoPickle) {
  const char* const texts[] = {
      "#version: 0.2\n\xc4\xa0 t\n\xc4\xa0 a\nh e\n",
      "[PAD]\n[unused0]\n[UNK]\n[CLS]\n!\n\"\n#\nthe\n##s\n",
      "---\nlicense: apache-2.0\n---\n\n# Model card\n\nSee (a lot of) text.\n",
      "*.bin filter=lfs diff=lfs merge=lfs -text\n",
      "Apache License\nVersion 2.0, January 2004\n",
      "certifi==2024.2.2\ncharset-normalizer==3.3.2\n",
      "cool project\nsecond line\n",  // GLOBAL with no importable name
      "In the beginning\n",             // INT with no number
      "Plain text\nThen more\n",        // PERSID, then a BINSTRING past the end
      "(see above)\n",                  // MARK, then 's' with nothing to set
      "",
  };
  for (const char* text : texts) EXPECT_EQ(Sniff(text), Format::kUnknown) << text;
  EXPECT_EQ(Sniff(std::string("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", 16)), Format::kUnknown);
  EXPECT_EQ(Sniff(std::string("\xff\xd8\xff\xe0\x00\x10JFIF\x00", 11)), Format::kUnknown);
  EXPECT_EQ(Sniff(std::string("GIF89a\x02\x00\x02\x00\x80\x00\x00", 13)), Format::kUnknown);
  EXPECT_EQ(Sniff(std::string("\x0a\x0b\x0a\x05<unk>\x15\x00\x00\x00\x00", 15)),
            Format::kUnknown);  // a sentencepiece protobuf
}

TEST(SniffTest, WalkIsBoundedAndFailsClosed) {
  // UNICODE whose line has not ended after the walk's window: taken for a pickle, since
  // the bytes beyond could go on as one. The same within a whole (short) file: no STOP,
  // nothing called, not a pickle.
  EXPECT_EQ(Sniff("V" + std::string(2 << 20, 'x')), Format::kPickle);
  EXPECT_EQ(Sniff("V" + std::string(1000, 'x')), Format::kUnknown);
}

TEST(SniffTest, SafetensorsWhoseLengthSpellsAPickle) {
  // Header length 11,854 is "N." little-endian: a pickle that stops, calling nothing.
  std::string file = std::string("N.\0\0\0\0\0\0", 8) + "{" + std::string(11853, ' ');
  EXPECT_EQ(Sniff(file), Format::kSafetensors);
}

TEST(SniffTest, FormatNamesAndPickleBearing) {
  EXPECT_EQ(FormatName(Format::kPytorchZip), "pytorch-zip");
  EXPECT_EQ(FormatName(Format::kPytorchLegacy), "pytorch-legacy");
  EXPECT_EQ(FormatName(Format::kUnknown), "unknown");
  for (Format format : {Format::kPytorchZip, Format::kPytorchLegacy, Format::kPickle,
                        Format::kTar}) {
    EXPECT_TRUE(IsPickleBearing(format)) << FormatName(format);
  }
  EXPECT_EQ(FormatName(Format::kGguf), "gguf");
  EXPECT_EQ(FormatName(Format::kNpy), "npy");
  EXPECT_EQ(FormatName(Format::kNpz), "npz");
  EXPECT_EQ(FormatName(Format::kJson), "json");
  for (Format format : {Format::kSafetensors, Format::kZip, Format::kUnknown, Format::kGguf,
                        Format::kNpy, Format::kNpz, Format::kJson}) {
    EXPECT_FALSE(IsPickleBearing(format)) << FormatName(format);
  }
}

}  // namespace
}  // namespace stguard
