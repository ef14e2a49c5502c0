// SPDX-License-Identifier: Apache-2.0
// bench/generators.cc: the benchmark checkpoints. Shapes and names follow the public
// configurations of the models named below; only the header matters for validation, so
// the data is a hole in a sparse file.
#include "generators.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace stguard_bench {
namespace {

using stguard::Dtype;

[[noreturn]] void Die(const char* what, const std::string& path) {
  std::fprintf(stderr, "stguard bench: %s %s: %s\n", what, path.c_str(), std::strerror(errno));
  std::abort();
}

void Add(std::vector<TensorSpec>* out, std::string name, Dtype dtype,
         std::vector<uint64_t> shape) {
  out->push_back(TensorSpec{std::move(name), dtype, std::move(shape)});
}

// GPT-2 small (openai-community/gpt2): 12 layers, width 768, F32, 148 tensors.
std::vector<TensorSpec> Gpt2() {
  constexpr uint64_t kWidth = 768;
  std::vector<TensorSpec> t;
  Add(&t, "wte.weight", Dtype::kF32, {50257, kWidth});
  Add(&t, "wpe.weight", Dtype::kF32, {1024, kWidth});
  for (int i = 0; i < 12; ++i) {
    const std::string p = "h." + std::to_string(i) + ".";
    Add(&t, p + "ln_1.weight", Dtype::kF32, {kWidth});
    Add(&t, p + "ln_1.bias", Dtype::kF32, {kWidth});
    Add(&t, p + "attn.c_attn.weight", Dtype::kF32, {kWidth, 3 * kWidth});
    Add(&t, p + "attn.c_attn.bias", Dtype::kF32, {3 * kWidth});
    Add(&t, p + "attn.c_proj.weight", Dtype::kF32, {kWidth, kWidth});
    Add(&t, p + "attn.c_proj.bias", Dtype::kF32, {kWidth});
    Add(&t, p + "ln_2.weight", Dtype::kF32, {kWidth});
    Add(&t, p + "ln_2.bias", Dtype::kF32, {kWidth});
    Add(&t, p + "mlp.c_fc.weight", Dtype::kF32, {kWidth, 4 * kWidth});
    Add(&t, p + "mlp.c_fc.bias", Dtype::kF32, {4 * kWidth});
    Add(&t, p + "mlp.c_proj.weight", Dtype::kF32, {4 * kWidth, kWidth});
    Add(&t, p + "mlp.c_proj.bias", Dtype::kF32, {kWidth});
  }
  Add(&t, "ln_f.weight", Dtype::kF32, {kWidth});
  Add(&t, "ln_f.bias", Dtype::kF32, {kWidth});
  return t;
}

// A Llama-architecture decoder in BF16: 3 + 9 * layers tensors.
struct LlamaConfig {
  uint64_t vocab, hidden, kv_width, intermediate;
  int layers;
};

std::vector<TensorSpec> Llama(const LlamaConfig& c) {
  std::vector<TensorSpec> t;
  Add(&t, "model.embed_tokens.weight", Dtype::kBF16, {c.vocab, c.hidden});
  for (int i = 0; i < c.layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    Add(&t, p + "input_layernorm.weight", Dtype::kBF16, {c.hidden});
    Add(&t, p + "mlp.down_proj.weight", Dtype::kBF16, {c.hidden, c.intermediate});
    Add(&t, p + "mlp.gate_proj.weight", Dtype::kBF16, {c.intermediate, c.hidden});
    Add(&t, p + "mlp.up_proj.weight", Dtype::kBF16, {c.intermediate, c.hidden});
    Add(&t, p + "post_attention_layernorm.weight", Dtype::kBF16, {c.hidden});
    Add(&t, p + "self_attn.k_proj.weight", Dtype::kBF16, {c.kv_width, c.hidden});
    Add(&t, p + "self_attn.o_proj.weight", Dtype::kBF16, {c.hidden, c.hidden});
    Add(&t, p + "self_attn.q_proj.weight", Dtype::kBF16, {c.hidden, c.hidden});
    Add(&t, p + "self_attn.v_proj.weight", Dtype::kBF16, {c.kv_width, c.hidden});
  }
  Add(&t, "model.norm.weight", Dtype::kBF16, {c.hidden});
  Add(&t, "lm_head.weight", Dtype::kBF16, {c.vocab, c.hidden});
  return t;
}

// One shard of a Qwen3-30B-A3B-like MoE (hidden 2048, 128 experts of width 768), Hugging
// Face names, layers in order until `num_tensors` tensors.
std::vector<TensorSpec> MoeShard(size_t num_tensors) {
  constexpr uint64_t kHidden = 2048, kExperts = 128, kExpertWidth = 768, kHeadDim = 128;
  std::vector<TensorSpec> t;
  t.reserve(num_tensors);
  for (int layer = 0; t.size() < num_tensors; ++layer) {
    const std::string p = "model.layers." + std::to_string(layer) + ".";
    Add(&t, p + "input_layernorm.weight", Dtype::kBF16, {kHidden});
    Add(&t, p + "post_attention_layernorm.weight", Dtype::kBF16, {kHidden});
    Add(&t, p + "self_attn.q_proj.weight", Dtype::kBF16, {32 * kHeadDim, kHidden});
    Add(&t, p + "self_attn.k_proj.weight", Dtype::kBF16, {4 * kHeadDim, kHidden});
    Add(&t, p + "self_attn.v_proj.weight", Dtype::kBF16, {4 * kHeadDim, kHidden});
    Add(&t, p + "self_attn.o_proj.weight", Dtype::kBF16, {kHidden, 32 * kHeadDim});
    Add(&t, p + "self_attn.q_norm.weight", Dtype::kBF16, {kHeadDim});
    Add(&t, p + "self_attn.k_norm.weight", Dtype::kBF16, {kHeadDim});
    Add(&t, p + "mlp.gate.weight", Dtype::kBF16, {kExperts, kHidden});
    for (uint64_t e = 0; e < kExperts; ++e) {
      const std::string q = p + "mlp.experts." + std::to_string(e) + ".";
      Add(&t, q + "down_proj.weight", Dtype::kBF16, {kHidden, kExpertWidth});
      Add(&t, q + "gate_proj.weight", Dtype::kBF16, {kExpertWidth, kHidden});
      Add(&t, q + "up_proj.weight", Dtype::kBF16, {kExpertWidth, kHidden});
    }
  }
  t.resize(num_tensors);
  return t;
}

// Fine-grained experts with DeepSeek's native names (layers.N.ffn.experts.E.w1.weight):
// 61 layers of 4,314 experts of width 64 over hidden 1024, until `num_tensors` tensors.
std::vector<TensorSpec> FineGrainedExperts(size_t num_tensors) {
  constexpr uint64_t kHidden = 1024, kExperts = 4314, kExpertWidth = 64;
  std::vector<TensorSpec> t;
  t.reserve(num_tensors);
  for (int layer = 0; t.size() < num_tensors; ++layer) {
    const std::string p = "layers." + std::to_string(layer) + ".";
    Add(&t, p + "attn_norm.weight", Dtype::kBF16, {kHidden});
    Add(&t, p + "attn.wq.weight", Dtype::kBF16, {kHidden, kHidden});
    Add(&t, p + "attn.wk.weight", Dtype::kBF16, {kHidden / 4, kHidden});
    Add(&t, p + "attn.wv.weight", Dtype::kBF16, {kHidden / 4, kHidden});
    Add(&t, p + "attn.wo.weight", Dtype::kBF16, {kHidden, kHidden});
    Add(&t, p + "ffn_norm.weight", Dtype::kBF16, {kHidden});
    Add(&t, p + "ffn.gate.weight", Dtype::kBF16, {kExperts, kHidden});
    for (uint64_t e = 0; e < kExperts; ++e) {
      const std::string q = p + "ffn.experts." + std::to_string(e) + ".";
      Add(&t, q + "w1.weight", Dtype::kBF16, {kExpertWidth, kHidden});
      Add(&t, q + "w2.weight", Dtype::kBF16, {kHidden, kExpertWidth});
      Add(&t, q + "w3.weight", Dtype::kBF16, {kExpertWidth, kHidden});
    }
  }
  t.resize(num_tensors);
  return t;
}

void AppendUint(uint64_t value, std::string* out) {
  char buffer[24];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  out->append(buffer, result.ptr);
}

}  // namespace

