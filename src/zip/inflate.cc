// SPDX-License-Identifier: Apache-2.0
// The DEFLATE decoder: a bit reader, canonical Huffman tables built and checked as zlib
// checks them, and a block loop writing into a buffer that keeps the last 32 KiB as the
// window (see inflate.h for the policy).
#include "zip/inflate.h"

#include <array>
#include <cstring>
#include <vector>

namespace stguard {
namespace {

constexpr const char* kShortMessage = "stream ends before its declared size";

constexpr int kMaxBits = 15;          // longest Huffman code
constexpr int kFastBits = 10;         // codes up to this long decode by one table look-up
constexpr size_t kWindowLen = 32768;  // farthest a distance reaches
constexpr size_t kMaxMatch = 258;
constexpr int kNumLitLen = 288, kNumDist = 32, kNumCodeLen = 19;

// Base values and extra bits of length codes 257..285 and distance codes 0..29.
constexpr uint16_t kLengthBase[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,
                                      15, 17, 19, 23, 27, 31, 35, 43, 51,  59,
                                      67, 83, 99, 115, 131, 163, 195, 227, 258};
constexpr uint8_t kLengthExtra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                      2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
constexpr uint16_t kDistBase[30] = {1,    2,    3,    4,    5,    7,     9,     13,
                                    17,   25,   33,   49,   65,   97,    129,   193,
                                    257,  385,  513,  769,  1025, 1537,  2049,  3073,
                                    4097, 6145, 8193, 12289, 16385, 24577};
constexpr uint8_t kDistExtra[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                    6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};
// The order in which a dynamic block lists the code-length code's lengths.
constexpr uint8_t kCodeLenOrder[kNumCodeLen] = {16, 17, 18, 0, 8,  7, 9,  6, 10, 5,
                                                11, 4,  12, 3, 13, 2, 14, 1, 15};

// BitReader hands out the input's bits least-significant first. Reading past the end
// yields zero bits and sets `overrun`, checked where a value is used.
class BitReader {
 public:
  explicit BitReader(std::span<const std::byte> in) : in_(in) {}
  // Peek returns the next n (<= 32) bits without consuming them.
  uint32_t Peek(int n) {
    Refill();
    return static_cast<uint32_t>(bits_ & ((uint64_t{1} << n) - 1));
  }
  void Skip(int n) {
    if (n > count_) overrun_ = true;
    bits_ >>= n;
    count_ = n > count_ ? 0 : count_ - n;
  }
  uint32_t Take(int n) {
    const uint32_t value = Peek(n);
    Skip(n);
    return value;
  }
  // AlignToByte drops the bits left of the current byte (before a stored block).
  void AlignToByte() { Skip(count_ % 8); }
  // TakeBytes copies n whole bytes (after AlignToByte) into `out`; false if too few remain.
  bool TakeBytes(size_t n, std::byte* out) {
    while (n > 0 && count_ >= 8) {
      *out++ = static_cast<std::byte>(bits_ & 0xFF);
      Skip(8);
      --n;
    }
    if (in_.size() - pos_ < n) return false;
    std::memcpy(out, in_.data() + pos_, n);
    pos_ += n;
    return true;
  }
  bool overrun() const { return overrun_; }
  // consumed is the number of input bytes begun (a partly used last byte counts).
  uint64_t consumed() const { return pos_ - static_cast<uint64_t>(count_ / 8); }

