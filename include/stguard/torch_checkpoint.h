// SPDX-License-Identifier: Apache-2.0
// stguard/torch_checkpoint.h: PyTorch checkpoints (.bin, .pt, .pth, .ckpt) read without
// running them, and their conversion to safetensors.
//
// A torch checkpoint is a Python pickle that names its tensors' storages by persistent id,
// plus the storages' bytes. torch.load runs the pickle, which can call any Python
// function. stguard never runs it: a static reader (src/pickle/) evaluates only the
// opcodes and the handful of globals torch.save writes for dense tensors and state dicts,
// and refuses everything else with the opcode's byte offset (see README "Threat model").
//
// FORMATS (detected from the bytes, never from the file name)
// - kZip: torch >= 1.6. A ZIP archive "<folder>/data.pkl", "<folder>/data/<key>", ...,
//   read by the strict reader of src/zip/zip_archive.h.
// - kLegacy: torch < 1.6 (_use_new_zipfile_serialization=False). Pickles for the magic
//   number, the protocol version (1001) and the system information (little-endian, short
//   2, int 4, long 4 or 8 bytes), the main pickle, the sorted list of storage keys, then
//   per key an int64 element count and the storage's bytes, ending the file.
// - kRawPickle: a bare pickle. It can hold no tensor data, so it never converts
//   (kRawPickle); `scan` still reports what it names.
//
// TENSORS. The selected object (the pickle's root, or root[k1][k2]... with
// TorchOptions::key_path) must be a dict or OrderedDict of string names to tensors (kNotAStateDict otherwise;
// kDuplicateKey for a name given twice). Each tensor's storage offset, sizes and strides
// are checked against its storage with overflow-checked arithmetic: negative values, a
// view reaching past the storage, and products beyond 64 bits are kTensorOutOfBounds; a
// storage whose record holds another byte count than its element count implies is
// kStorageMismatch; a storage with no record is kZipMissingRecord. Views that are not
// contiguous (transposes, steps) are gathered into row-major bytes when streamed; tensors
// that share a storage each get their own bytes.
//
// OUTPUT BOUND. Views may overlap (a stride of 0 from expand(), as_strided windows) and
// many names may view one storage, so a few hundred bytes of pickle can ask for terabytes
// of contiguous output. The selected tensors' byte counts, all together, may be at most
// TorchOptions::max_output_ratio times the checkpoint's size plus kTorchOutputAllowance
// (kOutputTooLarge otherwise), which keeps conversion time and output proportional to the
// input while leaving room for tied weights and expanded buffers.
//
// ALIASES. Two names for one tensor (tied weights: the same pickled tensor, or two views
// of one storage with equal offset, sizes and strides) are both kept; TorchTensor::
// alias_of names the first. Conversion can drop the later names instead
// (TorchConvertOptions::drop_aliases), as Hugging Face's conversion script does.
//
// INTEGRITY. Every ZIP record's CRC-32 is checked while its bytes are used: a storage's
// first streamed tensor reads the whole record once (the view's bytes going to the sink,
// the rest to the CRC only) and a mismatch fails the stream with kZipChecksum.
//
// RESOURCES. The file is mapped for the pickle and the archive's directory; tensor data
// is read with pread(2) into one fixed 1 MiB buffer (a file truncated meanwhile is
// kIoError naming it, not SIGBUS), so memory is O(pickle size) plus fixed buffers.
// Strided views are gathered through a second fixed buffer: from one pread when the
// elements they touch span at most 1 MiB, from the mapping otherwise (after a pread pass
// over the storage for its CRC-32).
#ifndef STGUARD_TORCH_CHECKPOINT_H_
#define STGUARD_TORCH_CHECKPOINT_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "stguard/dtype.h"
#include "stguard/error.h"
#include "stguard/export.h"
#include "stguard/writer.h"

