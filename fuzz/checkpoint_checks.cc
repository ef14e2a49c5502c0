// SPDX-License-Identifier: Apache-2.0
// checkpoint_checks.cc: see checkpoint_checks.h.
#include "checkpoint_checks.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "fuzz_support.h"
#include "stguard/dtype.h"

namespace stguard_fuzz {
namespace {

using stguard::Checkpoint;
using stguard::ErrorCode;
using stguard::MetadataEntry;
using stguard::TensorView;

std::string Quoted(std::string_view name) { return "'" + stguard::PrintableText(name) + "'"; }

bool SameShape(const stguard::Shape& a, const std::vector<uint64_t>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

}  // namespace

void CheckInvariants(const Checkpoint& checkpoint, std::span<const std::byte> bytes) {
  FUZZ_CHECK(checkpoint.bytes().data() == bytes.data());
  FUZZ_CHECK(checkpoint.bytes().size() == bytes.size());
  FUZZ_CHECK(bytes.size() >= 8);
  uint64_t prefix = 0;
  for (int i = 0; i < 8; ++i) prefix |= uint64_t{static_cast<uint8_t>(bytes[i])} << (8 * i);
  FUZZ_CHECK(checkpoint.header_len() == prefix);
  FUZZ_CHECK(prefix <= bytes.size() - 8);
  FUZZ_CHECK(checkpoint.header_text().data() == reinterpret_cast<const char*>(bytes.data()) + 8);
  FUZZ_CHECK(checkpoint.header_text().size() == prefix);
  const std::span<const std::byte> data = checkpoint.data();
  FUZZ_CHECK(data.data() == bytes.data() + 8 + prefix);
  FUZZ_CHECK(data.size() == bytes.size() - 8 - prefix);

  const std::span<const TensorView> tensors = checkpoint.tensors();
  FUZZ_CHECK(tensors.size() == checkpoint.num_tensors());
  uint64_t expected_begin = 0;  // the tiling walk, in file order
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorView& t = tensors[i];
    const std::string who = "tensor " + Quoted(t.name);
    // The span lies inside the buffer and is the data buffer's [begin, end).
    FUZZ_CHECK_MSG(t.begin <= t.end && t.end <= data.size(), who);
    FUZZ_CHECK_MSG(t.data.data() == data.data() + t.begin, who);
    FUZZ_CHECK_MSG(t.data.size() == t.end - t.begin, who);
    FUZZ_CHECK_MSG(t.byte_size() == t.end - t.begin, who);
    // Exact tiling: each tensor starts where the previous one ended.
    FUZZ_CHECK_MSG(t.begin == expected_begin, who + " begins at " + std::to_string(t.begin) +
                                                  ", expected " + std::to_string(expected_begin));
    expected_begin = t.end;
    // File order: by (begin, end), ties by name (include/stguard/reader.h).
    if (i > 0) {
      const TensorView& prev = tensors[i - 1];
      FUZZ_CHECK_MSG(std::pair(prev.begin, prev.end) <= std::pair(t.begin, t.end), who);
      if (prev.begin == t.begin && prev.end == t.end && !Ignored("tie-order")) {
        FUZZ_CHECK_MSG(prev.name < t.name, "tensors() ties are not in name order: " +
                                               Quoted(prev.name) + " before " + Quoted(t.name));
      }
    }
    // Names: valid UTF-8, never the reserved key.
    FUZZ_CHECK_MSG(reference::IsValidUtf8(t.name), who);
    FUZZ_CHECK_MSG(t.name != "__metadata__", who);
    // The key's opening quote is where header_offset points.
    FUZZ_CHECK_MSG(t.header_offset >= 8 && t.header_offset < 8 + prefix, who);
    FUZZ_CHECK_MSG(static_cast<char>(bytes[t.header_offset]) == '"', who);
    // The size is what dtype and shape imply, per the independent dtype table.
    const uint32_t bits = reference::DtypeBits(stguard::DtypeName(t.dtype));
    FUZZ_CHECK_MSG(bits != 0 && bits == stguard::DtypeBits(t.dtype), who);
    // The element count is the running product of the dims; every step fits in 64 bits,
    // and so does the bit count.
    uint64_t count = 1;
    for (uint64_t dim : t.shape) {
      FUZZ_CHECK_MSG(!__builtin_mul_overflow(count, dim, &count),
                     who + ": accepted with an overflowing element count");
    }
    uint64_t total_bits = 0;
    FUZZ_CHECK_MSG(!__builtin_mul_overflow(count, uint64_t{bits}, &total_bits),
                   who + ": accepted with an overflowing bit count");
    FUZZ_CHECK_MSG(total_bits % 8 == 0 && total_bits / 8 == t.byte_size(), who);
    FUZZ_CHECK_MSG(t.num_elements() == count, who);
    // Find locates every tensor, and finds exactly this one.
    FUZZ_CHECK_MSG(checkpoint.Find(t.name) == &t, who + ": Find returns another entry");
  }
  FUZZ_CHECK_MSG(expected_begin == data.size(),
                 "tensors end at " + std::to_string(expected_begin) + ", data buffer holds " +
                     std::to_string(data.size()));
  FUZZ_CHECK(checkpoint.Find("__metadata__") == nullptr);
  if (!tensors.empty()) {
    // A name that is not there is not found: the first name plus a byte no name ends with
    // unless it is present, in which case Find must return it.
    const std::string other = std::string(tensors[0].name) + '\x7f';
    const TensorView* found = checkpoint.Find(other);
    FUZZ_CHECK(found == nullptr || found->name == other);
  }

