// SPDX-License-Identifier: Apache-2.0
// A count and its noun (see stguard/plural.h).
#include "stguard/plural.h"

namespace stguard {

std::string Plural(uint64_t count, std::string_view noun) {
  std::string text = std::to_string(count);
  text.append(" ").append(noun);
  if (count != 1) text += 's';
  return text;
}

}  // namespace stguard
