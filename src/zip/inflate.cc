// SPDX-License-Identifier: Apache-2.0
// The DEFLATE decoder: a bit reader, canonical Huffman tables built and checked as zlib
// checks them, and a block loop writing into a buffer that keeps the last 32 KiB as the
// window (see inflate.h for the policy).
#include "zip/inflate.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <vector>

namespace stguard {
namespace {

constexpr const char* kShortMessage = "stream ends before its declared size";

constexpr int kMaxBits = 15;          // longest Huffman code
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

// Load64 reads 8 input bytes as a little-endian word (a plain load on every target the
// library builds for; the shifts keep big-endian hosts correct).
inline uint64_t Load64(const std::byte* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  if constexpr (std::endian::native == std::endian::big) {
    uint64_t r = 0;
    for (int i = 0; i < 8; ++i) r |= static_cast<uint64_t>(p[i]) << (8 * i);
    v = r;
  }
  return v;
}

// BitReader hands out the input's bits least-significant first. Reading past the end
// yields zero bits and sets `overrun`, checked where a value is used. The fast loop
// (Inflater::FastCodes) works on copies of its fields and refills eight bytes at a time;
// the bits of `bits_` above `count_` then hold the next input bytes in place, so the
// byte-wise Refill, which ORs the same bytes into the same places, stays consistent.
class BitReader {
 public:
  explicit BitReader(std::span<const std::byte> in) : in_(in) {}
  // Peek returns the next n (<= 16) bits without consuming them.
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
    if (n == 0) return true;
    if (in_.size() - pos_ < n) return false;
    std::memcpy(out, in_.data() + pos_, n);
    pos_ += n;
    bits_ = 0;  // count_ is 0 here: drop the look-ahead bytes the copy consumed
    return true;
  }
  bool overrun() const { return overrun_; }
  // consumed is the number of input bytes begun (a partly used last byte counts).
  uint64_t consumed() const { return pos_ - static_cast<uint64_t>(count_ / 8); }

