// SPDX-License-Identifier: Apache-2.0
// mutator_test.cc: the structure-aware mutators (mutator_json.h, safetensors_mutator.h,
// index_mutator.h, config_mutator.h, pickle_mutator.h, zip_mutator.h) do what the fuzz targets need: the JSON writer's spellings parse back
// to the same tree, decode + encode keeps a file valid, the known breaks do break it, a
// good fraction of chained mutations stay valid, nothing ever exceeds max_size, and
// arbitrary bytes never crash them. Built with the ordinary (gcc) build, where libFuzzer's
// LLVMFuzzerMutate is absent and the built-in byte mutation stands in.
#include <cctype>
#include <set>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "config_mutator.h"
#include "folder/index_file.h"
#include "lint/engine.h"
#include "index_mutator.h"
#include "mutator_json.h"
#include "pickle/allowlist.h"
#include "pickle/opcodes.h"
#include "npy_mutator.h"
#include "npz_mutator.h"
#include "pickle/pickle_reader.h"
#include "sniff/tar_probe.h"
#include "pickle_mutator.h"
#include "safetensors_mutator.h"
#include "stguard/npy.h"
#include "stguard/npz.h"
#include "stguard/reader.h"
#include "stguard/torch_checkpoint.h"
#include "zip_mutator.h"

