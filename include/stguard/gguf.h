// SPDX-License-Identifier: Apache-2.0
// stguard/gguf.h: the strict GGUF reader (llama.cpp's single-file checkpoint format).
//
// A GGUF file is: the magic "GGUF", a u32 version, u64 tensor and key/value counts, the
// key/value pairs (typed metadata), one info record per tensor (name, dims, ggml type,
// offset), padding to the alignment, then the data section where the tensors lie in the
// order of their infos, each padded to the alignment. Everything is little-endian.
// GgufFile::Open and GgufFile::FromBytes return either a validated, zero-copy view of the
// metadata and tensors or one Error (code, absolute byte offset, message, tensor).
//
// STRICTNESS POLICY
// The contract is the GGUF specification (version 3) and, where it is silent, ggml's own
// reader. Every file ggml's reader (plus llama.cpp's rule that every tensor's bytes lie
// inside the file) rejects, stguard rejects. stguard is deliberately stricter in these
// cases, each with its own error code:
// - Keys: ASCII, dot-separated segments of lowercase letters, digits, '_' and '-', no
//   empty segment, shorter than 65,536 bytes. -> kGgufInvalidKey. (The reference checks
//   none of this; '-' is allowed because llama.cpp writes architecture names such as
//   "command-r" into keys.)
// - Bool values (scalars and array elements) must be the byte 0 or 1.
//   -> kGgufInvalidBool. (The reference reads any non-zero byte as true.)
// - Strings (values, keys, tensor names) must be well-formed UTF-8. -> kInvalidUtf8.
// - No string (key, string value, string-array element, tensor name) may hold a NUL byte:
//   llama.cpp reads them as C strings (gguf_get_val_str, gguf_get_arr_str), so tokens
//   "a\0x" and "a\0y" would be one token to it. -> kGgufNulInString.
// - general.alignment must be a multiple of 8 (the spec's rule; the reference accepts 1,
//   2 and 4). -> kGgufInvalidAlignment.
// - A tensor has 1 to 4 dims; 0 is refused. -> kGgufInvalidDims. (The reference reads
//   n_dims 0 as a scalar.)
// - Only ne[0] may be zero; a zero in ne[1], ne[2] or ne[3] is refused. -> kGgufInvalidDims.
//   ggml built from llama.cpp's sources in July 2026 divides INT64_MAX by each of them and
//   dies of SIGFPE (llama.cpp PR 25596, August 2026, added a guard; the pinned npm build
//   3.21.1 has no such check and accepts it), and users run all of these builds. A tensor
//   whose only zero is ne[0] is an empty tensor every reader accepts.
// - The product of the non-zero dims must fit in 63 bits, whatever their order and
//   wherever a zero lies. -> kValidationOverflow. (gguf-py 0.19 and ggml built from
//   llama.cpp in July 2026 refuse [2^40, 2^40, 0]; the npm build 3.21.1 and current
//   mainline accept it, their element count wrapping to 0.)
// - The bytes between the tensor infos and the data section, between tensors, and after
//   the last tensor must be zero. -> kGgufNonZeroPadding.
// - Nothing may follow the last tensor except its alignment padding. -> kGgufTrailingBytes.
//   (The reference ignores what follows.)
// - The last tensor's padding must be complete: the file ends exactly at the data
//   section's start plus every tensor's size rounded up to the alignment (unless every
//   tensor is empty). -> kGgufMissingPadding. ggml's full load (gguf_init_from_file with
//   no_alloc = false) reads that many bytes and refuses a shorter file; its metadata-only
//   load and llama.cpp's mmap loader accept it. Checked from the file's size alone, so a
//   remote ReadSource, which reads no padding, gives the same verdict.
// - Version 2 and 3 only, as the reference; a byte-swapped (big-endian) file is named as
//   such. -> kGgufByteSwapped.
// Reference behaviour kept: tensors tile the data section in the order of their infos,
// each at the previous one's end rounded up to the alignment (kGgufTensorOffset); a
// zero-element tensor (ne[0] = 0) takes no bytes; an empty tensor name is allowed; names
// are shorter than 64 bytes (the reference's limit, stricter than the spec's "at most 64").
//
// RESOURCE BOUNDS
// Time and memory are linear in the bytes before the data section. Every count read from
// the file (keys, tensors, array elements, string lengths) is checked against the bytes
// that remain before anything is allocated or walked: a key/value pair needs at least
// kMinKeyValueBytes, a tensor info kMinTensorInfoBytes, an array element its fixed size
// (8 bytes for a string's length). So a header claiming 2^63 keys is refused in
// microseconds. Arrays are walked, never copied: a metadata value is a view of the file.
// No recursion (arrays of arrays are refused). Validation reads the header and the
// padding between tensors (a few bytes per tensor), never tensor data.
//
// FILES THAT CHANGE
// Open maps the file read-only and validates through the mapping: a file truncated by
// another process while it is being read raises SIGBUS. Read files you do not control
// into memory and use FromBytes, or make sure they cannot change.
#ifndef STGUARD_GGUF_H_
#define STGUARD_GGUF_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "stguard/byte_source.h"
#include "stguard/dtype.h"
#include "stguard/error.h"
#include "stguard/export.h"