std::string_view LayoutName(Layout layout) {
  switch (layout) {
    case Layout::kGpt2:
      return "gpt2";
    case Layout::kLlama3_8B:
      return "llama3_8b";
    case Layout::kMoeShard:
      return "moe_24k";
    case Layout::kNearCap:
      return "near_cap";
    case Layout::kHeaderGen800k:
      return "gen_800k";
    case Layout::kWriter1GB:
      return "writer_1gb";
  }
  return "?";
}

std::vector<TensorSpec> MakeTensors(Layout layout) {
  switch (layout) {
    case Layout::kGpt2:
      return Gpt2();
    case Layout::kLlama3_8B:
      return Llama({128256, 4096, 1024, 14336, 32});
    case Layout::kMoeShard:
      return MoeShard(24'000);
    case Layout::kNearCap:
      return FineGrainedExperts(790'000);
    case Layout::kHeaderGen800k:
      return FineGrainedExperts(800'000);
    case Layout::kWriter1GB:
      return Llama({32000, 2048, 256, 5632, 9});
  }
  return {};
}

uint64_t ByteSize(const TensorSpec& tensor) {
  uint64_t elements = 1;
  for (uint64_t dim : tensor.shape) elements *= dim;
  return elements * stguard::DtypeBits(tensor.dtype) / 8;
}

GeneratedHeader BuildCanonicalHeader(std::vector<TensorSpec> tensors, uint64_t pad_to) {
  std::sort(tensors.begin(), tensors.end(), [](const TensorSpec& a, const TensorSpec& b) {
    if (a.dtype != b.dtype) return a.dtype > b.dtype;
    return a.name < b.name;  // std::string compares bytes as unsigned char
  });
  GeneratedHeader out;
  std::string& h = out.text;
  h.reserve(tensors.size() * 128 + 64);
  h += "{\"__metadata__\":{\"format\":\"pt\"}";
  uint64_t offset = 0;
  for (TensorSpec& tensor : tensors) {
    tensor.begin = offset;
    offset += ByteSize(tensor);
    tensor.end = offset;
    // Generated names are plain ASCII with no quote, backslash or control byte.
    h += ",\"";
    h += tensor.name;
    h += "\":{\"dtype\":\"";
    h += stguard::DtypeName(tensor.dtype);
    h += "\",\"shape\":[";
    for (size_t i = 0; i < tensor.shape.size(); ++i) {
      if (i != 0) h += ',';
      AppendUint(tensor.shape[i], &h);
    }
    h += "],\"data_offsets\":[";
    AppendUint(tensor.begin, &h);
    h += ',';
    AppendUint(tensor.end, &h);
    h += "]}";
  }
  h += '}';
  h.append((8 - h.size() % 8) % 8, ' ');
  if (pad_to > h.size()) h.append(pad_to - h.size(), ' ');
  out.tensors = std::move(tensors);
  out.data_len = offset;
  return out;
}

std::vector<TensorSpec> ZeroSizeVariant(std::vector<TensorSpec> tensors) {
  for (TensorSpec& tensor : tensors) {
    if (tensor.shape.empty()) {
      tensor.shape.push_back(0);
    } else {
      tensor.shape[0] = 0;
    }
  }
  return tensors;
}

std::vector<TensorSpec> ShrinkData(std::vector<TensorSpec> tensors, uint64_t divisor) {
  for (TensorSpec& tensor : tensors) {
    if (divisor != 0 && !tensor.shape.empty() && tensor.shape[0] % divisor == 0) {
      tensor.shape[0] /= divisor;
    }
  }
  return tensors;
}

std::string LengthPrefix(uint64_t header_len) {
  std::string prefix(8, '\0');
  for (int i = 0; i < 8; ++i) prefix[i] = static_cast<char>(header_len >> (8 * i));
  return prefix;
}

void WriteSparseCheckpoint(const std::string& path, const GeneratedHeader& header) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) Die("cannot create", path);
  const std::string head = LengthPrefix(header.text.size()) + header.text;
  size_t done = 0;
  while (done < head.size()) {
    const ssize_t n = ::write(fd, head.data() + done, head.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) Die("cannot write", path);
    done += static_cast<size_t>(n);
  }
  if (::ftruncate(fd, static_cast<off_t>(header.file_size())) != 0) {
    Die("cannot extend (sparse files needed)", path);
  }
  if (::close(fd) != 0) Die("cannot close", path);
}

ScratchDir::ScratchDir() {
  const char* base = std::getenv("STGUARD_BENCH_TMPDIR");
  std::string pattern = std::string(base != nullptr && *base != '\0' ? base : "/tmp") +
                        "/stguard-bench.XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) Die("cannot create directory", pattern);
  path_ = pattern;
}

ScratchDir::~ScratchDir() {
  for (const std::string& file : files_) ::unlink(file.c_str());
  ::rmdir(path_.c_str());
}

std::string ScratchDir::File(std::string_view name) {
  std::string path = path_ + "/" + std::string(name);
  files_.push_back(path);
  return path;
}

}  // namespace stguard_bench
