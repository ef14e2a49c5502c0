// SPDX-License-Identifier: Apache-2.0
// Building a MetadataList (stguard/reader.h) while the header is parsed.
#ifndef STGUARD_SRC_FORMAT_METADATA_LIST_H_
#define STGUARD_SRC_FORMAT_METADATA_LIST_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "stguard/json_tokenizer.h"
#include "stguard/reader.h"

namespace stguard {

// MetadataListBuilder is the one place that fills a MetadataList's private fields.
class MetadataListBuilder {
 public:
  // Start points `list` at the header text that its references will name.
  static void Start(std::string_view header, MetadataList* list);
  // Add appends one entry from its key and value tokens (views into the header text), the
  // key's quote being at `key_offset` in the header text. `max_entries` bounds the list:
  // once it is large, its capacity jumps there (address space, not memory) so that it is
  // never copied while it grows.
  static void Add(const Token& key, uint64_t key_offset, const Token& value,
                  size_t max_entries, MetadataList* list);

  // SortFindDuplicate puts the entries in ascending byte order of their keys, in place.
  // When some key repeats, it returns true and the header-text offset of the repeat that
  // comes first in the file (the quote of its key), and the key itself in *out_key.
  static bool SortFindDuplicate(MetadataList* list, uint64_t* out_offset,
                                std::string_view* out_key);

  // Capacity is how many entries the list has room for (for the test of its bound).
  static size_t Capacity(const MetadataList& list) { return list.refs_.capacity(); }
};

}  // namespace stguard

#endif  // STGUARD_SRC_FORMAT_METADATA_LIST_H_
