// SPDX-License-Identifier: Apache-2.0
// ggml's own GGUF reader and writer, loaded with dlopen from the test-only library that
// tools/fetch_ggml.sh caches (never linked into stguard). Tests that need it skip with a
// message when it is absent.
#ifndef STGUARD_TESTS_SUPPORT_GGML_REFERENCE_H_
#define STGUARD_TESTS_SUPPORT_GGML_REFERENCE_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace stguard::testing {

// GgmlReference holds the library's entry points; Load returns null when it is absent.
class GgmlReference {
 public:
  // Load opens $STGUARD_GGML_LIB, else ~/.cache/stguard/ggml-3.21.1/libggml-base.so.
  // On failure *why says what was tried.
  static const GgmlReference* Load(std::string* why);

  // The type traits for `id` (ggml_type_name, ggml_blck_size, ggml_type_size).
  std::string TypeName(uint32_t id) const;
  int64_t BlockSize(uint32_t id) const;
  uint64_t TypeSize(uint32_t id) const;

  // Build names the library the tests ran: ggml_version() and ggml_commit() when it has
  // them ("unknown" otherwise) and its path, e.g. "ggml 0.4.0 (abc123) from /path/lib.so".
  std::string Build() const;

  // AcceptsFullLoad is the verdict of ggml's full load: gguf_init_from_file with
  // no_alloc = false, which also reads the data section (every tensor's padded size) into
  // memory. Run in a child process; keep the files small.
  bool AcceptsFullLoad(const std::string& path) const;

  // Accepts is the reference verdict on a file: gguf_init_from_file with no_alloc
  // succeeds and every tensor's bytes lie inside the file (llama.cpp's loader rule). Run
  // in a child process, so that an abort in the reference counts as a rejection.
  bool Accepts(const std::string& path) const;

  // ReferenceKv / ReferenceTensor: what the reference reads from a file.
  struct Kv {
    std::string key;
    int type = 0;        // gguf_type; 9 for arrays
    int element_type = 0;
    std::vector<std::string> values;  // each element (or the scalar) rendered as text
  };
  struct Tensor {
    std::string name;
    int type = 0;
    std::array<int64_t, 4> ne{};
    uint64_t offset = 0;  // relative to the data section
    uint64_t size = 0;
  };
  struct Contents {
    uint32_t version = 0;
    uint64_t alignment = 0;
    uint64_t data_offset = 0;
    std::vector<Kv> kvs;
    std::vector<Tensor> tensors;
  };
  // Read reads a file the reference accepts, in this process; false if it refuses it.
  bool Read(const std::string& path, Contents* out) const;

  // WriteSpec describes a file for the reference writer: keys set by type, tensors of
  // the given type and ne filled with a byte pattern.
  struct WriteKv {
    std::string key;
    int type = 0;          // 0..12 scalars (8 = string), 9 = array
    int element_type = 0;  // arrays
    std::vector<std::string> values;  // decimal text, or the string itself
  };
  struct WriteTensor {
    std::string name;
    int type = 0;
    std::vector<int64_t> ne;
    std::string data;  // the tensor's bytes; empty: a 0x11 pattern
  };
  // Write writes `kvs` and `tensors` with gguf_init_empty, gguf_set_*, gguf_add_tensor
  // and gguf_write_to_file. Returns false if the reference failed.
  bool Write(const std::string& path, const std::vector<WriteKv>& kvs,
             const std::vector<WriteTensor>& tensors) const;

 // Symbol returns the library's exported `name` (a function such as
  // dequantize_row_q4_0), or null when it has none.
  void* Symbol(const char* name) const;

 private:
  void* handle_ = nullptr;
  std::string path_;
};

// ValueText renders one value as the differential compares it: integers in decimal,
// floats by their bits ("f32:0x3f800000"), bools 0/1, strings as they are.
std::string ValueText(int type, const void* data);

}  // namespace stguard::testing

#endif  // STGUARD_TESTS_SUPPORT_GGML_REFERENCE_H_