  const stguard::MetadataList& metadata = checkpoint.metadata();
  if (!checkpoint.has_metadata_object()) FUZZ_CHECK(metadata.empty());
  for (size_t i = 0; i < metadata.size(); ++i) {
    const MetadataEntry entry = metadata[i];
    const std::string who = "metadata key " + Quoted(entry.key);
    if (i > 0) FUZZ_CHECK_MSG(metadata[i - 1].key < entry.key, who + ": not in ascending order");
    FUZZ_CHECK_MSG(reference::IsValidUtf8(entry.key), who);
    FUZZ_CHECK_MSG(reference::IsValidUtf8(entry.value), who);
    const std::optional<std::string_view> value = checkpoint.FindMetadata(entry.key);
    FUZZ_CHECK_MSG(value && *value == entry.value, who);
  }
}

void CheckRejection(const stguard::Error& error, size_t size) {
  FUZZ_CHECK(error.code != ErrorCode::kOk);
  FUZZ_CHECK(error.code < ErrorCode::kNumErrorCodes);
  FUZZ_CHECK_MSG(error.offset <= size, error.ToString() + " for an input of " +
                                           std::to_string(size) + " bytes");
  FUZZ_CHECK(!stguard::ErrorCodeName(error.code).empty());
  FUZZ_CHECK(error.message != nullptr && error.message[0] != '\0');
  // Messages show names with control characters escaped (SECURITY.md).
  const std::string text = error.ToString();
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    FUZZ_CHECK_MSG(byte >= 0x20 && byte != 0x7f, "raw control byte in: " + Hex(text, 200));
  }
}

