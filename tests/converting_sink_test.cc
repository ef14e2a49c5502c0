// SPDX-License-Identifier: Apache-2.0
// ConvertingSink: elements split across writes of any size convert as if written whole,
// and a stream that ends inside an element is an error, not a silently short tensor.
#include "write/converting_sink.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

namespace stguard {
namespace {

// CollectingSink keeps every byte written to it.
class CollectingSink final : public ByteSink {
 public:
  Error Write(std::span<const std::byte> bytes) override {
    text.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    return {};
  }
  std::string text;
};

std::span<const std::byte> Bytes(const std::string& text, size_t at, size_t len) {
  return std::as_bytes(std::span(text.data() + at, len));
}

// 1, 2 and 0.5 as little-endian F32, and the same as F16.
const std::string kF32("\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x00\x3f", 12);
const std::string kF16("\x00\x3c\x00\x40\x00\x38", 6);

TEST(ConvertingSinkTest, ElementsSplitAcrossWritesConvertAsIfWhole) {
  for (size_t chunk = 1; chunk <= kF32.size(); ++chunk) {
    CollectingSink out;
    ConvertingSink sink(Dtype::kF32, Dtype::kF16, out);
    for (size_t at = 0; at < kF32.size(); at += chunk) {
      ASSERT_TRUE(sink.Write(Bytes(kF32, at, std::min(chunk, kF32.size() - at))).ok());
    }
    EXPECT_TRUE(sink.Finish().ok());
    EXPECT_EQ(out.text, kF16) << "chunk " << chunk;
  }
}

TEST(ConvertingSinkTest, AStreamEndingInsideAnElementIsAnError) {
  CollectingSink out;
  ConvertingSink sink(Dtype::kF32, Dtype::kF16, out);
  ASSERT_TRUE(sink.Write(Bytes(kF32, 0, 6)).ok());  // one element and a half
  EXPECT_EQ(out.text, kF16.substr(0, 2));
  EXPECT_EQ(sink.Finish().code, ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace stguard
