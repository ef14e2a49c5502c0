// SPDX-License-Identifier: Apache-2.0
// stguard/reader.h: the strict safetensors reader.
//
// A safetensors file is: N (u64, little-endian), N bytes of UTF-8 JSON header, then the
// data buffer. Checkpoint::Open and Checkpoint::FromBytes return either a validated,
// zero-copy view of every tensor or one Error.
//
// STRICTNESS POLICY
// Never looser than the reference implementation (Hugging Face safetensors): every file it
// rejects, stguard rejects. stguard is deliberately stricter in these cases, each with its
// own error code:
// - Duplicate keys anywhere, compared after unescaping ("w" and "\u0077" are one key):
//   tensor names, __metadata__ keys, fields of one tensor entry, __metadata__ twice.
//   -> kDuplicateKey. (The reference keeps the last tensor or metadata key silently.)
// - __metadata__ that is not an object, null included. -> kMetadataNotObject.
//   (The reference reads null as "no metadata".)
// - Unknown fields in a tensor entry. -> kUnknownField. (The reference ignores them.)
// - A tensor entry that is not an object, such as ["F32",[2,2],[0,16]].
//   -> kTensorNotObject. (The reference accepts the array form.)
// - Shape dimensions and offsets must be written as plain non-negative integers: "-0",
//   "1.0" and "1e2" are kInvalidShape / kInvalidDataOffsets.
// Reference behaviour kept: N need not be a multiple of 8; whitespace may precede '{' and
// follow '}'; "{}" with no data is a valid empty checkpoint; zero-element tensors and
// scalars (shape []) are valid; a zero-size tensor may share its begin offset with the
// next tensor; the element count is the running product of the dims, left to right, and
// fails on the first step that overflows 64 bits ([0, 2^40, 2^40] is accepted,
// [2^40, 2^40, 0] is not).
//
// ALIGNMENT
// The format does not align tensor data: a valid file may hold an F32 tensor at an odd
// offset, and reading it through a float* would be undefined behaviour. What is
// guaranteed: in a canonical file (stguard's writer, the reference save_file) every
// tensor's data begins at a file offset that is a multiple of its element size
// (DtypeAlignment), because the header is padded so that the data buffer starts at a
// multiple of 8, tensors come in descending reference dtype order, in which element sizes
// never grow (8, 4, 2, then 1 byte and below), and each tensor's byte count is a multiple
// of its element size (tests/alignment_prop.cc checks this over random tensor sets).
// Options::require_aligned_data refuses files without that property (kMisalignedData).
// Checkpoint::Open maps the file at a page boundary, so there an aligned file offset is
// an aligned address; with FromBytes, addresses are aligned when bytes.data() is a
// multiple of 8. TensorView::is_aligned() checks the address itself.
//
// THREAD SAFETY
// A Checkpoint is immutable once Open or FromBytes has returned it: any number of threads
// may call its const functions and read its tensors' data at the same time, without
// locks. Moving or destroying it while another thread reads it is a data race, as for any
// C++ object. Open and FromBytes themselves may run concurrently (the library has no
// shared mutable state), as may every other free function of the library.
//
// PLATFORM
// POSIX: Linux first (what CI tests), and macOS and the BSDs, where mmap, pread and
// rename behave the same. Page-release hints (madvise MADV_PAGEOUT) are Linux 5.4+ and
// skipped elsewhere. Windows is not supported. Tensor data is exposed as stored:
// little-endian.
//
// ALLOCATION FAILURE
// Open and FromBytes return kOutOfMemory when an allocation fails; no exception leaves
// them. The same holds for every function of the library that returns Error or Result,
// unless its comment says otherwise; functions that return std::string (Error::ToString,
// PrintableText...) throw std::bad_alloc like the standard library does.
//
// RESOURCE BOUNDS
// Time is O(N) plus O(T log T) sorting for T tensors. Memory is O(N) whatever N, the
// shapes or the offsets claim: nothing is allocated from a size read in the file before
// that size is checked against the real file size. Beyond the N header bytes, memory stays
// below 2N for every header shape: dims are varints (stguard/shape.h, at most N/2) and a
// metadata entry is two 4-byte references (MetadataList). Duplicate detection sorts; it never
// compares pairwise and uses no hash table. No recursion anywhere. Data pages of a mapped
// file are never touched by validation.
//
// FILES THAT CHANGE (Checkpoint::Open)
// The header is copied into memory with pread(2) (it is at most kMaxHeaderLen bytes) and
// validated there, so validation never reads the mapping: a file truncated by another
// process gives kIoError ("the file shrank while it was being read"), never SIGBUS. The
// tensors' `data` spans, however, are views of a read-only mapping of the file: if the
// file is truncated while the Checkpoint lives, touching a data byte past the new end
// raises SIGBUS, which kills the process. Code that reads data of files it does not
// control (the stguard command does) copies it with Checkpoint::ReadData instead, which
// turns a short read into kIoError naming the file. A file rewritten in place (not
// replaced by rename) can also change the bytes a span shows after validation.
#ifndef STGUARD_READER_H_
#define STGUARD_READER_H_

