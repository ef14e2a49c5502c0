// SPDX-License-Identifier: Apache-2.0
#include "support/ggml_reference.h"

#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>

namespace stguard::testing {

namespace {

// The C declarations of ggml 0.4.0 (node-llama-cpp 3.21.1), as far as the tests use them.
struct ggml_context;
struct ggml_tensor;
struct gguf_context;
struct gguf_init_params {
  bool no_alloc;
  ggml_context** ctx;
};
struct ggml_init_params {
  size_t mem_size;
  void* mem_buffer;
  bool no_alloc;
};
using LogCallback = void (*)(int, const char*, void*);
constexpr size_t kTensorNeOffset = 16;  // ggml_tensor: enum type; buffer*; int64_t ne[4]

struct Api {
  void (*ggml_log_set)(LogCallback, void*);
  const char* (*ggml_type_name)(int);
  int64_t (*ggml_blck_size)(int);
  size_t (*ggml_type_size)(int);
  ggml_context* (*ggml_init)(ggml_init_params);
  void (*ggml_free)(ggml_context*);
  ggml_tensor* (*ggml_new_tensor)(ggml_context*, int, int, const int64_t*);
  ggml_tensor* (*ggml_set_name)(ggml_tensor*, const char*);
  void* (*ggml_get_data)(const ggml_tensor*);
  size_t (*ggml_nbytes)(const ggml_tensor*);
  ggml_tensor* (*ggml_get_tensor)(ggml_context*, const char*);
  gguf_context* (*gguf_init_from_file)(const char*, gguf_init_params);
  gguf_context* (*gguf_init_empty)();
  void (*gguf_free)(gguf_context*);
  uint32_t (*gguf_get_version)(const gguf_context*);
  size_t (*gguf_get_alignment)(const gguf_context*);
  size_t (*gguf_get_data_offset)(const gguf_context*);
  int64_t (*gguf_get_n_kv)(const gguf_context*);
  const char* (*gguf_get_key)(const gguf_context*, int64_t);
  int (*gguf_get_kv_type)(const gguf_context*, int64_t);
  int (*gguf_get_arr_type)(const gguf_context*, int64_t);
  size_t (*gguf_get_arr_n)(const gguf_context*, int64_t);
  const void* (*gguf_get_arr_data)(const gguf_context*, int64_t);
  const char* (*gguf_get_arr_str)(const gguf_context*, int64_t, size_t);
  const void* (*gguf_get_val_data)(const gguf_context*, int64_t);
  const char* (*gguf_get_val_str)(const gguf_context*, int64_t);
  int64_t (*gguf_get_n_tensors)(const gguf_context*);
  const char* (*gguf_get_tensor_name)(const gguf_context*, int64_t);
  size_t (*gguf_get_tensor_offset)(const gguf_context*, int64_t);
  int (*gguf_get_tensor_type)(const gguf_context*, int64_t);
  size_t (*gguf_get_tensor_size)(const gguf_context*, int64_t);
  void (*gguf_set_val_str)(gguf_context*, const char*, const char*);
  void (*gguf_set_arr_data)(gguf_context*, const char*, int, const void*, size_t);
  void (*gguf_set_arr_str)(gguf_context*, const char*, const char**, size_t);
  void (*gguf_add_tensor)(gguf_context*, const ggml_tensor*);
  bool (*gguf_write_to_file)(const gguf_context*, const char*, bool);
};

Api api;

void Silent(int, const char*, void*) {}

template <typename F>
bool Bind(void* handle, const char* name, F* out) {
  *out = reinterpret_cast<F>(dlsym(handle, name));
  return *out != nullptr;
}

bool BindAll(void* handle) {
#define STGUARD_BIND(name) ok = Bind(handle, #name, &api.name) && ok
  bool ok = true;
  STGUARD_BIND(ggml_log_set); STGUARD_BIND(ggml_type_name); STGUARD_BIND(ggml_blck_size);
  STGUARD_BIND(ggml_type_size); STGUARD_BIND(ggml_init); STGUARD_BIND(ggml_free);
  STGUARD_BIND(ggml_new_tensor); STGUARD_BIND(ggml_set_name); STGUARD_BIND(ggml_get_data);
  STGUARD_BIND(ggml_nbytes); STGUARD_BIND(ggml_get_tensor); STGUARD_BIND(gguf_init_from_file);
  STGUARD_BIND(gguf_init_empty); STGUARD_BIND(gguf_free); STGUARD_BIND(gguf_get_version);
  STGUARD_BIND(gguf_get_alignment); STGUARD_BIND(gguf_get_data_offset);
  STGUARD_BIND(gguf_get_n_kv); STGUARD_BIND(gguf_get_key); STGUARD_BIND(gguf_get_kv_type);
  STGUARD_BIND(gguf_get_arr_type); STGUARD_BIND(gguf_get_arr_n);
  STGUARD_BIND(gguf_get_arr_data); STGUARD_BIND(gguf_get_arr_str);
  STGUARD_BIND(gguf_get_val_data); STGUARD_BIND(gguf_get_val_str);
  STGUARD_BIND(gguf_get_n_tensors); STGUARD_BIND(gguf_get_tensor_name);
  STGUARD_BIND(gguf_get_tensor_offset); STGUARD_BIND(gguf_get_tensor_type);
  STGUARD_BIND(gguf_get_tensor_size); STGUARD_BIND(gguf_set_val_str);
  STGUARD_BIND(gguf_set_arr_data); STGUARD_BIND(gguf_set_arr_str);
  STGUARD_BIND(gguf_add_tensor); STGUARD_BIND(gguf_write_to_file);
#undef STGUARD_BIND
  return ok;
}

// Fixed sizes of gguf types 0..12 (0 for string and array).
constexpr size_t kSizes[13] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};

uint64_t FileSize(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

// EncodeScalar parses `text` (decimal, or float text) into the little-endian bytes of
// gguf type `type`.
void EncodeScalar(int type, const std::string& text, unsigned char* out) {
  if (type == 6) {
    const float f = std::strtof(text.c_str(), nullptr);
    std::memcpy(out, &f, 4);
  } else if (type == 12) {
    const double d = std::strtod(text.c_str(), nullptr);
    std::memcpy(out, &d, 8);
  } else if (type == 1 || type == 3 || type == 5 || type == 11) {
    const int64_t v = std::strtoll(text.c_str(), nullptr, 10);
    std::memcpy(out, &v, kSizes[type]);  // little-endian host: the low bytes
  } else {
    const uint64_t v = std::strtoull(text.c_str(), nullptr, 10);
    std::memcpy(out, &v, kSizes[type]);
  }
}

}  // namespace

std::string ValueText(int type, const void* data) {
  const auto* p = static_cast<const unsigned char*>(data);
  char text[64];
  uint64_t u = 0;
  if (type >= 0 && type < 13 && kSizes[type] > 0) std::memcpy(&u, p, kSizes[type]);
  switch (type) {
    case 1: return std::to_string(static_cast<int8_t>(u));
    case 3: return std::to_string(static_cast<int16_t>(u));
    case 5: return std::to_string(static_cast<int32_t>(u));
    case 11: return std::to_string(static_cast<int64_t>(u));
    case 6: std::snprintf(text, sizeof text, "f32:0x%08" PRIx64, u); return text;
    case 12: std::snprintf(text, sizeof text, "f64:0x%016" PRIx64, u); return text;
    default: return std::to_string(u);  // unsigned and bool
  }
}

const GgmlReference* GgmlReference::Load(std::string* why) {
  static GgmlReference* loaded = nullptr;
  static std::string failure;
  if (loaded != nullptr || !failure.empty()) {
    *why = failure;
    return loaded;
  }
  std::string path;
  if (const char* env = std::getenv("STGUARD_GGML_LIB"); env != nullptr && *env != '\0') {
    path = env;
  } else if (const char* home = std::getenv("HOME"); home != nullptr) {
    path = std::string(home) + "/.cache/stguard/ggml-3.21.1/libggml-base.so";
  }
  void* handle = path.empty() ? nullptr : dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr || !BindAll(handle)) {
    failure = "ggml's reference library is absent (" + path +
              "); run tools/fetch_ggml.sh (tools/deps.sh --all) to fetch it";
    *why = failure;
    return nullptr;
  }
  api.ggml_log_set(Silent, nullptr);
  loaded = new GgmlReference();
  loaded->handle_ = handle;
  loaded->path_ = path;
  return loaded;
}

