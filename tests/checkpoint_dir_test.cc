// SPDX-License-Identifier: Apache-2.0
// Checkpoint folders and sharded indexes: folders of 2-4 shards written by the canonical
// writer, one failing case per rule (shard names, symbolic links, missing shards, each
// cross-check), and the model-folder warnings
// (`stguard check DIR`: tests/cli/check_cli_test.cc).
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "stguard/checkpoint_dir.h"
#include "stguard/json_escape.h"
#include "support/sharded_folder.h"
#include "support/temp_dir.h"
#include "support/tensor_set.h"
#include "support/test_files.h"

namespace stguard {
namespace {

using testing::IndexJson;
using testing::ShardedFolder;
using testing::ShardName;
using testing::ShardTensor;
using testing::TempDir;
using testing::TensorSet;
using testing::TestTensor;
using testing::WriteFileBytes;
using testing::WriteShard;
using testing::WriteShardedFolder;

Error OpenError(const std::string& path, const DirOptions& options = {}) {
  Result<CheckpointDir> dir = CheckpointDir::Open(path, options);
  return dir.ok() ? Error{} : dir.error();
}

uint64_t At(const std::string& text, const std::string& needle, size_t nth = 0) {
  size_t index = text.find(needle);
  for (size_t i = 0; i < nth && index != std::string::npos; ++i) index = text.find(needle, index + 1);
  EXPECT_NE(index, std::string::npos) << needle;
  return index;
}

void ExpectError(const Error& error, ErrorCode code, uint64_t offset, const std::string& tensor,
                 const std::string& context_part) {
  EXPECT_EQ(ErrorCodeName(error.code), ErrorCodeName(code)) << error.ToString();
  EXPECT_EQ(error.offset, offset) << error.ToString();
  EXPECT_EQ(error.tensor, tensor) << error.ToString();
  EXPECT_NE(error.context.find(context_part), std::string::npos)
      << error.ToString() << "\n  should mention: " << context_part;
}

// ---- Valid folders ----

class ShardCountTest : public ::testing::TestWithParam<int> {};

TEST_P(ShardCountTest, OpensAsOneLogicalCheckpointAndFindsEveryTensor) {
  const int num_shards = GetParam();
  TempDir dir;
  const ShardedFolder folder = WriteShardedFolder(dir, num_shards);
  for (const std::string& path : {dir.path(), dir.File("model.safetensors.index.json")}) {
    Result<CheckpointDir> checkpoint = CheckpointDir::Open(path);
    ASSERT_TRUE(checkpoint.ok()) << checkpoint.error().ToString();
    EXPECT_TRUE(checkpoint->has_index());
    EXPECT_EQ(checkpoint->folder(), dir.path());
    ASSERT_EQ(checkpoint->shards().size(), static_cast<size_t>(num_shards));
    for (int s = 0; s < num_shards; ++s) {
      EXPECT_EQ(checkpoint->shards()[s].name, ShardName(s + 1, num_shards));
    }
    EXPECT_EQ(checkpoint->num_tensors(), folder.entries.size());
    EXPECT_EQ(checkpoint->total_bytes(), folder.total_bytes);
    EXPECT_EQ(checkpoint->index_total_size(), folder.total_bytes);
    EXPECT_TRUE(checkpoint->warnings().empty());
    for (const auto& [name, shard] : folder.entries) {
      size_t shard_index = 99;
      const TensorView* tensor = checkpoint->Find(name, &shard_index);
      ASSERT_NE(tensor, nullptr) << name;
      EXPECT_EQ(tensor->name, name);
      ASSERT_LT(shard_index, checkpoint->shards().size());
      EXPECT_EQ(checkpoint->shards()[shard_index].name, shard);
      EXPECT_EQ(checkpoint->shards()[shard_index].checkpoint.Find(name), tensor);
      EXPECT_EQ(static_cast<char>(tensor->data[0]), static_cast<char>(name.size() * 31));
    }
    EXPECT_EQ(checkpoint->Find("nope"), nullptr);
  }
}

INSTANTIATE_TEST_SUITE_P(TwoToFour, ShardCountTest, ::testing::Values(2, 3, 4),
                         [](const ::testing::TestParamInfo<int>& shards) {
                           return std::to_string(shards.param) + "Shards";
                         });

TEST(CheckpointDirTest, ViewsSurviveMovingTheCheckpoint) {
  TempDir dir;
  WriteShardedFolder(dir, 3);
  Result<CheckpointDir> opened = CheckpointDir::Open(dir.path());
  ASSERT_TRUE(opened.ok());
  const TensorView* before = opened->Find("model.layers.4.weight");
  CheckpointDir moved = std::move(opened).value();
  EXPECT_EQ(moved.Find("model.layers.4.weight"), before);
}

TEST(CheckpointDirTest, TotalSizeMismatchIsOnlyAWarning) {
  TempDir dir;
  const ShardedFolder folder = WriteShardedFolder(dir, 2);
  ASSERT_TRUE(WriteFileBytes(dir.File("model.safetensors.index.json"),
                             IndexJson(folder.entries, folder.total_bytes + 8)));
  Result<CheckpointDir> checkpoint = CheckpointDir::Open(dir.path());
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.error().ToString();
  ASSERT_EQ(checkpoint->warnings().size(), 1u);
  EXPECT_EQ(checkpoint->warnings()[0].kind, WarningKind::kTotalSizeMismatch);
  EXPECT_EQ(checkpoint->warnings()[0].file, "model.safetensors.index.json");
  EXPECT_NE(checkpoint->warnings()[0].message.find(std::to_string(folder.total_bytes)),
            std::string::npos);
  // No total_size at all: nothing to compare, no warning.
  ASSERT_TRUE(WriteFileBytes(dir.File("model.safetensors.index.json"), IndexJson(folder.entries)));
  checkpoint = CheckpointDir::Open(dir.path());
  ASSERT_TRUE(checkpoint.ok());
  EXPECT_TRUE(checkpoint->warnings().empty());
  EXPECT_FALSE(checkpoint->index_total_size().has_value());
}

TEST(CheckpointDirTest, SafetensorsFileThatTheIndexDoesNotNameIsAWarning) {
  TempDir dir;
  WriteShardedFolder(dir, 2);
  WriteShard(dir, "model.safetensors", {ShardTensor("old")});  // a stale single-file copy
  Result<CheckpointDir> checkpoint = CheckpointDir::Open(dir.path());
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.error().ToString();
  EXPECT_EQ(checkpoint->shards().size(), 2u);  // the index wins
  ASSERT_EQ(checkpoint->warnings().size(), 1u);
  EXPECT_EQ(checkpoint->warnings()[0].kind, WarningKind::kUnlistedSafetensors);
  EXPECT_EQ(checkpoint->warnings()[0].file, "model.safetensors");
}

TEST(CheckpointDirTest, FolderWithoutIndexUsesModelSafetensorsThenEveryFile) {
  TempDir dir;
  WriteShard(dir, "model.safetensors", {ShardTensor("a"), ShardTensor("b")});
  WriteShard(dir, "adapter.safetensors", {ShardTensor("a")});
  Result<CheckpointDir> checkpoint = CheckpointDir::Open(dir.path());
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.error().ToString();
  EXPECT_FALSE(checkpoint->has_index());
  ASSERT_EQ(checkpoint->shards().size(), 1u);
  EXPECT_EQ(checkpoint->shards()[0].name, "model.safetensors");
  EXPECT_EQ(checkpoint->num_tensors(), 2u);

  TempDir loose;
  WriteShard(loose, "part-b.safetensors", {ShardTensor("b")});
  WriteShard(loose, "part-a.safetensors", {ShardTensor("a")});
  checkpoint = CheckpointDir::Open(loose.path());
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.error().ToString();
  ASSERT_EQ(checkpoint->shards().size(), 2u);
  EXPECT_EQ(checkpoint->shards()[0].name, "part-a.safetensors");
  size_t shard = 9;
  ASSERT_NE(checkpoint->Find("b", &shard), nullptr);
  EXPECT_EQ(shard, 1u);
  // Without an index, one tensor in two files is still an error.
  WriteShard(loose, "part-c.safetensors", {ShardTensor("a")});
  ExpectError(OpenError(loose.path()), ErrorCode::kTensorInTwoShards, 9, "a", "part-c.safetensors");
}

TEST(CheckpointDirTest, SingleFileOpensAsOneShard) {
  TempDir dir;
  WriteShard(dir, "weights.safetensors", {ShardTensor("x"), ShardTensor("y", Dtype::kU8, 5)});
  Result<CheckpointDir> checkpoint = CheckpointDir::Open(dir.File("weights.safetensors"));
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.error().ToString();
  EXPECT_FALSE(checkpoint->has_index());
  ASSERT_EQ(checkpoint->shards().size(), 1u);
  EXPECT_EQ(checkpoint->shards()[0].path, dir.File("weights.safetensors"));
  EXPECT_EQ(checkpoint->total_bytes(), 13u);
  EXPECT_NE(checkpoint->Find("y"), nullptr);
}

TEST(CheckpointDirTest, FolderChoiceErrors) {
  TempDir empty;
  ExpectError(OpenError(empty.path()), ErrorCode::kNoSafetensorsInFolder, 0, "", empty.path());
  TempDir two;
  ASSERT_TRUE(WriteFileBytes(two.File("a.safetensors.index.json"), IndexJson({})));
  ASSERT_TRUE(WriteFileBytes(two.File("b.safetensors.index.json"), IndexJson({})));
  ExpectError(OpenError(two.path()), ErrorCode::kInvalidIndex, 0, "", "b.safetensors.index.json");
  // One non-default index is used.
  TempDir one;
  WriteShard(one, "diffusion_pytorch_model.safetensors", {ShardTensor("a")});
  ASSERT_TRUE(WriteFileBytes(one.File("diffusion_pytorch_model.safetensors.index.json"),
                             IndexJson({{"a", "diffusion_pytorch_model.safetensors"}})));
  Result<CheckpointDir> checkpoint = CheckpointDir::Open(one.path());
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.error().ToString();
  EXPECT_EQ(checkpoint->index_path(), one.File("diffusion_pytorch_model.safetensors.index.json"));
  // Paths that cannot be reached are I/O errors.
  EXPECT_EQ(OpenError(empty.File("missing")).code, ErrorCode::kIoError);
  EXPECT_EQ(OpenError("/dev/null").code, ErrorCode::kNotARegularFile);
}

// ---- The index itself ----

TEST(CheckpointDirTest, IndexErrorsNameTheIndexFile) {
  TempDir dir;
  WriteShardedFolder(dir, 2);
  const std::string text = R"({"weight_map":{"a":"x.safetensors","a":"y.safetensors"}})";
  ASSERT_TRUE(WriteFileBytes(dir.File("model.safetensors.index.json"), text));
  ExpectError(OpenError(dir.path()), ErrorCode::kDuplicateKey, At(text, "\"a\"", 1), "",
              "model.safetensors.index.json");
  ASSERT_TRUE(WriteFileBytes(dir.File("model.safetensors.index.json"), "[]"));
  ExpectError(OpenError(dir.path()), ErrorCode::kInvalidIndex, 0, "", "model.safetensors.index.json");
}

// ---- Shard names ----

TEST(CheckpointDirTest, UnsafeShardNamesAreRefusedBeforeAnythingIsOpened) {
  const std::vector<std::string> bad = {
      "../model.safetensors", "..",  ".", "", "/etc/passwd", "sub/model.safetensors",
      "..\\model.safetensors", "a\\b.safetensors", std::string("x\0y.safetensors", 15),
      "model\n.safetensors", "C:\\model.safetensors", "a..b.safetensors",
      "model\x7f.safetensors", std::string(256, 'm')};
  for (const std::string& name : bad) {
    TempDir dir;
    const ShardedFolder folder = WriteShardedFolder(dir, 2);
    std::vector<std::pair<std::string, std::string>> entries = folder.entries;
    entries[3].second = name;
    const std::string text = IndexJson(entries);
    ASSERT_TRUE(WriteFileBytes(dir.File("model.safetensors.index.json"), text));
    std::string quoted;
    AppendJsonString(name, &quoted);
    const Error error = OpenError(dir.path());
    ExpectError(error, ErrorCode::kUnsafeShardName, At(text, ": " + quoted) + 2,
                entries[3].first, "model.safetensors.index.json");
  }
}

TEST(CheckpointDirTest, SymlinkLeadingOutOfTheFolderIsRefusedUnlessAllowed) {
  TempDir outside;
  WriteShard(outside, "secret.safetensors", {ShardTensor("a")});
  TempDir dir;
  WriteShard(dir, "model-00001-of-00002.safetensors", {ShardTensor("b")});
  ASSERT_EQ(::symlink(outside.File("secret.safetensors").c_str(),
                      dir.File("model-00002-of-00002.safetensors").c_str()),
            0);
  const std::string text = IndexJson({{"a", "model-00002-of-00002.safetensors"},
                                      {"b", "model-00001-of-00002.safetensors"}});
  ASSERT_TRUE(WriteFileBytes(dir.File("model.safetensors.index.json"), text));
  ExpectError(OpenError(dir.path()), ErrorCode::kUnsafeShardName,
              At(text, "\"model-00002"), "a", "model-00002-of-00002.safetensors");

  DirOptions options;
  options.allow_external_symlinks = true;  // the Hugging Face cache layout
  EXPECT_TRUE(OpenError(dir.path(), options).ok());

  // A relative link that climbs out and back in stays inside: accepted.
  ASSERT_EQ(::unlink(dir.File("model-00002-of-00002.safetensors").c_str()), 0);
  WriteShard(dir, "real.bin.safetensors", {ShardTensor("a")});
  std::string dir_name;
  std::string parent;
  const size_t slash = dir.path().rfind('/');
  parent = dir.path().substr(0, slash);
  dir_name = dir.path().substr(slash + 1);
  ASSERT_EQ(::symlink(("../" + dir_name + "/real.bin.safetensors").c_str(),
                      dir.File("model-00002-of-00002.safetensors").c_str()),
            0);
  Result<CheckpointDir> checkpoint = CheckpointDir::Open(dir.path());
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.error().ToString();
  // real.bin.safetensors itself is not named by the index.
  ASSERT_EQ(checkpoint->warnings().size(), 1u);
  EXPECT_EQ(checkpoint->warnings()[0].file, "real.bin.safetensors");

  // A link into a subfolder leads out of the folder too.
  ASSERT_EQ(::unlink(dir.File("model-00002-of-00002.safetensors").c_str()), 0);
  ASSERT_EQ(::mkdir(dir.File("sub").c_str(), 0700), 0);
  WriteShard(dir, "sub/inner.safetensors", {ShardTensor("a")});
  ASSERT_EQ(::symlink("sub/inner.safetensors", dir.File("model-00002-of-00002.safetensors").c_str()), 0);
  EXPECT_EQ(OpenError(dir.path()).code, ErrorCode::kUnsafeShardName);
  ASSERT_EQ(::unlink(dir.File("sub/inner.safetensors").c_str()), 0);
  ASSERT_EQ(::rmdir(dir.File("sub").c_str()), 0);
}

TEST(CheckpointDirTest, IndexFoundInTheFolderFollowsTheShardRules) {
  TempDir outside;
  TempDir dir;
  const ShardedFolder folder = WriteShardedFolder(dir, 2);
  ASSERT_TRUE(WriteFileBytes(outside.File("index.json"), IndexJson(folder.entries)));
  ASSERT_EQ(::unlink(dir.File("model.safetensors.index.json").c_str()), 0);
  ASSERT_EQ(::symlink(outside.File("index.json").c_str(),
                      dir.File("model.safetensors.index.json").c_str()),
            0);
  ExpectError(OpenError(dir.path()), ErrorCode::kUnsafeShardName, 0, "",
              "model.safetensors.index.json");
  DirOptions options;
  options.allow_external_symlinks = true;
  EXPECT_TRUE(OpenError(dir.path(), options).ok());
  // Named directly, the link is trusted as named.
  EXPECT_TRUE(OpenError(dir.File("model.safetensors.index.json")).ok());

  ASSERT_EQ(::unlink(dir.File("model.safetensors.index.json").c_str()), 0);
  ASSERT_EQ(::mkfifo(dir.File("model.safetensors.index.json").c_str(), 0600), 0);
  ExpectError(OpenError(dir.path()), ErrorCode::kInvalidIndex, 0, "",
              "model.safetensors.index.json");
}

// ---- Shard files ----

TEST(CheckpointDirTest, MissingShardNamesTheShardAndItsFirstTensor) {
  TempDir dir;
  const ShardedFolder folder = WriteShardedFolder(dir, 3);
  ASSERT_EQ(::unlink(dir.File(ShardName(2, 3)).c_str()), 0);
  const std::string text = IndexJson(folder.entries, folder.total_bytes);
  ExpectError(OpenError(dir.path()), ErrorCode::kMissingShard, At(text, "\"" + ShardName(2, 3)),
              "model.layers.1.weight", ShardName(2, 3));
  // A dangling symbolic link is missing too.
  ASSERT_EQ(::symlink("nowhere.safetensors", dir.File(ShardName(2, 3)).c_str()), 0);
  EXPECT_EQ(OpenError(dir.path()).code, ErrorCode::kMissingShard);
}

TEST(CheckpointDirTest, ShardThatIsNotARegularFileIsRefusedWithoutOpeningIt) {
  TempDir dir;
  const ShardedFolder folder = WriteShardedFolder(dir, 2);
  const std::string text = IndexJson(folder.entries, folder.total_bytes);
  ASSERT_EQ(::unlink(dir.File(ShardName(2, 2)).c_str()), 0);
  ASSERT_EQ(::mkfifo(dir.File(ShardName(2, 2)).c_str(), 0600), 0);  // open() would block
  ExpectError(OpenError(dir.path()), ErrorCode::kMissingShard, At(text, "\"" + ShardName(2, 2)),
              "model.layers.1.weight", ShardName(2, 2));
  ASSERT_EQ(::unlink(dir.File(ShardName(2, 2)).c_str()), 0);
  ASSERT_EQ(::mkdir(dir.File(ShardName(2, 2)).c_str(), 0700), 0);
  EXPECT_EQ(OpenError(dir.path()).code, ErrorCode::kMissingShard);
  ASSERT_EQ(::rmdir(dir.File(ShardName(2, 2)).c_str()), 0);
}

TEST(CheckpointDirTest, InvalidShardPassesItsErrorOnWithTheShardNamed) {
  TempDir dir;
  WriteShardedFolder(dir, 2);
  const std::string header = R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                             R"("w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
  ASSERT_TRUE(WriteFileBytes(dir.File(ShardName(1, 2)), testing::FileWithHeader(header, "abcd")));
  ExpectError(OpenError(dir.path()), ErrorCode::kDuplicateKey, 8 + At(header, "\"w\"", 1), "w",
              ShardName(1, 2));
  ASSERT_TRUE(WriteFileBytes(dir.File(ShardName(1, 2)), "short"));
  ExpectError(OpenError(dir.path()), ErrorCode::kHeaderTooSmall, 0, "", ShardName(1, 2));
}

// ---- Cross-checks ----

TEST(CheckpointDirTest, TensorListedButInNoShard) {
  TempDir dir;
  ShardedFolder folder = WriteShardedFolder(dir, 2);
  folder.entries.emplace_back("model.ghost", ShardName(2, 2));
  const std::string text = IndexJson(folder.entries);
  ASSERT_TRUE(WriteFileBytes(dir.File("model.safetensors.index.json"), text));
  ExpectError(OpenError(dir.path()), ErrorCode::kShardMismatch, At(text, "\"model.ghost\""),
              "model.ghost", ShardName(2, 2));
}

TEST(CheckpointDirTest, TensorListedForOneShardButInAnother) {
  TempDir dir;
  ShardedFolder folder = WriteShardedFolder(dir, 3);
  folder.entries[4].second = ShardName(3, 3);  // layers.4 is in shard 2
  const std::string text = IndexJson(folder.entries);
  ASSERT_TRUE(WriteFileBytes(dir.File("model.safetensors.index.json"), text));
  const Error error = OpenError(dir.path());
  ExpectError(error, ErrorCode::kShardMismatch, At(text, "\"model.layers.4.weight\""),
              "model.layers.4.weight", ShardName(3, 3));
  EXPECT_NE(error.context.find("found in shard '" + ShardName(2, 3) + "'"), std::string::npos)
      << error.ToString();
}

TEST(CheckpointDirTest, TensorInAShardButNotListed) {
  TempDir dir;
  ShardedFolder folder = WriteShardedFolder(dir, 2);
  const std::pair<std::string, std::string> dropped = folder.entries[5];  // in shard 2
  folder.entries.erase(folder.entries.begin() + 5);
  ASSERT_TRUE(WriteFileBytes(dir.File("model.safetensors.index.json"), IndexJson(folder.entries)));
  Result<Checkpoint> shard = Checkpoint::Open(dir.File(ShardName(2, 2)));
  ASSERT_TRUE(shard.ok());
  ExpectError(OpenError(dir.path()), ErrorCode::kShardMismatch,
              shard->Find(dropped.first)->header_offset, dropped.first, ShardName(2, 2));
}

TEST(CheckpointDirTest, TensorInTwoShardFiles) {
  TempDir dir;
  WriteShard(dir, ShardName(1, 2), {ShardTensor("a"), ShardTensor("shared")});
  WriteShard(dir, ShardName(2, 2), {ShardTensor("b"), ShardTensor("shared")});
  ASSERT_TRUE(WriteFileBytes(
      dir.File("model.safetensors.index.json"),
      IndexJson({{"a", ShardName(1, 2)}, {"b", ShardName(2, 2)}, {"shared", ShardName(1, 2)}})));
  Result<Checkpoint> second = Checkpoint::Open(dir.File(ShardName(2, 2)));
  ASSERT_TRUE(second.ok());
  ExpectError(OpenError(dir.path()), ErrorCode::kTensorInTwoShards,
              second->Find("shared")->header_offset, "shared", ShardName(2, 2));
}

TEST(CheckpointDirTest, TensorListedTwiceInTheIndex) {
  TempDir dir;
  WriteShard(dir, ShardName(1, 2), {ShardTensor("a")});
  WriteShard(dir, ShardName(2, 2), {ShardTensor("b")});
  const std::string text =
      IndexJson({{"a", ShardName(1, 2)}, {"b", ShardName(2, 2)}, {"a", ShardName(2, 2)}});
  ASSERT_TRUE(WriteFileBytes(dir.File("model.safetensors.index.json"), text));
  ExpectError(OpenError(dir.path()), ErrorCode::kDuplicateKey, At(text, "\"a\"", 1), "",
              "model.safetensors.index.json");
}

// ---- Model folder ----

TEST(ModelFolderTest, ConfigMustBeAJsonObject) {
  TempDir dir;
  EXPECT_TRUE(CheckModelFolder(dir.path(), nullptr).error.ok());  // no config.json: fine
  ASSERT_TRUE(WriteFileBytes(dir.File("config.json"), R"({"model_type": "llama",})"));
  ModelFolderReport report = CheckModelFolder(dir.path(), nullptr);
  EXPECT_EQ(report.error.code, ErrorCode::kInvalidConfig);
  EXPECT_EQ(report.error.offset, 23u);
  EXPECT_NE(report.error.context.find("UnexpectedToken"), std::string::npos) << report.error.ToString();
  ASSERT_TRUE(WriteFileBytes(dir.File("config.json"), "[1, 2]"));
  EXPECT_EQ(CheckModelFolder(dir.path(), nullptr).error.code, ErrorCode::kInvalidConfig);
  ASSERT_TRUE(WriteFileBytes(dir.File("config.json"), ""));
  EXPECT_EQ(CheckModelFolder(dir.path(), nullptr).error.code, ErrorCode::kInvalidConfig);
  ASSERT_TRUE(WriteFileBytes(dir.File("config.json"), R"({"a": {"b": 1, "b": 2}})"));
  report = CheckModelFolder(dir.path(), nullptr);
  EXPECT_TRUE(report.error.ok());
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_EQ(report.warnings[0].kind, WarningKind::kConfigDuplicateKey);
}

TEST(ModelFolderTest, TieWordEmbeddingsDecidesWhetherLmHeadMayBeAbsent) {
  TempDir dir;
  WriteShard(dir, "model.safetensors", {ShardTensor("model.embed_tokens.weight")});
  Result<CheckpointDir> weights = CheckpointDir::Open(dir.path());
  ASSERT_TRUE(weights.ok());
  auto warnings_for = [&](const std::string& config) {
    EXPECT_TRUE(WriteFileBytes(dir.File("config.json"), config));
    ModelFolderReport report = CheckModelFolder(dir.path(), &*weights);
    EXPECT_TRUE(report.error.ok()) << report.error.ToString();
    std::vector<WarningKind> kinds;
    for (const Warning& warning : report.warnings) kinds.push_back(warning.kind);
    return kinds;
  };
  using Kinds = std::vector<WarningKind>;
  EXPECT_EQ(warnings_for(R"({"tie_word_embeddings": true})"), Kinds{});
  EXPECT_EQ(warnings_for(R"({"vocab_size": 10})"), Kinds{});  // transformers' default: tied
  EXPECT_EQ(warnings_for(R"({"tie_word_embeddings": false})"), Kinds{WarningKind::kLmHeadMissing});
  EXPECT_EQ(warnings_for(R"({"tie_word_embeddings": "no"})"),
            Kinds{WarningKind::kTieWordEmbeddingsNotBool});
  // Only the top level counts.
  EXPECT_EQ(warnings_for(R"({"text_config": {"tie_word_embeddings": false}})"), Kinds{});
  EXPECT_EQ(warnings_for(R"({"tie_\u0077ord_embeddings": false})"), Kinds{WarningKind::kLmHeadMissing});

  WriteShard(dir, "model.safetensors", {ShardTensor("model.embed_tokens.weight"), ShardTensor("lm_head.weight")});
  weights = CheckpointDir::Open(dir.path());
  ASSERT_TRUE(weights.ok());
  EXPECT_EQ(warnings_for(R"({"tie_word_embeddings": false})"), Kinds{});
  EXPECT_EQ(warnings_for(R"({"tie_word_embeddings": true})"), Kinds{});
}

TEST(ModelFolderTest, PickleFilesAreFlagged) {
  TempDir dir;
  for (const char* name : {"pytorch_model.bin", "model.PT", "weights.pth", "last.ckpt",
                           "state.pkl", "notes.txt", "tokenizer.json", "bin", "model.binary"}) {
    ASSERT_TRUE(WriteFileBytes(dir.File(name), "x"));
  }
  const ModelFolderReport report = CheckModelFolder(dir.path(), nullptr);
  EXPECT_TRUE(report.error.ok());
  std::vector<std::string> flagged;
  for (const Warning& warning : report.warnings) {
    EXPECT_EQ(warning.kind, WarningKind::kPickleFile);
    flagged.push_back(warning.file);
  }
  EXPECT_EQ(flagged, (std::vector<std::string>{"last.ckpt", "model.PT", "pytorch_model.bin",
                                               "state.pkl", "weights.pth"}));
}

}  // namespace
}  // namespace stguard
