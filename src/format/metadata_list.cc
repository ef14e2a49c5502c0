// SPDX-License-Identifier: Apache-2.0
// MetadataList: __metadata__ entries as two 4-byte references each (see stguard/reader.h).
//
// Memory: a reference to a string without escapes costs 4 bytes; a string with escapes is
// unescaped into a record of the list's own buffer: a 4-byte file position (keys only,
// for duplicate reports), a varint length and the bytes. Entries are sorted in place
// (std::sort on the 8-byte references), so sorting takes no index array and no merge
// buffer; the repeat that comes first in the file is found from the positions afterwards.
#include "format/metadata_list.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "stguard/shape.h"

namespace stguard {
namespace {

// The most a list of `max_entries` may double to before it jumps to its bound: beyond
// this many bytes, doubling would hold the old and the new buffer at once.
constexpr size_t kDoublingLimit = size_t{1} << 20;

void AppendUint32(uint32_t value, std::vector<char>* out) {
  char bytes[4];
  std::memcpy(bytes, &value, 4);
  out->insert(out->end(), bytes, bytes + 4);
}

// KeyLess orders two entries by key bytes. Keys that stand in the header text are compared
// byte by byte up to their closing quote, which is cheaper than finding both quotes
// first: sorting millions of short keys spends most of its time here.
struct KeyLess {
  const MetadataList* list;
  const unsigned char* header;
  uint32_t header_len;
  std::string_view (*text)(const MetadataList*, uint32_t);

  bool operator()(uint32_t a, uint32_t b) const {
    if (a < header_len && b < header_len) {
      const unsigned char* x = header + a;
      const unsigned char* y = header + b;
      for (;; ++x, ++y) {
        const bool x_ends = *x == '"';
        const bool y_ends = *y == '"';
        if (x_ends || y_ends) return x_ends && !y_ends;
        if (*x != *y) return *x < *y;
      }
    }
    return text(list, a) < text(list, b);
  }
};

}  // namespace

std::string_view MetadataList::Text(uint32_t ref) const {
  if (ref < header_len_) {
    const char* begin = header_ + ref;
    const void* quote = std::memchr(begin, '"', header_len_ - ref);
    return {begin, static_cast<size_t>(static_cast<const char*>(quote) - begin)};
  }
  const auto* record = reinterpret_cast<const uint8_t*>(unescaped_.data() + (ref - header_len_));
  uint64_t len = 0;
  const uint8_t* bytes = Shape::DecodeVarint(record, &len);
  return {reinterpret_cast<const char*>(bytes), static_cast<size_t>(len)};
}

std::optional<std::string_view> MetadataList::Find(std::string_view key) const {
  size_t low = 0;
  size_t high = refs_.size();
  while (low < high) {
    const size_t middle = low + (high - low) / 2;
    if (Text(refs_[middle].key) < key) {
      low = middle + 1;
    } else {
      high = middle;
    }
  }
  if (low == refs_.size() || Text(refs_[low].key) != key) return std::nullopt;
  return Text(refs_[low].value);
}

void MetadataListBuilder::Start(std::string_view header, MetadataList* list) {
  list->header_ = header.data();
  list->header_len_ = static_cast<uint32_t>(header.size());
  list->refs_.clear();
  list->unescaped_.clear();
}

void MetadataListBuilder::Add(const Token& key, uint64_t key_offset, const Token& value,
                              size_t max_entries, MetadataList* list) {
  // Keep makes the reference for one string token.
  const auto keep = [list](const Token& token, bool with_position, uint64_t position) {
    if (!token.has_escapes) {
      return static_cast<uint32_t>(token.text.data() - list->header_);
    }
    std::vector<char>& buffer = list->unescaped_;
    if (with_position) AppendUint32(static_cast<uint32_t>(position), &buffer);
    const uint32_t ref = list->header_len_ + static_cast<uint32_t>(buffer.size());
    std::string text;
    UnescapeJsonString(token.text, &text);
    std::vector<uint8_t> length;
    Shape::AppendVarint(text.size(), &length);
    buffer.insert(buffer.end(), length.begin(), length.end());
    buffer.insert(buffer.end(), text.begin(), text.end());
    return ref;
  };
  std::vector<MetadataList::Ref>& refs = list->refs_;
  if (refs.size() == refs.capacity()) {
    const size_t doubled = std::max<size_t>(16, refs.capacity() * 2);
    refs.reserve(doubled * sizeof(MetadataList::Ref) <= kDoublingLimit
                     ? std::min(doubled, max_entries)
                     : max_entries);
  }
  const uint32_t key_ref = keep(key, true, key_offset);
  refs.push_back(MetadataList::Ref{key_ref, keep(value, false, 0)});
}

bool MetadataListBuilder::SortFindDuplicate(MetadataList* list, uint64_t* out_offset,
                                            std::string_view* out_key) {
  std::vector<MetadataList::Ref>& refs = list->refs_;
  const auto key_of = [list](const MetadataList::Ref& ref) { return list->Text(ref.key); };
  // The header-text offset of a key's quote: just before its text, or kept in its record.
  const auto position_of = [list](const MetadataList::Ref& ref) -> uint64_t {
    if (ref.key < list->header_len_) return ref.key - 1;
    uint32_t position = 0;
    std::memcpy(&position, list->unescaped_.data() + (ref.key - list->header_len_) - 4, 4);
    return position;
  };
  const KeyLess less{list, reinterpret_cast<const unsigned char*>(list->header_),
                     list->header_len_,
                     [](const MetadataList* l, uint32_t ref) { return l->Text(ref); }};
  // Writers sort their keys, so one pass usually proves the order and the absence of
  // repeats.
  bool strictly_ascending = true;
  for (size_t i = 1; i < refs.size() && strictly_ascending; ++i) {
    strictly_ascending = less(refs[i - 1].key, refs[i].key);
  }
  if (strictly_ascending) return false;
  std::sort(refs.begin(), refs.end(),
            [&less](const MetadataList::Ref& a, const MetadataList::Ref& b) {
              return less(a.key, b.key);
            });
  // In each run of equal keys the first in the file is the original and every other one
  // a repeat; the repeat a reader meets first is the smallest second position of a run.
  bool found = false;
  uint64_t first_repeat = 0;
  for (size_t begin = 0; begin < refs.size();) {
    size_t end = begin + 1;
    const std::string_view key = key_of(refs[begin]);
    while (end < refs.size() && key_of(refs[end]) == key) ++end;
    if (end - begin > 1) {
      uint64_t smallest = UINT64_MAX;
      uint64_t second = UINT64_MAX;
      for (size_t i = begin; i < end; ++i) {
        const uint64_t position = position_of(refs[i]);
        if (position < smallest) {
          second = smallest;
          smallest = position;
        } else if (position < second) {
          second = position;
        }
      }
      if (!found || second < first_repeat) {
        found = true;
        first_repeat = second;
        *out_key = key;
      }
    }
    begin = end;
  }
  if (found) *out_offset = first_repeat;
  return found;
}

}  // namespace stguard
