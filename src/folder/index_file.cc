// SPDX-License-Identifier: Apache-2.0
// Index files: a pass that validates the JSON and rejects duplicate keys in every object,
// then a schema pass over a fresh token stream. Two passes keep each simple; both are
// linear apart from the sorts.
#include "folder/index_file.h"

#include <utility>

#include "base/checked_math.h"
#include "base/concat.h"
#include "base/duplicate_keys.h"
#include "json/token_cursor.h"
#include "stguard/json_tokenizer.h"

namespace stguard {
namespace {

// KeyRef is one key of an open object: its unescaped text and where it was.
struct KeyRef {
  std::string_view text;
  uint64_t offset;
};

// FindRepeat returns the first key in keys[first, end) that repeats an earlier one there,
// or nullptr.
const KeyRef* FindRepeat(const std::vector<KeyRef>& keys, size_t first) {
  const size_t count = keys.size() - first;
  std::vector<uint32_t> sorted;
  const size_t repeat = SortKeysFindDuplicate(
      count, [&keys, first](size_t i) { return keys[first + i].text; }, &sorted);
  return repeat == kNoDuplicate ? nullptr : &keys[first + repeat];
}

// IndexParser walks the schema. The grammar and the duplicate keys were checked by
// ValidateJsonUniqueKeys, so this pass only looks at token kinds.
class IndexParser : private TokenCursor {
 public:
  IndexParser(std::string_view text, const Options& options, IndexFile* out)
      : TokenCursor(text, 0, options.max_depth), out_(*out) {}

  Error Parse();

 private:
  // KeepText keeps strings that outlive the parse (names) in the index's owned_strings.
  std::string_view KeepText(const Token& token) {
    return TokenCursor::KeepText(token, &out_.owned_strings);
  }
  bool SkipValue();
  bool ParseMetadata();
  bool ParseWeightMap();

  IndexFile& out_;
};

Error IndexParser::Parse() {
  if (!Next()) return error_;
  const uint64_t top_offset = token_.offset;
  if (token_.kind != TokenKind::kBeginObject) {
    Fail(ErrorCode::kInvalidIndex, token_.offset, "the index is not a JSON object");
    return error_;
  }
  bool has_weight_map = false;
  for (;;) {
    if (!Next()) return error_;
    if (token_.kind == TokenKind::kEndObject) break;
    std::string scratch;
    const uint64_t key_offset = token_.offset;
    const std::string_view key = TokenText(token_, &scratch);
    bool ok = false;
    if (key == "metadata") {
      ok = ParseMetadata();
    } else if (key == "weight_map") {
      has_weight_map = true;
      ok = ParseWeightMap();
    } else {
      ok = Fail(ErrorCode::kInvalidIndex, key_offset,
                "the index has a top-level key other than metadata and weight_map",
                {.context = Concat({"\"", key, "\""})});
    }
    if (!ok) return error_;
  }
  if (!has_weight_map) {
    Fail(ErrorCode::kInvalidIndex, top_offset, "the index has no weight_map");
    return error_;
  }
  return error_;
}

bool IndexParser::SkipValue() {
  if (!Next()) return false;
  if (token_.kind != TokenKind::kBeginObject && token_.kind != TokenKind::kBeginArray) {
    return true;
  }
  const uint32_t depth = tokens_.depth() - 1;  // depth outside the value
  while (tokens_.depth() > depth) {
    if (!Next()) return false;
  }
  return true;
}

bool IndexParser::ParseMetadata() {
  if (!Next()) return false;
  if (token_.kind != TokenKind::kBeginObject) {
    return Fail(ErrorCode::kInvalidIndex, token_.offset, "metadata is not an object");
  }
  out_.has_metadata = true;
  for (;;) {
    if (!Next()) return false;
    if (token_.kind == TokenKind::kEndObject) return true;
    std::string scratch;
    const std::string_view key = TokenText(token_, &scratch);
    if (key != "total_size") {
      if (!SkipValue()) return false;
      continue;
    }
    if (!Next()) return false;
    if (token_.kind != TokenKind::kNumber || !ParseUint64(token_.text, &out_.total_size)) {
      return Fail(ErrorCode::kInvalidIndex, token_.offset,
                  "metadata.total_size is not a non-negative integer that fits in 64 bits");
    }
    out_.has_total_size = true;
    out_.total_size_offset = token_.offset;
  }
}

bool IndexParser::ParseWeightMap() {
  if (!Next()) return false;
  if (token_.kind != TokenKind::kBeginObject) {
    return Fail(ErrorCode::kInvalidIndex, token_.offset, "weight_map is not an object");
  }
  for (;;) {
    if (!Next()) return false;
    if (token_.kind == TokenKind::kEndObject) return true;
    IndexEntry entry;
    entry.key_offset = token_.offset;
    entry.tensor = KeepText(token_);
    if (!Next()) return false;
    if (token_.kind != TokenKind::kString) {
      return Fail(ErrorCode::kInvalidIndex, token_.offset,
                  "weight_map value is not a string (a shard file name)", {.tensor = entry.tensor});
    }
    entry.value_offset = token_.offset;
    entry.shard = KeepText(token_);
    out_.weight_map.push_back(entry);
  }
}

}  // namespace

Error ValidateJsonUniqueKeys(std::string_view text, uint32_t max_depth) {
  JsonTokenizer tokens(text, 0, max_depth);
  Token token;
  std::vector<KeyRef> keys;           // keys of every open object, outermost first
  std::vector<size_t> object_starts;  // for each open object, its first index in keys
  std::deque<std::string> unescaped;  // storage for keys that had escapes
  for (;;) {
    if (!tokens.Next(&token)) return tokens.error();
    switch (token.kind) {
      case TokenKind::kBeginObject:
        object_starts.push_back(keys.size());
        break;
      case TokenKind::kKey:
        if (token.has_escapes) {
          std::string& owned = unescaped.emplace_back();
          UnescapeJsonString(token.text, &owned);
          keys.push_back(KeyRef{owned, token.offset});
        } else {
          keys.push_back(KeyRef{token.text, token.offset});
        }
        break;
      case TokenKind::kEndObject: {
        const size_t first = object_starts.back();
        object_starts.pop_back();
        if (const KeyRef* repeat = FindRepeat(keys, first); repeat != nullptr) {
          return Error{ErrorCode::kDuplicateKey, repeat->offset,
                       "a key appears twice in one JSON object", std::string(repeat->text)};
        }
        keys.resize(first);
        break;
      }
      case TokenKind::kEndOfInput:
        return Error{};
      default:
        break;
    }
  }
}

Error ParseIndexFile(std::string_view text, const Options& options, IndexFile* out) {
  if (Error error = ValidateJsonUniqueKeys(text, options.max_depth); !error.ok()) return error;
  IndexParser parser(text, options, out);
  return parser.Parse();
}

}  // namespace stguard