 private:
  void Refill() {
    while (count_ <= 56 && pos_ < in_.size()) {
      bits_ |= static_cast<uint64_t>(in_[pos_++]) << count_;
      count_ += 8;
    }
  }
  std::span<const std::byte> in_;
  size_t pos_ = 0;
  uint64_t bits_ = 0;
  int count_ = 0;
  bool overrun_ = false;
};

// Huffman is a canonical code: symbols sorted by (length, value), counts per length, and
// a table of the first kFastBits bits giving (symbol, length) for short codes.
struct Huffman {
  std::array<uint16_t, kMaxBits + 1> count{};
  std::array<uint16_t, kNumLitLen> symbol{};
  // fast[bits] = symbol << 4 | length, or 0 when the code is longer or absent.
  std::array<uint16_t, 1u << kFastBits> fast{};
};

enum class TableKind { kCodeLengths, kLiteralLengths, kDistances };

// Build makes `h` from code lengths, refusing what zlib's inflate_table refuses: an
// oversubscribed set always; an incomplete one for the code-length code, and for the
// other two unless it is a single code of length 1. No codes at all is allowed (a block
// of literals needs no distance code); using such a table fails in Decode.
bool Build(std::span<const uint8_t> lengths, TableKind kind, Huffman* h) {
  h->count.fill(0);
  h->fast.fill(0);
  int max_len = 0;
  for (uint8_t len : lengths) {
    ++h->count[len];
    if (len > max_len) max_len = len;
  }
  h->count[0] = 0;
  int left = 1;
  for (int len = 1; len <= kMaxBits; ++len) {
    left = (left << 1) - h->count[len];
    if (left < 0) return false;  // oversubscribed
  }
  if (max_len > 0 && left > 0 && (kind == TableKind::kCodeLengths || max_len != 1)) {
    return false;  // incomplete
  }
  std::array<uint16_t, kMaxBits + 2> offset{};
  for (int len = 1; len <= kMaxBits; ++len) offset[len + 1] = offset[len] + h->count[len];
  for (size_t sym = 0; sym < lengths.size(); ++sym) {
    if (lengths[sym] != 0) h->symbol[offset[lengths[sym]]++] = static_cast<uint16_t>(sym);
  }
  // Fill the fast table: walk codes in canonical order, reversing each into the stream's
  // bit order and repeating it over every setting of the bits after it.
  uint32_t code = 0;
  size_t index = 0;
  for (int len = 1; len <= kFastBits; ++len) {
    for (int k = 0; k < h->count[len]; ++k, ++code, ++index) {
      uint32_t reversed = 0;
      for (int b = 0; b < len; ++b) reversed |= ((code >> b) & 1u) << (len - 1 - b);
      const uint16_t entry = static_cast<uint16_t>(h->symbol[index] << 4 | len);
      for (uint32_t fill = reversed; fill < (1u << kFastBits); fill += 1u << len) {
        h->fast[fill] = entry;
      }
    }
    code <<= 1;
  }
  return true;
}

// Decode reads one symbol, or returns -1 when no code matches the bits.
int Decode(BitReader& in, const Huffman& h) {
  const uint32_t peek = in.Peek(kMaxBits);
  const uint16_t entry = h.fast[peek & ((1u << kFastBits) - 1)];
  if (entry != 0) {
    in.Skip(entry & 0xF);
    return entry >> 4;
  }
  // The slow path walks the canonical code bit by bit (codes longer than kFastBits).
  int code = 0, first = 0, index = 0;
  for (int len = 1; len <= kMaxBits; ++len) {
    code |= static_cast<int>((peek >> (len - 1)) & 1u);
    const int count = h.count[len];
    if (code - first < count) {
      in.Skip(len);
      return h.symbol[index + (code - first)];
    }
    index += count;
    first = (first + count) << 1;
    code <<= 1;
  }
  return -1;
}

// Output is the fixed buffer: the last kWindowLen bytes written stay before `pos` for
// matches; the bytes after `flushed` are handed to the sink when the buffer fills.
class Output {
 public:
  Output(uint64_t expected_len, const InflateSink& sink, uint64_t early_emit_at)
      : buffer_(kWindowLen + kInflateChunkLen + kMaxMatch), expected_(expected_len),
        sink_(sink), early_emit_at_(early_emit_at) {}
  // Room says whether n more bytes fit the declared size.
  bool Room(uint64_t n) const { return n <= expected_ - total_; }
  uint64_t total() const { return total_; }
  Error Literal(std::byte b) {
    buffer_[pos_++] = b;
    ++total_;
    return MaybeFlush();
  }
  // Copy repeats `len` bytes from `dist` back (dist <= total(), checked by the caller).
  Error Copy(size_t dist, size_t len) {
    std::byte* out = buffer_.data() + pos_;
    const std::byte* from = out - dist;
    if (dist == 1) {
      std::memset(out, static_cast<int>(*from), len);
    } else {
      // An overlapping copy repeats the dist bytes before `out`: copy that period, then
      // twice as much from the same start, and so on; no memcpy overlaps.
      for (size_t done = 0; done < len;) {
        const size_t n = std::min(len - done, dist + done);
        std::memcpy(out + done, from, n);
        done += n;
      }
    }
    pos_ += len;
    total_ += len;
    return MaybeFlush();
  }
  // Stored appends raw bytes read from `in`.
  bool Stored(BitReader& in, size_t len, Error* error) {
    while (len > 0) {
      const size_t n = std::min(len, buffer_.size() - kMaxMatch - pos_);
      if (!in.TakeBytes(n, buffer_.data() + pos_)) return false;
      pos_ += n;
      total_ += n;
      len -= n;
      if (*error = MaybeFlush(); !error->ok()) return true;
    }
    return true;
  }
  Error Finish() { return Emit(); }

