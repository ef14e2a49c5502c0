// SPDX-License-Identifier: Apache-2.0
// ReadConfig: config.json's top-level members (see config_reader.h).
#include "lint/config_reader.h"

#include <algorithm>

#include "folder/index_file.h"

namespace stguard::lint {

const ConfigMember* Config::Find(std::string_view key) const {
  auto it = std::lower_bound(members_.begin(), members_.end(), key,
                             [](const ConfigMember& member, std::string_view k) {
                               return member.key < k;
                             });
  return it != members_.end() && it->key == key ? &*it : nullptr;
}

bool ReadConfig(std::string_view text, uint32_t max_depth, Config* out, Findings* findings) {
  constexpr std::string_view kFile = "config.json";
  if (Error error = ValidateJson(text, max_depth); !error.ok()) {
    findings->Error("config-invalid-json", {}, {}, {},
                    "config.json is not valid JSON: " + error.ToString(), std::string(kFile));
    return false;
  }
  // Duplicates anywhere, nested objects included: {"text_config": {"a": 1, "a": 2}} is
  // just as ambiguous to a Python loader.
  if (Error error = ValidateJsonUniqueKeys(text, max_depth); !error.ok()) {
    findings->Error("config-duplicate-key", {}, {}, PrintableText(error.context),
                    "config.json repeats the key \"" + PrintableText(error.context) +
                        "\" at byte " + std::to_string(error.offset) +
                        "; Python's json keeps the last value, other readers the first",
                    std::string(kFile));
    return false;
  }
  JsonTokenizer tokens(text, 0, max_depth);
  Token token;
  if (!tokens.Next(&token) || token.kind != TokenKind::kBeginObject) {
    findings->Error("config-not-object", {}, "a JSON object", {},
                    "config.json's top level is not a JSON object", std::string(kFile));
    return false;
  }
  std::string scratch;
  std::vector<ConfigMember>& members = out->members_;
  members.clear();
  // The text is valid JSON, so the walk below cannot fail; each top-level key is followed
  // by its value, and a container value is skipped until the depth is back to 1.
  while (tokens.Next(&token) && token.kind == TokenKind::kKey) {
    ConfigMember member;
    member.key = std::string(TokenText(token, &scratch));
    if (!tokens.Next(&token)) break;
    member.kind = token.kind;
    member.offset = token.offset;
    if (token.kind == TokenKind::kString) {
      member.text = std::string(TokenText(token, &scratch));
    } else if (token.kind == TokenKind::kNumber) {
      member.text = std::string(token.text);
    } else if (token.kind == TokenKind::kBeginObject || token.kind == TokenKind::kBeginArray) {
      bool first = true;
      while (tokens.depth() > 1 && tokens.Next(&token)) {
        if (first && member.kind == TokenKind::kBeginArray && token.kind == TokenKind::kString) {
          member.array_has_string = true;
          member.array_first_string = std::string(TokenText(token, &scratch));
        }
        first = false;
      }
    }
    members.push_back(std::move(member));
  }
  std::sort(members.begin(), members.end(),
            [](const ConfigMember& a, const ConfigMember& b) { return a.key < b.key; });
  return true;
}

}  // namespace stguard::lint
