// SPDX-License-Identifier: Apache-2.0
// stguard lint, one rule at a time: a tiny model of each family (header-only, data a
// sparse hole) that lints clean, and one change that each rule must catch. Plus the
// hostile configs (huge layer counts, overflowing products), the findings cap, and the table
// sanity check (the command line: tests/cli/lint_cli_test.cc).
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "lint/engine.h"
#include "stguard/json_tokenizer.h"
#include "stguard/lint.h"
#include "stguard/verdict.h"
#include "support/sparse_checkpoint.h"
#include "support/lint_models.h"
#include "support/temp_dir.h"
#include "support/test_files.h"

namespace stguard {
namespace {

using testing::LintTest;
using testing::Model;
using testing::ShapedTensor;
using testing::TinyLlama;
using testing::TempDir;
using testing::WriteFileBytes;

// TinyGpt2: vocab 50, n_embd 8, 2 layers, 16 positions, tied, optional prefix.
Model TinyGpt2(const std::string& prefix = "") {
  Model model;
  model.config = R"({"model_type": "gpt2", "vocab_size": 50, "n_embd": 8, "n_layer": 2,)"
                 R"( "n_head": 2, "n_positions": 16, "n_inner": null})";
  model.tensors = {{prefix + "wte.weight", Dtype::kF32, {50, 8}},
                   {prefix + "wpe.weight", Dtype::kF32, {16, 8}},
                   {prefix + "ln_f.weight", Dtype::kF32, {8}},
                   {prefix + "ln_f.bias", Dtype::kF32, {8}}};
  for (int i = 0; i < 2; ++i) {
    const std::string p = prefix + "h." + std::to_string(i) + ".";
    for (const char* ln : {"ln_1", "ln_2"}) {
      model.tensors.push_back({p + ln + ".weight", Dtype::kF32, {8}});
      model.tensors.push_back({p + ln + ".bias", Dtype::kF32, {8}});
    }
    model.tensors.push_back({p + "attn.c_attn.weight", Dtype::kF32, {8, 24}});
    model.tensors.push_back({p + "attn.c_attn.bias", Dtype::kF32, {24}});
    model.tensors.push_back({p + "attn.c_proj.weight", Dtype::kF32, {8, 8}});
    model.tensors.push_back({p + "attn.c_proj.bias", Dtype::kF32, {8}});
    model.tensors.push_back({p + "mlp.c_fc.weight", Dtype::kF32, {8, 32}});
    model.tensors.push_back({p + "mlp.c_fc.bias", Dtype::kF32, {32}});
    model.tensors.push_back({p + "mlp.c_proj.weight", Dtype::kF32, {32, 8}});
    model.tensors.push_back({p + "mlp.c_proj.bias", Dtype::kF32, {8}});
  }
  return model;
}

// Qwen: TinyLlama renamed, with q/k/v biases (qwen2) or q/k norms (qwen3).
Model TinyQwen(int version) {
  Model model = TinyLlama();
  model.SetConfig("\"llama\"", version == 2 ? "\"qwen2\"" : "\"qwen3\"");
  if (version == 3) model.SetConfig("\"intermediate_size\"", "\"head_dim\": 4, \"intermediate_size\"");
  for (int i = 0; i < 2; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".self_attn.";
    if (version == 2) {
      model.tensors.push_back({p + "q_proj.bias", Dtype::kF32, {16}});
      model.tensors.push_back({p + "k_proj.bias", Dtype::kF32, {8}});
      model.tensors.push_back({p + "v_proj.bias", Dtype::kF32, {8}});
    } else {
      model.tensors.push_back({p + "q_norm.weight", Dtype::kF32, {4}});
      model.tensors.push_back({p + "k_norm.weight", Dtype::kF32, {4}});
    }
  }
  return model;
}

Model TinyBigram() {
  Model model;
  model.config = R"({"tl_arch": "bigram", "vocab_size": 27})";
  model.tensors = {{"bigram.weight", Dtype::kF32, {27, 27}}};
  model.metadata = {{"format", "tinyllm"}};
  return model;
}

TEST_F(LintTest, EveryFamilyCleanCase) {
  ExpectClean(Lint(TinyLlama()));
  EXPECT_EQ(LintModel(dir_.path()).family, "llama");
}
TEST_F(LintTest, Qwen2Clean) { ExpectClean(Lint(TinyQwen(2))); }
TEST_F(LintTest, Qwen3Clean) { ExpectClean(Lint(TinyQwen(3))); }
TEST_F(LintTest, Gpt2CleanWithoutPrefix) { ExpectClean(Lint(TinyGpt2())); }
TEST_F(LintTest, Gpt2CleanWithTransformerPrefix) { ExpectClean(Lint(TinyGpt2("transformer."))); }
TEST_F(LintTest, BigramClean) { ExpectClean(Lint(TinyBigram())); }

TEST_F(LintTest, MistralSharesTheLlamaTable) {
  Model model = TinyLlama();
  model.SetConfig("\"llama\"", "\"mistral\"");
  ExpectClean(Lint(model));
}

TEST_F(LintTest, FamilyFromArchitecturesWhenModelTypeIsAbsent) {
  Model model = TinyLlama();
  model.SetConfig("\"model_type\": \"llama\"", "\"architectures\": [\"LlamaForCausalLM\"]");
  ExpectClean(Lint(model));
}

// ---- config.json -------------------------------------------------------------------
TEST_F(LintTest, ConfigInvalidJson) {
  Model model = TinyLlama();
  model.config += ",";
  const LintReport report = Lint(model);
  ExpectOnly(report, "config-invalid-json", 1);
  EXPECT_EQ(report.family, "");
}

TEST_F(LintTest, ConfigNotObject) {
  Model model = TinyLlama();
  model.config = "[1]";
  ExpectOnly(Lint(model), "config-not-object", 1);
}

TEST_F(LintTest, ConfigDuplicateKeyAtTopLevelAndNested) {
  Model model = TinyLlama();
  model.SetConfig("\"vocab_size\": 32", "\"vocab_size\": 32, \"vocab_size\": 33");
  ExpectOnly(Lint(model), "config-duplicate-key", 1);
  model = TinyLlama();
  model.SetConfig("\"vocab_size\": 32", "\"vocab_size\": 32, \"x\": {\"a\": 1, \"\\u0061\": 2}");
  ExpectOnly(Lint(model), "config-duplicate-key", 1);
}

TEST_F(LintTest, ConfigWrongType) {
  for (const char* value : {"\"16\"", "16.0", "1.6e1", "true", "[16]"}) {
    Model model = TinyLlama();
    model.SetConfig("\"hidden_size\": 16", std::string("\"hidden_size\": ") + value);
    const LintReport report = Lint(model);
    EXPECT_EQ(Count(report, "config-wrong-type"), 1u) << value << "\n" << Describe(report);
    EXPECT_EQ(report.num_warnings(), 0u) << Describe(report);
  }
  Model model = TinyLlama();
  model.SetConfig("\"tie_word_embeddings\": false", "\"tie_word_embeddings\": \"false\"");
  EXPECT_EQ(Count(Lint(model), "config-wrong-type"), 1u);
}

TEST_F(LintTest, ConfigMissingField) {
  Model model = TinyLlama();
  model.SetConfig("\"intermediate_size\": 24,", "");
  const LintReport report = Lint(model);
  ExpectOnly(report, "config-missing-field", 1);
  EXPECT_EQ(First(report, "config-missing-field")->expected, "intermediate_size");
  // null means absent: a default applies where there is one (num_key_value_heads).
  model = TinyLlama();
  model.SetConfig("\"num_key_value_heads\": 2", "\"num_key_value_heads\": null");
  EXPECT_EQ(Count(Lint(model), "wrong-shape"), 4u);  // k and v of 2 layers: now [16, 16]
}

TEST_F(LintTest, ConfigValueNegativeInexactZeroAndOverflow) {
  const std::pair<const char*, const char*> cases[] = {
      {"\"hidden_size\": 16", "\"hidden_size\": -16"},
      {"\"num_attention_heads\": 4", "\"num_attention_heads\": 3"},  // 16 / 3
      {"\"num_attention_heads\": 4", "\"num_attention_heads\": 0"},
      {"\"vocab_size\": 32", "\"vocab_size\": 18446744073709551616"},
      {"\"intermediate_size\": 24", "\"head_dim\": 4611686018427387904, \"intermediate_size\": 24"},
      {"\"num_key_value_heads\": 2", "\"num_key_value_heads\": 3"},  // 4 heads / 3 kv heads
      {"\"num_key_value_heads\": 2", "\"num_key_value_heads\": 0"},
  };
  for (const auto& [from, to] : cases) {
    Model model = TinyLlama();
    model.SetConfig(from, to);
    const LintReport report = Lint(model);
    EXPECT_GE(Count(report, "config-value"), 1u) << to << "\n" << Describe(report);
    // The only other errors are shapes that differ from what the config (now) implies.
    EXPECT_EQ(Count(report, "config-value") + Count(report, "wrong-shape"), report.num_errors())
        << to << "\n" << Describe(report);
  }
}

TEST_F(LintTest, ConfigLinkingOutOfTheFolderIsRefused) {
  Model model = TinyLlama();
  const std::string config = model.config;
  model.config.clear();
  Lint(model);
  TempDir outside;
  ASSERT_TRUE(WriteFileBytes(outside.File("config.json"), config));
  ASSERT_EQ(::symlink(outside.File("config.json").c_str(), dir_.File("config.json").c_str()), 0);
  const LintReport report = LintModel(dir_.path());
  ExpectOnly(report, "config-unsafe", 1);
  LintOptions options;
  options.dir.allow_external_symlinks = true;
  ExpectClean(LintModel(dir_.path(), options));
}

// Lint after the folder check takes config.json's text from the mapping the check made
// (CheckResult::config), not from the file again: with the file gone since, the kept text
// is still linted; without it, lint reads the folder and finds no config.json.
TEST_F(LintTest, ConfigAsTheFolderCheckReadItIsLinted) {
  ExpectClean(Lint(TinyLlama()));
  CheckOptions check;
  check.keep_reader = true;
  CheckResult checked = CheckFolder(dir_.path(), check);
  ASSERT_TRUE(checked.valid());
  ASSERT_NE(checked.checkpoint_dir, nullptr);
  ASSERT_NE(checked.config, nullptr);
  ASSERT_EQ(::unlink(dir_.File("config.json").c_str()), 0);
  ExpectClean(LintModel(*checked.checkpoint_dir, checked.config.get(), LintOptions{}));
  ExpectOnly(LintModel(*checked.checkpoint_dir, nullptr, LintOptions{}), "config-missing", 1,
             LintSeverity::kWarning);
}

TEST_F(LintTest, ConfigMissingIsAWarningAndOtherRulesStillRun) {
  Model model = TinyLlama();
  model.config.clear();
  ExpectOnly(Lint(model), "config-missing", 1, LintSeverity::kWarning);
}

TEST_F(LintTest, UnknownFamilyIsAWarning) {
  Model model = TinyLlama();
  model.SetConfig("\"llama\"", "\"bert\"");
  const LintReport report = Lint(model);
  ExpectOnly(report, "unknown-family", 1, LintSeverity::kWarning);
  EXPECT_EQ(report.family, "");
}

// ---- tensors against the table -------------------------------------------------------
TEST_F(LintTest, MissingTensor) {
  Model model = TinyLlama();
  model.Remove("model.layers.1.mlp.down_proj.weight");
  const LintReport report = Lint(model);
  ExpectOnly(report, "missing-tensor", 1);
  EXPECT_EQ(report.findings[0].tensor, "model.layers.1.mlp.down_proj.weight");
  EXPECT_EQ(report.findings[0].expected, "[16, 24]");
}

TEST_F(LintTest, WrongShapeGroupedQueryAttention) {
  Model model = TinyLlama();
  model.Find("model.layers.0.self_attn.k_proj.weight")->shape = {16, 16};  // full MHA size
  const LintReport report = Lint(model);
  ExpectOnly(report, "wrong-shape", 1);
  EXPECT_EQ(report.findings[0].expected, "[8, 16]");
  EXPECT_EQ(report.findings[0].found, "[16, 16]");
  EXPECT_FALSE(report.findings[0].transposed);
}

TEST_F(LintTest, WrongShapeSaysTransposed) {
  Model model = TinyLlama();
  model.Find("model.layers.1.mlp.down_proj.weight")->shape = {24, 16};
  const LintReport report = Lint(model);
  ExpectOnly(report, "wrong-shape", 1);
  EXPECT_TRUE(report.findings[0].transposed);
  Model gpt2 = TinyGpt2();
  gpt2.Find("h.0.attn.c_attn.weight")->shape = {24, 8};  // nn.Linear layout, not Conv1D
  const LintReport gpt2_report = Lint(gpt2);
  ExpectOnly(gpt2_report, "wrong-shape", 1);
  EXPECT_TRUE(gpt2_report.findings[0].transposed);
}

TEST_F(LintTest, WrongShapeEmbeddingOneRowTooMany) {
  Model model = TinyLlama();
  model.Find("model.embed_tokens.weight")->shape = {33, 16};
  ExpectOnly(Lint(model), "wrong-shape", 1);
}

TEST_F(LintTest, LayerOutOfRange) {
  Model model = TinyLlama();
  model.tensors.push_back({"model.layers.2.input_layernorm.weight", Dtype::kF32, {16}});
  model.tensors.push_back({"model.layers.99999999999999999999999.input_layernorm.weight",
                           Dtype::kF32, {16}});
  ExpectOnly(Lint(model), "layer-out-of-range", 2);
}

TEST_F(LintTest, LmHeadMissingInUntiedModel) {
  Model model = TinyLlama();
  model.Remove("lm_head.weight");
  ExpectOnly(Lint(model), "lm-head-missing", 1);
  model.SetConfig("\"tie_word_embeddings\": false", "\"tie_word_embeddings\": true");
  ExpectClean(Lint(model));
}

TEST_F(LintTest, LmHeadInTiedModelIsAWarning) {
  Model model = TinyLlama();
  model.SetConfig("\"tie_word_embeddings\": false", "\"tie_word_embeddings\": true");
  ExpectOnly(Lint(model), "lm-head-tied", 1, LintSeverity::kWarning);
}

TEST_F(LintTest, UnknownTensorsListedOnceWithACount) {
  Model model = TinyLlama();
  model.tensors.push_back({"model.layers.0.self_attn.rotary_emb.inv_freq", Dtype::kF32, {2}});
  model.tensors.push_back({"model.layers.1.self_attn.rotary_emb.inv_freq", Dtype::kF32, {2}});
  const LintReport report = Lint(model);
  ExpectOnly(report, "unknown-tensor", 1, LintSeverity::kWarning);
  EXPECT_EQ(report.findings[0].found, "2 tensors");
  EXPECT_EQ(report.findings[0].tensor, "model.layers.0.self_attn.rotary_emb.inv_freq");
}

TEST_F(LintTest, DtypeDifferentFromTorchDtype) {
  Model model = TinyLlama(Dtype::kBF16);
  ExpectOnly(Lint(model), "dtype-mismatch", 1, LintSeverity::kWarning);
  model.SetConfig("\"float32\"", "\"bfloat16\"");
  ExpectClean(Lint(model));
}

TEST_F(LintTest, DuplicateUnderTwoPrefixes) {
  Model model = TinyGpt2();
  model.tensors.push_back({"transformer.wte.weight", Dtype::kF32, {50, 8}});
  ExpectOnly(Lint(model), "duplicate-tensor", 1);
}

TEST_F(LintTest, Qwen2BiasesAreRequired) {
  Model model = TinyQwen(2);
  model.Remove("model.layers.0.self_attn.k_proj.bias");
  ExpectOnly(Lint(model), "missing-tensor", 1);
}

TEST_F(LintTest, LlamaBiasesFollowAttentionBias) {
  Model model = TinyQwen(2);
  model.SetConfig("\"qwen2\"", "\"llama\"");  // llama: attention_bias defaults to false
  ExpectOnly(Lint(model), "unexpected-tensor", 6, LintSeverity::kWarning);
  model.SetConfig("\"rms_norm_eps\"", "\"attention_bias\": true, \"rms_norm_eps\"");
  ExpectOnly(Lint(model), "missing-tensor", 2);  // o_proj.bias of both layers
}

TEST_F(LintTest, Qwen3QkNormsUseHeadDim) {
  Model model = TinyQwen(3);
  model.Find("model.layers.1.self_attn.k_norm.weight")->shape = {16};
  ExpectOnly(Lint(model), "wrong-shape", 1);
}

TEST_F(LintTest, BigramMustBeF32) {
  Model model = TinyBigram();
  model.tensors[0].dtype = Dtype::kF16;
  ExpectOnly(Lint(model), "wrong-dtype", 1);
}

// ---- the format page's contracts ----------------------------------------------------
TEST_F(LintTest, CourseFilesMustSayTinyllm) {
  Model model = TinyBigram();
  model.metadata = {{"format", "pt"}};
  ExpectOnly(Lint(model), "format-metadata", 1);
  model.metadata.clear();
  ExpectOnly(Lint(model), "format-metadata", 1);
  Model course = TinyLlama();
  course.SetConfig("\"model_type\": \"llama\"", "\"tl_arch\": \"llama\"");
  course.metadata = {{"format", "tinyllm"}};
  ExpectClean(Lint(course));
}

TEST_F(LintTest, OtherFilesWithoutFormatGetAWarning) {
  Model model = TinyLlama();
  model.metadata.clear();
  ExpectOnly(Lint(model), "format-metadata", 1, LintSeverity::kWarning);
}

TEST_F(LintTest, TokenizerJsonOnlyWhenTlTokenizerIsFile) {
  Model model = TinyBigram();
  model.SetConfig("\"vocab_size\"", "\"tl_tokenizer\": \"file\", \"vocab_size\"");
  ExpectOnly(Lint(model), "tl-tokenizer", 1, LintSeverity::kWarning);
  ASSERT_TRUE(WriteFileBytes(dir_.File("tokenizer.json"), "{}"));
  ExpectClean(Lint(model));
  model.SetConfig("\"file\"", "\"bytes\"");
  ExpectOnly(Lint(model), "tl-tokenizer", 1, LintSeverity::kWarning);
}

// Int4: layer 0's k_proj [8, 16] and down_proj [16, 24] quantized with group 8.
Model QuantizedLlama(const std::string& quant = "int4-g8-sym") {
  Model model = TinyLlama();
  model.Remove("model.layers.0.self_attn.k_proj.weight");
  model.Remove("model.layers.0.mlp.down_proj.weight");
  model.tensors.push_back({"model.layers.0.self_attn.k_proj.qweight", Dtype::kU8, {8, 8}});
  model.tensors.push_back({"model.layers.0.self_attn.k_proj.scales", Dtype::kF16, {8, 2}});
  model.tensors.push_back({"model.layers.0.mlp.down_proj.qweight", Dtype::kU8, {16, 12}});
  model.tensors.push_back({"model.layers.0.mlp.down_proj.scales", Dtype::kF16, {16, 3}});
  model.metadata = {{"format", "pt"}, {"quant", quant}};
  return model;
}

TEST_F(LintTest, Int4PairsClean) { ExpectClean(Lint(QuantizedLlama())); }

TEST_F(LintTest, Int4Unpaired) {
  Model model = QuantizedLlama();
  model.Remove("model.layers.0.self_attn.k_proj.scales");
  ExpectOnly(Lint(model), "int4-unpaired", 1);
}

TEST_F(LintTest, Int4Dtype) {
  Model model = QuantizedLlama();
  model.Find("model.layers.0.self_attn.k_proj.qweight")->dtype = Dtype::kI8;
  model.Find("model.layers.0.self_attn.k_proj.scales")->dtype = Dtype::kF32;
  ExpectOnly(Lint(model), "int4-dtype", 2);
}

TEST_F(LintTest, Int4ShapeCheckedAgainstTheFamilyTable) {
  Model model = QuantizedLlama();
  // A qweight sized for full multi-head attention: consistent with its scales, wrong for
  // num_key_value_heads.
  model.Find("model.layers.0.self_attn.k_proj.qweight")->shape = {16, 8};
  model.Find("model.layers.0.self_attn.k_proj.scales")->shape = {16, 2};
  const LintReport report = Lint(model);
  ExpectOnly(report, "int4-shape", 2);
  EXPECT_EQ(report.findings[0].expected, "[8, 8]");
}

TEST_F(LintTest, Int4GroupMustDivideIn) {
  const LintReport report = Lint(QuantizedLlama("int4-g16-sym"));
  EXPECT_EQ(Count(report, "int4-group"), 1u) << Describe(report);  // down_proj: 24 % 16
  EXPECT_EQ(Count(report, "int4-shape"), 1u) << Describe(report);  // k_proj scales: [8, 1]
  EXPECT_EQ(report.findings.size(), 2u) << Describe(report);
  EXPECT_EQ(Count(Lint(QuantizedLlama("int4-g4-sym")), "int4-shape"), 2u);  // scales for g8
}

TEST_F(LintTest, Int4GroupAcceptedWhenItDivides) {
  Model model = QuantizedLlama("int4-g4-sym");
  model.Find("model.layers.0.self_attn.k_proj.scales")->shape = {8, 4};
  model.Find("model.layers.0.mlp.down_proj.scales")->shape = {16, 6};
  ExpectClean(Lint(model));
}

TEST_F(LintTest, Int4OddIn) {
  Model model = QuantizedLlama();
  model.SetConfig("\"intermediate_size\": 24", "\"intermediate_size\": 25");
  for (ShapedTensor& tensor : model.tensors) {
    if (tensor.name.find("gate_proj") != std::string::npos ||
        tensor.name.find("up_proj") != std::string::npos) {
      tensor.shape[0] = 25;
    }
    if (tensor.name == "model.layers.1.mlp.down_proj.weight") tensor.shape[1] = 25;
  }
  ExpectOnly(Lint(model), "int4-odd-in", 1);
}

TEST_F(LintTest, Int4NeedsQuantMetadataAndTheReverse) {
  Model model = QuantizedLlama();
  model.metadata = {{"format", "pt"}};
  ExpectOnly(Lint(model), "int4-quant-metadata", 1);
  Model plain = TinyLlama();
  plain.metadata = {{"format", "pt"}, {"quant", "int4-g8-sym"}};
  ExpectOnly(Lint(plain), "int4-quant-metadata", 1);
  ExpectOnly(Lint(QuantizedLlama("int4-g08-sym")), "int4-quant-metadata", 1);
  ExpectOnly(Lint(QuantizedLlama("int8-g8-sym")), "int4-quant-metadata", 1);
}

TEST_F(LintTest, Int4WithoutConfigChecksPairsAgainstEachOther) {
  Model model = QuantizedLlama();
  model.config.clear();
  ExpectOnly(Lint(model), "config-missing", 1, LintSeverity::kWarning);
  model.Find("model.layers.0.mlp.down_proj.scales")->shape = {16, 4};
  const LintReport report = Lint(model);
  EXPECT_EQ(Count(report, "int4-shape"), 1u) << Describe(report);
}

// ---- check first, hostile configs, the cap ----------------------------------------------
TEST_F(LintTest, InvalidCheckpointIsAnError) {
  ASSERT_TRUE(WriteFileBytes(dir_.File("model.safetensors"),
                             testing::FileWithHeader(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,8]}})")));
  ASSERT_TRUE(WriteFileBytes(dir_.File("config.json"), TinyLlama().config));
  const LintReport report = LintModel(dir_.path());
  ExpectOnly(report, "invalid-checkpoint", 1);
}

TEST_F(LintTest, MissingPathIsAnIoError) {
  const LintReport report = LintModel(dir_.File("nothing-here"));
  EXPECT_EQ(report.error.code, ErrorCode::kIoError);
  LintOptions options;
  options.config_path = dir_.File("no-config.json");
  ASSERT_TRUE(testing::WriteSparseCheckpoint(dir_.File("model.safetensors"), TinyLlama().tensors, {}).ok());
  EXPECT_EQ(LintModel(dir_.path(), options).error.code, ErrorCode::kIoError);
}

TEST_F(LintTest, HugeLayerCountIsBoundedAndCounted) {
  Model model = TinyLlama();
  model.SetConfig("\"num_hidden_layers\": 2", "\"num_hidden_layers\": 1000000000000000000");
  const LintReport report = Lint(model);
  EXPECT_EQ(Count(report, "missing-tensor"), kMaxFindingsPerRule + 1) << Describe(report);
  const LintFinding& more = report.findings.back();
  EXPECT_EQ(more.rule, "missing-tensor");
  // 9 rows per layer: 9 * 10^18 expected, 18 present, 20 listed.
  EXPECT_EQ(more.found, std::to_string(9000000000000000000ull - 18 - 20) + " more");
}

TEST_F(LintTest, GiantVocabNeverAllocates) {
  Model model = TinyLlama();
  model.SetConfig("\"vocab_size\": 32", "\"vocab_size\": 18446744073709551615");
  ExpectOnly(Lint(model), "wrong-shape", 2);
}

TEST_F(LintTest, FindingsArCappedPerRule) {
  Model model = TinyLlama();
  for (int i = 2; i < 40; ++i) {
    model.tensors.push_back({"model.layers." + std::to_string(i) + ".input_layernorm.weight",
                             Dtype::kF32, {16}});
  }
  const LintReport report = Lint(model);
  ExpectOnly(report, "layer-out-of-range", kMaxFindingsPerRule + 1);
  EXPECT_EQ(report.findings.back().found, "18 more");
}

// Every formula of every table evaluates with every field set to 1 (no typo in a table).
TEST(LintFamilies, EveryTableFormulaIsWellFormed) {
  for (const lint::Family& family : lint::Families()) {
    std::vector<lint::FieldValue> fields;
    for (const lint::FieldSpec& field : family.fields) {
      fields.push_back(lint::FieldValue{field.name, 1, true});
      if (field.type == lint::FieldType::kCount && !field.fallback.empty()) {
        uint64_t value = 0;
        std::string detail;
        EXPECT_EQ(lint::EvaluateDim(field.fallback, fields, &value, &detail), lint::FormulaError::kOk)
            << family.name << " " << field.name;
      }
    }
    bool has_layers = family.layers_field.empty();
    for (const lint::FieldSpec& field : family.fields) has_layers |= field.name == family.layers_field;
    EXPECT_TRUE(has_layers) << family.name;
    for (std::string_view constraint : family.constraints) {
      uint64_t value = 0;
      std::string detail;
      EXPECT_EQ(lint::EvaluateDim(constraint, fields, &value, &detail), lint::FormulaError::kOk)
          << family.name << " " << constraint;
    }
    for (const lint::TensorRow& row : family.rows) {
      std::vector<uint64_t> dims;
      std::string detail;
      EXPECT_EQ(lint::EvaluateShape(row.shape, fields, &dims, &detail), lint::FormulaError::kOk)
          << family.name << " " << row.pattern;
      if (row.when == lint::When::kIfTrue || row.when == lint::When::kIfFalse) {
        bool declared = false;
        for (const lint::FieldSpec& field : family.fields) {
          declared |= field.name == row.when_field && field.type == lint::FieldType::kBool;
        }
        EXPECT_TRUE(declared) << family.name << " " << row.pattern;
      }
    }
  }
  std::vector<lint::FieldValue> none;
  uint64_t value = 0;
  std::string detail;
  EXPECT_EQ(lint::EvaluateDim("undeclared*2", none, &value, &detail), lint::FormulaError::kSyntax);
  EXPECT_EQ(lint::EvaluateDim("2**2", none, &value, &detail), lint::FormulaError::kSyntax);
}

}  // namespace
}  // namespace stguard
