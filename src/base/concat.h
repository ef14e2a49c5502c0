// SPDX-License-Identifier: Apache-2.0
// Concat joins string pieces into one std::string with a single allocation.
//
// It also replaces chains of `std::string + ...`: g++ 12 at -O2/-O3 inlines those into
// memcpy calls it then wrongly reports as overlapping (-Wrestrict, GCC bug 105329), and a
// consumer building with -Werror would fail on stguard's code.
#ifndef STGUARD_SRC_BASE_CONCAT_H_
#define STGUARD_SRC_BASE_CONCAT_H_

#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>

namespace stguard {

inline std::string Concat(std::initializer_list<std::string_view> pieces) {
  size_t len = 0;
  for (std::string_view piece : pieces) len += piece.size();
  std::string out;
  out.reserve(len);
  for (std::string_view piece : pieces) out.append(piece);
  return out;
}

}  // namespace stguard

#endif  // STGUARD_SRC_BASE_CONCAT_H_
