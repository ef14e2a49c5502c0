// SPDX-License-Identifier: Apache-2.0
// Stage 3: the header schema, read straight from the token stream (no DOM).
//
// The parser pulls tokens from JsonTokenizer, which has already checked the JSON grammar
// of everything it hands out, so this file only has to check shape: which token kinds may
// appear where. The nesting the schema allows is fixed (top object > entry > array), so
// the parser is a flat sequence of loops with no recursion and no state stack.
//
// Speed: entries in the compact form that writers produce are matched byte for byte by
// TryCompactEntry, skipping the per-token work; anything it does not recognise is left to
// the token-by-token path, which is the one that reports errors. The two must agree on
// every input (tests/header_fast_path_test.cc).
#include "format/header_parser.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "base/checked_math.h"
#include "base/concat.h"
#include "base/duplicate_keys.h"
#include "base/huge_pages.h"
#include "format/metadata_list.h"
#include "format/tensor_size.h"
#include "json/string_scan.h"
#include "json/token_cursor.h"
#include "stguard/json_tokenizer.h"

namespace stguard {
namespace {

constexpr std::string_view kMetadataKey = "__metadata__";

// The three fields of a tensor entry, as bits so that repeats and absences are one test.
enum FieldBit : uint8_t { kDtypeBit = 1, kShapeBit = 2, kOffsetsBit = 4 };

// GrowFull makes room in `list`, which never holds more than `bound` elements. A vector
// that doubles copies itself and for a moment holds the old and the new buffer, up to 3 times its final size; for a 100 MB header of nothing but shape dims or
// metadata that alone breaks the 2N memory bound. So small lists double as usual, and a
// list that outgrows kDoublingLimit bytes jumps straight to `bound`: that is address
// space, and the pages never written are never touched, so peak memory is what the
// elements really use.
// The growth itself is out of line so that the per-dim check on the hot path stays one
// compare.
template <typename T>
[[gnu::noinline]] void GrowFull(std::vector<T>& list, size_t bound) {
  constexpr size_t kDoublingLimit = size_t{1} << 20;
  const size_t doubled = std::max<size_t>(16, list.capacity() * 2);
  list.reserve(doubled * sizeof(T) <= kDoublingLimit ? std::min(doubled, bound) : bound);
}
// AppendDim appends one dim as a varint (at most 10 bytes) to `dims`, which never holds
// more than `bound` bytes.
inline void AppendDim(uint64_t dim, std::vector<uint8_t>& dims, size_t bound) {
  if (dims.capacity() - dims.size() < 10) [[unlikely]] {
    GrowFull(dims, std::max(bound, dims.size() + 10));
  }
  Shape::AppendVarint(dim, &dims);
}

class HeaderParser : private TokenCursor {
 public:
  HeaderParser(std::string_view header, uint64_t base_offset, const Options& options,
               bool compact_fast_path, ParsedHeader* out)
      : TokenCursor(header, base_offset, options.max_depth),
        header_(header),
        base_offset_(base_offset),
        // The compact form nests three deep; below that the tokenizer must see every byte
        // so that it reports kDepthExceeded.
        compact_entries_allowed_(compact_fast_path && options.max_depth >= 3),
        out_(*out) {}

  Error Parse();

 private:
  // KeepText keeps strings that outlive the parse (names) in the result's owned_strings.
  std::string_view KeepText(const Token& token) {
    return TokenCursor::KeepText(token, &out_.owned_strings);
  }

  bool TryCompactEntry(bool first_member, size_t* out_end);
  bool ParseMetadata(uint64_t key_offset);
  bool ParseTensorEntry(std::string_view name, uint64_t key_offset);
  bool ParseDtype(std::string_view name, Dtype* out_dtype);
  bool ParseShape(std::string_view name, uint32_t* out_rank, ElementCount* out_count);
  bool ParseDataOffsets(std::string_view name, uint64_t* out_begin, uint64_t* out_end);
  bool CheckDuplicates();
  void AddTensor(const TensorView& tensor, size_t first_dim, size_t rank);