namespace stguard {

enum class TorchFormat : uint8_t { kUnknown, kZip, kLegacy, kRawPickle };

// TorchFormatName returns "zip", "legacy", "raw-pickle" or "unknown".
STGUARD_API std::string_view TorchFormatName(TorchFormat format);


// kTorchOutputAllowance is the output any checkpoint may ask for whatever its size, so that
// a small file with an expanded buffer still converts.
inline constexpr uint64_t kTorchOutputAllowance = uint64_t{1} << 20;

struct TorchOptions {
  // key_path selects a nested mapping: the root must be a dict holding key_path[0], whose
  // value is a dict holding key_path[1], and so on; the last value is the state dict
  // (training checkpoints: {"state_dict"}, {"model"}, {"module", "model"}). Keys are whole
  // strings (a key may contain '.' or '/'). Empty: the root itself.
  std::vector<std::string> key_path;
  // max_output_ratio bounds the selected tensors' bytes, all together, to this many times
  // the checkpoint's size (plus kTorchOutputAllowance). 0: no bound (trusted input only).
  uint64_t max_output_ratio = 4;
};

// TorchTensor is one named tensor of the selected state dict.
struct TorchTensor {
  std::string name;
  Dtype dtype;
  std::vector<uint64_t> shape;
  std::vector<uint64_t> strides;  // in elements
  uint64_t storage_offset;        // in elements
  size_t storage;                 // index in TorchCheckpoint::storages()
  uint64_t byte_len;              // of the contiguous result
  bool contiguous;                // row-major and dense in its storage
  std::optional<size_t> alias_of; // the first tensor with the same storage view
  uint64_t offset;                // the pickle opcode that rebuilt it (absolute)
};

// TorchStorage is one storage the pickle names, with its bytes' place in the file.
struct TorchStorage {
  std::string key;
  Dtype dtype;
  uint64_t num_elements;
  std::string location;  // "cpu", "cuda:0": informational, bytes are the same
  uint64_t data_offset;  // absolute offset of its bytes
  uint64_t byte_len;
};

// TorchGlobal is one global the pickle names, and whether the allowlist admits it.
struct TorchGlobal {
  std::string module;
  std::string name;
  bool allowed;
  uint64_t offset;
};

class STGUARD_API TorchCheckpoint {
 public:
  // Open maps and checks the file at `path` (kIoError / kNotARegularFile when it cannot).
  static Result<TorchCheckpoint> Open(const std::string& path, const TorchOptions& options = {});
  // FromBytes checks `bytes`, which are not copied and must outlive the checkpoint.
  static Result<TorchCheckpoint> FromBytes(std::span<const std::byte> bytes,
                                           const TorchOptions& options = {});

  TorchCheckpoint(TorchCheckpoint&&) noexcept;
  TorchCheckpoint& operator=(TorchCheckpoint&&) noexcept;
  ~TorchCheckpoint();

  TorchFormat format() const;
  const std::vector<TorchTensor>& tensors() const;
  const std::vector<TorchStorage>& storages() const;
  const std::vector<TorchGlobal>& globals() const;

  // StreamTensor writes tensor `index`'s bytes, row-major and contiguous, to `sink`.
  // Returns the sink's error, kZipChecksum for a storage failing its CRC-32, or ok.
  [[nodiscard]] Error StreamTensor(size_t index, ByteSink& sink) const;
  // TensorBytes returns them in memory (for tests and small tensors).
  [[nodiscard]] Result<std::string> TensorBytes(size_t index) const;