std::string GgmlReference::Build() const {
  // Optional: builds before ggml 0.1 (2025) have neither function.
  using Text = const char* (*)();
  const auto version = reinterpret_cast<Text>(dlsym(handle_, "ggml_version"));
  const auto commit = reinterpret_cast<Text>(dlsym(handle_, "ggml_commit"));
  return std::string("ggml ") + (version != nullptr ? version() : "unknown") + " (" +
         (commit != nullptr ? commit() : "unknown") + ") from " + path_;
}

bool GgmlReference::AcceptsFullLoad(const std::string& path) const {
  const pid_t child = fork();
  if (child == 0) {
    ggml_context* tensors = nullptr;
    gguf_context* ctx = api.gguf_init_from_file(path.c_str(), {false, &tensors});
    _exit(ctx == nullptr ? 1 : 0);
  }
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child) return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

void* GgmlReference::Symbol(const char* name) const { return dlsym(handle_, name); }

std::string GgmlReference::TypeName(uint32_t id) const {
  return api.ggml_type_name(static_cast<int>(id));
}
int64_t GgmlReference::BlockSize(uint32_t id) const {
  return api.ggml_blck_size(static_cast<int>(id));
}
uint64_t GgmlReference::TypeSize(uint32_t id) const {
  return api.ggml_type_size(static_cast<int>(id));
}

