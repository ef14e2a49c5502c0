// SPDX-License-Identifier: Apache-2.0
#include "support/test_files.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace stguard::testing {

std::string FileWithN(uint64_t n, std::string_view header, std::string_view data) {
  std::string out;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xFF));
  out.append(header);
  out.append(data);
  return out;
}

std::string FileWithHeader(std::string_view header, std::string_view data) {
  return FileWithN(header.size(), header, data);
}

std::string Bytes(std::initializer_list<unsigned> bytes) {
  std::string out;
  for (unsigned byte : bytes) out.push_back(static_cast<char>(byte));
  return out;
}

std::string NpyFileBytes(std::string_view descr, std::string_view shape, std::string_view data,
                         bool fortran_order) {
  std::string dict = "{'descr': '" + std::string(descr) + "', 'fortran_order': " +
                     (fortran_order ? "True" : "False") + ", 'shape': " + std::string(shape) +
                     ", }";
  dict += std::string(63 - (10 + dict.size()) % 64, ' ') + "\n";
  std::string out("\x93NUMPY\x01\x00", 8);
  out.push_back(static_cast<char>(dict.size() & 0xFF));
  out.push_back(static_cast<char>(dict.size() >> 8));
  return out + dict + std::string(data);
}

std::string LengthPrefix(uint64_t n) {
  std::string out;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xFF));
  return out;
}

std::string ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

}  // namespace stguard::testing
