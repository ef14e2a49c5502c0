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