bool GgmlReference::Accepts(const std::string& path) const {
  const pid_t child = fork();
  if (child == 0) {
    gguf_context* ctx = api.gguf_init_from_file(path.c_str(), {true, nullptr});
    if (ctx == nullptr) _exit(1);
    const uint64_t size = FileSize(path);
    const uint64_t data = api.gguf_get_data_offset(ctx);
    for (int64_t i = 0; i < api.gguf_get_n_tensors(ctx); ++i) {
      const uint64_t begin = data + api.gguf_get_tensor_offset(ctx, i);
      const uint64_t bytes = api.gguf_get_tensor_size(ctx, i);
      if (begin < data || begin > size || bytes > size - begin) _exit(1);
    }
    _exit(0);
  }
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child) return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

bool GgmlReference::Read(const std::string& path, Contents* out) const {
  ggml_context* tensors = nullptr;
  gguf_context* ctx = api.gguf_init_from_file(path.c_str(), {true, &tensors});
  if (ctx == nullptr) return false;
  out->version = api.gguf_get_version(ctx);
  out->alignment = api.gguf_get_alignment(ctx);
  out->data_offset = api.gguf_get_data_offset(ctx);
  for (int64_t i = 0; i < api.gguf_get_n_kv(ctx); ++i) {
    Kv kv;
    kv.key = api.gguf_get_key(ctx, i);
    kv.type = api.gguf_get_kv_type(ctx, i);
    if (kv.type == 9) {
      kv.element_type = api.gguf_get_arr_type(ctx, i);
      const size_t n = api.gguf_get_arr_n(ctx, i);
      for (size_t j = 0; j < n; ++j) {
        if (kv.element_type == 8) {
          kv.values.emplace_back(api.gguf_get_arr_str(ctx, i, j));
        } else {
          const auto* base = static_cast<const unsigned char*>(api.gguf_get_arr_data(ctx, i));
          kv.values.push_back(ValueText(kv.element_type, base + j * kSizes[kv.element_type]));
        }
      }
    } else if (kv.type == 8) {
      kv.values.emplace_back(api.gguf_get_val_str(ctx, i));
    } else {
      kv.values.push_back(ValueText(kv.type, api.gguf_get_val_data(ctx, i)));
    }
    out->kvs.push_back(std::move(kv));
  }
  for (int64_t i = 0; i < api.gguf_get_n_tensors(ctx); ++i) {
    Tensor tensor;
    tensor.name = api.gguf_get_tensor_name(ctx, i);
    tensor.type = api.gguf_get_tensor_type(ctx, i);
    tensor.offset = api.gguf_get_tensor_offset(ctx, i);
    tensor.size = api.gguf_get_tensor_size(ctx, i);
    const ggml_tensor* made = api.ggml_get_tensor(tensors, tensor.name.c_str());
    if (made != nullptr) {
      std::memcpy(tensor.ne.data(), reinterpret_cast<const char*>(made) + kTensorNeOffset,
                  sizeof(tensor.ne));
    }
    out->tensors.push_back(std::move(tensor));
  }
  api.gguf_free(ctx);
  if (tensors != nullptr) api.ggml_free(tensors);
  return true;
}

