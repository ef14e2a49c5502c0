// SPDX-License-Identifier: Apache-2.0
// Metadata values: reading one from the file (with every length checked against the bytes
// left, bools 0 or 1, strings UTF-8, no arrays of arrays) and reading it back as a number,
// bool or string.
#include <array>
#include <cstring>

#include "gguf/gguf_internal.h"
#include "base/utf8.h"

namespace stguard::gguf {

namespace {

constexpr std::array<std::string_view, kNumValueTypes> kValueTypeNames = {
    "u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "string", "array",
    "u64", "i64", "f64"};
constexpr std::array<uint32_t, kNumValueTypes> kFixedSizes = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0,
                                                              8, 8, 8};

Error Truncated(const GgufCursor& cursor, const char* what) {
  return {ErrorCode::kGgufTruncated, cursor.position(), "the file ends inside a value", what};
}

// CheckBools refuses any byte but 0 and 1 in `bytes` (bools as stored).
Error CheckBools(std::span<const std::byte> bytes, uint64_t offset) {
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (static_cast<uint8_t>(bytes[i]) > 1) {
      return {ErrorCode::kGgufInvalidBool, offset + i, "a bool value is neither 0 nor 1",
              std::to_string(static_cast<uint8_t>(bytes[i]))};
    }
  }
  return {};
}

// ReadArray reads an array's element type, count and elements. The count is checked
// against the bytes left at the element's smallest size before anything is walked.
Error ReadArray(GgufCursor* cursor, Value* out) {
  const uint64_t start = cursor->position();
  uint32_t element_type = 0;
  uint64_t count = 0;
  if (!cursor->Read(&element_type)) return Truncated(*cursor, "array element type");
  if (element_type >= kNumValueTypes ||
      static_cast<ValueType>(element_type) == ValueType::kArray) {
    return {ErrorCode::kGgufInvalidValueType, start,
            "an array's element type is not a GGUF value type (arrays of arrays are refused)",
            std::to_string(element_type)};
  }
  const uint64_t count_offset = cursor->position();
  if (!cursor->Read(&count)) return Truncated(*cursor, "array length");
  const auto type = static_cast<ValueType>(element_type);
  const uint64_t min_element = type == ValueType::kString ? 8 : kFixedSizes[element_type];
  if (count > cursor->remaining() / min_element) {
    return {ErrorCode::kGgufTruncated, count_offset,
            "an array's length needs more bytes than the file has left", std::to_string(count)};
  }
  const uint64_t elements_begin = cursor->position();
  if (type == ValueType::kString) {
    for (uint64_t i = 0; i < count; ++i) {
      std::string_view ignored;
      if (Error error = ReadString(cursor, "string array element", &ignored); !error.ok()) {
        return error;
      }
    }
  } else {
    std::span<const std::byte> ignored;
    cursor->Take(count * min_element, &ignored);  // proved to fit above
    if (type == ValueType::kBool) {
      if (Error error = CheckBools(ignored, elements_begin); !error.ok()) return error;
    }
  }
  out->type = ValueType::kArray;
  out->element_type = type;
  out->count = count;
  out->bytes = cursor->all().subspan(static_cast<size_t>(elements_begin),
                                     static_cast<size_t>(cursor->position() - elements_begin));
  return {};
}

}  // namespace

std::string_view ValueTypeName(ValueType type) {
  const auto index = static_cast<uint32_t>(type);
  return index < kNumValueTypes ? kValueTypeNames[index] : "unknown";
}

uint32_t ValueTypeFixedSize(ValueType type) {
  const auto index = static_cast<uint32_t>(type);
  return index < kNumValueTypes ? kFixedSizes[index] : 0;
}

Error ReadString(GgufCursor* cursor, const char* what, std::string_view* out) {
  const uint64_t start = cursor->position();
  uint64_t length = 0;
  if (!cursor->Read(&length)) return Truncated(*cursor, what);
  std::span<const std::byte> bytes;
  if (!cursor->Take(length, &bytes)) {
    return {ErrorCode::kGgufTruncated, start,
            "a string's length is larger than the bytes the file has left", what};
  }
  *out = AsText(bytes);
  size_t bad = 0;
  if (!IsValidUtf8(*out, &bad)) {
    return {ErrorCode::kInvalidUtf8, start + 8 + bad, "a string is not valid UTF-8", what};
  }
  // llama.cpp reads strings as C strings (gguf_get_val_str, gguf_get_arr_str, names):
  // "a\0x" and "a\0y" would be one token, one key or one tensor name to it.
  if (const size_t nul = out->find('\0'); nul != std::string_view::npos) {
    return {ErrorCode::kGgufNulInString, start + 8 + nul, "a string holds a NUL byte", what};
  }
  return {};
}