#include <cstddef>
#include <cstdint>
#include <forward_list>
#include <iterator>
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
#include "stguard/options.h"
#include "stguard/shape.h"

namespace stguard {

// TensorView describes one validated tensor. Its views point into the Checkpoint that
// produced it and live as long as that Checkpoint.
struct STGUARD_API TensorView {
  std::string_view name;        // unescaped UTF-8
  Dtype dtype = Dtype::kBOOL;
  Shape shape;                  // outermost first; empty for a scalar (see stguard/shape.h)
  uint64_t begin = 0;           // data_offsets[0], relative to the data buffer
  uint64_t end = 0;             // data_offsets[1], relative to the data buffer
  std::span<const std::byte> data;  // the tensor's bytes: data buffer [begin, end)
  uint64_t header_offset = 0;   // absolute file offset of the entry's key (for messages)

  uint64_t byte_size() const { return end - begin; }
  // is_aligned says whether `data` is aligned for the dtype's element type in memory
  // (its address is a multiple of DtypeAlignment(dtype)), so that it may be read in place
  // through a float*, uint16_t*... See ALIGNMENT at the top of this file.
  bool is_aligned() const;
  // num_elements is the product of shape (1 for a scalar); validation proved it fits.
  uint64_t num_elements() const;
};

// MetadataEntry is one __metadata__ key and value, both unescaped UTF-8.
struct STGUARD_API MetadataEntry {
  std::string_view key;
  std::string_view value;
};

// MetadataList holds a checkpoint's __metadata__ entries in ascending byte order of their
// keys. A header near the cap can hold millions of entries (`"k":""` is 7 bytes), so an
// entry is two 4-byte references, not two string_views: a string without escapes is
// referred to where it stands in the header text (its length found by its closing quote,
// so reading an entry is O(its length)), one with escapes is unescaped once into the
// list's own buffer. Entries are made on demand as MetadataEntry values whose views live
// as long as the Checkpoint.
class STGUARD_API MetadataList {
 public:
  class Iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using iterator_concept = std::forward_iterator_tag;
    using value_type = MetadataEntry;
    using difference_type = std::ptrdiff_t;
    using reference = MetadataEntry;
    using pointer = void;

    Iterator() = default;
    Iterator(const MetadataList* list, size_t index) : list_(list), index_(index) {}
    MetadataEntry operator*() const { return (*list_)[index_]; }
    Iterator& operator++() {
      ++index_;
      return *this;
    }
    Iterator operator++(int) {
      Iterator before = *this;
      ++index_;
      return before;
    }
    bool operator==(const Iterator& other) const { return index_ == other.index_; }

   private:
    const MetadataList* list_ = nullptr;
    size_t index_ = 0;
  };

  size_t size() const { return refs_.size(); }
  bool empty() const { return refs_.empty(); }
  // operator[] returns entry i (i < size()), in ascending key order.
  MetadataEntry operator[](size_t i) const { return {Text(refs_[i].key), Text(refs_[i].value)}; }
  Iterator begin() const { return Iterator(this, 0); }
  Iterator end() const { return Iterator(this, refs_.size()); }
  // Find returns the value of `key` (binary search), or nullopt when absent.
  std::optional<std::string_view> Find(std::string_view key) const;

 private:
  friend class MetadataListBuilder;
  // A Ref below header_len_ is the offset in the header text of a string's first byte,
  // the string ending at the next '"' (it has no escapes). From header_len_ on, it is the
  // offset (minus header_len_) in unescaped_ of a record: a varint length, then the bytes.
  struct Ref {
    uint32_t key;
    uint32_t value;
  };
  std::string_view Text(uint32_t ref) const;

  const char* header_ = nullptr;
  uint32_t header_len_ = 0;
  std::vector<Ref> refs_;
  std::vector<char> unescaped_;  // a vector, not a string: moving it never moves the bytes
};

class MappedFile;

