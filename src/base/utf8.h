// SPDX-License-Identifier: Apache-2.0
// base/utf8.h: UTF-8 validation, decoding and encoding, exactly per Unicode Table 3-7:
// the one implementation the tokenizer, the error printer, the writer, the pickle reader
// and the fuzz support code share.
//
// Well-formed UTF-8 byte sequences (Unicode 15, Table 3-7):
//
//   Code points          1st byte  2nd byte  3rd byte  4th byte
//   U+0000..U+007F       00..7F
//   U+0080..U+07FF       C2..DF    80..BF
//   U+0800..U+0FFF       E0        A0..BF    80..BF
//   U+1000..U+CFFF       E1..EC    80..BF    80..BF
//   U+D000..U+D7FF       ED        80..9F    80..BF
//   U+E000..U+FFFF       EE..EF    80..BF    80..BF
//   U+10000..U+3FFFF     F0        90..BF    80..BF    80..BF
//   U+40000..U+FFFFF     F1..F3    80..BF    80..BF    80..BF
//   U+100000..U+10FFFF   F4        80..8F    80..BF    80..BF
//
// Everything else is ill-formed: C0, C1 and E0 80..9F, F0 80..8F (overlong forms),
// ED A0..BF (encoded surrogates), F4 90.. and F5..FF (above U+10FFFF), a continuation byte
// 80..BF without a lead byte, and a lead byte without all of its continuation bytes.
//
// Only the second byte has a range that depends on the lead byte; every later byte is
// 80..BF. The functions below encode the table that way.
#ifndef STGUARD_SRC_BASE_UTF8_H_
#define STGUARD_SRC_BASE_UTF8_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace stguard {

enum class Utf8Status : uint8_t {
  kOk,         // one well-formed sequence was consumed
  kInvalid,    // a byte breaks Table 3-7; *pos points at it
  kTruncated,  // the input ended before the sequence was complete; *pos == end
};

// CheckUtf8Sequence checks the sequence that starts at *pos, which must be a non-ASCII byte
// (>= 0x80) before `end`. On kOk it advances *pos past the sequence. Otherwise *pos is set
// to the first byte that does not fit the table (the lead byte itself for a stray
// continuation byte or an impossible lead byte), or to `end` when the input ran out first.
// Never reads at or past `end`.
inline Utf8Status CheckUtf8Sequence(const unsigned char** pos, const unsigned char* end) {
  const unsigned char* p = *pos;
  const unsigned char lead = p[0];
  size_t length;
  unsigned char second_min = 0x80;
  unsigned char second_max = 0xBF;
  if (lead < 0xC2) {
    // 80..BF: a continuation byte with no lead. C0, C1: always overlong.
    return Utf8Status::kInvalid;
  } else if (lead <= 0xDF) {
    length = 2;
  } else if (lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) second_min = 0xA0;  // below: overlong (fits in two bytes)
    if (lead == 0xED) second_max = 0x9F;  // above: U+D800..U+DFFF, surrogates
  } else if (lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) second_min = 0x90;  // below: overlong (fits in three bytes)
    if (lead == 0xF4) second_max = 0x8F;  // above: beyond U+10FFFF
  } else {
    return Utf8Status::kInvalid;  // F5..FF: would encode beyond U+10FFFF
  }
  for (size_t i = 1; i < length; ++i) {
    if (static_cast<size_t>(end - p) <= i) {
      *pos = end;
      return Utf8Status::kTruncated;
    }
    const unsigned char byte = p[i];
    const unsigned char min = i == 1 ? second_min : 0x80;
    const unsigned char max = i == 1 ? second_max : 0xBF;
    if (byte < min || byte > max) {
      *pos = p + i;
      return Utf8Status::kInvalid;
    }
  }
  *pos = p + length;
  return Utf8Status::kOk;
}

// IsValidUtf8 returns true if `text` is entirely well-formed UTF-8. Otherwise it returns
// false and, if `bad_index` is not null, stores the index of the first byte that breaks
// Table 3-7 (text.size() if the text ends inside a sequence).
inline bool IsValidUtf8(std::string_view text, size_t* bad_index = nullptr) {
  const auto* begin = reinterpret_cast<const unsigned char*>(text.data());
  const auto* end = begin + text.size();
  const unsigned char* p = begin;
  while (p != end) {
    if (*p < 0x80) {
      ++p;
      continue;
    }
    if (CheckUtf8Sequence(&p, end) != Utf8Status::kOk) {
      if (bad_index != nullptr) *bad_index = static_cast<size_t>(p - begin);
      return false;
    }
  }
  return true;
}

// DecodeUtf8 decodes the well-formed sequence that starts at text[i] (i < text.size())
// into *out_code_point and returns its length, or returns 0 when no well-formed sequence
// starts there.
inline size_t DecodeUtf8(std::string_view text, size_t i, uint32_t* out_code_point) {
  const auto* begin = reinterpret_cast<const unsigned char*>(text.data()) + i;
  const auto* end = reinterpret_cast<const unsigned char*>(text.data()) + text.size();
  if (begin[0] < 0x80) {
    *out_code_point = begin[0];
    return 1;
  }
  const unsigned char* p = begin;
  if (CheckUtf8Sequence(&p, end) != Utf8Status::kOk) return 0;
  const auto len = static_cast<size_t>(p - begin);
  // The lead byte keeps 5, 4 or 3 payload bits for a sequence of 2, 3 or 4 bytes.
  uint32_t code_point = begin[0] & (0x7Fu >> len);
  for (size_t k = 1; k < len; ++k) code_point = (code_point << 6) | (begin[k] & 0x3Fu);
  *out_code_point = code_point;
  return len;
}

// AppendUtf8 appends the UTF-8 encoding of `code_point` to *out. The caller guarantees a
// scalar value (<= U+10FFFF and not a surrogate); anything else is replaced by U+FFFD so the
// output stays well-formed.
inline void AppendUtf8(uint32_t code_point, std::string* out) {
  if (code_point > 0x10FFFF || (code_point >= 0xD800 && code_point <= 0xDFFF)) {
    code_point = 0xFFFD;
  }
  if (code_point < 0x80) {
    out->push_back(static_cast<char>(code_point));
  } else if (code_point < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (code_point >> 6)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else if (code_point < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (code_point >> 12)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (code_point >> 18)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  }
}

}  // namespace stguard

#endif  // STGUARD_SRC_BASE_UTF8_H_
