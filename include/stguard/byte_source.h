// SPDX-License-Identifier: Apache-2.0
// stguard/byte_source.h: where a reader's bytes come from when they are not a mapping.
//
// A ByteSource is a file of fixed size read by ranges: a local file (pread), a buffer,
// a dropped browser File (FileReaderSync), or a URL (HTTP range requests). The readers'
// range paths read only the bytes a verdict needs (a safetensors prefix and header, a GGUF
// header and tensor infos, a ZIP's end records, central directory and pickle, an npy
// header), so a remote 16 GB file is judged from its first kilobytes. The mapped path
// stays the fast, zero-copy default; both apply one set of rules.
//
// BOUNDS. Every read is checked against size() before it is made; offsets are 64-bit
// everywhere (WebAssembly's size_t is 32-bit). A source that returns fewer bytes than
// asked, fails, or finds that the file's size changed reports kIoError: never a crash,
// never a partial buffer taken for data.
#ifndef STGUARD_BYTE_SOURCE_H_
#define STGUARD_BYTE_SOURCE_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>

#include "stguard/error.h"
#include "stguard/export.h"

namespace stguard {

class STGUARD_API ByteSource {
 public:
  virtual ~ByteSource() = default;
  // size is the file's length in bytes, fixed when the source was opened.
  virtual uint64_t size() const = 0;
  // ReadAt fills `out` with the bytes at [offset, offset + out.size()), or returns
  // kIoError (out of range, short read, read error, size changed) naming the source.
  [[nodiscard]] virtual Error ReadAt(uint64_t offset, std::span<std::byte> out) const = 0;
  // remote says reads are expensive (a network round trip each): readers then skip checks
  // that need bytes they would not otherwise read, and the result says which.
  virtual bool remote() const { return false; }
};

// MemorySource is a ByteSource over bytes the caller keeps alive as long as the source
// (a buffer already in memory, a fuzzer's input, a whole-file mapping). `name` appears in
// its errors. It is never remote.
class STGUARD_API MemorySource final : public ByteSource {
 public:
  explicit MemorySource(std::span<const std::byte> bytes, std::string name = "memory")
      : bytes_(bytes), name_(std::move(name)) {}
  uint64_t size() const override { return bytes_.size(); }
  [[nodiscard]] Error ReadAt(uint64_t offset, std::span<std::byte> out) const override;

 private:
  std::span<const std::byte> bytes_;
  std::string name_;
};

// SourceRangeError returns kIoError when [offset, offset + len) does not lie inside a
// source of `size` bytes (compared by subtraction: nothing can wrap), else ok. Every
// ByteSource implementation calls it before reading.
STGUARD_API Error SourceRangeError(uint64_t size, uint64_t offset, uint64_t len,
                                   const std::string& name);

}  // namespace stguard

#endif  // STGUARD_BYTE_SOURCE_H_
