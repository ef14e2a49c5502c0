// SPDX-License-Identifier: Apache-2.0
// mutator_json.h: the JSON layer of the structure-aware mutators (safetensors_mutator.h,
// index_mutator.h): a plain JSON value tree, a parser that fills it, and a writer that
// prints it in one of many equivalent (or deliberately not equivalent) spellings.
//
// The parser is there to *decode* fuzz inputs so they can be changed as structures; it is
// not a checker. It accepts RFC 8259 JSON and keeps what the checkers care about: object
// members in file order, duplicates included, and every number as its literal text (so
// "1.0" and "-0" survive a decode and re-encode). It fails on anything else, and then the
// mutators fall back to byte-level mutation.
//
// The writer varies what a reader must treat as the same text (whitespace between tokens,
// \uXXXX and \/ escapes, surrogate pairs, hex case) and, when asked, spells a few things
// wrongly (a raw control character, a lone surrogate escape) to reach the rejections.
#ifndef STGUARD_FUZZ_MUTATOR_JSON_H_
#define STGUARD_FUZZ_MUTATOR_JSON_H_

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace stguard_fuzz::mutator {

// Rng is the mutators' random source, seeded from libFuzzer's seed so runs reproduce.
class Rng {
 public:
  explicit Rng(unsigned seed) : engine_(seed == 0 ? 1 : seed) {}
  // Below returns a number in [0, n); n must be positive.
  size_t Below(size_t n) { return static_cast<size_t>(engine_() % n); }
  // OneIn returns true with probability 1/n.
  bool OneIn(size_t n) { return Below(n) == 0; }
  uint64_t Bits64() { return (uint64_t{engine_()} << 32) ^ engine_(); }

 private:
  std::minstd_rand engine_;
};

// JsonValue is one JSON value. `text` holds a number's literal, a string's decoded bytes,
// or "true"/"false"; arrays use `items`, objects `members` (file order, duplicates kept).
struct JsonValue {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  std::string text;
  std::vector<JsonValue> items;
  std::vector<std::pair<std::string, JsonValue>> members;

  // Declared here, defined in the .cc: an implicit one would need the member types
  // complete inside the class (clang with libstdc++ refuses the std::pair).
  JsonValue();

  static JsonValue String(std::string value);
  static JsonValue Number(uint64_t value);
  static JsonValue Object();
  static JsonValue Array();
  // Find returns the first member named `key`, or nullptr.
  const JsonValue* Find(std::string_view key) const;
};

// ParseJson parses `text` (exactly one JSON value, whitespace around it allowed, nesting at
// most 32 deep) into *out. Returns false on anything else.
bool ParseJson(std::string_view text, JsonValue* out);

// JsonStyle says how WriteJson spells a value.
struct JsonStyle {
  enum class Space { kCompact, kPretty, kRandom };
  Space space = Space::kCompact;
  // Of every string code point that may be written as an escape, 1 in `escape_one_in` is
  // (0: none). \u escapes use upper-case hex when `upper_hex`.
  size_t escape_one_in = 0;
  bool upper_hex = false;
  // 1 in `break_one_in` strings gets one deliberate error (0: none).
  size_t break_one_in = 0;
};

// RandomStyle picks a style: mostly valid, sometimes compact, sometimes odd.
JsonStyle RandomStyle(Rng& rng);

// WriteJson appends `value` spelled in `style` to *out. Random choices come from `rng`.
void WriteJson(const JsonValue& value, const JsonStyle& style, Rng& rng, std::string* out);

// WriteJsonString appends one JSON string (with its quotes) for the bytes `value`.
void WriteJsonString(std::string_view value, const JsonStyle& style, Rng& rng, std::string* out);

// RandomName returns a name for a tensor, a key or a shard: usually ordinary
// ("model.layers.3.mlp.weight"), often with escapes-to-be (quotes, backslashes, controls,
// NUL), non-ASCII letters, emoji (surrogate pairs when escaped), or empty.
std::string RandomName(Rng& rng);

}  // namespace stguard_fuzz::mutator

#endif  // STGUARD_FUZZ_MUTATOR_JSON_H_