 private:
  Error MaybeFlush() {
    if (total_ >= early_emit_at_) {
      early_emit_at_ = UINT64_MAX;
      if (Error e = Emit(); !e.ok()) return e;
    }
    if (pos_ < kWindowLen + kInflateChunkLen) return {};
    if (Error e = Emit(); !e.ok()) return e;
    std::memmove(buffer_.data(), buffer_.data() + pos_ - kWindowLen, kWindowLen);
    pos_ = flushed_ = kWindowLen;
    return {};
  }
  Error Emit() {
    const std::span<const std::byte> chunk(buffer_.data() + flushed_, pos_ - flushed_);
    flushed_ = pos_;
    if (chunk.empty()) return {};
    return sink_(chunk);
  }
  std::vector<std::byte> buffer_;
  size_t pos_ = 0, flushed_ = 0;
  uint64_t total_ = 0;
  const uint64_t expected_;
  const InflateSink& sink_;
  uint64_t early_emit_at_;
};

// Inflater holds the state of one stream and reports errors at the current input byte.
class Inflater {
 public:
  Inflater(std::span<const std::byte> input, uint64_t base, uint64_t expected,
           const InflateSink& sink, uint64_t early_emit_at)
      : in_(input), input_len_(input.size()), base_(base), out_(expected, sink, early_emit_at) {}

  Error Run(uint64_t expected) {
    bool last = false;
    while (!last) {
      last = in_.Take(1) != 0;
      const uint32_t type = in_.Take(2);
      Error e;
      if (type == 0) {
        e = StoredBlock();
      } else if (type == 1) {
        e = FixedTables();
        if (e.ok()) e = Codes();
      } else if (type == 2) {
        e = DynamicTables();
        if (e.ok()) e = Codes();
      } else {
        e = Fail("invalid block type 3");
      }
      if (!e.ok()) return e;
      if (in_.overrun()) return Fail("stream truncated");
    }
    if (Error e = out_.Finish(); !e.ok()) return e;
    if (in_.consumed() != input_len_) return Fail("bytes after the end of the stream");
    if (out_.total() != expected) return Fail(kShortMessage);
    return {};
  }

 private:
  Error Fail(const char* message) const {
    const uint64_t at = in_.consumed() > input_len_ ? input_len_ : in_.consumed();
    return Error{ErrorCode::kDeflateData, base_ + at, message};
  }

  Error StoredBlock() {
    in_.AlignToByte();
    const uint32_t len = in_.Take(16), nlen = in_.Take(16);
    if (in_.overrun()) return Fail("stream truncated");
    if ((len ^ 0xFFFF) != nlen) return Fail("stored block length and its complement differ");
    if (!out_.Room(len)) return Fail("stream inflates past its declared size");
    Error sink_error;
    if (!out_.Stored(in_, len, &sink_error)) return Fail("stream truncated");
    return sink_error;
  }

  Error FixedTables() {
    std::array<uint8_t, kNumLitLen> lit{};
    for (int i = 0; i < 144; ++i) lit[i] = 8;
    for (int i = 144; i < 256; ++i) lit[i] = 9;
    for (int i = 256; i < 280; ++i) lit[i] = 7;
    for (int i = 280; i < kNumLitLen; ++i) lit[i] = 8;
    std::array<uint8_t, kNumDist> dist{};
    dist.fill(5);
    Build(lit, TableKind::kLiteralLengths, &lit_);
    Build(dist, TableKind::kDistances, &dist_);
    return {};
  }

