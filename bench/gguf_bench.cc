// SPDX-License-Identifier: Apache-2.0
// gguf_bench: header validation of a realistic GGUF file, stguard against ggml's own
// reader (gguf_init_from_file with no_alloc and a tensor context, as llama.cpp loads),
// in-process (median of repeated opens) and as whole processes (wall time and peak RSS).
//
//   gguf_bench [FILE]        builds FILE (default /tmp/stguard_llama3_8b.gguf) if absent:
//                            a llama-3-8B-shaped Q4_K_M table of 291 tensors, a 128,256-token
//                            string array, token types and 280,147 merges; the data section
//                            is sparse (never written), so the file costs little disk.
//   gguf_bench --one stguard|ggml FILE   one open, for the whole-process figures.
// ggml's library is the test-only one of tools/fetch_ggml.sh ($STGUARD_GGML_LIB to override).
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "stguard/gguf.h"
#include "support/gguf_encoder.h"

namespace {

using stguard::testing::GgufModel;
using stguard::testing::GgufTensor;

struct ggml_context;
struct gguf_context;
struct gguf_init_params {
  bool no_alloc;
  ggml_context** ctx;
};
using InitFromFile = gguf_context* (*)(const char*, gguf_init_params);
using GgufFree = void (*)(gguf_context*);
using GgmlFree = void (*)(ggml_context*);
using LogSet = void (*)(void (*)(int, const char*, void*), void*);

struct Ggml {
  InitFromFile init = nullptr;
  GgufFree free_gguf = nullptr;
  GgmlFree free_ggml = nullptr;
};

bool LoadGgml(Ggml* ggml) {
  const char* env = std::getenv("STGUARD_GGML_LIB");
  const std::string path = env != nullptr ? env
                                          : std::string(std::getenv("HOME")) +
                                                "/.cache/stguard/ggml-3.21.1/libggml-base.so";
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return false;
  ggml->init = reinterpret_cast<InitFromFile>(dlsym(handle, "gguf_init_from_file"));
  ggml->free_gguf = reinterpret_cast<GgufFree>(dlsym(handle, "gguf_free"));
  ggml->free_ggml = reinterpret_cast<GgmlFree>(dlsym(handle, "ggml_free"));
  auto log_set = reinterpret_cast<LogSet>(dlsym(handle, "ggml_log_set"));
  if (log_set != nullptr) log_set([](int, const char*, void*) {}, nullptr);
  return ggml->init != nullptr && ggml->free_gguf != nullptr && ggml->free_ggml != nullptr;
}

constexpr uint32_t kF32 = 0, kQ4K = 12, kQ6K = 14;

GgufModel Llama3Model(uint64_t* data_bytes) {
  using namespace stguard::testing;
  GgufModel model;
  model.kvs = {GgufStr("general.architecture", "llama"), GgufStr("general.name", "Meta Llama 3 8B"),
               GgufU32("llama.block_count", 32), GgufU32("llama.context_length", 8192),
               GgufU32("llama.embedding_length", 4096), GgufU32("llama.feed_forward_length", 14336),
               GgufU32("llama.attention.head_count", 32), GgufU32("llama.attention.head_count_kv", 8),
               GgufF32("llama.rope.freq_base", 500000.0f),
               GgufF32("llama.attention.layer_norm_rms_epsilon", 1e-5f), GgufU32("general.file_type", 15),
               GgufU32("llama.vocab_size", 128256), GgufU32("llama.rope.dimension_count", 128),
               GgufStr("tokenizer.ggml.model", "gpt2"), GgufStr("tokenizer.ggml.pre", "llama-bpe"),
               GgufU32("tokenizer.ggml.bos_token_id", 128000), GgufU32("tokenizer.ggml.eos_token_id", 128009),
               GgufStr("tokenizer.chat_template", std::string(1500, 't')),
               GgufU32("general.quantization_version", 2)};
  std::vector<std::string> tokens, merges;
  std::vector<int32_t> types;
  for (int i = 0; i < 128256; ++i) {
    tokens.push_back("\xc4\xa0tok" + std::to_string(i * 2654435761u % 100000));
    types.push_back(i < 128000 ? 1 : 3);
  }
  for (int i = 0; i < 280147; ++i) merges.push_back("\xc4\xa0t o" + std::to_string(i % 9973));
  model.kvs.push_back(GgufStrArray("tokenizer.ggml.tokens", tokens));
  model.kvs.push_back(GgufI32Array("tokenizer.ggml.token_type", types));
  model.kvs.push_back(GgufStrArray("tokenizer.ggml.merges", merges));

  auto add = [&](std::string name, uint32_t type, std::vector<uint64_t> ne) {
    model.tensors.push_back({std::move(name), type, std::move(ne), {}, std::string()});
  };
  add("token_embd.weight", kQ4K, {4096, 128256});
  for (int b = 0; b < 32; ++b) {
    const std::string p = "blk." + std::to_string(b) + ".";
    add(p + "attn_norm.weight", kF32, {4096});
    add(p + "attn_q.weight", kQ4K, {4096, 4096});
    add(p + "attn_k.weight", kQ4K, {4096, 1024});
    add(p + "attn_v.weight", kQ6K, {4096, 1024});
    add(p + "attn_output.weight", kQ4K, {4096, 4096});
    add(p + "ffn_norm.weight", kF32, {4096});
    add(p + "ffn_gate.weight", kQ4K, {4096, 14336});
    add(p + "ffn_up.weight", kQ4K, {4096, 14336});
    add(p + "ffn_down.weight", kQ6K, {14336, 4096});
  }
  add("output_norm.weight", kF32, {4096});
  add("output.weight", kQ6K, {4096, 128256});
  // The data is not written: offsets are set to the true layout and the file is extended
  // sparsely to its full length.
  uint64_t next = 0;
  for (GgufTensor& tensor : model.tensors) {
    tensor.offset = next;
    next = (next + GgufTensorBytes(tensor) + 31) / 32 * 32;
  }
  *data_bytes = next;
  return model;
}

bool MakeFile(const std::string& path) {
  uint64_t data_bytes = 0;
  const std::string header = stguard::testing::Encode(Llama3Model(&data_bytes));
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return false;
  const bool ok = write(fd, header.data(), header.size()) == static_cast<ssize_t>(header.size()) &&
                  ftruncate(fd, static_cast<off_t>(header.size() + data_bytes)) == 0;
  close(fd);
  std::printf("built %s: %zu header bytes, %.2f GB of (sparse) tensor data\n", path.c_str(),
              header.size(), static_cast<double>(data_bytes) / 1e9);
  return ok;
}

bool OpenOnce(const std::string& which, const std::string& path, const Ggml& ggml) {
  if (which == "stguard") {
    stguard::Result<stguard::gguf::GgufFile> file = stguard::gguf::GgufFile::Open(path);
    if (!file.ok()) std::fprintf(stderr, "%s\n", file.error().ToString().c_str());
    return file.ok();
  }
  ggml_context* tensors = nullptr;
  gguf_context* ctx = ggml.init(path.c_str(), {true, &tensors});
  if (ctx == nullptr) return false;
  ggml.free_gguf(ctx);
  if (tensors != nullptr) ggml.free_ggml(tensors);
  return true;
}

double MedianMs(const std::string& which, const std::string& path, const Ggml& ggml, int runs) {
  std::vector<double> times;
  for (int i = 0; i < runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    if (!OpenOnce(which, path, ggml)) return -1;
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// WholeProcess runs `self --one which path` and reports wall ms and peak RSS (MiB).
void WholeProcess(const char* self, const std::string& which, const std::string& path,
                  double* ms, double* rss_mib) {
  const auto start = std::chrono::steady_clock::now();
  const pid_t child = fork();
  if (child == 0) {
    execl(self, self, "--one", which.c_str(), path.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  struct rusage usage {};
  wait4(child, &status, 0, &usage);
  *ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  *rss_mib = static_cast<double>(usage.ru_maxrss) / 1024.0;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) *ms = -1;
}

}  // namespace

int main(int argc, char** argv) {
  Ggml ggml;
  const bool have_ggml = LoadGgml(&ggml);
  if (argc == 4 && std::string(argv[1]) == "--one") {
    if (std::string(argv[2]) == "ggml" && !have_ggml) return 2;
    return OpenOnce(argv[2], argv[3], ggml) ? 0 : 1;
  }
  const std::string path = argc > 1 ? argv[1] : "/tmp/stguard_llama3_8b.gguf";
  if (access(path.c_str(), R_OK) != 0 && !MakeFile(path)) {
    std::fprintf(stderr, "cannot build %s\n", path.c_str());
    return 2;
  }
  std::printf("| reader | in-process median (ms) | whole process (ms) | peak RSS (MiB) |\n");
  std::printf("|---|---|---|---|\n");
  for (const std::string which : {"stguard", "ggml"}) {
    if (which == "ggml" && !have_ggml) {
      std::printf("| ggml | skipped: library absent (tools/fetch_ggml.sh) | | |\n");
      continue;
    }
    const double median = MedianMs(which, path, ggml, 15);
    double ms = 0, rss = 0;
    WholeProcess(argv[0], which, path, &ms, &rss);
    std::printf("| %s | %.2f | %.1f | %.1f |\n", which.c_str(), median, ms, rss);
  }
  return 0;
}
