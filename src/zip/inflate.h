// SPDX-License-Identifier: Apache-2.0
// zip/inflate.h: a strict, bounded, streaming DEFLATE decoder (RFC 1951) of our own, so
// that the library needs no zlib (it builds for WebAssembly and OSS-Fuzz as it is).
//
// POLICY: a stream is accepted exactly when zlib's inflate (raw, windowBits -15) accepts
// it and stops at its end: block type 3, a stored block whose NLEN is not LEN's
// complement, more than 286 literal/length or 30 distance codes, a code-length code that
// is not complete, a literal/length or distance code set that is oversubscribed, or
// incomplete with more than one code, a missing end-of-block code, a repeat of code
// lengths with nothing before it or running past the count, literal/length codes 286
// and 287, distance codes 30 and 31, a code no table holds, and a distance reaching back
// before the first output byte are all kInflateData. Beyond zlib, the stream must end
// (the final block's end-of-block) exactly at the last input byte (the pad bits of that
// byte are ignored, as zlib does) and produce exactly the expected number of bytes:
// more output is refused as soon as it appears, so a zip bomb stops at its declared size.
//
// BOUNDS: memory is one fixed buffer (a 32 KiB window plus a 64 KiB output chunk, about
// 100 KiB) and two decode tables (40 KiB each, on the heap), whatever the input; no
// recursion; time linear in input plus output. Output reaches the caller in chunks of at most kInflateChunkLen bytes.
#ifndef STGUARD_SRC_ZIP_INFLATE_H_
#define STGUARD_SRC_ZIP_INFLATE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>

#include "stguard/error.h"

namespace stguard {

// kInflateChunkLen is the most bytes one call of the sink receives.
inline constexpr size_t kInflateChunkLen = size_t{1} << 16;

// kDeflateMaxRatio bounds what DEFLATE itself can produce from n input bytes: a length
// 258 match costs at least 1 bit for its code plus 1 for its distance, so 258 bytes per
// 2 bits (1,032 per byte), plus one block header. A member claiming more is refused
// before any byte is inflated.
inline constexpr uint64_t kDeflateMaxRatio = 1032;

// InflateSink receives each chunk of output in order; a non-ok Error stops the inflate
// and is returned as it is.
using InflateSink = std::function<Error(std::span<const std::byte>)>;

// Inflate decodes the raw DEFLATE stream `input`, which must produce exactly
// `expected_len` bytes, passing them to `sink`. Errors carry `base_offset` plus the
// offset of the input byte where the problem was found.
// kInflateShortMessage is the message of the error Inflate returns when a valid stream
// ends before `expected_len` bytes (a tool learns a stream's length from it).
extern const char* const kInflateShortMessage;

// early_emit_at: the sink also receives the output as soon as it reaches that many bytes
// (once), so that a caller wanting only a stream's start can stop it there (its sink
// returning an error) without inflating a whole chunk.
[[nodiscard]] Error Inflate(std::span<const std::byte> input, uint64_t base_offset,
                            uint64_t expected_len, const InflateSink& sink,
                            uint64_t early_emit_at = UINT64_MAX);

}  // namespace stguard

#endif  // STGUARD_SRC_ZIP_INFLATE_H_
