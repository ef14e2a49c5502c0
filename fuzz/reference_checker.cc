// SPDX-License-Identifier: Apache-2.0
// reference_checker.cc: the plain, slow, independent checker. See reference_checker.h.
//
// Style: every function reads as the rule it implements. Speed does not matter; fuzz
// inputs are a few KiB. Recursion is used for JSON nesting, bounded by max_depth.
#include "reference_checker.h"
#include "fuzz_support.h"

#include <set>

namespace stguard_fuzz::reference {
namespace {

constexpr uint64_t kMaxHeaderLen = 100000000;

// The 22 dtypes of the format with their sizes in bits, typed in from the format's spec.
struct DtypeEntry {
  const char* name;
  uint32_t bits;
};
constexpr DtypeEntry kDtypes[] = {
    {"BOOL", 8},         {"U8", 8},           {"I8", 8},       {"F8_E5M2", 8},
    {"F8_E4M3", 8},      {"F8_E8M0", 8},      {"F8_E4M3FNUZ", 8}, {"F8_E5M2FNUZ", 8},
    {"I16", 16},         {"U16", 16},         {"F16", 16},     {"BF16", 16},
    {"I32", 32},         {"U32", 32},         {"F32", 32},     {"I64", 64},
    {"U64", 64},         {"F64", 64},         {"C64", 64},     {"F4", 4},
    {"F6_E2M3", 6},      {"F6_E3M2", 6},
};

// Cursor walks the input byte by byte.
struct Cursor {
  const unsigned char* p;
  const unsigned char* end;