 private:
  friend class Inflater;
  void Refill() {
    while (count_ <= 48 && pos_ < in_.size()) {
      bits_ |= static_cast<uint64_t>(in_[pos_++]) << count_;
      count_ += 8;
    }
  }
  std::span<const std::byte> in_;
  size_t pos_ = 0;
  uint64_t bits_ = 0;
  int count_ = 0;  // at most 63
  bool overrun_ = false;
};

// A decode table entry (uint32_t): bits 0-7 the bits the symbol takes with its extra bits
// (for kSub, the sub-table's index bits), bits 8-11 the code's length, bits 12-15 flags,
// bits 16-31 the value: a literal byte, a length or distance base, a code-length symbol,
// or a sub-table's start. A length or distance entry has no flag, so the hot path tests
// one bit for literals and one mask for the rare cases.
constexpr uint32_t kLit = 1u << 12, kEnd = 1u << 13, kSub = 1u << 14, kBad = 1u << 15;
constexpr int kLitRootBits = 10, kDistRootBits = 8, kCodeLenRootBits = 7;
// Each code longer than the root gets a sub-table of at most 2^(15 - root) entries for its
// root prefix, and there are at most 288 such prefixes.
constexpr size_t kTableLen = (size_t{1} << kLitRootBits) + 288 * (size_t{1} << (kMaxBits - kLitRootBits));

// The entries live on the heap: two tables would strain WebAssembly's small stack.
struct Huffman {
  int root = 0;
  std::vector<uint32_t> entry = std::vector<uint32_t>(kTableLen);
};

inline uint32_t Lookup(const Huffman& h, uint64_t bits) {
  uint32_t e = h.entry[bits & ((uint32_t{1} << h.root) - 1)];
  if ((e & kSub) != 0) {
    e = h.entry[(e >> 16) + ((bits >> h.root) & ((uint32_t{1} << (e & 0xFF)) - 1))];
  }
  return e;
}

enum class TableKind { kCodeLengths, kLiteralLengths, kDistances };

// EntryOf is the table entry of symbol `sym` with a code of `len` bits.
uint32_t EntryOf(TableKind kind, size_t sym, int len) {
  const uint32_t code = static_cast<uint32_t>(len) << 8 | static_cast<uint32_t>(len);
  if (kind == TableKind::kCodeLengths) return kLit | static_cast<uint32_t>(sym) << 16 | code;
  if (kind == TableKind::kLiteralLengths) {
    if (sym < 256) return kLit | static_cast<uint32_t>(sym) << 16 | code;
    if (sym == 256) return kEnd | code;
    if (sym > 285) return kBad | code;
    return uint32_t{kLengthBase[sym - 257]} << 16 | (code + kLengthExtra[sym - 257]);
  }
  if (sym > 29) return kBad | code;
  return uint32_t{kDistBase[sym]} << 16 | (code + kDistExtra[sym]);
}

// Reverse puts a canonical (most significant bit first) code into the stream's bit order.
uint32_t Reverse(uint32_t code, int len) {
  uint32_t reversed = 0;
  for (int b = 0; b < len; ++b) reversed |= ((code >> b) & 1u) << (len - 1 - b);
  return reversed;
}

// Build makes `h` from code lengths, refusing what zlib's inflate_table refuses: an
// oversubscribed set always; an incomplete one for the code-length code, and for the
// other two unless it is a single code of length 1. No codes at all is allowed (a block
// of literals needs no distance code); using such a table fails (its entries are kBad
// with length 0). Codes up to the root length decode by one look-up; a longer code's
// root prefix points to a sub-table sized for the longest code sharing that prefix.
bool Build(std::span<const uint8_t> lengths, TableKind kind, Huffman* h) {
  std::array<uint16_t, kMaxBits + 1> count{};
  for (uint8_t len : lengths) ++count[len];
  count[0] = 0;
  int left = 1;
  int max_len = 0;
  for (int len = 1; len <= kMaxBits; ++len) {
    left = (left << 1) - count[len];
    if (left < 0) return false;  // oversubscribed
    if (count[len] != 0) max_len = len;
  }
  if (max_len > 0 && left > 0 && (kind == TableKind::kCodeLengths || max_len != 1)) {
    return false;  // incomplete
  }
  std::array<uint16_t, kMaxBits + 2> offset{};
  for (int len = 1; len <= kMaxBits; ++len) offset[len + 1] = offset[len] + count[len];
  std::array<uint16_t, kNumLitLen> sorted{};
  for (size_t sym = 0; sym < lengths.size(); ++sym) {
    if (lengths[sym] != 0) sorted[offset[lengths[sym]]++] = static_cast<uint16_t>(sym);
  }
  const int root = kind == TableKind::kLiteralLengths ? kLitRootBits
                   : kind == TableKind::kDistances    ? kDistRootBits
                                                      : kCodeLenRootBits;
  const uint32_t root_len = uint32_t{1} << root;
  h->root = root;
  std::fill_n(h->entry.begin(), root_len, kBad);
  // Walk the codes in canonical order; codes sharing a root prefix are consecutive there
  // and the last of them is the longest, so a sub-table is sized when its first code
  // comes: by the longest code with that prefix, found by looking ahead.
  std::array<uint32_t, kNumLitLen> reversed{};
  std::array<uint8_t, kNumLitLen> code_len{};
  size_t n = 0;
  for (uint32_t len = 1, code = 0; len <= kMaxBits; ++len, code <<= 1) {
    for (int k = 0; k < count[len]; ++k, ++code, ++n) {
      reversed[n] = Reverse(code, static_cast<int>(len));
      code_len[n] = static_cast<uint8_t>(len);
    }
  }
  size_t next_sub = root_len;
  uint32_t sub_prefix = UINT32_MAX, sub_start = 0, sub_bits = 0;
  for (size_t i = 0; i < n; ++i) {
    const int len = code_len[i];
    const uint32_t entry = EntryOf(kind, sorted[i], len);
    if (len <= root) {
      for (uint32_t fill = reversed[i]; fill < root_len; fill += uint32_t{1} << len) {
        h->entry[fill] = entry;
      }
      continue;
    }
    const uint32_t prefix = reversed[i] & (root_len - 1);
    if (prefix != sub_prefix) {
      size_t last = i;
      while (last + 1 < n && (reversed[last + 1] & (root_len - 1)) == prefix) ++last;
      sub_prefix = prefix;
      sub_bits = static_cast<uint32_t>(code_len[last] - root);
      sub_start = static_cast<uint32_t>(next_sub);
      if (next_sub + (size_t{1} << sub_bits) > kTableLen) return false;  // cannot happen
      next_sub += size_t{1} << sub_bits;
      std::fill_n(h->entry.begin() + sub_start, size_t{1} << sub_bits, kBad);
      h->entry[prefix] = kSub | sub_start << 16 | sub_bits;
    }
    for (uint32_t fill = reversed[i] >> root; fill < (uint32_t{1} << sub_bits);
         fill += uint32_t{1} << (len - root)) {
      h->entry[sub_start + fill] = entry;
    }
  }
  return true;
}

// Symbol is one decoded table entry with its value (base plus extra bits).
struct Symbol {
  uint32_t entry;
  uint32_t value;
};

// Decode reads one symbol and its extra bits the slow way (any number of input bits
// left). An entry of length 0 (no code matches) consumes nothing.
Symbol Decode(BitReader& in, const Huffman& h) {
  const uint32_t entry = Lookup(h, in.Peek(kMaxBits));
  const int code_len = static_cast<int>((entry >> 8) & 0xF);
  in.Skip(code_len);
  if ((entry & (kLit | kEnd | kBad)) != 0) return {entry, entry >> 16};
  return {entry, (entry >> 16) + in.Take(static_cast<int>(entry & 0xFF) - code_len)};
}

// CopyMatch repeats `len` bytes from `dist` back at `out`, eight bytes at a time; it may
// write up to kCopySlack bytes past out + len (the buffer has room for them). A distance
// under 8 first writes one whole number of periods of at least 8 bytes byte by byte, so
// the word copies then read bytes at least 8 behind those they write.
constexpr size_t kCopySlack = 16;
inline void CopyMatch(std::byte* out, size_t dist, size_t len) {
  std::byte* const end = out + len;
  const std::byte* from = out - dist;
  if (dist == 1) {
    const uint64_t v = static_cast<uint64_t>(*from) * 0x0101010101010101u;
    do {
      std::memcpy(out, &v, 8);
      out += 8;
    } while (out < end);
    return;
  }
  if (dist < 8) {
    const size_t period = dist * ((8 + dist - 1) / dist);
    for (size_t i = 0; i < period; ++i) out[i] = from[i];
    out += period;
    from = out - period;
  }
  while (out < end) {
    std::memcpy(out, from, 8);
    out += 8;
    from += 8;
  }
}

constexpr size_t kFlushAt = kWindowLen + kInflateChunkLen;

// Output is the fixed buffer: the last kWindowLen bytes written stay before `pos` for
// matches; the bytes after `flushed` are handed to the sink when `pos` reaches kFlushAt.
// After every symbol pos < kFlushAt, so a match (kMaxMatch) and its copy's overshoot fit.
class Output {
 public:
  Output(uint64_t expected_len, const InflateSink& sink, uint64_t early_emit_at)
      : buffer_(kFlushAt + kMaxMatch + kCopySlack), expected_(expected_len), sink_(sink),
        early_emit_at_(early_emit_at) {}
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
    CopyMatch(buffer_.data() + pos_, dist, len);
    pos_ += len;
    total_ += len;
    return MaybeFlush();
  }
  // Stored appends raw bytes read from `in`.
  bool Stored(BitReader& in, size_t len, Error* error) {
    while (len > 0) {
      const size_t n = std::min(len, kFlushAt - pos_);
      if (!in.TakeBytes(n, buffer_.data() + pos_)) return false;
      pos_ += n;
      total_ += n;
      len -= n;
      if (*error = MaybeFlush(); !error->ok()) return true;
    }
    return true;
  }
  // FastLimit is the position below which the fast loop may decode a symbol without
  // checking: a match (or three literals) then stays under kFlushAt, within the declared
  // size, and short of the early emission point.
  size_t FastLimit() const {
    constexpr uint64_t kMost = kMaxMatch + 3;
    uint64_t room = std::min(expected_ - total_, early_emit_at_ - std::min(early_emit_at_, total_));
    room = room > kMost ? room - kMost : 0;
    return static_cast<size_t>(std::min<uint64_t>(kFlushAt, pos_ + std::min<uint64_t>(room, kFlushAt)));
  }
  std::byte* data() { return buffer_.data(); }
  size_t pos() const { return pos_; }
  // Advance records what the fast loop wrote directly into the buffer.
  void Advance(size_t new_pos) {
    total_ += new_pos - pos_;
    pos_ = new_pos;
  }
  Error MaybeFlush() {
    if (total_ >= early_emit_at_) {
      early_emit_at_ = UINT64_MAX;
      if (Error e = Emit(); !e.ok()) return e;
    }
    if (pos_ < kFlushAt) return {};
    if (Error e = Emit(); !e.ok()) return e;
    std::memmove(buffer_.data(), buffer_.data() + pos_ - kWindowLen, kWindowLen);
    pos_ = flushed_ = kWindowLen;
    return {};
  }
  Error Finish() { return Emit(); }