namespace stguard {

class MappedFile;

namespace gguf {

// The four bytes every GGUF file begins with.
inline constexpr std::string_view kMagic = "GGUF";
// kMaxDims is ggml's GGML_MAX_DIMS.
inline constexpr uint32_t kMaxDims = 4;
// kMaxTensorNameBytes: a tensor name must be shorter than this (ggml's GGML_MAX_NAME).
inline constexpr uint64_t kMaxTensorNameBytes = 64;
// kMaxKeyBytes: a key must be shorter than this.
inline constexpr uint64_t kMaxKeyBytes = 65536;
// kDefaultAlignment applies when general.alignment is absent.
inline constexpr uint32_t kDefaultAlignment = 32;
// The smallest encodings, used to bound counts before allocating: a key/value pair is a
// length (8), a one-byte key, a type (4) and a one-byte value; a tensor info is a name
// length (8), a dim count (4), a type (4) and an offset (8): ggml accepts 0 dims, and a
// count is bounded before the dims are checked, so its bound must not assume one.
inline constexpr uint64_t kMinKeyValueBytes = 8 + 1 + 4 + 1;
inline constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 4 + 8;

// LooksLikeGguf says whether `prefix` (the first bytes of a file) starts with the magic.
// It is the sniff by content: the extension is never consulted.
STGUARD_API bool LooksLikeGguf(std::span<const std::byte> prefix);

// ValueType is a metadata value's type as stored in the file (gguf_type).
enum class ValueType : uint32_t {
  kU8 = 0, kI8 = 1, kU16 = 2, kI16 = 3, kU32 = 4, kI32 = 5, kF32 = 6, kBool = 7,
  kString = 8, kArray = 9, kU64 = 10, kI64 = 11, kF64 = 12,
};
inline constexpr uint32_t kNumValueTypes = 13;

// ValueTypeName returns "u8", "i8", ..., "string", "array", "u64", "i64", "f64".
STGUARD_API std::string_view ValueTypeName(ValueType type);
// ValueTypeFixedSize is the encoded size of one value of a fixed-size type, 0 for string
// and array.
STGUARD_API uint32_t ValueTypeFixedSize(ValueType type);

// GgmlType is one row of ggml's type table: a tensor of this type stores blocks of
// `block_size` elements in `type_size` bytes each. Removed ids have no row.
struct GgmlType {
  uint32_t id;
  std::string_view name;       // ggml's ggml_type_name ("f32", "q4_K", "iq2_xxs"...)
  uint32_t block_size;         // elements per block (ggml_blck_size)
  uint32_t type_size;          // bytes per block (ggml_type_size)
  std::optional<Dtype> dtype;  // the safetensors dtype of a plain type (F32, F16...)
};

// FindGgmlType returns the row for `id`, or nullptr for an id ggml does not know or has
// removed (4, 5, 31..33, 36..38).
STGUARD_API const GgmlType* FindGgmlType(uint32_t id);
// GgmlTypes is every row, in id order.
STGUARD_API std::span<const GgmlType> GgmlTypes();
// kNumGgmlTypeIds is one past the highest id the table knows.
inline constexpr uint32_t kNumGgmlTypeIds = 43;

// Value is one validated metadata value: a view of its encoding in the file.
// For a scalar, `bytes` holds the value (a string's bytes without the length). For an
// array, `element_type` and `count` describe it and `bytes` holds the elements as stored
// (for strings: each one's u64 length then its bytes).
struct STGUARD_API Value {
  ValueType type = ValueType::kU8;
  ValueType element_type = ValueType::kU8;  // arrays only
  uint64_t count = 1;                       // arrays: the element count; scalars: 1
  std::span<const std::byte> bytes;

