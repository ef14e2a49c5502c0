// SPDX-License-Identifier: Apache-2.0
// bench/generators.h: realistic safetensors headers and sparse checkpoint files for the
// benchmarks.
//
// Every generator returns tensor specs (name, dtype, shape); BuildCanonicalHeader lays
// them out the way the canonical writer does (dtype descending in enum order, then name
// bytes; data offsets contiguous from 0; metadata {"format":"pt"}; compact JSON padded with
// spaces to a multiple of 8) and WriteSparseCheckpoint puts the header on disk followed by
// a hole of the data length (ftruncate), so a 100 GB checkpoint costs a few MB of disk and
// its data pages read as zeros without ever being allocated.
#ifndef STGUARD_BENCH_GENERATORS_H_
#define STGUARD_BENCH_GENERATORS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "stguard/dtype.h"

namespace stguard_bench {

// TensorSpec is one tensor of a generated checkpoint. begin/end are filled in by
// BuildCanonicalHeader.
struct TensorSpec {
  std::string name;
  stguard::Dtype dtype = stguard::Dtype::kF32;
  std::vector<uint64_t> shape;
  uint64_t begin = 0;
  uint64_t end = 0;
};

// Layout names one generated checkpoint shape.
enum class Layout {
  kGpt2,          // GPT-2 small: 148 F32 tensors, h.N.attn.c_attn.weight, ~13 KB header
  kLlama3_8B,     // Llama-3-8B: 291 BF16 tensors, model.layers.N..., ~35 KB, 16 GB of data
  kMoeShard,      // Qwen3-MoE-like shard: 24,000 BF16 tensors, experts.E.gate_proj, ~3 MB
  kNearCap,       // DeepSeek-style fine-grained experts: 790,000 tensors, ~92 MB header
  kHeaderGen800k, // as kNearCap with 800,000 tensors: the writer's header-generation input
  kWriter1GB,     // a small Llama-like model, ~1 GB of BF16 data: the writer throughput input
};

// LayoutName returns a short identifier used in benchmark names ("gpt2", "near_cap").
std::string_view LayoutName(Layout layout);

// MakeTensors returns the tensors of `layout` in generation order (not canonical order).
std::vector<TensorSpec> MakeTensors(Layout layout);

// ByteSize returns the tensor's byte count: product of the shape times the dtype's bits / 8.
// Generated shapes never overflow and use whole-byte dtypes.
uint64_t ByteSize(const TensorSpec& tensor);

// GeneratedHeader is a laid-out checkpoint, less its data.
struct GeneratedHeader {
  std::string text;                 // the N header bytes: JSON, then spaces
  std::vector<TensorSpec> tensors;  // canonical order, begin/end set
  uint64_t data_len = 0;            // size of the data buffer
  uint64_t file_size() const { return 8 + text.size() + data_len; }
};

// BuildCanonicalHeader sorts `tensors` into canonical order, assigns contiguous offsets and
// renders the header. The JSON is padded with spaces to a multiple of 8 bytes, or to
// `pad_to` bytes when that is larger (used to give a zero-data header the same N as
// another header).
GeneratedHeader BuildCanonicalHeader(std::vector<TensorSpec> tensors, uint64_t pad_to = 0);

// ZeroSizeVariant returns the same tensors with the first dimension of every shape set to
// 0 (a scalar becomes shape [0]): one header structure whose data buffer is empty.
std::vector<TensorSpec> ZeroSizeVariant(std::vector<TensorSpec> tensors);

// ShrinkData divides the first dimension of every shape by `divisor` where it divides
// evenly, so the data buffer shrinks about `divisor` times while the header keeps its
// names, structure and nearly its length (one digit less here and there). For tools that
// cannot map 100 GB of address space, such as valgrind.
std::vector<TensorSpec> ShrinkData(std::vector<TensorSpec> tensors, uint64_t divisor);

// LengthPrefix returns N as the 8 little-endian bytes that start a safetensors file.
std::string LengthPrefix(uint64_t header_len);

// WriteSparseCheckpoint writes the length prefix and `header` to `path`, then extends the
// file to its full size with ftruncate, leaving the data buffer as a hole. Aborts with a
// message on any I/O error (benchmark setup has no way to recover).
void WriteSparseCheckpoint(const std::string& path, const GeneratedHeader& header);

// ScratchDir is a temporary directory that is removed with its files on destruction. It
// lives under $STGUARD_BENCH_TMPDIR when set, else /tmp, and must be on a filesystem
// with sparse files (ext4, xfs, btrfs, tmpfs).
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }
  // File returns path()/name and remembers it for removal.
  std::string File(std::string_view name);

 private:
  std::string path_;
  std::vector<std::string> files_;
};

}  // namespace stguard_bench

#endif  // STGUARD_BENCH_GENERATORS_H_
