// SPDX-License-Identifier: Apache-2.0
// Property: a Fortran-order .npy of any rank (1 to 4, sizes 0 and 1 included) and any
// element size (1, 2, 4, 8 bytes, either byte order) converts to the bytes of its C-order
// array, little-endian, computed here element by element, independently of the blocked
// transpose in src/data/fortran_order.cc.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include "stguard/npy_convert.h"

namespace stguard {
namespace {

// NpyFile is a version 1.0 .npy: header padded to a multiple of 64, then `data`.
std::string NpyFile(const std::string& descr, const std::vector<uint64_t>& shape,
                    const std::string& data) {
  std::string dims;  // as numpy writes it: "(5,)", "(2, 3)"
  for (size_t k = 0; k < shape.size(); ++k) dims += (k > 0 ? ", " : "") + std::to_string(shape[k]);
  if (shape.size() == 1) dims += ",";
  std::string header = "{'descr': '" + descr + "', 'fortran_order': True, 'shape': (" + dims +
                       "), }";
  header += std::string(63 - (10 + header.size()) % 64, ' ') + "\n";
  const auto len = static_cast<uint16_t>(header.size());
  return std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(len & 0xFF) +
         static_cast<char>(len >> 8) + header + data;
}

// COrderBytes reorders Fortran-order `data` to C order, one element at a time, swapping
// each element's bytes when `big_endian`.
std::string COrderBytes(const std::string& data, const std::vector<uint64_t>& shape,
                        size_t size, bool big_endian) {
  const uint64_t count = data.size() / size;
  std::string out;
  out.reserve(data.size());
  std::vector<uint64_t> index(shape.size(), 0);
  for (uint64_t n = 0; n < count; ++n) {
    uint64_t offset = 0, stride = 1;
    for (size_t k = 0; k < shape.size(); ++k) {
      offset += index[k] * stride;
      stride *= shape[k];
    }
    out.append(data, offset * size, size);
    if (big_endian) std::reverse(out.end() - static_cast<ptrdiff_t>(size), out.end());
    for (size_t k = shape.size(); k-- > 0;) {
      if (++index[k] < shape[k]) break;
      index[k] = 0;
    }
  }
  return out;
}

std::string ReadWhole(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// ConvertsLikeTheReference writes a random Fortran-order array of `shape` (`count`
// elements, a random element size and byte order), converts it and compares the output
// with COrderBytes.
void ConvertsLikeTheReference(const std::vector<uint64_t>& shape, uint64_t count) {
  const auto size = *rc::gen::element<size_t>(1, 2, 4, 8);
  const bool big_endian = size > 1 && *rc::gen::arbitrary<bool>();
  const std::string descr = std::string(size == 1 ? "|" : big_endian ? ">" : "<") + "u" +
                            std::to_string(size);
  // The bytes come from a generator seeded by RapidCheck: one draw per case, not one per
  // byte (arrays reach 160 KiB, and a draw per byte made a case cost a second).
  std::mt19937 bytes(*rc::gen::arbitrary<uint32_t>());
  std::string data(count * size, '\0');
  for (char& c : data) c = static_cast<char>(bytes());

  static int case_number = 0;
  const std::filesystem::path folder =
      std::filesystem::temp_directory_path() /
      ("stguard_fortran_prop_" + std::to_string(::getpid()) + "_" +
       std::to_string(case_number++));
  std::filesystem::create_directories(folder);
  const std::filesystem::path in = folder / "f.npy", out = folder / "f.safetensors";
  std::ofstream(in, std::ios::binary) << NpyFile(descr, shape, data);
  const Error error = NpyArrayToSafetensors(in.string(), out.string(), "f");
  const std::string written = error.ok() ? ReadWhole(out) : std::string();
  std::filesystem::remove_all(folder);
  RC_ASSERT(error.ok());
  const std::string expected = COrderBytes(data, shape, size, big_endian);
  RC_ASSERT(written.size() >= expected.size());
  RC_ASSERT(written.substr(written.size() - expected.size()) == expected);
}

RC_GTEST_PROP(NpyFortranProp, ConvertsToTheCOrderArray, ()) {
  const auto rank = *rc::gen::inRange<size_t>(1, 5);
  std::vector<uint64_t> shape;
  uint64_t count = 1;
  // At most one axis longer than the transpose's tiles (32 to 128 elements a side), so
  // partial tiles are met and the array stays small.
  const auto long_axis = *rc::gen::inRange<size_t>(0, 2 * rank);
  for (size_t k = 0; k < rank; ++k) {
    shape.push_back(k == long_axis ? *rc::gen::inRange<uint64_t>(30, 300)
                                   : *rc::gen::weightedOneOf<uint64_t>(
                                         {{1, rc::gen::just<uint64_t>(0)},
                                          {2, rc::gen::just<uint64_t>(1)},
                                          {6, rc::gen::inRange<uint64_t>(2, 9)}}));
    count *= shape.back();
  }
  ConvertsLikeTheReference(shape, count);
}

// Power-of-two strides (one axis of 512 elements, the others any length) take the tiled
// transpose through buffers and its 16-byte register blocks, with partial blocks and
// tiles at the edges.
RC_GTEST_PROP(NpyFortranProp, PowerOfTwoStridesConvertToTheCOrderArray, ()) {
  const auto rank = *rc::gen::inRange<size_t>(2, 4);
  const auto wide_axis = *rc::gen::inRange<size_t>(0, rank);
  std::vector<uint64_t> shape;
  uint64_t count = 1;
  for (size_t k = 0; k < rank; ++k) {
    shape.push_back(k == wide_axis ? 512
                                   : *rc::gen::inRange<uint64_t>(1, rank == 2 ? 24 : 6));
    count *= shape.back();
  }
  ConvertsLikeTheReference(shape, count);
}

}  // namespace
}  // namespace stguard