// Checkpoint is a validated safetensors file. It is movable, not copyable.
class STGUARD_API Checkpoint {
 public:
  // FromBytes validates `bytes` in place, without copying them; `bytes` must outlive the
  // Checkpoint.
  static Result<Checkpoint> FromBytes(std::span<const std::byte> bytes,
                                      const Options& options = {});
  static Result<Checkpoint> FromBytes(std::string_view bytes, const Options& options = {});
  // A temporary string would die before the views into it: refuse it at compile time.
  static Result<Checkpoint> FromBytes(std::string&& bytes, const Options& options = {}) = delete;

  // Open maps the file at `path` read-only and validates it. A missing file, a directory
  // or an unreadable file gives kIoError or kNotARegularFile; an empty file gives
  // kHeaderTooSmall.
  static Result<Checkpoint> Open(const std::string& path, const Options& options = {});

  // OpenHeader validates the file at `path` exactly as Open does, but keeps neither a
  // mapping nor a descriptor: every TensorView::data is empty, and ReadData fails. It
  // holds only the header, so a program can keep any number of them (a folder of 70,000
  // shards would exhaust the per-process mapping limit, vm.max_map_count, with Open).
  static Result<Checkpoint> OpenHeader(const std::string& path, const Options& options = {});
  // OpenHeader over a ByteSource validates the file it reads exactly as Open does, with
  // at most two reads (the 8-byte prefix, then the N header bytes) and the source's size
  // for the tiling check: a 16 GB remote file costs 8 + N bytes. Like the path form, it
  // keeps no data (every TensorView::data is empty; ReadData fails).
  static Result<Checkpoint> OpenHeader(const ByteSource& source, const Options& options = {});

  Checkpoint(Checkpoint&&) noexcept;
  Checkpoint& operator=(Checkpoint&&) noexcept;
  Checkpoint(const Checkpoint&) = delete;
  Checkpoint& operator=(const Checkpoint&) = delete;
  ~Checkpoint();

  size_t num_tensors() const { return tensors_.size(); }
  // tensors lists the tensors in file order: by (begin, end), ties by name.
  std::span<const TensorView> tensors() const { return tensors_; }
  // Find returns the tensor named `name`, or nullptr.
  const TensorView* Find(std::string_view name) const;

  // metadata lists the __metadata__ entries in ascending byte order of their keys.
  const MetadataList& metadata() const { return metadata_; }
  // FindMetadata returns the value of `key`, or nullopt when absent.
  std::optional<std::string_view> FindMetadata(std::string_view key) const {
    return metadata_.Find(key);
  }
  // has_metadata_object says whether the header had a __metadata__ object (maybe empty).
  bool has_metadata_object() const { return has_metadata_object_; }

  uint64_t header_len() const { return header_len_; }  // N
  // bytes is the whole file (the mapping for Open, empty for OpenHeader). See FILES THAT
  // CHANGE above before reading it for a file you do not control.
  std::span<const std::byte> bytes() const { return bytes_; }
  std::string_view header_text() const;  // the N validated header bytes (a copy for Open)
  // head is the file's first 8 + N bytes as validated (prefix and header): what a caller
  // that goes on to sniff the file starts from, instead of reading them a second time.
  std::span<const std::byte> head() const { return head_; }
  std::span<const std::byte> data() const {
    return bytes_.empty() ? bytes_ : bytes_.subspan(8 + header_len_);
  }
  uint64_t file_size() const { return file_size_; }

  // ReadData copies out.size() bytes from absolute file offset `offset` into `out`. For a
  // checkpoint from Open it reads the file with pread(2), never the mapping, so a file
  // truncated by another process gives kIoError naming the file rather than SIGBUS. For
  // FromBytes it copies from the bytes; for OpenHeader it fails (kIoError).
  [[nodiscard]] Error ReadData(uint64_t offset, std::span<std::byte> out) const;

 private:
  Checkpoint();
  friend class CheckpointBuilder;

  std::unique_ptr<MappedFile> mapping_;  // set when opened from a path
  std::unique_ptr<std::byte[]> head_copy_;  // prefix and header read with pread (Open)
  std::span<const std::byte> head_;        // the prefix and header that were validated
  std::span<const std::byte> bytes_;
  uint64_t file_size_ = 0;
  uint64_t header_len_ = 0;
  bool has_metadata_object_ = false;
  std::vector<TensorView> tensors_;        // file order
  std::vector<uint32_t> by_name_;          // indexes into tensors_, sorted by name bytes
  MetadataList metadata_;                  // sorted by key bytes
  std::vector<uint8_t> dims_;              // every tensor's shape as varints, back to back
  // Unescaped names and values that had escapes. A list: its strings never move, and
  // moving it never allocates (a std::deque's move may), so the noexcept moves hold.
  std::forward_list<std::string> owned_strings_;
};

}  // namespace stguard

#endif  // STGUARD_READER_H_
