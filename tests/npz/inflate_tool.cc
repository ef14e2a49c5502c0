// SPDX-License-Identifier: Apache-2.0
// inflate_tool: the differential test's side of stguard's DEFLATE decoder. It reads cases
// from stdin (a little-endian u32 length, then that many bytes of raw DEFLATE) and prints
// one line per case: "ok <output length> <CRC-32>" when the stream is valid and ends at
// its last byte, or "error <message>".
#include <cstdint>
#include <cstdio>
#include <vector>

#include "zip/inflate.h"
#include "zip/zip_archive.h"

int main() {
  uint8_t len_bytes[4];
  while (std::fread(len_bytes, 1, 4, stdin) == 4) {
    const uint32_t len = len_bytes[0] | len_bytes[1] << 8 | len_bytes[2] << 16 |
                         static_cast<uint32_t>(len_bytes[3]) << 24;
    std::vector<std::byte> input(len);
    if (std::fread(input.data(), 1, len, stdin) != len) return 2;
    uint64_t total = 0;
    uint32_t crc = 0;
    // The length is unknown here: declare the most DEFLATE can give, and read the short
    // stream error as success with the length seen.
    const stguard::Error error = stguard::Inflate(
        input, 0, uint64_t{len} * stguard::kDeflateMaxRatio + 1032,
        [&](std::span<const std::byte> chunk) {
          total += chunk.size();
          crc = stguard::Crc32(crc, chunk);
          return stguard::Error{};
        });
    if (error.ok() || error.message == stguard::kInflateShortMessage) {
      std::printf("ok %llu %u\n", static_cast<unsigned long long>(total), crc);
    } else {
      std::printf("error %s\n", error.message);
    }
  }
  return 0;
}