 private:
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
    if (!Build(code_lengths, TableKind::kCodeLengths, &dist_)) {
      return Fail("invalid code-length code set");
    }
    std::array<uint8_t, 286 + 30> lengths{};
    for (int i = 0; i < nlen + ndist;) {
      const Symbol s = Decode(in_, dist_);  // the code-length code, until dist_ is built
      if ((s.entry & kBad) != 0) return Fail("invalid code-length code");
      const uint32_t sym = s.value;
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

  // Codes decodes one compressed block's symbols up to its end-of-block code: by the fast
  // loop while input and output have room, else one symbol at a time with every check.
  Error Codes() {
    for (;;) {
      switch (FastCodes()) {
        case FastStop::kRoom: break;
        case FastStop::kEndOfBlock: return {};
        case FastStop::kBadLiteral: return Fail("invalid literal/length code");
        case FastStop::kBadDistance: return Fail("invalid distance code");
        case FastStop::kTooFar: return Fail("distance reaches before the first byte");
      }
      if (Error e = out_.MaybeFlush(); !e.ok()) return e;
      bool end = false;
      if (Error e = SlowSymbol(&end); !e.ok() || end) return e;
    }
  }

  // SlowSymbol decodes one symbol near the end of the input or of the output's room.
  Error SlowSymbol(bool* end) {
    const Symbol lit = Decode(in_, lit_);
    if (in_.overrun()) return Fail("stream truncated");
    if ((lit.entry & kBad) != 0) return Fail("invalid literal/length code");
    if ((lit.entry & kLit) != 0) {
      if (!out_.Room(1)) return Fail("stream inflates past its declared size");
      return out_.Literal(static_cast<std::byte>(lit.value));
    }
    if ((lit.entry & kEnd) != 0) {
      *end = true;
      return {};
    }
    const Symbol dist = Decode(in_, dist_);
    if ((dist.entry & kBad) != 0) return Fail("invalid distance code");
    if (in_.overrun()) return Fail("stream truncated");
    if (dist.value > out_.total()) return Fail("distance reaches before the first byte");
    if (!out_.Room(lit.value)) return Fail("stream inflates past its declared size");
    return out_.Copy(dist.value, lit.value);
  }

  enum class FastStop { kRoom, kEndOfBlock, kBadLiteral, kBadDistance, kTooFar };

  // FastCodes decodes symbols while at least 8 input bytes remain and the output is below
  // Output::FastLimit. Each round refills the bit buffer to at least 56 bits without a
  // branch, which covers a length code with its extra bits (20) and a distance code with
  // its extra bits (28), or three literals (45). It works on local copies of the reader's
  // and the output's state (stores through std::byte would otherwise force reloads).
  FastStop FastCodes() {
    if (in_.in_.size() < 8) return FastStop::kRoom;
    const std::byte* const in = in_.in_.data();
    const size_t in_last = in_.in_.size() - 8;
    size_t ip = in_.pos_;
    uint64_t bits = in_.bits_;
    uint32_t count = static_cast<uint32_t>(in_.count_);
    std::byte* const out = out_.data();
    const size_t limit = out_.FastLimit();
    const size_t start = out_.pos();
    const uint64_t before = out_.total() - start;  // total output = before + op
    size_t op = start;
    FastStop stop = FastStop::kRoom;
    const auto consume = [&](uint32_t n) {
      bits >>= n;
      count -= n;
    };
    while (ip <= in_last && op < limit) {
      bits |= Load64(in + ip) << count;
      ip += (63 - count) >> 3;
      count |= 56;
      uint32_t e = Lookup(lit_, bits);
      if ((e & kLit) != 0) {
        consume(e & 0xFF);
        out[op++] = static_cast<std::byte>(e >> 16);
        e = Lookup(lit_, bits);
        if ((e & kLit) == 0) continue;
        consume(e & 0xFF);
        out[op++] = static_cast<std::byte>(e >> 16);
        e = Lookup(lit_, bits);
        if ((e & kLit) == 0) continue;
        consume(e & 0xFF);
        out[op++] = static_cast<std::byte>(e >> 16);
        continue;
      }
      if ((e & (kEnd | kBad)) != 0) {
        consume((e >> 8) & 0xF);
        stop = (e & kEnd) != 0 ? FastStop::kEndOfBlock : FastStop::kBadLiteral;
        break;
      }
      const uint32_t len_code = (e >> 8) & 0xF;
      const size_t len = (e >> 16) + ((bits & ((uint64_t{1} << (e & 0xFF)) - 1)) >> len_code);
      consume(e & 0xFF);
      e = Lookup(dist_, bits);
      if ((e & kBad) != 0) {
        consume((e >> 8) & 0xF);
        stop = FastStop::kBadDistance;
        break;
      }
      const uint32_t dist_code = (e >> 8) & 0xF;
      const size_t dist = (e >> 16) + ((bits & ((uint64_t{1} << (e & 0xFF)) - 1)) >> dist_code);
      consume(e & 0xFF);
      if (dist > before + op) {
        stop = FastStop::kTooFar;
        break;
      }
      CopyMatch(out + op, dist, len);
      op += len;
    }
    in_.pos_ = ip;
    in_.bits_ = bits;
    in_.count_ = static_cast<int>(count);
    out_.Advance(op);
    return stop;
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