  Error DynamicTables() {
    const int nlen = static_cast<int>(in_.Take(5)) + 257;
    const int ndist = static_cast<int>(in_.Take(5)) + 1;
    const int ncode = static_cast<int>(in_.Take(4)) + 4;
    if (nlen > 286 || ndist > 30) return Fail("too many length or distance codes");
    std::array<uint8_t, kNumCodeLen> code_lengths{};
    for (int i = 0; i < ncode; ++i) code_lengths[kCodeLenOrder[i]] = in_.Take(3);
    if (in_.overrun()) return Fail("stream truncated");
    Huffman code_code;
    if (!Build(code_lengths, TableKind::kCodeLengths, &code_code)) {
      return Fail("invalid code-length code set");
    }
    std::array<uint8_t, 286 + 30> lengths{};
    for (int i = 0; i < nlen + ndist;) {
      const int sym = Decode(in_, code_code);
      if (sym < 0) return Fail("invalid code-length code");
      if (sym < 16) {
        lengths[i++] = static_cast<uint8_t>(sym);
        continue;
      }
      uint8_t value = 0;
      int repeat = 0;
      if (sym == 16) {
        if (i == 0) return Fail("code-length repeat with no length before it");
        value = lengths[i - 1];
        repeat = 3 + static_cast<int>(in_.Take(2));
      } else if (sym == 17) {
        repeat = 3 + static_cast<int>(in_.Take(3));
      } else {
        repeat = 11 + static_cast<int>(in_.Take(7));
      }
      if (in_.overrun()) return Fail("stream truncated");
      if (i + repeat > nlen + ndist) return Fail("code-length repeat past the last code");
      while (repeat-- > 0) lengths[i++] = value;
    }
    if (in_.overrun()) return Fail("stream truncated");
    if (lengths[256] == 0) return Fail("no end-of-block code");
    if (!Build(std::span(lengths.data(), nlen), TableKind::kLiteralLengths, &lit_)) {
      return Fail("invalid literal/length code set");
    }
    if (!Build(std::span(lengths.data() + nlen, ndist), TableKind::kDistances, &dist_)) {
      return Fail("invalid distance code set");
    }
    return {};
  }

  // Codes decodes one compressed block's symbols up to its end-of-block code.
  Error Codes() {
    for (;;) {
      const int sym = Decode(in_, lit_);
      if (in_.overrun()) return Fail("stream truncated");
      if (sym < 0 || sym > 285) return Fail("invalid literal/length code");
      if (sym < 256) {
        if (!out_.Room(1)) return Fail("stream inflates past its declared size");
        if (Error e = out_.Literal(static_cast<std::byte>(sym)); !e.ok()) return e;
        continue;
      }
      if (sym == 256) return {};
      const int li = sym - 257;
      const size_t len = kLengthBase[li] + in_.Take(kLengthExtra[li]);
      const int dsym = Decode(in_, dist_);
      if (dsym < 0 || dsym > 29) return Fail("invalid distance code");
      const size_t dist = kDistBase[dsym] + in_.Take(kDistExtra[dsym]);
      if (in_.overrun()) return Fail("stream truncated");
      if (dist > out_.total()) return Fail("distance reaches before the first byte");
      if (!out_.Room(len)) return Fail("stream inflates past its declared size");
      if (Error e = out_.Copy(dist, len); !e.ok()) return e;
    }
  }

  BitReader in_;
  const uint64_t input_len_;
  const uint64_t base_;
  Output out_;
  Huffman lit_, dist_;
};

}  // namespace

const char* const kInflateShortMessage = kShortMessage;

Error Inflate(std::span<const std::byte> input, uint64_t base_offset, uint64_t expected_len,
              const InflateSink& sink, uint64_t early_emit_at) {
  Inflater inflater(input, base_offset, expected_len, sink, early_emit_at);
  return inflater.Run(expected_len);
}

}  // namespace stguard