Error ReadValue(GgufCursor* cursor, uint32_t type, Value* out) {
  const uint64_t start = cursor->position();
  if (type >= kNumValueTypes) {
    return {ErrorCode::kGgufInvalidValueType, start - 4, "a value type outside 0..12",
            std::to_string(type)};
  }
  const auto value_type = static_cast<ValueType>(type);
  if (value_type == ValueType::kArray) return ReadArray(cursor, out);
  out->type = value_type;
  out->count = 1;
  if (value_type == ValueType::kString) {
    std::string_view text;
    if (Error error = ReadString(cursor, "string value", &text); !error.ok()) return error;
    out->bytes = std::as_bytes(std::span(text.data(), text.size()));
    return {};
  }
  if (!cursor->Take(kFixedSizes[type], &out->bytes)) return Truncated(*cursor, "value");
  if (value_type == ValueType::kBool) return CheckBools(out->bytes, start);
  return {};
}

// --- Reading values back --------------------------------------------------------------

namespace {
// HoldsScalar says whether `value` has the bytes its fixed-size type needs (a default
// Value, or the Element of a string array, has none).
bool HoldsScalar(const Value& value) {
  const uint32_t size = ValueTypeFixedSize(value.type);
  return size != 0 && value.bytes.size() == size;
}
}  // namespace

std::optional<uint64_t> Value::AsUnsigned() const {
  if (!HoldsScalar(*this)) return std::nullopt;
  switch (type) {
    case ValueType::kU8: return LoadLittleEndian<uint8_t>(bytes.data());
    case ValueType::kU16: return LoadLittleEndian<uint16_t>(bytes.data());
    case ValueType::kU32: return LoadLittleEndian<uint32_t>(bytes.data());
    case ValueType::kU64: return LoadLittleEndian<uint64_t>(bytes.data());
    default: return std::nullopt;
  }
}

std::optional<int64_t> Value::AsSigned() const {
  if (!HoldsScalar(*this)) return std::nullopt;
  switch (type) {
    case ValueType::kI8: return static_cast<int8_t>(LoadLittleEndian<uint8_t>(bytes.data()));
    case ValueType::kI16: return static_cast<int16_t>(LoadLittleEndian<uint16_t>(bytes.data()));
    case ValueType::kI32: return static_cast<int32_t>(LoadLittleEndian<uint32_t>(bytes.data()));
    case ValueType::kI64: return static_cast<int64_t>(LoadLittleEndian<uint64_t>(bytes.data()));
    default: return std::nullopt;
  }
}

std::optional<double> Value::AsDouble() const {
  if (!HoldsScalar(*this)) return std::nullopt;
  if (type == ValueType::kF32) {
    const uint32_t bits = LoadLittleEndian<uint32_t>(bytes.data());
    float value;
    std::memcpy(&value, &bits, sizeof(value));
    return value;
  }
  if (type == ValueType::kF64) {
    const uint64_t bits = LoadLittleEndian<uint64_t>(bytes.data());
    double value;
    std::memcpy(&value, &bits, sizeof(value));
    return value;
  }
  return std::nullopt;
}

std::optional<bool> Value::AsBool() const {
  if (!HoldsScalar(*this)) return std::nullopt;
  if (type != ValueType::kBool) return std::nullopt;
  return bytes[0] != std::byte{0};
}

std::optional<std::string_view> Value::AsString() const {
  if (type != ValueType::kString) return std::nullopt;
  return AsText(bytes);
}

Value Value::Element(uint64_t i) const {
  Value element;
  const uint32_t size = ValueTypeFixedSize(element_type);
  if (type != ValueType::kArray || size == 0 || i >= count) return element;
  element.type = element_type;
  element.bytes = bytes.subspan(static_cast<size_t>(i * size), size);
  return element;
}

}  // namespace stguard::gguf
