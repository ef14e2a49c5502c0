// SPDX-License-Identifier: Apache-2.0
// ReadConfig: config.json read strictly into its top-level members, with the project's own
// tokenizer (no DOM, no recursion).
//
// POLICY: the text is exactly one RFC 8259 JSON text (JsonTokenizer's rules) whose top level
// is an object, and no object anywhere in it repeats a key (compared after unescaping):
// Python's json keeps the last value, so two readers could see two models. Each failure is
// one finding (config-invalid-json, config-not-object, config-duplicate-key) and the config
// is then not used. Nested objects and arrays are kept only as their kind, except that the
// first string of a top-level array is kept (for "architectures").
//
// Memory is O(number of top-level members + their scalar text); time O(n log n).
#ifndef STGUARD_SRC_LINT_CONFIG_READER_H_
#define STGUARD_SRC_LINT_CONFIG_READER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lint/findings.h"
#include "stguard/json_tokenizer.h"

namespace stguard::lint {

// ConfigMember is one top-level key and its value.
struct ConfigMember {
  std::string key;             // unescaped
  TokenKind kind = TokenKind::kNull;  // kString, kNumber, kTrue, kFalse, kNull,
                                      // kBeginObject or kBeginArray
  std::string text;            // strings: unescaped; numbers: the number's text
  bool array_has_string = false;  // arrays: their first element is a string...
  std::string array_first_string;  // ...and this is its unescaped text
  uint64_t offset = 0;         // byte offset of the value in config.json
};

// Config is a config.json that passed the POLICY, its members sorted by key.
class Config {
 public:
  // Find returns the member named `key`, or nullptr.
  const ConfigMember* Find(std::string_view key) const;
  const std::vector<ConfigMember>& members() const { return members_; }

 private:
  friend bool ReadConfig(std::string_view, uint32_t, Config*, Findings*);
  std::vector<ConfigMember> members_;
};

// ReadConfig parses `text` into *out. Returns false (after adding one error finding) when
// the text breaks the POLICY.
bool ReadConfig(std::string_view text, uint32_t max_depth, Config* out, Findings* findings);

}  // namespace stguard::lint

#endif  // STGUARD_SRC_LINT_CONFIG_READER_H_