namespace stguard_fuzz::mutator {
namespace {

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<std::string> ReadFolder(const std::string& name) {
  std::vector<std::filesystem::path> paths;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(STGUARD_CORPUS_DIR) + "/" + name)) {
    if (entry.is_regular_file()) paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  std::vector<std::string> files;
  for (const auto& path : paths) files.push_back(ReadFile(path));
  return files;
}

bool Accepted(std::string_view file) { return stguard::Checkpoint::FromBytes(file).ok(); }

bool IndexAccepted(std::string_view text) {
  stguard::IndexFile index;
  return stguard::ParseIndexFile(text, stguard::Options{}, &index).ok();
}

// The valid safetensors seeds: corpus/valid and sample.safetensors.
std::vector<std::string> ValidSeeds() {
  std::vector<std::string> seeds;
  for (std::string& file : ReadFolder("valid")) {
    if (Accepted(file)) seeds.push_back(std::move(file));
  }
  seeds.push_back(ReadFile(std::string(STGUARD_CORPUS_DIR) + "/sample.safetensors"));
  return seeds;
}

TEST(MutatorJson, EveryValidSpellingParsesBackToTheSameTree) {
  Rng rng(7);
  for (int i = 0; i < 2000; ++i) {
    JsonValue tree = JsonValue::Object();
    JsonValue list = JsonValue::Array();
    list.items.push_back(JsonValue::Number(rng.Bits64()));
    list.items.push_back(JsonValue::String(RandomName(rng)));
    tree.members.emplace_back(RandomName(rng), std::move(list));
    tree.members.emplace_back(RandomName(rng), JsonValue::String(RandomName(rng)));
    JsonStyle style = RandomStyle(rng);
    style.break_one_in = 0;
    std::string text;
    WriteJson(tree, style, rng, &text);
    JsonValue back;
    ASSERT_TRUE(ParseJson(text, &back)) << text;
    ASSERT_EQ(back.members.size(), 2u);
    EXPECT_EQ(back.members[0].first, tree.members[0].first) << text;
    EXPECT_EQ(back.members[0].second.items[1].text, tree.members[0].second.items[1].text);
    EXPECT_EQ(back.members[1].second.text, tree.members[1].second.text) << text;
  }
}

TEST(MutatorJson, BrokenSpellingsAreRefusedByTheParser) {
  Rng rng(11);
  JsonStyle style;
  style.break_one_in = 1;
  size_t refused = 0;
  for (int i = 0; i < 200; ++i) {
    std::string text;
    WriteJsonString("name", style, rng, &text);
    JsonValue back;
    if (!ParseJson(text, &back)) ++refused;
  }
  // Two of the eight deliberate errors (DEL, and a raw overlong/surrogate byte sequence,
  // which only the UTF-8 check refuses) are JSON-legal to this parser.
  EXPECT_GT(refused, 100u);
  JsonValue value;
  EXPECT_FALSE(ParseJson("{\"a\":1", &value));
  EXPECT_FALSE(ParseJson("\"\\ud800\"", &value));
  EXPECT_TRUE(ParseJson(" {\"a\":[1,-2.5e3,true,null,\"\\ud83d\\ude00\"]} ", &value));
  EXPECT_EQ(value.members[0].second.items[4].text, "\xF0\x9F\x98\x80");
}

TEST(SafetensorsMutator, DecodeThenLayOutAndEncodeKeepsEveryValidSeedValid) {
  Rng rng(3);
  for (const std::string& seed : ValidSeeds()) {
    FileModel model;
    ASSERT_TRUE(DecodeFile(seed, &model));
    EXPECT_TRUE(Accepted(EncodeFile(model, JsonStyle{}, 0, rng)));
    for (int i = 0; i < 20; ++i) {
      LayOut(&model, 8192, rng);
      JsonStyle clean = RandomStyle(rng);
      clean.break_one_in = 0;
      EXPECT_TRUE(Accepted(EncodeFile(model, clean, static_cast<int>(rng.Below(4)), rng)));
    }
  }
}

TEST(SafetensorsMutator, MovingAnOffsetByOneOrAddingAByteBreaksTheFile) {
  Rng rng(5);
  const std::string sample = ReadFile(std::string(STGUARD_CORPUS_DIR) + "/sample.safetensors");
  FileModel model;
  ASSERT_TRUE(DecodeFile(sample, &model));
  ASSERT_FALSE(model.tensors.empty());
  ASSERT_TRUE(Accepted(EncodeFile(model, JsonStyle{}, 1, rng)));
  FileModel moved = model;
  moved.tensors[0].end += 1;
  EXPECT_FALSE(Accepted(EncodeFile(moved, JsonStyle{}, 1, rng)));
  FileModel longer = model;
  longer.data.push_back('\0');
  EXPECT_FALSE(Accepted(EncodeFile(longer, JsonStyle{}, 1, rng)));
  FileModel duplicate = model;
  duplicate.tensors.push_back(duplicate.tensors[0]);
  LayOut(&duplicate, 8192, rng);
  EXPECT_FALSE(Accepted(EncodeFile(duplicate, JsonStyle{}, 1, rng)));
}

TEST(SafetensorsMutator, MostChainedMutationsStayValidAndAllFit) {
  constexpr size_t kMaxSize = 8192;
  size_t valid = 0;
  size_t total = 0;
  size_t changed = 0;
  unsigned seed = 1;
  for (const std::string& start : ValidSeeds()) {
    // Each step mutates the last valid file, or (every fourth step) the last output
    // whatever it was, as a corpus holds both.
    std::string last_valid = start;
    std::string last = start;
    for (int step = 0; step < 300; ++step) {
      const std::string input = step % 4 == 0 ? last : last_valid;
      std::vector<uint8_t> buffer(input.begin(), input.end());
      buffer.resize(kMaxSize);
      const size_t new_size = MutateSafetensors(buffer.data(), input.size(), kMaxSize, ++seed);
      ASSERT_LE(new_size, kMaxSize);
      last.assign(reinterpret_cast<const char*>(buffer.data()), new_size);
      changed += last != input;
      ++total;
      if (Accepted(last)) {
        ++valid;
        last_valid = last;
      }
    }
  }
  const double fraction = static_cast<double>(valid) / static_cast<double>(total);
  std::printf("safetensors mutator: %zu of %zu outputs valid (%.1f%%), %zu changed\n", valid,
              total, 100 * fraction, changed);
  EXPECT_GT(fraction, 0.4);
  EXPECT_GT(changed, total * 9 / 10);
}

TEST(SafetensorsMutator, TheSameSeedGivesTheSameOutput) {
  const std::string sample = ReadFile(std::string(STGUARD_CORPUS_DIR) + "/sample.safetensors");
  std::vector<uint8_t> a(sample.begin(), sample.end());
  a.resize(4096);
  std::vector<uint8_t> b = a;
  const size_t size_a = MutateSafetensors(a.data(), sample.size(), a.size(), 42);
  const size_t size_b = MutateSafetensors(b.data(), sample.size(), b.size(), 42);
  ASSERT_EQ(size_a, size_b);
  EXPECT_TRUE(std::equal(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(size_a), b.begin()));
}

TEST(SafetensorsMutator, CrossOverMixesTensorsOfBothFiles) {
  const std::vector<std::string> seeds = ValidSeeds();
  ASSERT_GE(seeds.size(), 2u);
  std::vector<uint8_t> out(8192);
  size_t valid = 0;
  size_t total = 0;
  for (unsigned seed = 1; seed <= 400; ++seed) {
    const std::string& a = seeds[seed % seeds.size()];
    const std::string& b = seeds[(seed * 7 + 3) % seeds.size()];
    const size_t size = CrossOverSafetensors(reinterpret_cast<const uint8_t*>(a.data()), a.size(),
                                             reinterpret_cast<const uint8_t*>(b.data()), b.size(),
                                             out.data(), out.size(), seed);
    ASSERT_LE(size, out.size());
    ++total;
    valid += Accepted(std::string_view(reinterpret_cast<const char*>(out.data()), size));
  }
  EXPECT_GT(valid, total / 3);
}

TEST(SafetensorsMutator, ArbitraryBytesNeverCrashIt) {
  Rng rng(99);
  std::vector<uint8_t> buffer(512);
  std::vector<uint8_t> out(512);
  const std::vector<std::string> seeds = ValidSeeds();
  for (unsigned seed = 1; seed <= 3000; ++seed) {
    size_t size = rng.Below(256);
    for (size_t i = 0; i < size; ++i) buffer[i] = static_cast<uint8_t>(rng.Below(256));
    if (seed % 3 == 0) {  // a valid file cut short, or with a byte changed
      const std::string& file = seeds[seed % seeds.size()];
      size = std::min(rng.Below(file.size() + 1), buffer.size());
      std::copy(file.begin(), file.begin() + static_cast<std::ptrdiff_t>(size), buffer.begin());
      if (size != 0) buffer[rng.Below(size)] ^= 0x20;
    }
    const size_t max_size = size + rng.Below(buffer.size() - size + 1);
    ASSERT_LE(MutateSafetensors(buffer.data(), size, max_size, seed), max_size);
    ASSERT_LE(MutateIndex(buffer.data(), size, max_size, seed), max_size);
    ASSERT_LE(CrossOverSafetensors(buffer.data(), size, buffer.data(), size, out.data(), 100, seed), 100u);
    ASSERT_LE(CrossOverIndex(buffer.data(), size, buffer.data(), size, out.data(), 100, seed), 100u);
  }
}

TEST(IndexMutator, MostChainedMutationsStayValidIndexes) {
  constexpr size_t kMaxSize = 4096;
  size_t valid = 0;
  size_t total = 0;
  unsigned seed = 1;
  size_t starts = 0;
  for (const std::string& start : ReadFolder("fuzz_index")) {
    if (!IndexAccepted(start) || start.size() > kMaxSize) continue;
    ++starts;
    std::vector<uint8_t> buffer(start.begin(), start.end());
    buffer.resize(kMaxSize);
    size_t size = start.size();
    for (int step = 0; step < 30; ++step) {
      const std::string before(reinterpret_cast<const char*>(buffer.data()), size);
      const size_t new_size = MutateIndex(buffer.data(), size, kMaxSize, ++seed);
      ASSERT_LE(new_size, kMaxSize);
      ++total;
      if (IndexAccepted(std::string_view(reinterpret_cast<const char*>(buffer.data()), new_size))) {
        ++valid;
        size = new_size;
      } else {
        std::copy(before.begin(), before.end(), buffer.begin());
      }
    }
  }
  ASSERT_GT(starts, 5u);
  const double fraction = static_cast<double>(valid) / static_cast<double>(total);
  std::printf("index mutator: %zu of %zu outputs valid (%.1f%%)\n", valid, total, 100 * fraction);
  EXPECT_GT(fraction, 0.3);
}

bool TorchAccepted(std::string_view bytes) {
  return stguard::TorchCheckpoint::FromBytes(std::as_bytes(std::span(bytes.data(), bytes.size())))
      .ok();
}

bool PickleAccepted(std::string_view bytes) {
  stguard::PickleReadOptions options;
  options.persistent_ids = stguard::PersistentIds::kZip;
  std::vector<stguard::GlobalUse> globals;
  return stguard::ReadPickle(std::as_bytes(std::span(bytes.data(), bytes.size())), options,
                             &globals)
      .ok();
}

// The torch.save fixtures that convert (zip and legacy).
std::vector<std::string> TorchSeeds() {
  std::vector<std::string> seeds;
  for (std::string& file : ReadFolder("torch/valid")) {
    if (TorchAccepted(file)) seeds.push_back(std::move(file));
  }
  return seeds;
}

// LintPair lints fuzz_config's input (config, NUL, checkpoint) as the target does; returns
// false when the checkpoint is not a valid file.
bool LintPair(std::string_view input, stguard::LintReport* report) {
  const auto [config, file] = SplitConfigInput(input);
  const auto checkpoint = stguard::Checkpoint::FromBytes(file);
  if (!checkpoint.ok()) return false;
  const stguard::lint::ShardRef shard{"model.safetensors", &*checkpoint};
  stguard::lint::LintShards({&shard, 1}, true, config,
                            stguard::lint::TokenizerFile::kAbsent, stguard::kDefaultMaxDepth, report);
  return true;
}

size_t Errors(const stguard::LintReport& report) {
  return static_cast<size_t>(std::count_if(report.findings.begin(), report.findings.end(), [](const auto& f) {
    return f.severity == stguard::LintSeverity::kError;
  }));
}

// The mutator's rebuilt checkpoint is what the engine expects: for every family, a fitted
// config and the checkpoint built from it lint with no error (and one changed dimension
// gives one).
TEST(ConfigMutator, AFittedConfigAndItsBuiltCheckpointLintClean) {
  const auto families = stguard::lint::Families();
  for (size_t f = 0; f < families.size(); ++f) {
    for (unsigned seed = 1; seed <= 40; ++seed) {
      Rng rng(seed * 131 + static_cast<unsigned>(f));
      JsonValue config = JsonValue::Object();
      SetFamily(f, &config, rng);
      ASSERT_TRUE(FitConfig(&config, rng)) << families[f].name;
      FileModel model;
      ASSERT_TRUE(BuildCheckpoint(config, 2, rng, &model)) << families[f].name;
      ASSERT_FALSE(model.tensors.empty());
      LayOut(&model, 1 << 20, rng);
      std::string config_text;
      WriteJson(config, JsonStyle{}, rng, &config_text);
      const std::string input = JoinConfigInput(config_text, EncodeFile(model, JsonStyle{}, 0, rng));
      ASSERT_LE(input.size(), 8192u) << families[f].name << ": over fuzz_config's max_len";
      stguard::LintReport report;
      ASSERT_TRUE(LintPair(input, &report)) << families[f].name;
      EXPECT_EQ(report.family, families[f].name) << config_text;
      for (const auto& finding : report.findings) {
        EXPECT_NE(finding.severity, stguard::LintSeverity::kError)
            << families[f].name << " " << config_text << ": " << finding.rule << " " << finding.tensor
            << " " << finding.message;
      }
      // The reject side: one dimension off by one is a shape error.
      model.tensors[0].shape.back() += 1;
      LayOut(&model, 1 << 20, rng);
      stguard::LintReport broken;
      ASSERT_TRUE(LintPair(JoinConfigInput(config_text, EncodeFile(model, JsonStyle{}, 0, rng)), &broken));
      EXPECT_GT(Errors(broken), 0u) << families[f].name << " " << config_text;
    }
  }
}

TEST(ConfigMutator, MostChainedMutationsLintAFamilyAndAllFit) {
  constexpr size_t kMaxSize = 8192;  // fuzz/fuzz_config.options
  size_t linted = 0;
  size_t with_errors = 0;
  size_t total = 0;
  unsigned seed = 1;
  const std::vector<std::string> starts = ReadFolder("fuzz_config");
  ASSERT_GT(starts.size(), 5u);
  for (const std::string& start : starts) {
    if (start.size() > kMaxSize) continue;
    std::vector<uint8_t> buffer(start.begin(), start.end());
    buffer.resize(kMaxSize);
    size_t size = start.size();
    for (int step = 0; step < 40; ++step) {
      size = MutateConfigInput(buffer.data(), size, kMaxSize, ++seed);
      ASSERT_LE(size, kMaxSize);
      ++total;
      stguard::LintReport report;
      if (LintPair(std::string_view(reinterpret_cast<const char*>(buffer.data()), size), &report) &&
          !report.family.empty()) {
        ++linted;
        if (Errors(report) > 0) ++with_errors;
      }
    }
  }
  const double fraction = static_cast<double>(linted) / static_cast<double>(total);
  std::printf("config mutator: %zu of %zu outputs lint a family (%.1f%%), %zu of them with errors\n",
              linted, total, 100 * fraction, with_errors);
  EXPECT_GT(fraction, 0.3);
  // Both sides of the rules: clean and broken models among the linted ones.
  EXPECT_GT(with_errors, linted / 5);
  EXPECT_LT(with_errors, linted);
}

TEST(ConfigMutator, CrossOverTakesOneConfigAndTheOtherCheckpoint) {
  const std::string first = JoinConfigInput("{\"a\":1}", "FILE1");
  const std::string second = JoinConfigInput("{\"b\":2}", "FILE2");
  std::vector<uint8_t> out(64);
  bool saw[2] = {false, false};
  for (unsigned seed = 1; seed < 20; ++seed) {
    const size_t size = CrossOverConfigInput(reinterpret_cast<const uint8_t*>(first.data()), first.size(),
                                             reinterpret_cast<const uint8_t*>(second.data()), second.size(),
                                             out.data(), out.size(), seed);
    const std::string joined(reinterpret_cast<const char*>(out.data()), size);
    ASSERT_TRUE(joined == JoinConfigInput("{\"a\":1}", "FILE2") || joined == JoinConfigInput("{\"b\":2}", "FILE1"))
        << joined;
    saw[joined[2] == 'a' ? 0 : 1] = true;
  }
  EXPECT_TRUE(saw[0] && saw[1]);
}

TEST(ConfigMutator, ArbitraryBytesNeverCrashIt) {
  std::minstd_rand bytes(7);
  for (unsigned seed = 1; seed < 3000; ++seed) {
    std::vector<uint8_t> buffer(512);
    const size_t size = 1 + bytes() % 300;
    for (size_t i = 0; i < size; ++i) buffer[i] = static_cast<uint8_t>(bytes());
    if (seed % 3 == 0) buffer[bytes() % size] = 0;  // a config / checkpoint split
    ASSERT_LE(MutateConfigInput(buffer.data(), size, buffer.size(), seed), buffer.size());
  }
}

TEST(PickleMutator, DecodeThenEncodeGivesBackTorchsPickles) {
  size_t pickles = 0;
  for (const std::string& file : TorchSeeds()) {
    std::vector<ZipRecordModel> records;
    if (!DecodeZip(file, &records)) continue;  // legacy
    for (const ZipRecordModel& record : records) {
      if (!record.name.ends_with("data.pkl")) continue;
      std::vector<PickleOp> ops;
      ASSERT_EQ(DecodePickle(record.bytes, &ops), record.bytes.size()) << record.name;
      EXPECT_EQ(EncodePickle(ops), record.bytes);
      ++pickles;
    }
  }
  EXPECT_GT(pickles, 5u);
  EXPECT_TRUE(PickleAccepted(EncodePickle(StateDictPickle())));
  // A FRAME's length is recomputed from what follows it.
  std::vector<PickleOp> framed = StateDictPickle();
  framed.insert(framed.begin() + 1, PickleOp{0x95, std::string(8, '\0')});
  framed[0].arg = "\x04";
  EXPECT_TRUE(PickleAccepted(EncodePickle(framed)));
}

TEST(PickleMutator, MostChainedMutationsStillParseAndAllFit) {
  constexpr size_t kMaxSize = 4096;
  size_t accepted = 0;
  size_t total = 0;
  unsigned seed = 1;
  std::string last_accepted = EncodePickle(StateDictPickle());
  for (int step = 0; step < 3000; ++step) {
    std::vector<uint8_t> buffer(last_accepted.begin(), last_accepted.end());
    buffer.resize(kMaxSize);
    const size_t new_size = MutatePickle(buffer.data(), last_accepted.size(), kMaxSize, ++seed);
    ASSERT_LE(new_size, kMaxSize);
    const std::string out(reinterpret_cast<const char*>(buffer.data()), new_size);
    ++total;
    if (PickleAccepted(out)) {
      ++accepted;
      last_accepted = out;
    }
  }
  const double fraction = static_cast<double>(accepted) / static_cast<double>(total);
  std::printf("pickle mutator: %zu of %zu outputs accepted (%.1f%%)\n", accepted, total,
              100 * fraction);
  // A torch pickle is a tight program: one change in ten keeps it acceptable from a fresh
  // state dict (the mutator restarts from one now and then), more from grown ones.
  EXPECT_GT(fraction, 0.08);
}

// The mutator's globals come from the allowlist itself: every row (a row added there is
// fuzzed without touching the mutator), and the refused names beside them.
TEST(PickleMutator, NamesEveryAllowedGlobalAndRefusedOnes) {
  std::set<std::string> named;
  Rng rng(5);
  for (int step = 0; step < 20000; ++step) {
    std::vector<PickleOp> ops = StateDictPickle();
    MutatePickleOps(&ops, rng);
    for (size_t k = 0; k < ops.size(); ++k) {
      if (ops[k].code == stguard::op::kGlobal) named.insert(ops[k].arg);
      // STACK_GLOBAL fed from two memoised strings.
      if (ops[k].code == stguard::op::kStackGlobal && k >= 4 &&
          ops[k - 4].code == stguard::op::kShortBinUnicode &&
          ops[k - 2].code == stguard::op::kShortBinUnicode) {
        named.insert(ops[k - 4].arg + "\n" + ops[k - 2].arg);
      }
    }
  }
  for (const stguard::AllowedGlobal& row : stguard::AllowedGlobals()) {
    EXPECT_TRUE(named.contains(std::string(row.module) + "\n" + std::string(row.name)))
        << row.module << "." << row.name;
  }
  for (const char* refused : {"os\nsystem", "builtins\neval", "torch\nQInt8Storage"}) {
    EXPECT_TRUE(named.contains(refused)) << refused;
  }
}

// ReadCode returns the reader's verdict on a pickle as data.pkl (zip persistent ids).
stguard::ErrorCode ReadCode(const std::string& bytes) {
  stguard::PickleReadOptions options;
  options.persistent_ids = stguard::PersistentIds::kZip;
  stguard::Result<stguard::PickleResult> result =
      stguard::ReadPickle(std::as_bytes(std::span(bytes.data(), bytes.size())), options);
  return result.ok() ? stguard::ErrorCode::kOk : result.error().code;
}

TEST(PickleMutator, FramesKeepTheirLengthBeyondTheirContents) {
  std::vector<PickleOp> framed = StateDictPickle();
  framed[0].arg = "\x04";
  auto with_delta = [&](int64_t delta) {
    std::vector<PickleOp> ops = framed;
    ops.insert(ops.begin() + 1, PickleOp{0x95, std::string(8, '\0')});
    const auto bits = static_cast<uint64_t>(delta);
    for (size_t k = 0; k < 8; ++k) ops[1].arg[k] = static_cast<char>((bits >> (8 * k)) & 0xff);
    return EncodePickle(ops);
  };
  // Decoding gives back the delta, so encoding gives back the same bytes.
  for (int64_t delta : {0, 8, -9}) {
    const std::string bytes = with_delta(delta) + "tail bytes";
    std::vector<PickleOp> ops;
    ASSERT_NE(DecodePickle(bytes, &ops), 0u);
    EXPECT_EQ(EncodePickle(ops) + "tail bytes", bytes) << delta;
  }
  EXPECT_EQ(ReadCode(with_delta(0)), stguard::ErrorCode::kOk);
  // 8 bytes past STOP (into what follows), and 9 short (cutting the GLOBAL before STOP).
  EXPECT_EQ(ReadCode(with_delta(8) + "12345678"), stguard::ErrorCode::kPickleFrameAmbiguous);
  EXPECT_EQ(ReadCode(with_delta(-9)), stguard::ErrorCode::kPickleFrameAmbiguous);
}

TEST(PickleMutator, MakesOddFramesAndTarShapedFiles) {
  constexpr size_t kMaxSize = 4096;
  size_t frame_refusals = 0;
  size_t tar_shaped = 0;
  const std::string start = EncodePickle(StateDictPickle());
  for (unsigned seed = 1; seed <= 4000; ++seed) {
    std::vector<uint8_t> buffer(start.begin(), start.end());
    buffer.resize(kMaxSize);
    const size_t size = MutatePickle(buffer.data(), start.size(), kMaxSize, seed);
    const std::string out(reinterpret_cast<const char*>(buffer.data()), size);
    if (ReadCode(out) == stguard::ErrorCode::kPickleFrameAmbiguous) ++frame_refusals;
    if (stguard::PassesTarHeaderTest(std::as_bytes(std::span(out.data(), out.size())))) {
      ++tar_shaped;
    }
  }
  std::printf("pickle mutator: %zu frame refusals, %zu tar-shaped of 4000\n", frame_refusals,
              tar_shaped);
  EXPECT_GT(frame_refusals, 10u);
  EXPECT_GT(tar_shaped, 10u);
  // A tar-shaped torch file is refused as such, whatever it was.
  std::string file = TorchSeeds().front();
  MakeTarShaped(&file);
  const stguard::TorchScanReport report =
      stguard::ScanTorchBytes(std::as_bytes(std::span(file.data(), file.size())));
  EXPECT_EQ(report.error.code, stguard::ErrorCode::kTarAmbiguous);
}

TEST(ZipMutator, DecodeThenEncodeKeepsTorchArchivesValid) {
  size_t archives = 0;
  for (const std::string& file : TorchSeeds()) {
    std::vector<ZipRecordModel> records;
    if (!DecodeZip(file, &records)) continue;
    ++archives;
    for (const ZipLayout layout : {ZipLayout{false, false}, ZipLayout{true, true}}) {
      const std::string encoded = EncodeZip(records, layout);
      EXPECT_TRUE(TorchAccepted(encoded)) << records[0].name;
      std::vector<ZipRecordModel> again;
      ASSERT_TRUE(DecodeZip(encoded, &again));
      ASSERT_EQ(again.size(), records.size());
      for (size_t k = 0; k < again.size(); ++k) {
        EXPECT_EQ(again[k].name, records[k].name);
        EXPECT_EQ(again[k].bytes, records[k].bytes);
      }
    }
  }
  EXPECT_GT(archives, 5u);
  const std::string made = EncodeZip(TorchArchive(), ZipLayout{true, true});
  ASSERT_TRUE(TorchAccepted(made));
  // One lie each: a changed CRC-32 byte is refused when the record is read.
  std::string lied = made;
  lied[lied.rfind("PK\x01\x02") + 16] ^= 1;
  EXPECT_FALSE(stguard::ScanTorchBytes(std::as_bytes(std::span(lied.data(), lied.size())))
                   .error.ok());
}

TEST(ZipMutator, ManyMutatedCheckpointsStillOpenAndAllFit) {
  constexpr size_t kMaxSize = 16384;
  size_t accepted = 0;
  size_t total = 0;
  unsigned seed = 1;
  for (const std::string& start : TorchSeeds()) {
    if (start.size() > kMaxSize) continue;
    std::string last_accepted = start;
    for (int step = 0; step < 200; ++step) {
      std::vector<uint8_t> buffer(last_accepted.begin(), last_accepted.end());
      buffer.resize(kMaxSize);
      const size_t new_size =
          MutateTorchCheckpoint(buffer.data(), last_accepted.size(), kMaxSize, ++seed);
      ASSERT_LE(new_size, kMaxSize);
      const std::string out(reinterpret_cast<const char*>(buffer.data()), new_size);
      ++total;
      if (TorchAccepted(out)) {
        ++accepted;
        last_accepted = out;
      }
    }
  }
  ASSERT_GT(total, 0u);
  const double fraction = static_cast<double>(accepted) / static_cast<double>(total);
  std::printf("torch checkpoint mutator: %zu of %zu outputs open (%.1f%%)\n", accepted, total,
              100 * fraction);
  EXPECT_GT(fraction, 0.1);
}

// Shape names what about an archive torch reads otherwise than a plain ZIP reader.
enum class Shape { kEndInComment, kCaseTwins, kScriptRecord, kBigEndian, kOtherVersion,
                   kEscapedOffset, kCount };

// ShapesOf lists the shapes `bytes` has (an independent reading of the encoded archive).
std::vector<Shape> ShapesOf(const std::string& bytes) {
  std::vector<Shape> shapes;
  const size_t end = bytes.rfind("PK\x05\x06");
  if (end != std::string::npos && bytes.size() >= 22 && end != bytes.size() - 22 &&
      bytes.rfind("PK\x05\x06", end - 1) != std::string::npos) {
    shapes.push_back(Shape::kEndInComment);
  }
  for (size_t at = bytes.find("PK\x01\x02"); at != std::string::npos && at + 46 <= bytes.size();
       at = bytes.find("PK\x01\x02", at + 4)) {
    if (bytes.compare(at + 42, 4, "\xff\xff\xff\xff") == 0) {
      shapes.push_back(Shape::kEscapedOffset);
      break;
    }
  }
  std::vector<ZipRecordModel> records;
  if (!DecodeZip(bytes, &records)) return shapes;
  std::set<std::string> exact, folded;
  for (const ZipRecordModel& record : records) {
    std::string lower = record.name;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (exact.insert(record.name).second && !folded.insert(lower).second) {
      shapes.push_back(Shape::kCaseTwins);
    }
    if (record.name.ends_with("/constants.pkl") || record.name.find("/code/") != std::string::npos) {
      shapes.push_back(Shape::kScriptRecord);
    }
    if (record.name.ends_with("/byteorder") && record.bytes != "little") {
      shapes.push_back(Shape::kBigEndian);
    }
    bool readable = false;  // a version torch reads: "<n>\n", n from 1 to 10
    for (int n = 1; n <= 10; ++n) readable = readable || record.bytes == std::to_string(n) + "\n";
    if (record.name.ends_with("/version") && !readable) shapes.push_back(Shape::kOtherVersion);
  }
  return shapes;
}

TEST(ZipMutator, MakesTheShapesTorchReadsOtherwise) {
  // Each shape that makes torch read another pickle, take another loader or refuse the
  // file is made from a torch.save archive, and the reader refuses every one made.
  size_t made[static_cast<size_t>(Shape::kCount)] = {};
  const std::string start = EncodeZip(TorchArchive(), ZipLayout{true, true});
  constexpr size_t kMaxSize = 4096;
  for (unsigned seed = 1; seed <= 6000; ++seed) {
    std::vector<uint8_t> buffer(start.begin(), start.end());
    buffer.resize(kMaxSize);
    const size_t size = MutateTorchCheckpoint(buffer.data(), start.size(), kMaxSize, seed);
    const std::string out(reinterpret_cast<const char*>(buffer.data()), size);
    const std::vector<Shape> shapes = ShapesOf(out);
    for (Shape shape : shapes) ++made[static_cast<size_t>(shape)];
    if (!shapes.empty()) EXPECT_FALSE(TorchAccepted(out)) << "seed " << seed;
  }
  std::printf("of 6000 mutations: %zu end records in a comment, %zu case twins, %zu "
              "TorchScript records, %zu byte orders, %zu unreadable versions, %zu escaped "
              "offsets\n",
              made[0], made[1], made[2], made[3], made[4], made[5]);
  for (size_t k = 0; k < static_cast<size_t>(Shape::kCount); ++k) {
    EXPECT_GT(made[k], 0u) << "shape " << k << " never made";
  }
}

TEST(ZipMutator, ArbitraryBytesNeverCrashIt) {
  Rng rng(7);
  for (int k = 0; k < 2000; ++k) {
    std::vector<uint8_t> buffer(64 + rng.Below(512));
    for (uint8_t& byte : buffer) byte = static_cast<uint8_t>(rng.Below(256));
    const size_t size = rng.Below(64);
    if (k % 3 == 0) std::memcpy(buffer.data(), "PK\x03\x04", 4);
    ASSERT_LE(MutateTorchCheckpoint(buffer.data(), size, buffer.size(), k), buffer.size());
    ASSERT_LE(MutatePickle(buffer.data(), size, buffer.size(), k), buffer.size());
    std::vector<uint8_t> out(buffer.size());
    ASSERT_LE(CrossOverTorchCheckpoint(buffer.data(), size, buffer.data(), buffer.size(),
                                       out.data(), out.size(), k),
              out.size());
  }
}

bool NpyAccepted(std::string_view file) {
  return stguard::ParseNpy(std::as_bytes(std::span(file.data(), file.size())), file.size()).ok();
}

// Chained mutations from the corpus's valid files (numpy's seeds; the merged fuzzing
// inputs are mostly invalid on purpose) stay valid .npy files often enough to test the
// dict's rules, and every output fits.
TEST(NpyMutator, ManyMutatedFilesStillParseAndAllFit) {
  constexpr size_t kMaxSize = 16384;
  size_t accepted = 0;
  size_t total = 0;
  unsigned seed = 1;
  for (const std::string& start : ReadFolder("fuzz_npy")) {
    if (!NpyAccepted(start)) continue;
    std::string last_accepted = start;
    for (int step = 0; step < 100; ++step) {
      std::vector<uint8_t> buffer(last_accepted.begin(), last_accepted.end());
      buffer.resize(kMaxSize);
      const size_t new_size = MutateNpy(buffer.data(), last_accepted.size(), kMaxSize, ++seed);
      ASSERT_LE(new_size, kMaxSize);
      const std::string out(reinterpret_cast<const char*>(buffer.data()), new_size);
      ++total;
      if (NpyAccepted(out)) {
        ++accepted;
        last_accepted = out;
      }
    }
  }
  ASSERT_GT(total, 0u);
  const double fraction = static_cast<double>(accepted) / static_cast<double>(total);
  std::printf("npy mutator: %zu of %zu outputs parse (%.1f%%)\n", accepted, total,
              100 * fraction);
  EXPECT_GT(fraction, 0.1);
}

TEST(NpyMutator, ArbitraryBytesNeverCrashIt) {
  Rng rng(11);
  for (int k = 0; k < 2000; ++k) {
    std::vector<uint8_t> buffer(64 + rng.Below(512));
    for (uint8_t& byte : buffer) byte = static_cast<uint8_t>(rng.Below(256));
    const size_t size = rng.Below(64);
    if (k % 3 == 0) std::memcpy(buffer.data(), "\x93NUMPY\x01\x00", 8);
    ASSERT_LE(MutateNpy(buffer.data(), size, buffer.size(), k), buffer.size());
  }
}

}  // namespace
}  // namespace stguard_fuzz::mutator

