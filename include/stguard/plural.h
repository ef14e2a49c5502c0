// SPDX-License-Identifier: Apache-2.0
// stguard/plural.h: a count and its noun in the messages of the library and the CLI.
#ifndef STGUARD_PLURAL_H_
#define STGUARD_PLURAL_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "stguard/export.h"

namespace stguard {

// Plural renders "1 tensor", "2 tensors", "0 tensors": `count`, a space and `noun`, with
// an s unless count is 1 (every noun the messages count takes a plain s).
STGUARD_API std::string Plural(uint64_t count, std::string_view noun);

}  // namespace stguard

#endif  // STGUARD_PLURAL_H_