  std::string_view header_;
  uint64_t base_offset_;
  bool compact_entries_allowed_;
  std::string_view last_dtype_text_;  // the compact path's last dtype as written; empty: none
  Dtype last_dtype_ = Dtype::kBOOL;
  ParsedHeader& out_;
  std::string scratch_;
  // Each tensor's first byte in out_.dims; shapes are made once dims stops growing.
  std::vector<uint32_t> first_dims_;
  ReservationBounds bounds_;
  size_t shape_first_dim_ = 0;  // the general path's current shape, in out_.dims
};

Error HeaderParser::Parse() {
  // The smallest tensor entry, `"":{"dtype":"F4","shape":[],"data_offsets":[0,0]},`, takes
  // 50 bytes, so this bounds the tensor count. Reserving it up front avoids copying the
  // largest vector as it grows; the pages never written are never touched, so the
  // reservation costs address space, not memory.
  const size_t max_tensors = header_.size() / 50 + 1;
  out_.tensors.reserve(max_tensors);
  first_dims_.reserve(max_tensors);
  // Near the header cap the tensor list is tens of MB, filled once: huge pages save
  // thousands of page faults.
  AdviseHugePages(out_.tensors.data(), max_tensors * sizeof(TensorView));
  bounds_ = ReservationBoundsFor(header_.size());
  MetadataListBuilder::Start(header_, &out_.metadata);
  if (!Next()) return error_;
  if (token_.kind != TokenKind::kBeginObject) {
    Fail(ErrorCode::kHeaderNotObject, token_.offset, "the header is not a JSON object");
    return error_;
  }
  for (bool first_member = true;; first_member = false) {
    // Most entries take the compact fast path; whatever it declines, the general path
    // below reads token by token and reports any error.
    size_t entry_end = 0;
    while (compact_entries_allowed_ && TryCompactEntry(first_member, &entry_end)) {
      tokens_.ResumeAfterValue(entry_end);
      ++out_.compact_entries;
      first_member = false;
    }
    if (!Next()) return error_;
    if (token_.kind == TokenKind::kEndObject) break;
    // The tokenizer guarantees a key here: objects hold only key/value pairs.
    const uint64_t key_offset = token_.offset;
    const std::string_view key = KeepText(token_);
    const bool ok = key == kMetadataKey ? ParseMetadata(key_offset)
                                        : ParseTensorEntry(key, key_offset);
    if (!ok) return error_;
  }
  // The top-level object is closed; only whitespace may follow.
  if (!Next()) return error_;

  // Every shape is in dims now, so its address is final.
  for (size_t i = 0; i < out_.tensors.size(); ++i) {
    const size_t first = first_dims_[i];
    const size_t next = i + 1 < out_.tensors.size() ? first_dims_[i + 1] : out_.dims.size();
    out_.tensors[i].shape = Shape::FromVarints(
        std::span<const uint8_t>(out_.dims.data() + first, next - first),
        out_.tensors[i].shape.size());
  }
  CheckDuplicates();
  return error_;
}

bool HeaderParser::ParseMetadata(uint64_t key_offset) {
  if (out_.has_metadata_object) {
    return Fail(ErrorCode::kDuplicateKey, key_offset, "__metadata__ appears twice");
  }
  if (!Next()) return false;
  if (token_.kind != TokenKind::kBeginObject) {
    return Fail(ErrorCode::kMetadataNotObject, token_.offset, "__metadata__ is not an object");
  }
  out_.has_metadata_object = true;
  for (;;) {
    if (!Next()) return false;
    if (token_.kind == TokenKind::kEndObject) return true;
    const Token key = token_;
    if (!Next()) return false;
    if (token_.kind != TokenKind::kString) {
      return Fail(ErrorCode::kMetadataValueNotString, token_.offset,
                  "__metadata__ value is not a string",
                  {.context = std::string(TokenText(key, &scratch_))});
    }
    MetadataListBuilder::Add(key, key.offset - base_offset_, token_,
                             bounds_.max_metadata_entries, &out_.metadata);
  }
}

bool HeaderParser::ParseTensorEntry(std::string_view name, uint64_t key_offset) {
  if (!Next()) return false;
  if (token_.kind != TokenKind::kBeginObject) {
    return Fail(ErrorCode::kTensorNotObject, token_.offset, "tensor entry is not an object",
                {.tensor = name});
  }
  TensorView tensor;
  tensor.name = name;
  tensor.header_offset = key_offset;
  uint32_t rank = 0;
  ElementCount count;
  uint64_t shape_offset = 0;
  uint64_t offsets_offset = 0;
  uint8_t seen = 0;
  for (;;) {
    if (!Next()) return false;
    if (token_.kind == TokenKind::kEndObject) break;
    const uint64_t field_offset = token_.offset;
    const std::string_view field = TokenText(token_, &scratch_);
    uint8_t bit = 0;
    if (field == "dtype") {
      bit = kDtypeBit;
    } else if (field == "shape") {
      bit = kShapeBit;
    } else if (field == "data_offsets") {
      bit = kOffsetsBit;
    } else {
      return Fail(ErrorCode::kUnknownField, field_offset,
                  "tensor entry has a field other than dtype, shape and data_offsets",
                  {.tensor = name});
    }
    if (seen & bit) {
      return Fail(ErrorCode::kDuplicateKey, field_offset, "tensor entry repeats a field",
                  {.tensor = name});
    }
    seen |= bit;
    bool ok = false;
    if (bit == kDtypeBit) {
      ok = ParseDtype(name, &tensor.dtype);
    } else if (bit == kShapeBit) {
      shape_offset = field_offset;
      ok = ParseShape(name, &rank, &count);
    } else {
      offsets_offset = field_offset;
      ok = ParseDataOffsets(name, &tensor.begin, &tensor.end);
    }
    if (!ok) return false;
  }
  const uint64_t close_offset = token_.offset;
  if (!(seen & kDtypeBit)) {
    return Fail(ErrorCode::kMissingField, close_offset, "tensor entry has no dtype",
                {.tensor = name});
  }
  if (!(seen & kShapeBit)) {
    return Fail(ErrorCode::kMissingField, close_offset, "tensor entry has no shape",
                {.tensor = name});
  }
  if (!(seen & kOffsetsBit)) {
    return Fail(ErrorCode::kMissingField, close_offset, "tensor entry has no data_offsets",
                {.tensor = name});
  }

  // Stage 4: the byte size implied by dtype and shape must equal end - begin.
  uint64_t byte_size = 0;
  switch (ByteSizeFromCount(tensor.dtype, count, &byte_size)) {
    case ErrorCode::kOk:
      break;
    case ErrorCode::kMisalignedSlice:
      return Fail(ErrorCode::kMisalignedSlice, shape_offset,
                  "sub-byte dtype: the tensor's bits do not fill whole bytes", {.tensor = name});
    default:
      return Fail(ErrorCode::kValidationOverflow, shape_offset,
                  "element or bit count overflows 64 bits", {.tensor = name});
  }
  if (tensor.end < tensor.begin) {
    return Fail(ErrorCode::kInvalidOffset, offsets_offset, "data_offsets end before begin",
                {.tensor = name});
  }
  if (tensor.end - tensor.begin != byte_size) {
    return Fail(ErrorCode::kTensorInvalidInfo, offsets_offset,
                "data_offsets length differs from the size of dtype and shape",
                {.tensor = name,
                 .context = "expected " + std::to_string(byte_size) + " bytes, got " +
                            std::to_string(tensor.end - tensor.begin)});
  }
  AddTensor(tensor, shape_first_dim_, rank);
  return true;
}

void HeaderParser::AddTensor(const TensorView& tensor, size_t first_dim, size_t rank) {
  // The shape's size carries the rank; its bytes are fixed in Parse() once dims is final.
  first_dims_.push_back(static_cast<uint32_t>(first_dim));
  out_.tensors.push_back(tensor);
  out_.tensors.back().shape = Shape::FromVarints({}, rank);
}

namespace {

// ConsumeLiteral moves *p past `literal` if the input continues with it.
bool ConsumeLiteral(const char** p, const char* end, std::string_view literal) {
  if (static_cast<size_t>(end - *p) < literal.size() ||
      std::memcmp(*p, literal.data(), literal.size()) != 0) {
    return false;
  }
  *p += literal.size();
  return true;
}

// SameShortText compares two strings of a few bytes (dtype names) inline, where a call to
// memcmp would cost more than the comparison.
bool SameShortText(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

// ConsumeCompactUint reads a plain decimal integer of 1 to 19 digits, without a leading
// zero, so it fits in 64 bits with no overflow check. Longer or odd numbers are left to
// the general path, which reports any error.
bool ConsumeCompactUint(const char** p, const char* end, uint64_t* out) {
  const char* const start = *p;
  const char* q = start;
  uint64_t value = 0;
  while (q != end && q - start < 19 && static_cast<unsigned char>(*q - '0') < 10) {
    value = value * 10 + static_cast<uint64_t>(*q - '0');
    ++q;
  }
  const size_t len = static_cast<size_t>(q - start);
  if (len == 0 || (len > 1 && *start == '0')) return false;
  if (q != end && static_cast<unsigned char>(*q - '0') < 10) return false;  // 20+ digits
  *p = q;
  *out = value;
  return true;
}

}  // namespace

// TryCompactEntry is the fast path for the form every mainstream writer produces:
//   [,]"name":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}
// with no whitespace, no escapes and plain ASCII in the name. If the entry at the
// tokenizer's position has exactly that form and is valid, it is added and the index just
// past its '}' goes to *out_end. Otherwise nothing is added and it returns false, so the
// general path reads the same bytes and reports any error: the fast path only ever
// accepts what the general path accepts, with the same result.
bool HeaderParser::TryCompactEntry(bool first_member, size_t* out_end) {
  const char* const begin = header_.data();
  const char* const end = begin + header_.size();
  const char* p = begin + tokens_.position();
  if (!first_member && !ConsumeLiteral(&p, end, ",")) return false;
  if (p == end || *p != '"') return false;
  const char* const quote = p;
  const char* const close = FindStringSpecialByte(quote + 1, end);
  if (close == end || *close != '"') return false;  // escape, control byte, non-ASCII
  const std::string_view name(quote + 1, static_cast<size_t>(close - quote - 1));
  if (name == kMetadataKey) return false;
  p = close + 1;

  if (!ConsumeLiteral(&p, end, ":{\"dtype\":\"")) return false;
  // Dtype names are at most 11 bytes: look no further than that for the closing quote.
  const char* const dtype_begin = p;
  const char* const dtype_limit = dtype_begin + std::min<size_t>(static_cast<size_t>(end - p), 12);
  const char* dtype_end = dtype_begin;
  while (dtype_end != dtype_limit && *dtype_end != '"') ++dtype_end;
  if (dtype_end == dtype_limit) return false;
  const std::string_view dtype_text(dtype_begin, static_cast<size_t>(dtype_end - dtype_begin));
  // Writers group tensors by dtype, so the previous entry's dtype nearly always matches.
  if (last_dtype_text_.empty() || !SameShortText(dtype_text, last_dtype_text_)) {
    const std::optional<Dtype> parsed = stguard::ParseDtype(dtype_text);
    if (!parsed) return false;
    last_dtype_text_ = dtype_text;
    last_dtype_ = *parsed;
  }
  const std::optional<Dtype> dtype = last_dtype_;
  p = dtype_end;

  if (!ConsumeLiteral(&p, end, "\",\"shape\":[")) return false;
  const size_t first_dim = out_.dims.size();
  auto decline = [this, first_dim] {
    out_.dims.resize(first_dim);
    return false;
  };
  ElementCount count;
  size_t rank = 0;
  if (!ConsumeLiteral(&p, end, "]")) {
    for (;;) {
      uint64_t dim = 0;
      if (!ConsumeCompactUint(&p, end, &dim)) return decline();
      AppendDim(dim, out_.dims, bounds_.max_dim_bytes);
      count.Add(dim);
      ++rank;
      if (ConsumeLiteral(&p, end, "]")) break;
      if (!ConsumeLiteral(&p, end, ",")) return decline();
    }
  }
  uint64_t begin_offset = 0;
  uint64_t end_offset = 0;
  if (!ConsumeLiteral(&p, end, ",\"data_offsets\":[") ||
      !ConsumeCompactUint(&p, end, &begin_offset) || !ConsumeLiteral(&p, end, ",") ||
      !ConsumeCompactUint(&p, end, &end_offset) || !ConsumeLiteral(&p, end, "]}")) {
    return decline();
  }

  uint64_t byte_size = 0;
  if (ByteSizeFromCount(*dtype, count, &byte_size) != ErrorCode::kOk ||
      end_offset < begin_offset || end_offset - begin_offset != byte_size) {
    return decline();
  }
  TensorView tensor;
  tensor.name = name;
  tensor.dtype = *dtype;
  tensor.begin = begin_offset;
  tensor.end = end_offset;
  tensor.header_offset = base_offset_ + static_cast<uint64_t>(quote - begin);
  AddTensor(tensor, first_dim, rank);
  *out_end = static_cast<size_t>(p - begin);
  return true;
}

bool HeaderParser::ParseDtype(std::string_view name, Dtype* out_dtype) {
  if (!Next()) return false;
  if (token_.kind != TokenKind::kString) {
    return Fail(ErrorCode::kInvalidDtype, token_.offset, "dtype is not a string", {.tensor = name});
  }
  const std::optional<Dtype> dtype = stguard::ParseDtype(TokenText(token_, &scratch_));
  if (!dtype) {
    return Fail(ErrorCode::kInvalidDtype, token_.offset, "dtype is not a known dtype name",
                {.tensor = name, .context = Concat({"\"", token_.text, "\""})});
  }
  *out_dtype = *dtype;
  return true;
}

bool HeaderParser::ParseShape(std::string_view name, uint32_t* out_rank,
                              ElementCount* out_count) {
  shape_first_dim_ = out_.dims.size();
  if (!Next()) return false;
  if (token_.kind != TokenKind::kBeginArray) {
    return Fail(ErrorCode::kInvalidShape, token_.offset, "shape is not an array", {.tensor = name});
  }
  uint32_t rank = 0;
  for (;;) {
    if (!Next()) return false;
    if (token_.kind == TokenKind::kEndArray) break;
    uint64_t dim = 0;
    if (token_.kind != TokenKind::kNumber) {
      return Fail(ErrorCode::kInvalidShape, token_.offset, "shape holds a non-number",
                  {.tensor = name});
    }
    if (!ParseUint64(token_.text, &dim)) {
      return Fail(ErrorCode::kInvalidShape, token_.offset,
                  "shape dimension is not a non-negative integer that fits in 64 bits",
                  {.tensor = name});
    }
    AppendDim(dim, out_.dims, bounds_.max_dim_bytes);
    out_count->Add(dim);
    ++rank;
  }
  *out_rank = rank;
  return true;
}

bool HeaderParser::ParseDataOffsets(std::string_view name, uint64_t* out_begin,
                                    uint64_t* out_end) {
  if (!Next()) return false;
  if (token_.kind != TokenKind::kBeginArray) {
    return Fail(ErrorCode::kInvalidDataOffsets, token_.offset, "data_offsets is not an array",
                {.tensor = name});
  }
  uint64_t* const slots[2] = {out_begin, out_end};
  for (uint64_t* slot : slots) {
    if (!Next()) return false;
    if (token_.kind == TokenKind::kEndArray) {
      return Fail(ErrorCode::kInvalidDataOffsets, token_.offset,
                  "data_offsets has fewer than two entries", {.tensor = name});
    }
    if (token_.kind != TokenKind::kNumber || !ParseUint64(token_.text, slot)) {
      return Fail(ErrorCode::kInvalidDataOffsets, token_.offset,
                  "data_offsets entry is not a non-negative integer that fits in 64 bits",
                  {.tensor = name});
    }
  }
  if (!Next()) return false;
  if (token_.kind != TokenKind::kEndArray) {
    return Fail(ErrorCode::kInvalidDataOffsets, token_.offset,
                "data_offsets has more than two entries", {.tensor = name});
  }
  return true;
}

bool HeaderParser::CheckDuplicates() {
  std::vector<TensorView>& tensors = out_.tensors;
  const size_t tensor_repeat = SortKeysFindDuplicate(
      tensors.size(), [&tensors](size_t i) { return tensors[i].name; },
      &out_.tensors_by_name);
  uint64_t metadata_repeat_offset = 0;
  std::string_view metadata_repeat_key;
  const bool metadata_repeats = MetadataListBuilder::SortFindDuplicate(
      &out_.metadata, &metadata_repeat_offset, &metadata_repeat_key);

  // Report whichever repeat comes first in the file.
  const uint64_t tensor_at =
      tensor_repeat == kNoDuplicate ? UINT64_MAX : tensors[tensor_repeat].header_offset;
  const uint64_t metadata_at =
      metadata_repeats ? base_offset_ + metadata_repeat_offset : UINT64_MAX;
  if (tensor_at < metadata_at) {
    return Fail(ErrorCode::kDuplicateKey, tensor_at, "tensor name appears twice",
                {.tensor = tensors[tensor_repeat].name});
  }
  if (metadata_at != UINT64_MAX) {
    return Fail(ErrorCode::kDuplicateKey, metadata_at, "__metadata__ key appears twice",
                {.context = std::string(metadata_repeat_key)});
  }
  return true;
}

}  // namespace

ReservationBounds ReservationBoundsFor(size_t header_len) {
  ReservationBounds bounds;
  // A shape dimension takes at least two header bytes: one digit and the ',' or ']' after
  // it; its varint takes at most half its digits and separator (d digits are below 10^d,
  // which needs at most (d + 1) / 2 7-bit groups).
  bounds.max_dim_bytes = header_len / 2 + 1;
  // A metadata entry takes at least six: `"":""` and the ',' or '}' after it.
  bounds.max_metadata_entries = header_len / 6 + 1;
  return bounds;
}

Error ParseHeader(std::string_view header, uint64_t base_offset, const Options& options,
                  ParsedHeader* out, bool compact_fast_path) {
  return HeaderParser(header, base_offset, options, compact_fast_path, out).Parse();
}

}  // namespace stguard