namespace stguard_fuzz::mutator {
namespace {

// The npz mutator reaches the rules on names and keys: over the seeds, some outputs are
// refused as two members answering one numpy key, some for a name zipfile decodes
// otherwise, some for the version needed, and some stay valid.
TEST(NpzMutator, ReachesTheRulesOnNamesAndKeys) {
  std::set<stguard::ErrorCode> codes;
  size_t valid = 0;
  for (const std::string& seed : ReadFolder("fuzz_npz")) {
    for (unsigned k = 0; k < 64; ++k) {
      std::vector<uint8_t> buffer(seed.begin(), seed.end());
      buffer.resize(std::max<size_t>(buffer.size() * 3, 1 << 16));
      const size_t size =
          MutateNpz(buffer.data(), seed.size(), buffer.size(), k);
      const stguard::Result<stguard::NpzInfo> npz =
          stguard::ParseNpz(std::as_bytes(std::span(buffer.data(), size)));
      if (npz.ok()) {
        ++valid;
      } else {
        codes.insert(npz.error().code);
      }
    }
  }
  EXPECT_GT(valid, 0u);
  EXPECT_TRUE(codes.count(stguard::ErrorCode::kZipDuplicateName));
  EXPECT_TRUE(codes.count(stguard::ErrorCode::kNpzMemberName));
  EXPECT_TRUE(codes.count(stguard::ErrorCode::kZipUnsupported));
}

}  // namespace
}  // namespace stguard_fuzz::mutator