  bool AtEnd() const { return p == end; }
  // Peek returns the current byte, or -1 at the end.
  int Peek() const { return p == end ? -1 : *p; }
  bool Eat(char c) {
    if (Peek() != static_cast<unsigned char>(c)) return false;
    ++p;
    return true;
  }
  void SkipWhitespace() {
    while (Peek() == ' ' || Peek() == '\t' || Peek() == '\n' || Peek() == '\r') ++p;
  }
};

Cursor MakeCursor(std::string_view text) {
  const auto* begin = reinterpret_cast<const unsigned char*>(text.data());
  return Cursor{begin, begin + text.size()};
}

// DecodeUtf8 decodes one multi-byte sequence whose lead byte is at c->p (>= 0x80) and
// appends its bytes to *out. Decoding first and judging the value after is a different
// method from src/utf8.h, which checks the second byte's range per lead byte.
bool DecodeUtf8(Cursor* c, std::string* out) {
  const unsigned char lead = *c->p;
  int length;
  uint32_t cp;
  uint32_t min;
  if ((lead & 0xE0) == 0xC0) {
    length = 2, cp = lead & 0x1F, min = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3, cp = lead & 0x0F, min = 0x800;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4, cp = lead & 0x07, min = 0x10000;
  } else {
    return false;  // a continuation byte without a lead, or F8..FF
  }
  if (c->end - c->p < length) return false;
  for (int i = 1; i < length; ++i) {
    const unsigned char next = c->p[i];
    if ((next & 0xC0) != 0x80) return false;
    cp = (cp << 6) | (next & 0x3F);
  }
  if (cp < min) return false;                     // overlong
  if (cp >= 0xD800 && cp <= 0xDFFF) return false;  // surrogate
  if (cp > 0x10FFFF) return false;
  out->append(reinterpret_cast<const char*>(c->p), static_cast<size_t>(length));
  c->p += length;
  return true;
}

int HexValue(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// ReadHex4 reads exactly four hex digits.
bool ReadHex4(Cursor* c, uint32_t* out) {
  uint32_t value = 0;
  for (int i = 0; i < 4; ++i) {
    const int digit = HexValue(c->Peek());
    if (digit < 0) return false;
    value = value * 16 + static_cast<uint32_t>(digit);
    ++c->p;
  }
  *out = value;
  return true;
}

// ParseString reads a JSON string starting at its opening quote and appends its decoded
// value to *out.
bool ParseString(Cursor* c, std::string* out) {
  if (!c->Eat('"')) return false;
  for (;;) {
    const int b = c->Peek();
    if (b < 0) return false;  // the input ended inside the string
    if (b == '"') {
      ++c->p;
      return true;
    }
    if (b < 0x20) return false;  // raw control characters must be escaped
    if (b >= 0x80) {
      if (!DecodeUtf8(c, out)) return false;
      continue;
    }
    ++c->p;
    if (b != '\\') {
      out->push_back(static_cast<char>(b));
      continue;
    }
    const int e = c->Peek();
    if (e < 0) return false;
    ++c->p;
    switch (e) {
      case '"': out->push_back('"'); break;
      case '\\': out->push_back('\\'); break;
      case '/': out->push_back('/'); break;
      case 'b': out->push_back('\b'); break;
      case 'f': out->push_back('\f'); break;
      case 'n': out->push_back('\n'); break;
      case 'r': out->push_back('\r'); break;
      case 't': out->push_back('\t'); break;
      case 'u': {
        uint32_t unit;
        if (!ReadHex4(c, &unit)) return false;
        if (unit >= 0xDC00 && unit <= 0xDFFF) return false;  // low surrogate first
        if (unit >= 0xD800 && unit <= 0xDBFF) {
          // A high surrogate must be followed at once by \u and a low surrogate.
          uint32_t low;
          if (!c->Eat('\\') || !c->Eat('u') || !ReadHex4(c, &low)) return false;
          if (low < 0xDC00 || low > 0xDFFF) return false;
          unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
        }
        AppendUtf8(unit, out);
        break;
      }
      default:
        return false;
    }
  }
}

bool IsDigit(int c) { return c >= '0' && c <= '9'; }

// ParseNumber reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? . What may follow is
// the caller's business (a ',' or a closer or the end), which is how "01" and "1x" fail.
bool ParseNumber(Cursor* c) {
  c->Eat('-');
  if (c->Eat('0')) {
    // nothing: a single zero
  } else if (IsDigit(c->Peek())) {
    while (IsDigit(c->Peek())) ++c->p;
  } else {
    return false;
  }
  if (c->Eat('.')) {
    if (!IsDigit(c->Peek())) return false;
    while (IsDigit(c->Peek())) ++c->p;
  }
  if (c->Peek() == 'e' || c->Peek() == 'E') {
    ++c->p;
    if (c->Peek() == '+' || c->Peek() == '-') ++c->p;
    if (!IsDigit(c->Peek())) return false;
    while (IsDigit(c->Peek())) ++c->p;
  }
  return true;
}

bool EatWord(Cursor* c, std::string_view word) {
  for (char ch : word) {
    if (!c->Eat(ch)) return false;
  }
  return true;
}

// ParseValue reads any JSON value; `depth` counts the containers already open. With
// `unique_keys`, an object that repeats a key (compared decoded) is rejected too.
bool ParseValue(Cursor* c, uint32_t depth, uint32_t max_depth, bool unique_keys = false) {
  std::string ignored;
  switch (c->Peek()) {
    case '"':
      return ParseString(c, &ignored);
    case 't':
      return EatWord(c, "true");
    case 'f':
      return EatWord(c, "false");
    case 'n':
      return EatWord(c, "null");
    case '[': {
      if (depth + 1 > max_depth) return false;
      ++c->p;
      c->SkipWhitespace();
      if (c->Eat(']')) return true;
      for (;;) {
        c->SkipWhitespace();
        if (!ParseValue(c, depth + 1, max_depth, unique_keys)) return false;
        c->SkipWhitespace();
        if (c->Eat(']')) return true;
        if (!c->Eat(',')) return false;
      }
    }
    case '{': {
      if (depth + 1 > max_depth) return false;
      ++c->p;
      c->SkipWhitespace();
      if (c->Eat('}')) return true;
      std::set<std::string> keys;
      for (;;) {
        c->SkipWhitespace();
        std::string key;
        if (!ParseString(c, &key)) return false;
        if (unique_keys && !keys.insert(std::move(key)).second) return false;
        c->SkipWhitespace();
        if (!c->Eat(':')) return false;
        c->SkipWhitespace();
        if (!ParseValue(c, depth + 1, max_depth, unique_keys)) return false;
        c->SkipWhitespace();
        if (c->Eat('}')) return true;
        if (!c->Eat(',')) return false;
      }
    }
    default:
      return ParseNumber(c);
  }
}

// ---- The safetensors header schema ----

// ParseUint reads a JSON number that is a plain non-negative integer fitting in 64 bits.
// Anything else that starts like a number ("-0", "1.0", "1e2", "01") leaves a byte the
// caller does not accept, or fails here.
bool ParseUint(Cursor* c, uint64_t* out) {
  if (!IsDigit(c->Peek())) return false;
  if (c->Peek() == '0') {
    ++c->p;
    *out = 0;
    return true;  // "01" fails at the caller: '1' is neither ',' nor ']'
  }
  uint64_t value = 0;
  while (IsDigit(c->Peek())) {
    const uint64_t digit = static_cast<uint64_t>(c->Peek() - '0');
    // value * 10 + digit must stay <= 2^64 - 1.
    if (value > UINT64_MAX / 10) return false;
    if (value * 10 > UINT64_MAX - digit) return false;
    value = value * 10 + digit;
    ++c->p;
  }
  *out = value;
  return true;
}

// ParseUintArray reads '[' uint (',' uint)* ']' or '[]'.
bool ParseUintArray(Cursor* c, std::vector<uint64_t>* out) {
  if (!c->Eat('[')) return false;
  c->SkipWhitespace();
  if (c->Eat(']')) return true;
  for (;;) {
    c->SkipWhitespace();
    uint64_t value;
    if (!ParseUint(c, &value)) return false;
    out->push_back(value);
    c->SkipWhitespace();
    if (c->Eat(']')) return true;
    if (!c->Eat(',')) return false;
  }
}

bool ParseMetadataObject(Cursor* c, File* file) {
  if (!c->Eat('{')) return false;
  c->SkipWhitespace();
  if (c->Eat('}')) return true;
  for (;;) {
    c->SkipWhitespace();
    std::string key;
    std::string value;
    if (!ParseString(c, &key)) return false;
    c->SkipWhitespace();
    if (!c->Eat(':')) return false;
    c->SkipWhitespace();
    if (!ParseString(c, &value)) return false;
    file->metadata.emplace_back(std::move(key), std::move(value));
    c->SkipWhitespace();
    if (c->Eat('}')) return true;
    if (!c->Eat(',')) return false;
  }
}

bool ParseTensorObject(Cursor* c, Tensor* tensor) {
  if (!c->Eat('{')) return false;
  bool has_dtype = false;
  bool has_shape = false;
  bool has_offsets = false;
  c->SkipWhitespace();
  if (!c->Eat('}')) {
    for (;;) {
      c->SkipWhitespace();
      std::string field;
      if (!ParseString(c, &field)) return false;
      c->SkipWhitespace();
      if (!c->Eat(':')) return false;
      c->SkipWhitespace();
      if (field == "dtype") {
        if (has_dtype) return false;
        has_dtype = true;
        if (!ParseString(c, &tensor->dtype)) return false;
        if (DtypeBits(tensor->dtype) == 0) return false;
      } else if (field == "shape") {
        if (has_shape) return false;
        has_shape = true;
        if (!ParseUintArray(c, &tensor->shape)) return false;
      } else if (field == "data_offsets") {
        if (has_offsets) return false;
        has_offsets = true;
        std::vector<uint64_t> offsets;
        if (!ParseUintArray(c, &offsets) || offsets.size() != 2) return false;
        tensor->begin = offsets[0];
        tensor->end = offsets[1];
      } else {
        return false;  // unknown field
      }
      c->SkipWhitespace();
      if (c->Eat('}')) break;
      if (!c->Eat(',')) return false;
    }
  }
  return has_dtype && has_shape && has_offsets;
}

// ParseHeader reads the whole header: whitespace, one object of entries, whitespace.
bool ParseHeader(std::string_view header, File* file) {
  Cursor c = MakeCursor(header);
  c.SkipWhitespace();
  if (!c.Eat('{')) return false;
  c.SkipWhitespace();
  if (!c.Eat('}')) {
    for (;;) {
      c.SkipWhitespace();
      std::string key;
      if (!ParseString(&c, &key)) return false;
      c.SkipWhitespace();
      if (!c.Eat(':')) return false;
      c.SkipWhitespace();
      if (key == "__metadata__") {
        if (file->has_metadata_object) return false;  // twice
        file->has_metadata_object = true;
        if (!ParseMetadataObject(&c, file)) return false;  // null included
      } else {
        Tensor tensor;
        tensor.name = std::move(key);
        if (!ParseTensorObject(&c, &tensor)) return false;
        file->tensors.push_back(std::move(tensor));
      }
      c.SkipWhitespace();
      if (c.Eat('}')) break;
      if (!c.Eat(',')) return false;
    }
  }
  c.SkipWhitespace();
  return c.AtEnd();
}

// ByteSize computes the tensor's size from dtype and shape: the element count is the
// running product of the dims, and every step must fit in 64 bits; so must the bit count,
// which must be a whole number of bytes.
bool ByteSize(const Tensor& tensor, uint64_t* out) {
  uint64_t count = 1;
  for (uint64_t dim : tensor.shape) {
    if (dim != 0 && count > UINT64_MAX / dim) return false;
    count *= dim;
  }
  const uint64_t bits_per_element = DtypeBits(tensor.dtype);
  if (count > UINT64_MAX / bits_per_element) return false;
  const uint64_t bits = count * bits_per_element;
  if (bits % 8 != 0) return false;
  *out = bits / 8;
  return true;
}

// Tiles says whether the tensors cover [0, data_len) exactly. Non-empty tensors must lie
// inside it, be pairwise disjoint and have sizes summing to data_len (disjoint pieces of
// an interval with the interval's total length cover it). An empty tensor must sit on a
// boundary of that tiling: 0, data_len, or the start of a non-empty tensor.
bool Tiles(const std::vector<Tensor>& tensors, uint64_t data_len) {
  std::vector<const Tensor*> nonempty;
  for (const Tensor& t : tensors) {
    if (t.end > t.begin) nonempty.push_back(&t);
  }
  uint64_t total = 0;
  for (const Tensor* t : nonempty) {
    if (t->end > data_len) return false;
    total += t->end - t->begin;  // each term <= data_len; nonempty.size() is small
    if (total > data_len) return false;
  }
  if (total != data_len) return false;
  for (size_t i = 0; i < nonempty.size(); ++i) {
    for (size_t j = i + 1; j < nonempty.size(); ++j) {
      const Tensor& a = *nonempty[i];
      const Tensor& b = *nonempty[j];
      if (a.begin < b.end && b.begin < a.end) return false;
    }
  }
  for (const Tensor& t : tensors) {
    if (t.end > t.begin) continue;
    bool on_boundary = t.begin == 0 || t.begin == data_len;
    for (const Tensor* other : nonempty) on_boundary = on_boundary || other->begin == t.begin;
    if (!on_boundary) return false;
  }
  return true;
}

// ParseIndexSchema reads {"weight_map": {string: string...}, "metadata": {...}} with
// weight_map required, metadata optional, nothing else at the top, and metadata's
// total_size, if there, a plain non-negative integer fitting in 64 bits. The JSON and the
// duplicate keys were checked before.
bool ParseIndexSchema(std::string_view text, Index* index) {
  Cursor c = MakeCursor(text);
  c.SkipWhitespace();
  if (!c.Eat('{')) return false;
  bool has_weight_map = false;
  c.SkipWhitespace();
  if (!c.Eat('}')) {
    for (;;) {
      c.SkipWhitespace();
      std::string key;
      if (!ParseString(&c, &key)) return false;
      c.SkipWhitespace();
      if (!c.Eat(':')) return false;
      c.SkipWhitespace();
      if (key == "weight_map") {
        has_weight_map = true;
        if (!c.Eat('{')) return false;
        c.SkipWhitespace();
        if (!c.Eat('}')) {
          for (;;) {
            c.SkipWhitespace();
            std::string tensor;
            std::string shard;
            if (!ParseString(&c, &tensor)) return false;
            c.SkipWhitespace();
            if (!c.Eat(':')) return false;
            c.SkipWhitespace();
            if (!ParseString(&c, &shard)) return false;
            index->weight_map.emplace_back(std::move(tensor), std::move(shard));
            c.SkipWhitespace();
            if (c.Eat('}')) break;
            if (!c.Eat(',')) return false;
          }
        }
      } else if (key == "metadata") {
        index->has_metadata = true;
        if (!c.Eat('{')) return false;
        c.SkipWhitespace();
        if (!c.Eat('}')) {
          for (;;) {
            c.SkipWhitespace();
            std::string name;
            if (!ParseString(&c, &name)) return false;
            c.SkipWhitespace();
            if (!c.Eat(':')) return false;
            c.SkipWhitespace();
            if (name == "total_size") {
              index->has_total_size = true;
              if (!ParseUint(&c, &index->total_size)) return false;
            } else if (!ParseValue(&c, 2, UINT32_MAX)) {
              return false;
            }
            c.SkipWhitespace();
            if (c.Eat('}')) break;
            if (!c.Eat(',')) return false;  // also where "1.0", "1e2", "01" fail
          }
        }
      } else {
        return false;
      }
      c.SkipWhitespace();
      if (c.Eat('}')) break;
      if (!c.Eat(',')) return false;
    }
  }
  return has_weight_map;
}

}  // namespace

bool IsValidUtf8(std::string_view text) {
  Cursor c = MakeCursor(text);
  std::string ignored;
  while (!c.AtEnd()) {
    if (c.Peek() < 0x80) {
      ++c.p;
    } else if (!DecodeUtf8(&c, &ignored)) {
      return false;
    }
  }
  return true;
}

bool IsJsonText(std::string_view text, uint32_t max_depth) {
  Cursor c = MakeCursor(text);
  c.SkipWhitespace();
  if (!ParseValue(&c, 0, max_depth)) return false;
  c.SkipWhitespace();
  return c.AtEnd();
}

bool IsJsonTextWithUniqueKeys(std::string_view text, uint32_t max_depth) {
  Cursor c = MakeCursor(text);
  c.SkipWhitespace();
  if (!ParseValue(&c, 0, max_depth, /*unique_keys=*/true)) return false;
  c.SkipWhitespace();
  return c.AtEnd();
}

Index CheckIndex(std::string_view text, uint32_t max_depth) {
  Index index;
  index.ok = IsJsonTextWithUniqueKeys(text, max_depth) && ParseIndexSchema(text, &index);
  return index;
}

bool DecodeJsonString(std::string_view quoted, std::string* out) {
  Cursor c = MakeCursor(quoted);
  return ParseString(&c, out) && c.AtEnd();
}

uint32_t DtypeBits(std::string_view name) {
  for (const DtypeEntry& entry : kDtypes) {
    if (name == entry.name) return entry.bits;
  }
  return 0;
}

File CheckFile(std::string_view bytes) {
  File file;
  if (bytes.size() < 8) {
    file.verdict = Verdict::kHeaderTooSmall;
    return file;
  }
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= uint64_t{static_cast<unsigned char>(bytes[i])} << (8 * i);
  if (n > kMaxHeaderLen) {
    file.verdict = Verdict::kHeaderTooLarge;
    return file;
  }
  if (n > bytes.size() - 8) {
    file.verdict = Verdict::kInvalidHeaderLength;
    return file;
  }
  file.header_len = n;
  const std::string_view header = bytes.substr(8, n);
  const uint64_t data_len = bytes.size() - 8 - n;

  file.verdict = Verdict::kRejected;
  if (!ParseHeader(header, &file)) {
    file.reason = "header is not one JSON object of the safetensors schema";
    return file;
  }
  std::set<std::string> names;
  for (const Tensor& t : file.tensors) {
    if (!names.insert(t.name).second) {
      file.reason = "duplicate tensor name";
      return file;
    }
  }
  std::set<std::string> keys;
  for (const auto& [key, value] : file.metadata) {
    if (!keys.insert(key).second) {
      file.reason = "duplicate metadata key";
      return file;
    }
  }
  for (const Tensor& t : file.tensors) {
    uint64_t size;
    if (!ByteSize(t, &size)) {
      file.reason = "size overflows or is not whole bytes";
      return file;
    }
    if (t.end < t.begin || t.end - t.begin != size) {
      file.reason = "data_offsets disagree with dtype and shape";
      return file;
    }
  }
  if (!Tiles(file.tensors, data_len)) {
    file.reason = "tensors do not tile the data buffer";
    return file;
  }
  file.verdict = Verdict::kAccepted;
  file.reason = "";
  return file;
}

}  // namespace stguard_fuzz::reference
