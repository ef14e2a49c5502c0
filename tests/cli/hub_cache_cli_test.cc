// SPDX-License-Identifier: Apache-2.0
// A Hugging Face hub cache snapshot, laid out as huggingface_hub writes it (blobs named by
// their sha256, relative links ../../blobs/HASH in snapshots/REV/), is read by check, lint,
// scan and inspect without --allow-external-symlinks; any other link out of the snapshot
// is still refused, in one line naming the link and the flag. And a file of a folder that
// cannot be read is an error (exit 2), not a refusal.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "support/run_cli.h"
#include "support/sharded_folder.h"
#include "support/temp_dir.h"
#include "support/test_files.h"

namespace stguard {
namespace {

using testing::ReadFileBytes;
using testing::RunCli;
using testing::ShellQuoted;
using testing::TempDir;
using testing::WriteFileBytes;

constexpr char kRevision[] = "8f6b3c2a91d04e7b5c6a1f0e9d8c7b6a5f4e3d2c";

// HubSnapshot writes ROOT/models--org--tiny/{blobs,snapshots/REV} in the hub's layout.
class HubSnapshot {
 public:
  explicit HubSnapshot(const TempDir& root)
      : repo_(root.File("models--org--tiny")),
        blobs_(repo_ + "/blobs"),
        snapshot_(repo_ + "/snapshots/" + kRevision) {
    // The shards are written by the canonical writer into a scratch folder, then moved
    // into blobs/ under their content's hash, as the hub does.
    TempDir scratch;
    const testing::ShardedFolder written = testing::WriteShardedFolder(scratch, 2, 4);
    EXPECT_EQ(mkdir(repo_.c_str(), 0755), 0);
    EXPECT_EQ(mkdir(blobs_.c_str(), 0755), 0);
    EXPECT_EQ(mkdir((repo_ + "/snapshots").c_str(), 0755), 0);
    EXPECT_EQ(mkdir(snapshot_.c_str(), 0755), 0);
    for (int i = 1; i <= 2; ++i) {
      const std::string shard = testing::ShardName(i, 2);
      Add(shard, ReadFileBytes(scratch.File(shard)));
    }
    Add("model.safetensors.index.json", testing::IndexJson(written.entries, written.total_bytes));
    Add("config.json", R"({"model_type":"stguard-test-model","torch_dtype":"float32"})");
    Add("tokenizer.json", R"({"version":"1.0","model":{"type":"BPE","vocab":{}}})");
    Add("README.md", "# tiny\n");
  }

  // Add writes `bytes` as a blob named by a hash-like name and links `name` to it.
  void Add(const std::string& name, const std::string& bytes) {
    const std::string blob = BlobName(name);
    ASSERT_TRUE(WriteFileBytes(blobs_ + "/" + blob, bytes));
    ASSERT_EQ(symlink(("../../blobs/" + blob).c_str(), File(name).c_str()), 0);
  }

  // Relink makes the snapshot's `name` a link reading `target`.
  void Relink(const std::string& name, const std::string& target) {
    unlink(File(name).c_str());
    ASSERT_EQ(symlink(target.c_str(), File(name).c_str()), 0);
  }

  // BlobName is a sha256-like hexadecimal name, distinct per file name.
  static std::string BlobName(const std::string& name) {
    std::string hash(64, '0');
    size_t h = std::hash<std::string>{}(name);
    for (char& c : hash) {
      c = "0123456789abcdef"[h >> 60];  // an LCG's high bits: its low ones repeat
      h = h * 6364136223846793005u + 1442695040888963407u;
    }
    return hash;
  }

  std::string File(const std::string& name) const { return snapshot_ + "/" + name; }
  const std::string& blobs() const { return blobs_; }
  const std::string& path() const { return snapshot_; }

