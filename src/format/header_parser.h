// SPDX-License-Identifier: Apache-2.0
// Stage 3: the header schema, read straight from the token stream (no DOM).
#ifndef STGUARD_SRC_FORMAT_HEADER_PARSER_H_
#define STGUARD_SRC_FORMAT_HEADER_PARSER_H_

#include <cstdint>
#include <forward_list>
#include <string>
#include <string_view>
#include <vector>

#include "stguard/error.h"
#include "stguard/options.h"
#include "stguard/reader.h"

namespace stguard {

// ParsedHeader is what the schema stage hands to the tiling stage. Tensors and metadata
// are in header order; views point into the header text or into owned_strings.
struct ParsedHeader {
  std::vector<TensorView> tensors;  // `data` is left empty; `shape` points into dims
  std::vector<uint8_t> dims;        // every shape's dims as varints (stguard/shape.h)
  std::vector<uint32_t> tensors_by_name;  // indexes into tensors, sorted by name bytes
  MetadataList metadata;                  // sorted by key bytes; refers to the header text
  bool has_metadata_object = false;
  std::forward_list<std::string> owned_strings;  // unescaped strings that had escapes
  // How many tensor entries the compact fast path read; the others went token by token.
  // Part of the result so that a test or a benchmark can see which path ran.
  size_t compact_entries = 0;
};

// ReservationBounds are the most dims and metadata entries a header of a given length can
// hold. Once a list is large ParseHeader reserves its bound (address space, not memory) so
// that no large list is copied while it grows; the capacity never exceeds the bound.
// Exposed for the test that checks both.
struct ReservationBounds {
  size_t max_dim_bytes = 0;  // bytes of varint-encoded dims
  size_t max_metadata_entries = 0;
};
ReservationBounds ReservationBoundsFor(size_t header_len);

// ParseHeader checks `header` (the N header bytes, which start at absolute offset
// `base_offset` in the file) against the schema: a top-level object whose optional
// __metadata__ is an object of strings and whose other keys name tensor entries with
// exactly dtype, shape and data_offsets. It also rejects duplicate keys and checks each
// tensor's byte size against dtype and shape (stage 4). It does not check the tiling.
//
// `compact_fast_path` exists for tests, which check that turning the fast path for
// compact entries off changes nothing but speed (out->compact_entries shows which path
// each entry took).
Error ParseHeader(std::string_view header, uint64_t base_offset, const Options& options,
                  ParsedHeader* out, bool compact_fast_path = true);

}  // namespace stguard

#endif  // STGUARD_SRC_FORMAT_HEADER_PARSER_H_
