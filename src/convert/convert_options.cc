// SPDX-License-Identifier: Apache-2.0
// Which option applies to which input: the one rule (kConvertOptionRules in
// stguard/conversion.h) checked once, in the library, for every front end.
#include <string>

#include "stguard/conversion.h"

namespace stguard {

std::string InapplicableConvertOption(const ConvertOptions& options, const PathFormat& input,
                                      const std::string& in) {
  const FormatSet found = input.set();
  if (found == 0) return "";
  for (const ConvertOptionRule& rule : kConvertOptionRules) {
    if (!rule.given(options) || (rule.formats & found) != 0) continue;
    return std::string(rule.flag) + " applies to " + FormatSetNames(rule.formats) +
           ", not to " + FormatSetNames(found) + " (" + PrintableText(in) + ")";
  }
  return "";
}

}  // namespace stguard
