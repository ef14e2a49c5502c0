// SPDX-License-Identifier: Apache-2.0
// The family tables (see family_table.h for what each column means). Sources: the
// transformers modeling and configuration files of each family (tensor names, which
// projections carry biases, config defaults) and the format page (bigram, tl_arch).
//
// To add a family: write its fields, rows (and constraints) and names here, from the
// shared groups where it shares a layout, append it to kFamilies, and add an accept and a
// reject test in tests/lint_test.cc (plus a real config if one is public).
#include <algorithm>
#include <array>
#include <iterator>

#include "lint/family_table.h"

namespace stguard::lint {
namespace {

// JoinTable concatenates row or field groups, in order, into one table at compile time.
template <typename Row, size_t... kSizes>
constexpr std::array<Row, (kSizes + ...)> JoinTable(const Row (&... groups)[kSizes]) {
  std::array<Row, (kSizes + ...)> table{};
  size_t next = 0;
  ((std::copy(std::begin(groups), std::end(groups), table.begin() + next), next += kSizes), ...);
  return table;
}

constexpr std::string_view kNoPrefix[] = {""};
// Grouped-query attention: each key/value head serves the same number of query heads.
constexpr std::string_view kGqaConstraints[] = {"num_attention_heads/num_key_value_heads"};

// ---- llama and its relatives (mistral, qwen2, qwen3): one decoder layout ---------------
// The three families differ only in a few rows and config defaults, so their tables are
// joined from the shared groups below (JoinTable keeps the groups' order), which keeps a
// fix to one shared row from being made in one family and forgotten in the others.

// The config fields every llama-style family reads, before its own (head_dim, flags).
// LlamaConfig, Qwen2Config, Qwen3Config: num_key_value_heads defaults to
// num_attention_heads.
constexpr FieldSpec kDecoderFields[] = {
    {"vocab_size", FieldType::kCount, ""},
    {"hidden_size", FieldType::kCount, ""},
    {"num_hidden_layers", FieldType::kCount, ""},
    {"num_attention_heads", FieldType::kCount, ""},
    {"intermediate_size", FieldType::kCount, ""},
    {"num_key_value_heads", FieldType::kCount, "num_attention_heads"},
};
constexpr FieldSpec kHeadDimFromHidden[] = {
    {"head_dim", FieldType::kCount, "hidden_size/num_attention_heads"},
};
constexpr FieldSpec kUntiedByDefault[] = {
    {"tie_word_embeddings", FieldType::kBool, "false"},
};
constexpr FieldSpec kAttentionBiasFlag[] = {
    {"attention_bias", FieldType::kBool, "false"},
};

constexpr TensorRow kEmbedTokens[] = {
    {"model.embed_tokens.weight", "vocab_size, hidden_size"},
};
constexpr TensorRow kAttentionProjections[] = {
    {"model.layers.{i}.self_attn.q_proj.weight", "num_attention_heads*head_dim, hidden_size",
     When::kAlways, {}, Int4Layout::kOutIn},
    {"model.layers.{i}.self_attn.k_proj.weight", "num_key_value_heads*head_dim, hidden_size",
     When::kAlways, {}, Int4Layout::kOutIn},
    {"model.layers.{i}.self_attn.v_proj.weight", "num_key_value_heads*head_dim, hidden_size",
     When::kAlways, {}, Int4Layout::kOutIn},
    {"model.layers.{i}.self_attn.o_proj.weight", "hidden_size, num_attention_heads*head_dim",
     When::kAlways, {}, Int4Layout::kOutIn},
};
// q/k/v/o biases when the config's attention_bias is true (LlamaAttention, Qwen3Attention).
constexpr TensorRow kFlaggedAttentionBiases[] = {
    {"model.layers.{i}.self_attn.q_proj.bias", "num_attention_heads*head_dim", When::kIfTrue,
     "attention_bias"},
    {"model.layers.{i}.self_attn.k_proj.bias", "num_key_value_heads*head_dim", When::kIfTrue,
     "attention_bias"},
    {"model.layers.{i}.self_attn.v_proj.bias", "num_key_value_heads*head_dim", When::kIfTrue,
     "attention_bias"},
    {"model.layers.{i}.self_attn.o_proj.bias", "hidden_size", When::kIfTrue, "attention_bias"},
};
constexpr TensorRow kGatedMlp[] = {
    {"model.layers.{i}.mlp.gate_proj.weight", "intermediate_size, hidden_size", When::kAlways,
     {}, Int4Layout::kOutIn},
    {"model.layers.{i}.mlp.up_proj.weight", "intermediate_size, hidden_size", When::kAlways, {},
     Int4Layout::kOutIn},
    {"model.layers.{i}.mlp.down_proj.weight", "hidden_size, intermediate_size", When::kAlways,
     {}, Int4Layout::kOutIn},
};
constexpr TensorRow kDecoderNorms[] = {
    {"model.layers.{i}.input_layernorm.weight", "hidden_size"},
    {"model.layers.{i}.post_attention_layernorm.weight", "hidden_size"},
    {"model.norm.weight", "hidden_size"},
};
constexpr TensorRow kUntiedLmHead[] = {
    {"lm_head.weight", "vocab_size, hidden_size", When::kIfFalse, "tie_word_embeddings",
     Int4Layout::kOutIn, std::nullopt, false, "lm-head-missing", "lm-head-tied"},
};

// llama, mistral (tl_arch "llama"). LlamaConfig: head_dim defaults to hidden_size //
// num_attention_heads; tie_word_embeddings, attention_bias and mlp_bias to false.
constexpr std::string_view kLlamaTypes[] = {"llama", "mistral"};
constexpr std::string_view kLlamaArchitectures[] = {"LlamaForCausalLM", "MistralForCausalLM"};
constexpr FieldSpec kMlpBiasFlag[] = {
    {"mlp_bias", FieldType::kBool, "false"},
};
constexpr TensorRow kFlaggedMlpBiases[] = {
    {"model.layers.{i}.mlp.gate_proj.bias", "intermediate_size", When::kIfTrue, "mlp_bias"},
    {"model.layers.{i}.mlp.up_proj.bias", "intermediate_size", When::kIfTrue, "mlp_bias"},
    {"model.layers.{i}.mlp.down_proj.bias", "hidden_size", When::kIfTrue, "mlp_bias"},
};
constexpr auto kLlamaFields = JoinTable(kDecoderFields, kHeadDimFromHidden, kUntiedByDefault,
                                        kAttentionBiasFlag, kMlpBiasFlag);
constexpr auto kLlamaRows = JoinTable(kEmbedTokens, kAttentionProjections,
                                      kFlaggedAttentionBiases, kGatedMlp, kFlaggedMlpBiases,
                                      kDecoderNorms, kUntiedLmHead);

// qwen2: q/k/v biases always (Qwen2Attention), no o_proj or mlp bias.
constexpr std::string_view kQwen2Types[] = {"qwen2"};
constexpr std::string_view kQwen2Architectures[] = {"Qwen2ForCausalLM"};
constexpr TensorRow kQwen2QkvBiases[] = {
    {"model.layers.{i}.self_attn.q_proj.bias", "num_attention_heads*head_dim"},
    {"model.layers.{i}.self_attn.k_proj.bias", "num_key_value_heads*head_dim"},
    {"model.layers.{i}.self_attn.v_proj.bias", "num_key_value_heads*head_dim"},
};
constexpr auto kQwen2Fields = JoinTable(kDecoderFields, kHeadDimFromHidden, kUntiedByDefault);
constexpr auto kQwen2Rows = JoinTable(kEmbedTokens, kAttentionProjections, kQwen2QkvBiases,
                                      kGatedMlp, kDecoderNorms, kUntiedLmHead);

// qwen3: per-head RMS norms of q and k (Qwen3Attention). Qwen3Config: head_dim defaults
// to 128 (not hidden_size / heads); attention_bias to false.
constexpr std::string_view kQwen3Types[] = {"qwen3"};
constexpr std::string_view kQwen3Architectures[] = {"Qwen3ForCausalLM"};
constexpr FieldSpec kHeadDim128[] = {
    {"head_dim", FieldType::kCount, "128"},
};
constexpr TensorRow kQkNorms[] = {
    {"model.layers.{i}.self_attn.q_norm.weight", "head_dim"},
    {"model.layers.{i}.self_attn.k_norm.weight", "head_dim"},
};
constexpr auto kQwen3Fields =
    JoinTable(kDecoderFields, kHeadDim128, kUntiedByDefault, kAttentionBiasFlag);
constexpr auto kQwen3Rows = JoinTable(kEmbedTokens, kAttentionProjections,
                                      kFlaggedAttentionBiases, kQkNorms, kGatedMlp,
                                      kDecoderNorms, kUntiedLmHead);

// ---- gpt2: Conv1D weights are stored [in, out]; names with or without "transformer." --
// GPT2Config: n_inner None means 4 * n_embd; tie_word_embeddings defaults to true. The
// causal-mask buffers attn.bias [1, 1, n_positions, n_positions] and the scalar
// attn.masked_bias are in checkpoints saved by older transformers (the hub's gpt2 file
// holds attn.bias): known, never required.
constexpr std::string_view kGpt2Types[] = {"gpt2"};
constexpr std::string_view kGpt2Architectures[] = {"GPT2LMHeadModel", "GPT2Model"};
constexpr std::string_view kGpt2Prefixes[] = {"", "transformer."};
constexpr FieldSpec kGpt2Fields[] = {
    {"vocab_size", FieldType::kCount, ""},
    {"n_embd", FieldType::kCount, ""},
    {"n_layer", FieldType::kCount, ""},
    {"n_positions", FieldType::kCount, ""},
    {"n_inner", FieldType::kCount, "4*n_embd"},
    {"tie_word_embeddings", FieldType::kBool, "true"},
};
constexpr TensorRow kGpt2Rows[] = {
    {"wte.weight", "vocab_size, n_embd"},
    {"wpe.weight", "n_positions, n_embd"},
    {"h.{i}.ln_1.weight", "n_embd"},
    {"h.{i}.ln_1.bias", "n_embd"},
    {"h.{i}.attn.c_attn.weight", "n_embd, 3*n_embd", When::kAlways, {}, Int4Layout::kInOut},
    {"h.{i}.attn.c_attn.bias", "3*n_embd"},
    {"h.{i}.attn.c_proj.weight", "n_embd, n_embd", When::kAlways, {}, Int4Layout::kInOut},
    {"h.{i}.attn.c_proj.bias", "n_embd"},
    {"h.{i}.attn.bias", "1, 1, n_positions, n_positions", When::kOptional},
    {"h.{i}.attn.masked_bias", "", When::kOptional},
    {"h.{i}.ln_2.weight", "n_embd"},
    {"h.{i}.ln_2.bias", "n_embd"},
    {"h.{i}.mlp.c_fc.weight", "n_embd, n_inner", When::kAlways, {}, Int4Layout::kInOut},
    {"h.{i}.mlp.c_fc.bias", "n_inner"},
    {"h.{i}.mlp.c_proj.weight", "n_inner, n_embd", When::kAlways, {}, Int4Layout::kInOut},
    {"h.{i}.mlp.c_proj.bias", "n_embd"},
    {"ln_f.weight", "n_embd"},
    {"ln_f.bias", "n_embd"},
    {"lm_head.weight", "vocab_size, n_embd", When::kIfFalse, "tie_word_embeddings",
     Int4Layout::kOutIn, std::nullopt, true, "lm-head-missing", "lm-head-tied"},
};

// ---- bigram: the format page's tracer model (tl_arch "bigram") -------------------------
constexpr std::string_view kBigramTypes[] = {"bigram"};
constexpr FieldSpec kBigramFields[] = {
    {"vocab_size", FieldType::kCount, ""},
};
constexpr TensorRow kBigramRows[] = {
    {"bigram.weight", "vocab_size, vocab_size", When::kAlways, {}, Int4Layout::kNone,
     Dtype::kF32},
};

constexpr Family kFamilies[] = {
    {"llama", kLlamaTypes, kLlamaArchitectures, "num_hidden_layers", kNoPrefix, kLlamaFields,
     kLlamaRows, kGqaConstraints},
    {"qwen2", kQwen2Types, kQwen2Architectures, "num_hidden_layers", kNoPrefix, kQwen2Fields,
     kQwen2Rows, kGqaConstraints},
    {"qwen3", kQwen3Types, kQwen3Architectures, "num_hidden_layers", kNoPrefix, kQwen3Fields,
     kQwen3Rows, kGqaConstraints},
    {"gpt2", kGpt2Types, kGpt2Architectures, "n_layer", kGpt2Prefixes, kGpt2Fields, kGpt2Rows},
    {"bigram", kBigramTypes, {}, "", kNoPrefix, kBigramFields, kBigramRows},
};

}  // namespace

std::span<const Family> Families() { return kFamilies; }

}  // namespace stguard::lint