  // The scalar accessors read a value of the matching kind: AsUnsigned for u8..u64,
  // AsSigned for i8..i64, AsDouble for f32/f64, AsBool, AsString. Each returns nullopt
  // when the type does not match.
  std::optional<uint64_t> AsUnsigned() const;
  std::optional<int64_t> AsSigned() const;
  std::optional<double> AsDouble() const;
  std::optional<bool> AsBool() const;
  std::optional<std::string_view> AsString() const;

  // Element returns the i-th element of an array of a fixed-size type (i < count), as a
  // scalar Value. For string arrays, use StringElements.
  Value Element(uint64_t i) const;
  // StringElements calls visit(index, text) for each element of a string array in order,
  // stopping early when visit returns false. Linear in the array's bytes; no allocation.
  template <typename Visit>
  void StringElements(Visit&& visit) const;
};

// MetadataEntry is one key/value pair, in file order.
struct STGUARD_API MetadataEntry {
  std::string_view key;
  Value value;
  uint64_t offset = 0;  // absolute offset of the key's length prefix
};

// TensorInfo describes one validated tensor, in file order.
struct STGUARD_API TensorInfo {
  std::string_view name;
  const GgmlType* type = nullptr;          // never null in a validated file
  uint32_t n_dims = 0;                     // 1..4
  std::array<uint64_t, kMaxDims> ne{};     // ggml order (innermost first), 1 past n_dims
  uint64_t offset = 0;                     // relative to the data section, as stored
  uint64_t absolute_offset = 0;            // from the start of the file
  uint64_t byte_size = 0;                  // blocks * bytes per block
  uint64_t info_offset = 0;                // absolute offset of the tensor's info record
  std::span<const std::byte> data;         // the tensor's bytes (empty for 0 elements)

  // shape is ne[0..n_dims) reversed: outermost first, as safetensors and numpy order it.
  std::vector<uint64_t> shape() const;
  // num_elements is the product of ne; validation proved it fits in 63 bits.
  uint64_t num_elements() const;
};

// GgufFile is a validated GGUF file. Immutable once returned; its views live as long as
// it does (moving it keeps them valid: the bytes are owned through a pointer).
class STGUARD_API GgufFile {
 public:
  // Open maps and validates `path`. I/O problems give kIoError or kNotARegularFile.
  static Result<GgufFile> Open(const std::string& path);
  // FromBytes validates `bytes`, which the caller keeps alive as long as the result.
  static Result<GgufFile> FromBytes(std::span<const std::byte> bytes);
  // ReadSource validates a file read by ranges with the same rules: growing reads of its
  // header, key/values and tensor infos (the first as long as kFirstReadLen, each next one
  // doubling what was read, by at most kMaxReadGrowth, or reaching the end of the value
  // that did not fit, whichever is further), then, unless
  // source.remote(), the padding runs between and after the tensors (each shorter than
  // the alignment). Bytes read: the tensor infos' end plus at most
  // max(kFirstReadLen, kMaxReadGrowth), plus the padding when read; memory is what was read. Tensor data is never
  // read: every TensorInfo::data is empty. padding_checked() says whether padding was.
  static Result<GgufFile> ReadSource(const ByteSource& source);
  static constexpr uint64_t kFirstReadLen = 64 * 1024;
  static constexpr uint64_t kMaxReadGrowth = 16 * 1024 * 1024;