void CheckAgreesWithReference(const stguard::Result<Checkpoint>& result,
                              const reference::File& expected) {
  using reference::Verdict;
  if (!result.ok()) {
    const stguard::Error& error = result.error();
    FUZZ_CHECK_MSG(expected.verdict != Verdict::kAccepted,
                   "the reader rejects with " + error.ToString() +
                       "; the reference checker accepts");
    const ErrorCode code = error.code;
    switch (expected.verdict) {
      case Verdict::kHeaderTooSmall:
        FUZZ_CHECK_MSG(code == ErrorCode::kHeaderTooSmall, error.ToString());
        break;
      case Verdict::kHeaderTooLarge:
        FUZZ_CHECK_MSG(code == ErrorCode::kHeaderTooLarge, error.ToString());
        break;
      case Verdict::kInvalidHeaderLength:
        FUZZ_CHECK_MSG(code == ErrorCode::kInvalidHeaderLength, error.ToString());
        break;
      default:
        FUZZ_CHECK_MSG(code != ErrorCode::kHeaderTooSmall && code != ErrorCode::kHeaderTooLarge &&
                           code != ErrorCode::kInvalidHeaderLength,
                       error.ToString());
        break;
    }
    return;
  }
  FUZZ_CHECK_MSG(expected.verdict == Verdict::kAccepted,
                 std::string("the reader accepts; the reference checker rejects: ") +
                     expected.reason);
  const Checkpoint& checkpoint = *result;
  FUZZ_CHECK(checkpoint.header_len() == expected.header_len);
  FUZZ_CHECK(checkpoint.has_metadata_object() == expected.has_metadata_object);
  FUZZ_CHECK(checkpoint.num_tensors() == expected.tensors.size());
  for (const reference::Tensor& want : expected.tensors) {
    const std::string who = "tensor " + Quoted(want.name);
    const TensorView* got = checkpoint.Find(want.name);
    FUZZ_CHECK_MSG(got != nullptr, who + " missing");
    FUZZ_CHECK_MSG(got->name == want.name, who);
    FUZZ_CHECK_MSG(stguard::DtypeName(got->dtype) == want.dtype, who);
    FUZZ_CHECK_MSG(SameShape(got->shape, want.shape), who);
    FUZZ_CHECK_MSG(got->begin == want.begin && got->end == want.end, who);
  }
  std::vector<std::pair<std::string, std::string>> want_metadata = expected.metadata;
  std::sort(want_metadata.begin(), want_metadata.end());
  const stguard::MetadataList& got_metadata = checkpoint.metadata();
  FUZZ_CHECK(got_metadata.size() == want_metadata.size());
  for (size_t i = 0; i < want_metadata.size(); ++i) {
    FUZZ_CHECK_MSG(got_metadata[i].key == want_metadata[i].first &&
                       got_metadata[i].value == want_metadata[i].second,
                   "metadata entry " + std::to_string(i));
  }
}

void CheckSameContent(const Checkpoint& a, const Checkpoint& b) {
  FUZZ_CHECK(a.num_tensors() == b.num_tensors());
  for (const TensorView& x : a.tensors()) {
    const std::string who = "tensor " + Quoted(x.name);
    const TensorView* y = b.Find(x.name);
    FUZZ_CHECK_MSG(y != nullptr, who + " missing");
    FUZZ_CHECK_MSG(x.dtype == y->dtype, who);
    FUZZ_CHECK_MSG(std::equal(x.shape.begin(), x.shape.end(), y->shape.begin(), y->shape.end()),
                   who);
    FUZZ_CHECK_MSG(x.data.size() == y->data.size(), who);
    FUZZ_CHECK_MSG(x.data.empty() || std::memcmp(x.data.data(), y->data.data(), x.data.size()) == 0,
                   who + ": bytes differ");
  }
  FUZZ_CHECK(a.metadata().size() == b.metadata().size());
  for (size_t i = 0; i < a.metadata().size(); ++i) {
    FUZZ_CHECK(a.metadata()[i].key == b.metadata()[i].key);
    FUZZ_CHECK(a.metadata()[i].value == b.metadata()[i].value);
  }
}

void CheckCanonicalLayout(const Checkpoint& canon) {
  const std::string_view header = canon.header_text();
  FUZZ_CHECK(header.size() % 8 == 0);
  const size_t text_end = header.find_last_not_of(' ');
  FUZZ_CHECK(text_end != std::string_view::npos && header[text_end] == '}');
  FUZZ_CHECK(header.size() - (text_end + 1) < 8);  // the fewest spaces
  FUZZ_CHECK(header[0] == '{');
  FUZZ_CHECK(canon.has_metadata_object() == !canon.metadata().empty());
  if (!canon.metadata().empty()) FUZZ_CHECK(header.substr(0, 16) == "{\"__metadata__\":");
  std::vector<const TensorView*> order;
  for (const TensorView& t : canon.tensors()) order.push_back(&t);
  std::sort(order.begin(), order.end(), [](const TensorView* a, const TensorView* b) {
    if (a->dtype != b->dtype) return a->dtype > b->dtype;
    return a->name < b->name;
  });
  uint64_t offset = 0;
  for (const TensorView* t : order) {
    FUZZ_CHECK_MSG(t->begin == offset, "tensor " + Quoted(t->name) + " not in canonical place");
    offset = t->end;
  }
}

}  // namespace stguard_fuzz
