// SPDX-License-Identifier: Apache-2.0
// stguard/formats.h: the facts of stguard/formats.def, and what a path names.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "stguard/formats.h"
#include "support/temp_dir.h"
#include "support/test_files.h"

namespace stguard {
namespace {

using testing::TempDir;
using testing::WriteFileBytes;

// WordsInList reads the "word" column of stguard/formats.def's rows as text, in file order.
std::vector<std::string> WordsInList() {
  std::ifstream list(STGUARD_SOURCE_DIR "/include/stguard/formats.def");
  EXPECT_TRUE(list.good());
  const std::regex row(R"re(^STGUARD_FORMAT\(\w+, \w+, "([^"]+)",)re");
  std::vector<std::string> words;
  std::smatch match;
  for (std::string line; std::getline(list, line);) {
    if (std::regex_search(line, match, row)) words.push_back(match[1]);
  }
  return words;
}

TEST(FormatsTest, EachFormatHasTheWordOfItsRowInTheList) {
  const std::vector<std::string> words = WordsInList();
  ASSERT_EQ(words.size(), static_cast<size_t>(Format::kNumFormats));
  for (size_t i = 0; i < words.size(); ++i) {
    EXPECT_EQ(FormatName(static_cast<Format>(i)), words[i]) << "format " << i;
  }
  EXPECT_EQ(FormatName(Format::kPytorchZip), "pytorch-zip");
  // A value outside the enum reads as unknown's row, never past the table.
  EXPECT_EQ(FormatName(static_cast<Format>(200)), "unknown");
  EXPECT_FALSE(IsPickleBearing(static_cast<Format>(200)));
}

TEST(FormatsTest, PickleBearingAreTheFormatsLoadersUnpickle) {
  for (size_t i = 0; i < static_cast<size_t>(Format::kNumFormats); ++i) {
    const auto format = static_cast<Format>(i);
    const bool unpickled = format == Format::kPytorchZip || format == Format::kPytorchLegacy ||
                           format == Format::kPickle || format == Format::kTar;
    EXPECT_EQ(IsPickleBearing(format), unpickled) << FormatName(format);
  }
}

TEST(FormatsTest, SetsAreNamedByKindOnceThenFolder) {
  EXPECT_EQ(FormatSetNames(FormatsOfKind(Format::kPickle)), "PyTorch");
  EXPECT_EQ(FormatSetNames(kFolderInput | FormatBit(Format::kSafetensors)), "safetensors, folder");
  EXPECT_EQ(FormatSetNames(FormatsWith(&FormatFacts::convertible)),
            "safetensors, PyTorch, GGUF, .npy, .npz");
  EXPECT_EQ(FormatSetNames(0), "");
  EXPECT_EQ(FormatSetNames(FormatBit(Format::kUnknown)), "");  // of no kind
  // The torch reader's kind holds the ZIP it reads to say why it is no checkpoint.
  EXPECT_NE(FormatsOfKind(Format::kPytorchZip) & FormatBit(Format::kZip), 0u);
  EXPECT_EQ(FormatsOfKind(Format::kPytorchZip) & FormatBit(Format::kNpz), 0u);
}

TEST(FormatsTest, FormatOfPathTellsFoldersAndIndexesFromFiles) {
  TempDir dir;
  Result<PathFormat> found = FormatOfPath(dir.path());
  ASSERT_TRUE(found.ok());
  EXPECT_TRUE(found->is_folder);
  EXPECT_EQ(found->set(), kFolderInput);

  const std::string index = dir.File("model.safetensors.index.json");
  ASSERT_TRUE(WriteFileBytes(index, R"({"weight_map": {}})"));
  found = FormatOfPath(index);
  ASSERT_TRUE(found.ok());
  EXPECT_TRUE(found->is_folder);
  EXPECT_EQ(found->format, Format::kJson);

  const std::string config = dir.File("config.json");  // JSON, but no index
  ASSERT_TRUE(WriteFileBytes(config, R"({"model_type": "llama"})"));
  found = FormatOfPath(config);
  ASSERT_TRUE(found.ok());
  EXPECT_FALSE(found->is_folder);
  EXPECT_EQ(found->set(), 0u);  // read by no checkpoint command: no option is refused

  const std::string weights = dir.File("model.safetensors");
  ASSERT_TRUE(WriteFileBytes(weights, testing::FileWithHeader("{}")));
  found = FormatOfPath(weights);
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(found->set(), FormatBit(Format::kSafetensors));
  // What was already sniffed is taken as it is: the file is not read again.
  found = FormatOfPath(weights, Format::kGguf);
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(found->format, Format::kGguf);

  EXPECT_EQ(FormatOfPath(dir.File("missing")).error().code, ErrorCode::kIoError);
}

}  // namespace
}  // namespace stguard