 private:
  struct Impl;
  explicit TorchCheckpoint(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// TorchScanReport is `stguard scan`'s view of a file: everything known up to the first
// refusal, and that refusal (error.ok() when the file would convert cleanly).
struct TorchScanReport {
  TorchFormat format = TorchFormat::kUnknown;
  std::vector<TorchGlobal> globals;
  std::vector<TorchTensor> tensors;
  std::vector<TorchStorage> storages;
  Error error;
};

// ScanTorchBytes / ScanTorchFile check a checkpoint as TorchCheckpoint does and report.
// ScanTorchFile's error is kIoError / kNotARegularFile when the file cannot be read.
STGUARD_API TorchScanReport ScanTorchBytes(std::span<const std::byte> bytes,
                                           const TorchOptions& options = {});
STGUARD_API TorchScanReport ScanTorchFile(const std::string& path,
                                          const TorchOptions& options = {});

struct TorchConvertOptions {
  // Drop every name whose tensor aliases an earlier one (tied weights), keeping the first.
  bool drop_aliases = false;
  // ConvertTorchFolder only: read input files (index, shards) that are symbolic links
  // resolving out of the input folder. Off: such a file is kUnsafeShardName.
  bool allow_external_symlinks = false;
  // When set (F32, F16 or BF16), every F64, F32, F16 and BF16 tensor is converted to this
  // dtype as it is streamed, rounding to nearest even, as `convert --dtype` does for a
  // safetensors file; other dtypes are copied unchanged.
  std::optional<Dtype> dtype;
  // Called with the bytes written since its previous call, as the output is written (see
  // Writer::set_progress), so that a tool can show how far a long conversion is.
  std::function<void(uint64_t bytes)> progress;
};

// TorchDroppedAlias is a name conversion dropped and the name it kept.
struct TorchDroppedAlias {
  std::string dropped;
  std::string kept;
};

// AddTorchTensors adds the checkpoint's tensors to `writer` as streamed producers and the
// metadata {"format": "pt"}; dropped aliases go to *dropped. `checkpoint` must outlive
// the writer's last write. *num_converted, when given, is incremented for every tensor
// added whose dtype options.dtype changes (the `converted` of every format's conversion).
[[nodiscard]] STGUARD_API Error AddTorchTensors(const TorchCheckpoint& checkpoint,
                                                const TorchConvertOptions& options,
                                                Writer* writer,
                                                std::vector<TorchDroppedAlias>* dropped,
                                                size_t* num_converted = nullptr);

// TorchFileReport says what ConvertTorchFile wrote.
struct TorchFileReport {
  size_t num_tensors = 0;    // tensors written (dropped aliases not counted)
  size_t num_converted = 0;  // tensors whose dtype convert_options.dtype changed
};

// ConvertTorchFile converts the checkpoint at `in_path` to a canonical safetensors file at
// `out_path` through the crash-safe writer (the conversion pipeline, src/convert/). OUT
// must not be IN (CheckOutputIsNotInput); a target dtype other than F32, F16 or BF16 is
// kInvalidArgument before anything is read. On any error nothing is written; on success
// *report, when given, says what was.
[[nodiscard]] STGUARD_API Error ConvertTorchFile(const std::string& in_path,
                                                 const std::string& out_path,
                                                 const TorchOptions& options,
                                                 const TorchConvertOptions& convert_options,
                                                 std::vector<TorchDroppedAlias>* dropped,
                                                 TorchFileReport* report = nullptr);

// TorchFolderReport says what ConvertTorchFolder wrote.
struct TorchFolderReport {
  std::vector<std::string> written;  // file names in the output folder, index last
  size_t num_tensors = 0;
  size_t num_converted = 0;  // tensors whose dtype options.dtype changed (not every tensor)
  uint64_t total_size = 0;   // data bytes written (after conversion)
  std::vector<TorchDroppedAlias> dropped;
};

// ConvertTorchFolder converts a folder holding pytorch_model.bin.index.json and its shards
// into `out_dir`: model-XXXXX-of-YYYYY.safetensors, one per input shard in the index's
// order of first appearance, and model.safetensors.index.json with the weight map and
// metadata.total_size. A folder with a single pytorch_model.bin and no index gives
// model.safetensors. Every shard is opened and checked (its tensors must be exactly those
// the index assigns to it: kShardMismatch) before anything is written; shard names must
// be plain file names, and the index and shards must not be symbolic links resolving out
// of `in_dir` unless allow_external_symlinks (kUnsafeShardName).
// OUTPUT FOLDER. `out_dir` must not exist or be empty (else kIoError, "not empty"): the
// conversion owns every name in it. Missing folders along it are created as `mkdir -p`
// does (the reason given with strerror when that fails); links already on the user's path
// are followed, a folder this call made is never reached through a link. Each file is
// staged as a temporary file created through the folder's descriptor with O_EXCL and
// O_NOFOLLOW, and all are renamed into place (renameat, within the folder) only once every
// one is complete, the index last. On any failure (a refusal, a CRC-32 mismatch while
// streaming, a full disk, a failed rename) the temporary files and the names this call
// published are removed, and so are the folders it created; nothing else is ever removed.
[[nodiscard]] STGUARD_API Error ConvertTorchFolder(const std::string& in_dir,
                                                   const std::string& out_dir,
                                                   const TorchConvertOptions& convert_options,
                                                   TorchFolderReport* report);

}  // namespace stguard

#endif  // STGUARD_TORCH_CHECKPOINT_H_