 private:
  std::string repo_;
  std::string blobs_;
  std::string snapshot_;
};

// Lines counts the lines of `text`.
size_t Lines(const std::string& text) {
  size_t count = 0;
  for (char c : text) count += c == '\n';
  return count;
}

TEST(HubCacheCliTest, SnapshotIsReadWithoutFlags) {
  TempDir root;
  HubSnapshot hub(root);
  for (const char* command : {"check", "lint", "scan", "inspect", "inspect --json",
                              "inspect --stats"}) {
    const testing::CliRun run =
        RunCli(std::string(command) + " " + ShellQuoted(hub.path()));
    EXPECT_EQ(run.status, 0) << command << ": " << run.output;
    EXPECT_EQ(run.output.find("pickle-bearing file:"), std::string::npos) << run.output;
    EXPECT_EQ(run.output.find("allow-external-symlinks"), std::string::npos) << run.output;
  }
  const testing::CliRun check = RunCli("check " + ShellQuoted(hub.path()));
  EXPECT_NE(check.output.find("4 tensors in 2 shards"), std::string::npos) << check.output;
  // The index, a link to its blob like the rest, is inspected as the snapshot folder.
  const testing::CliRun index =
      RunCli("inspect " + ShellQuoted(hub.File("model.safetensors.index.json")));
  EXPECT_EQ(index.status, 0) << index.output;
  EXPECT_NE(index.output.find("note: an index file: inspected as its folder"), std::string::npos)
      << index.output;
  EXPECT_NE(index.output.find("totals: 4 tensors in 2 files"), std::string::npos) << index.output;
}

TEST(HubCacheCliTest, PytorchSnapshotConvertsWithoutFlags) {
  // convert's input folder follows the same rule: the hub's link is read, a plain
  // folder's link to the same blob is not.
  TempDir root;
  const std::string repo = root.File("models--org--pt");
  const std::string blob = HubSnapshot::BlobName("pytorch_model.bin");
  for (const std::string& folder : {repo, repo + "/blobs", repo + "/snapshots",
                                    repo + "/snapshots/" + kRevision, root.File("plain")}) {
    ASSERT_EQ(mkdir(folder.c_str(), 0755), 0);
  }
  ASSERT_TRUE(WriteFileBytes(repo + "/blobs/" + blob,
                             ReadFileBytes(std::string(STGUARD_CORPUS_DIR) +
                                           "/torch/valid/dtypes.zip.pt")));
  const std::string snapshot = repo + "/snapshots/" + kRevision;
  ASSERT_EQ(symlink(("../../blobs/" + blob).c_str(), (snapshot + "/pytorch_model.bin").c_str()),
            0);
  const testing::CliRun converted =
      RunCli("convert " + ShellQuoted(snapshot) + " " + ShellQuoted(root.File("out")));
  EXPECT_EQ(converted.status, 0) << converted.output;
  ASSERT_EQ(symlink((repo + "/blobs/" + blob).c_str(), root.File("plain/pytorch_model.bin").c_str()),
            0);
  const testing::CliRun refused =
      RunCli("convert " + ShellQuoted(root.File("plain")) + " " + ShellQuoted(root.File("out2")));
  EXPECT_EQ(refused.status, 1) << refused.output;
  EXPECT_NE(refused.output.find("--allow-external-symlinks"), std::string::npos) << refused.output;
}

// Each link that is not the hub's one hop into its own blobs/ is refused in one line that
// names it and the flag that would read it.
void ExpectRefusedLink(const HubSnapshot& hub, const std::string& link) {
  for (const char* command : {"check", "lint"}) {
    const testing::CliRun run = RunCli(std::string(command) + " " + ShellQuoted(hub.path()));
    EXPECT_EQ(run.status, 1) << command << ": " << run.output;
    EXPECT_EQ(Lines(run.output), 1u) << command << ": " << run.output;
    EXPECT_NE(run.output.find("refused"), std::string::npos) << run.output;
    EXPECT_NE(run.output.find("'" + link + "'"), std::string::npos) << run.output;
    EXPECT_NE(run.output.find("--allow-external-symlinks"), std::string::npos) << run.output;
    EXPECT_EQ(run.output.find("pickle-bearing"), std::string::npos) << run.output;
  }
}

TEST(HubCacheCliTest, LinkOutsideItsBlobsIsRefused) {
  TempDir root;
  HubSnapshot hub(root);
  TempDir outside;
  ASSERT_TRUE(WriteFileBytes(outside.File("tokenizer.json"), "{}"));
  hub.Relink("tokenizer.json", outside.File("tokenizer.json"));
  ExpectRefusedLink(hub, "tokenizer.json");
  // With the flag it is read.
  EXPECT_EQ(RunCli("check --allow-external-symlinks " + ShellQuoted(hub.path())).status, 0);
}

TEST(HubCacheCliTest, LinkIntoAnotherRepositorysBlobsIsRefused) {
  TempDir root;
  HubSnapshot hub(root);
  const std::string other = root.File("models--org--other");
  ASSERT_EQ(mkdir(other.c_str(), 0755), 0);
  ASSERT_EQ(mkdir((other + "/blobs").c_str(), 0755), 0);
  ASSERT_TRUE(WriteFileBytes(other + "/blobs/" + HubSnapshot::BlobName("c"), "{}"));
  hub.Relink("config.json", "../../../models--org--other/blobs/" + HubSnapshot::BlobName("c"));
  ExpectRefusedLink(hub, "config.json");
}

TEST(HubCacheCliTest, TwoHopLinkIsRefused) {
  TempDir root;
  HubSnapshot hub(root);
  const std::string shard = testing::ShardName(2, 2);
  // blobs/HOP is itself a link to the shard's blob: two hops.
  ASSERT_EQ(symlink(HubSnapshot::BlobName(shard).c_str(), (hub.blobs() + "/hop").c_str()), 0);
  hub.Relink(shard, "../../blobs/hop");
  ExpectRefusedLink(hub, shard);
}

TEST(HubCacheCliTest, LinkToAFolderIsRefused) {
  TempDir root;
  HubSnapshot hub(root);
  ASSERT_EQ(mkdir((hub.blobs() + "/" + HubSnapshot::BlobName("dir")).c_str(), 0755), 0);
  ASSERT_EQ(symlink(("../../blobs/" + HubSnapshot::BlobName("dir")).c_str(),
                    hub.File("extra").c_str()),
            0);
  ExpectRefusedLink(hub, "extra");
}

TEST(HubCacheCliTest, SameLayoutOutsideASnapshotIsRefused) {
  // The exception is for snapshots/REV of a models--/datasets--/spaces-- folder only.
  TempDir root;
  const std::string blobs = root.File("blobs");
  const std::string folder = root.File("model");
  ASSERT_EQ(mkdir(blobs.c_str(), 0755), 0);
  ASSERT_EQ(mkdir(folder.c_str(), 0755), 0);
  ASSERT_TRUE(WriteFileBytes(blobs + "/c", "{}"));
  TempDir scratch;
  testing::WriteShard(scratch, "model.safetensors", {testing::ShardTensor("a")});
  ASSERT_TRUE(WriteFileBytes(folder + "/model.safetensors",
                             ReadFileBytes(scratch.File("model.safetensors"))));
  ASSERT_EQ(symlink("../blobs/c", (folder + "/config.json").c_str()), 0);
  const testing::CliRun run = RunCli("check " + ShellQuoted(folder));
  EXPECT_EQ(run.status, 1) << run.output;
  EXPECT_NE(run.output.find("--allow-external-symlinks"), std::string::npos) << run.output;
}

// An unreadable shard is a problem of this machine, not of the folder: error, exit 2, the
// file named. Permissions bind only an unprivileged user, so the tool runs as nobody.
TEST(HubCacheCliTest, UnreadableShardIsAnError) {
  if (std::system("command -v setpriv >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "setpriv is not installed: cannot run the tool as an unprivileged user";
  }
  const std::string as_nobody = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
  if (std::system((as_nobody + STGUARD_CLI_PATH + " --version >/dev/null 2>&1").c_str()) != 0) {
    GTEST_SKIP() << "cannot run " << STGUARD_CLI_PATH
                 << " as uid 65534 (not root, or the build folder is not readable by others)";
  }
  TempDir root;
  ASSERT_EQ(chmod(root.path().c_str(), 0755), 0);  // mkdtemp's 0700 would hide everything
  HubSnapshot hub(root);
  const std::string shard = testing::ShardName(2, 2);
  ASSERT_EQ(chmod((hub.blobs() + "/" + HubSnapshot::BlobName(shard)).c_str(), 0), 0);
  TempDir scratch;
  const auto run = [&](const std::string& arguments) {
    const std::string out = scratch.File("out");
    const int status = std::system((as_nobody + STGUARD_CLI_PATH + " " + arguments + " >" +
                                    ShellQuoted(out) + " 2>&1")
                                       .c_str());
    return testing::CliRun{WIFEXITED(status) ? WEXITSTATUS(status) : -1, ReadFileBytes(out)};
  };
  for (const char* command : {"check", "lint"}) {
    const testing::CliRun result = run(std::string(command) + " " + ShellQuoted(hub.path()));
    EXPECT_EQ(result.status, 2) << command << ": " << result.output;
    EXPECT_NE(result.output.find(": error: "), std::string::npos) << result.output;
    EXPECT_NE(result.output.find(shard), std::string::npos) << result.output;
    EXPECT_NE(result.output.find("Permission denied"), std::string::npos) << result.output;
  }
  // A refused file elsewhere in the folder still wins over the error.
  TempDir outside;
  ASSERT_EQ(chmod(outside.path().c_str(), 0755), 0);
  ASSERT_TRUE(WriteFileBytes(outside.File("x.json"), "{}"));
  hub.Relink("tokenizer.json", outside.File("x.json"));
  const testing::CliRun refused = run("check " + ShellQuoted(hub.path()));
  EXPECT_EQ(refused.status, 1) << refused.output;
  EXPECT_NE(refused.output.find("'tokenizer.json'"), std::string::npos) << refused.output;
}

}  // namespace
}  // namespace stguard
