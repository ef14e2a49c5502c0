// SPDX-License-Identifier: Apache-2.0
// index_mutator.cc: structure-aware mutation of index files. See index_mutator.h.
#include "index_mutator.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>

#include "safetensors_mutator.h"  // ByteLevelMutate, ByteLevelOnly, CopyOut

namespace stguard_fuzz::mutator {
namespace {

using Members = std::vector<std::pair<std::string, JsonValue>>;

std::string_view ToView(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Member returns the first member `key` of `object`, adding it (with `initial`) if absent.
JsonValue& Member(JsonValue* object, std::string_view key, JsonValue initial) {
  for (auto& [name, value] : object->members) {
    if (name == key) return value;
  }
  object->members.emplace_back(std::string(key), std::move(initial));
  return object->members.back().second;
}

std::string ShardName(const Members& map, Rng& rng) {
  using namespace std::string_view_literals;
  static constexpr std::string_view kShards[] = {
      "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors",
      "model.safetensors", "../model.safetensors", "/etc/passwd", "a/b.safetensors",
      "a\\b.safetensors", "", ".", "..", "x\0y.safetensors"sv, "\x01.safetensors",
      "é.safetensors", "pytorch_model.bin", "model.safetensors/"};
  if (!map.empty() && rng.OneIn(2)) return map[rng.Below(map.size())].second.text;
  if (rng.OneIn(6)) return RandomName(rng);
  return std::string(kShards[rng.Below(std::size(kShards))]);
}

JsonValue TotalSize(Rng& rng) {
  static constexpr const char* kOdd[] = {"-1", "1.0", "1e3", "-0", "18446744073709551616",
                                         "18446744073709551615", "0"};
  JsonValue value;
  value.kind = JsonValue::Kind::kNumber;
  switch (rng.Below(6)) {
    case 0: value.text = kOdd[rng.Below(std::size(kOdd))]; return value;
    case 1: return rng.OneIn(2) ? JsonValue::String("12") : JsonValue();
    default: return JsonValue::Number(rng.Below(1u << 20));
  }
}

void MutateWeightMap(JsonValue* map, Rng& rng) {
  if (map->kind != JsonValue::Kind::kObject) *map = JsonValue::Object();
  Members& entries = map->members;
  const size_t pick = entries.empty() ? 0 : rng.Below(entries.size());
  static constexpr int kWeights[] = {0, 0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 5, 6};  // add most
  switch (entries.empty() ? 0 : kWeights[rng.Below(std::size(kWeights))]) {
    case 0: {  // add
      std::string tensor = rng.OneIn(2) ? "model.layers." + std::to_string(rng.Below(64)) + ".weight"
                                        : RandomName(rng);
      if (!entries.empty() && rng.OneIn(6)) tensor = entries[pick].first;  // a duplicate
      JsonValue shard = JsonValue::String(ShardName(entries, rng));
      entries.emplace(entries.begin() + static_cast<std::ptrdiff_t>(rng.Below(entries.size() + 1)),
                      std::move(tensor), std::move(shard));
      return;
    }
    case 1: entries.erase(entries.begin() + static_cast<std::ptrdiff_t>(pick)); return;
    case 2: entries[pick].first = RandomName(rng); return;
    case 3: entries[pick].second = JsonValue::String(ShardName(entries, rng)); return;
    case 4: std::swap(entries[pick], entries[rng.Below(entries.size())]); return;
    case 5:
      if (rng.OneIn(4)) {  // a value that is not a string
        entries[pick].second = rng.OneIn(2) ? JsonValue::Number(1) : JsonValue::Object();
        return;
      }
      [[fallthrough]];
    default: entries[pick].first = entries[rng.Below(entries.size())].first; return;  // a repeat
  }
}

void MutateMetadata(JsonValue* index, Rng& rng) {
  Members& top = index->members;
  const auto it = std::find_if(top.begin(), top.end(), [](const auto& m) { return m.first == "metadata"; });
  if (it == top.end()) {
    JsonValue meta = JsonValue::Object();
    if (!rng.OneIn(4)) meta.members.emplace_back("total_size", TotalSize(rng));
    top.emplace(top.begin() + static_cast<std::ptrdiff_t>(rng.Below(top.size() + 1)), "metadata",
                std::move(meta));
    return;
  }
  JsonValue& meta = it->second;
  switch (rng.Below(6)) {
    case 0: top.erase(it); return;
    case 1: meta = rng.OneIn(2) ? JsonValue::Array() : JsonValue(); return;
    case 2:
      if (meta.kind == JsonValue::Kind::kObject) {
        meta.members.emplace_back(rng.OneIn(2) ? "total_parameters" : RandomName(rng),
                                  rng.OneIn(2) ? JsonValue::Number(rng.Below(1000)) : JsonValue::Object());
      }
      return;
    default:
      if (meta.kind != JsonValue::Kind::kObject) meta = JsonValue::Object();
      if (rng.OneIn(5)) {
        meta.members.emplace_back("total_size", TotalSize(rng));  // maybe twice
      } else {
        Member(&meta, "total_size", JsonValue()) = TotalSize(rng);
      }
      return;
  }
}

void MutateTopLevel(JsonValue* index, Rng& rng) {
  Members& top = index->members;
  switch (rng.Below(4)) {
    case 0: std::reverse(top.begin(), top.end()); return;
    case 1:
      top.emplace_back(rng.OneIn(2) ? "format" : RandomName(rng), JsonValue::String("pt"));
      return;
    case 2:
      if (!top.empty()) top.push_back(top[rng.Below(top.size())]);  // a duplicate key
      return;
    default:
      if (!top.empty()) top.erase(top.begin() + static_cast<std::ptrdiff_t>(rng.Below(top.size())));
      return;
  }
}

std::string Encode(const JsonValue& index, Rng& rng) {
  JsonStyle style;
  if (!rng.OneIn(3)) style = RandomStyle(rng);
  std::string text;
  if (rng.OneIn(8)) text.append(rng.OneIn(2) ? " " : "\n");
  WriteJson(index, style, rng, &text);
  if (rng.OneIn(3)) text.push_back('\n');  // as json.dump(..., indent=2) + "\n" writes it
  return text;
}

// Repair makes an index of any JSON object, as LayOut does for safetensors files: only
// the first "weight_map" (an object of strings, each tensor once) and the first
// "metadata" (an object with a valid total_size, if any) stay.
void Repair(JsonValue* index) {
  JsonValue repaired = JsonValue::Object();
  for (auto& [key, value] : index->members) {
    if ((key != "weight_map" && key != "metadata") || repaired.Find(key) != nullptr) continue;
    if (value.kind != JsonValue::Kind::kObject) value = JsonValue::Object();
    Members kept;
    for (auto& member : value.members) {
      const bool seen = std::any_of(kept.begin(), kept.end(),
                                    [&member](const auto& k) { return k.first == member.first; });
      if (seen) continue;
      if (key == "weight_map" && member.second.kind != JsonValue::Kind::kString) continue;
      if (key == "metadata" && member.first == "total_size" &&
          (member.second.kind != JsonValue::Kind::kNumber ||
           member.second.text.find_first_not_of("0123456789") != std::string::npos ||
           member.second.text.size() > 19)) {
        continue;
      }
      kept.push_back(std::move(member));
    }
    value.members = std::move(kept);
    repaired.members.emplace_back(key, std::move(value));
  }
  if (repaired.Find("weight_map") == nullptr) {
    repaired.members.emplace_back("weight_map", JsonValue::Object());
  }
  *index = std::move(repaired);
}

}  // namespace

void MutateIndexTree(JsonValue* index, Rng& rng) {
  if (!rng.OneIn(4)) Repair(index);
  const size_t changes = 1 + rng.Below(3);
  for (size_t c = 0; c < changes; ++c) {
    const size_t what = rng.Below(12);
    if (what < 8) {
      MutateWeightMap(&Member(index, "weight_map", JsonValue::Object()), rng);
    } else if (what < 11) {
      MutateMetadata(index, rng);
    } else {
      MutateTopLevel(index, rng);
    }
  }
}

size_t MutateIndex(uint8_t* data, size_t size, size_t max_size, unsigned seed) {
  Rng rng(seed);
  JsonValue index;
  if (ByteLevelOnly() || rng.OneIn(16)) return ByteLevelMutate(data, size, max_size, seed);
  if (!ParseJson(ToView(data, size), &index) || index.kind != JsonValue::Kind::kObject) {
    // Not a JSON object: half the time byte-level mutation, half the time a new index
    // from the empty one (as libprotobuf-mutator starts from an empty message).
    if (rng.OneIn(2)) return ByteLevelMutate(data, size, max_size, seed);
    index = JsonValue::Object();
  }
  MutateIndexTree(&index, rng);
  const size_t out = CopyOut(Encode(index, rng), data, max_size);
  return out != 0 ? out : ByteLevelMutate(data, size, max_size, seed);
}

size_t CrossOverIndex(const uint8_t* data1, size_t size1, const uint8_t* data2, size_t size2,
                      uint8_t* out, size_t max_out_size, unsigned seed) {
  Rng rng(seed);
  JsonValue first;
  JsonValue second;
  if (ByteLevelOnly() || !ParseJson(ToView(data1, size1), &first) ||
      !ParseJson(ToView(data2, size2), &second) || first.kind != JsonValue::Kind::kObject ||
      second.kind != JsonValue::Kind::kObject) {
    const size_t head = std::min(rng.Below(size1 + 1), max_out_size);
    const size_t tail = std::min(rng.Below(size2 + 1), max_out_size - head);
    std::memcpy(out, data1, head);
    std::memcpy(out + head, data2 + size2 - tail, tail);
    return head + tail;
  }
  JsonValue& map = Member(&first, "weight_map", JsonValue::Object());
  const JsonValue* other = second.Find("weight_map");
  if (map.kind == JsonValue::Kind::kObject && other != nullptr &&
      other->kind == JsonValue::Kind::kObject) {
    for (const auto& entry : other->members) {
      if (rng.OneIn(2)) map.members.push_back(entry);
    }
  }
  const size_t size = CopyOut(Encode(first, rng), out, max_out_size);
  if (size != 0) return size;
  const size_t head = std::min(size1, max_out_size);
  std::memcpy(out, data1, head);
  return head;
}

}  // namespace stguard_fuzz::mutator