  GgufFile(GgufFile&&) noexcept;
  GgufFile& operator=(GgufFile&&) noexcept;
  ~GgufFile();

  uint32_t version() const { return version_; }
  uint32_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }  // absolute start of the data section
  uint64_t file_size() const { return file_size_; }
  // padding_checked says whether the padding bytes were read and found zero (always, but
  // for ReadSource over a remote source).
  bool padding_checked() const { return padding_checked_; }
  const std::vector<MetadataEntry>& metadata() const { return metadata_; }
  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  // FindKey returns the entry for `key`, or nullptr. O(log n).
  const MetadataEntry* FindKey(std::string_view key) const;
  // FindTensor returns the tensor named `name`, or nullptr. O(log n).
  const TensorInfo* FindTensor(std::string_view name) const;

 private:
  GgufFile() = default;
  friend struct GgufFileBuilder;

  std::unique_ptr<MappedFile> file_;  // null for FromBytes
  std::vector<std::byte> owned_;      // ReadSource: the bytes read, which views point into
  std::span<const std::byte> bytes_;  // the file's bytes (ReadSource: its first bytes)
  uint64_t file_size_ = 0;
  bool padding_checked_ = true;
  uint32_t version_ = 0;
  uint32_t alignment_ = kDefaultAlignment;
  uint64_t data_offset_ = 0;
  std::vector<MetadataEntry> metadata_;
  std::vector<TensorInfo> tensors_;
  std::vector<uint32_t> keys_by_name_;     // indexes into metadata_, sorted by key
  std::vector<uint32_t> tensors_by_name_;  // indexes into tensors_, sorted by name
};

// SplitPartPath returns the path of part `part` (1-based) of `count` for the split
// model whose part `path` is ("name-00002-of-00005.gguf" -> "name-0000<part>-of-00005.gguf",
// llama.cpp's naming), or an empty string when `path` is not named that way.
STGUARD_API std::string SplitPartPath(const std::string& path, uint32_t part);

// GgufSplitSet is a validated split model: every part, in order.
struct STGUARD_API GgufSplitSet {
  std::vector<GgufFile> parts;
  uint64_t num_tensors = 0;
};

// CheckSplitSet validates the split model that `first_part` (a valid GGUF file with
// split.no 0 and split.count N) begins: its N parts are found by llama.cpp's naming
// (kMissingShard when one is absent), each is a valid GGUF file whose split.no is its
// index and whose split.count and split.tensors.count equal the first part's
// (kGgufSplitMismatch), no tensor name is in two parts (kTensorInTwoShards), and the
// parts hold split.tensors.count tensors in all (kGgufSplitMismatch). A file without
// split keys is a set of one part.
STGUARD_API Result<GgufSplitSet> CheckSplitSet(const std::string& first_part);

// ------------------------------------------------------------------------------------
// Inline definitions.

template <typename Visit>
void Value::StringElements(Visit&& visit) const {
  if (type != ValueType::kArray || element_type != ValueType::kString) return;
  size_t pos = 0;
  for (uint64_t i = 0; i < count; ++i) {
    // Validation proved every length prefix and string lie inside `bytes`.
    uint64_t length = 0;
    for (int b = 7; b >= 0; --b) {
      length = (length << 8) | static_cast<uint8_t>(bytes[pos + static_cast<size_t>(b)]);
    }
    pos += 8;
    const std::string_view text(reinterpret_cast<const char*>(bytes.data() + pos),
                                static_cast<size_t>(length));
    pos += static_cast<size_t>(length);
    if (!visit(i, text)) return;
  }
}

}  // namespace gguf
}  // namespace stguard

#endif  // STGUARD_GGUF_H_
