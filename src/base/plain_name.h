// SPDX-License-Identifier: Apache-2.0
// The one rule for a name that must be a plain file name: a shard named by an index
// (safetensors or PyTorch) and an npz member. Such a name is joined to a folder by
// whoever reads or extracts it, so it must stay a single entry of that folder.
#ifndef STGUARD_SRC_BASE_PLAIN_NAME_H_
#define STGUARD_SRC_BASE_PLAIN_NAME_H_

#include <string_view>

namespace stguard {

// kMaxPlainNameBytes is NAME_MAX on Linux and most systems: a longer name cannot exist,
// and opening it fails with ENAMETOOLONG, which is the author's doing, not an I/O error.
inline constexpr size_t kMaxPlainNameBytes = 255;

// PlainNameProblem returns why `name` is not a plain file name, or nullptr when it is.
// Refused: empty, longer than 255 bytes, '.', any '..' (not only a whole "..": no
// extractor or tool that splits on other separators sees a parent folder), '/', '\\',
// NUL, control characters and DEL (a name that prints as something else).
inline const char* PlainNameProblem(std::string_view name) {
  if (name.empty()) return "name is empty";
  if (name.size() > kMaxPlainNameBytes) {
    return "name is longer than a file name may be (255 bytes)";
  }
  if (name == ".") return "name is '.'";
  if (name[0] == '/') return "name is an absolute path";
  if (name.find("..") != std::string_view::npos) return "name contains '..'";
  for (char c : name) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '/') return "name contains '/' (it must be a file name in its folder)";
    if (c == '\\') return "name contains '\\'";
    if (byte == 0) return "name contains a NUL byte";
    if (byte < 0x20 || byte == 0x7F) return "name contains a control character";
  }
  return nullptr;
}

}  // namespace stguard

#endif  // STGUARD_SRC_BASE_PLAIN_NAME_H_
