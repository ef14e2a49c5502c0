// SPDX-License-Identifier: Apache-2.0
// Helpers for tests that build safetensors bytes by hand.
#ifndef STGUARD_TESTS_SUPPORT_TEST_FILES_H_
#define STGUARD_TESTS_SUPPORT_TEST_FILES_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

namespace stguard::testing {

// FileWithHeader returns the 8-byte little-endian length of `header`, `header`, then
// `data`: a file whose N is exactly the header's length (no padding added).
std::string FileWithHeader(std::string_view header, std::string_view data = {});

// FileWithN is FileWithHeader with an arbitrary, possibly lying, N.
std::string FileWithN(uint64_t n, std::string_view header, std::string_view data = {});

// Bytes returns `bytes` (each 0-255) as a string.
std::string Bytes(std::initializer_list<unsigned> bytes);

// LengthPrefix is N as 8 little-endian bytes.
std::string LengthPrefix(uint64_t n);

// kWorkedText is the canonical header of README's worked example: one F32 tensor "w" of
// shape [2, 2] and the metadata format = tinyllm.
inline const std::string kWorkedText =
    R"({"__metadata__":{"format":"tinyllm"},"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}})";

// An F32 tensor after a 2-byte U8 tensor: valid, but in file order the F32 data begins at
// 8 + N + 2. The headers are padded with spaces to a multiple of 8, so the U8 data is
// 8-aligned and the F32 data is 2 mod 4.
inline constexpr char kMisalignedHeader[] =
    R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},)"
    R"("w":{"dtype":"F32","shape":[1],"data_offsets":[2,6]}})"
    "      ";
// The same tensors in canonical order: F32 first, at the 8-aligned data start.
inline constexpr char kAlignedHeader[] =
    R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
    R"("a":{"dtype":"U8","shape":[2],"data_offsets":[4,6]}})"
    "      ";

// NpyFileBytes is a version 1.0 .npy file: the header dict of `descr` ("<f4"), `shape`
// ("(2,)", "(2, 2)") and the order, padded with spaces and a newline to a multiple of 64
// bytes, then `data`.
std::string NpyFileBytes(std::string_view descr, std::string_view shape, std::string_view data,
                         bool fortran_order = false);

// ReadFileBytes returns a file's whole content, or fails the current test.
std::string ReadFileBytes(const std::string& path);

}  // namespace stguard::testing

#endif  // STGUARD_TESTS_SUPPORT_TEST_FILES_H_