bool GgmlReference::Write(const std::string& path, const std::vector<WriteKv>& kvs,
                          const std::vector<WriteTensor>& tensors) const {
  gguf_context* ctx = api.gguf_init_empty();
  for (const WriteKv& kv : kvs) {
    if (kv.type == 8) {
      api.gguf_set_val_str(ctx, kv.key.c_str(), kv.values.at(0).c_str());
    } else if (kv.type == 9 && kv.element_type == 8) {
      std::vector<const char*> texts;
      for (const std::string& value : kv.values) texts.push_back(value.c_str());
      api.gguf_set_arr_str(ctx, kv.key.c_str(), texts.data(), texts.size());
    } else {
      // Numbers are encoded to bytes first, then handed to gguf_set_arr_data (arrays) or
      // to the gguf_set_val_<type> setter (scalars).
      const int type = kv.type == 9 ? kv.element_type : kv.type;
      std::vector<unsigned char> bytes(kSizes[type] * kv.values.size() + 8);
      for (size_t j = 0; j < kv.values.size(); ++j) {
        EncodeScalar(type, kv.values[j], bytes.data() + j * kSizes[type]);
      }
      if (kv.type == 9) {
        api.gguf_set_arr_data(ctx, kv.key.c_str(), type, bytes.data(), kv.values.size());
      } else {
        const std::string name = std::string("gguf_set_val_") +
            (const char*[]){"u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "", "",
                            "u64", "i64", "f64"}[type];
        void* setter = dlsym(handle_, name.c_str());
        if (setter == nullptr) return false;
        uint64_t u = 0;
        std::memcpy(&u, bytes.data(), kSizes[type]);
        if (type == 6) {
          float f;
          std::memcpy(&f, bytes.data(), 4);
          reinterpret_cast<void (*)(gguf_context*, const char*, float)>(setter)(ctx, kv.key.c_str(), f);
        } else if (type == 12) {
          double d;
          std::memcpy(&d, bytes.data(), 8);
          reinterpret_cast<void (*)(gguf_context*, const char*, double)>(setter)(ctx, kv.key.c_str(), d);
        } else {
          // Integers and bool are passed in an integer register, zero-extended.
          reinterpret_cast<void (*)(gguf_context*, const char*, uint64_t)>(setter)(ctx, kv.key.c_str(), u);
        }
      }
    }
  }
  size_t memory = 1 << 20;
  for (const WriteTensor& tensor : tensors) {
    int64_t elements = 1;
    for (int64_t ne : tensor.ne) elements *= ne;
    memory += static_cast<size_t>(elements / api.ggml_blck_size(tensor.type)) *
                  api.ggml_type_size(tensor.type) + 4096;
  }
  ggml_context* data = api.ggml_init({memory, nullptr, false});
  for (const WriteTensor& tensor : tensors) {
    ggml_tensor* made = api.ggml_new_tensor(data, tensor.type, static_cast<int>(tensor.ne.size()),
                                            tensor.ne.data());
    api.ggml_set_name(made, tensor.name.c_str());
    if (tensor.data.empty()) {
      std::memset(api.ggml_get_data(made), 0x11, api.ggml_nbytes(made));
    } else if (tensor.data.size() == api.ggml_nbytes(made)) {
      std::memcpy(api.ggml_get_data(made), tensor.data.data(), tensor.data.size());
    } else {
      api.gguf_free(ctx);
      api.ggml_free(data);
      return false;
    }
    api.gguf_add_tensor(ctx, made);
  }
  const bool written = api.gguf_write_to_file(ctx, path.c_str(), false);
  api.gguf_free(ctx);
  api.ggml_free(data);
  return written;
}

}  // namespace stguard::testing
