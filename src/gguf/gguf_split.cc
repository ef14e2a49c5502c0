// SPDX-License-Identifier: Apache-2.0
// Split models: llama.cpp writes a large model as parts "name-0000N-of-0000M.gguf", each a
// complete GGUF file with split.no (its 0-based index), split.count (M) and
// split.tensors.count (the model's total). The set is validated as one model.
#include <algorithm>
#include <cstdio>
#include <string>
#include <string_view>

#include "gguf/gguf_internal.h"

namespace stguard::gguf {

namespace {

// kSplitSuffix is "-%05d-of-%05d.gguf" with its digits: 5 + 4 + 5 + 5 characters after '-'.
constexpr size_t kSplitSuffixLen = std::string_view("-00001-of-00002.gguf").size();

bool IsDigits(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// ReadCount reads an unsigned or non-negative signed integer key (llama.cpp writes
// split.no and split.count as u16 and split.tensors.count as i32).
std::optional<uint64_t> ReadCount(const GgufFile& file, std::string_view key) {
  const MetadataEntry* entry = file.FindKey(key);
  if (entry == nullptr) return std::nullopt;
  if (auto u = entry->value.AsUnsigned()) return *u;
  if (auto s = entry->value.AsSigned(); s && *s >= 0) return static_cast<uint64_t>(*s);
  return std::nullopt;
}

Error Mismatch(const std::string& path, const char* message, std::string detail) {
  return {ErrorCode::kGgufSplitMismatch, 0, message, path + ": " + detail};
}

// CheckPart checks part `index`'s split keys against the first part's.
Error CheckPart(const GgufFile& part, const std::string& path, uint64_t index, uint64_t count,
                uint64_t total) {
  if (ReadCount(part, "split.no") != index) {
    return Mismatch(path, "a split part's split.no is not its index", std::to_string(index));
  }
  if (ReadCount(part, "split.count") != count || ReadCount(part, "split.tensors.count") != total) {
    return Mismatch(path, "a split part's split.count or split.tensors.count differs from the first part's",
                    "");
  }
  return {};
}

// CheckUniqueNames refuses a tensor name found in two parts (sorting all names once).
Error CheckUniqueNames(const GgufSplitSet& set) {
  std::vector<std::pair<std::string_view, size_t>> names;
  names.reserve(static_cast<size_t>(set.num_tensors));
  for (size_t p = 0; p < set.parts.size(); ++p) {
    for (const TensorInfo& tensor : set.parts[p].tensors()) names.emplace_back(tensor.name, p);
  }
  std::sort(names.begin(), names.end());
  for (size_t i = 1; i < names.size(); ++i) {
    if (names[i].first == names[i - 1].first) {
      return {ErrorCode::kTensorInTwoShards, 0, "a tensor is in two parts of a split model",
              "parts " + std::to_string(names[i - 1].second + 1) + " and " +
                  std::to_string(names[i].second + 1),
              std::string(names[i].first)};
    }
  }
  return {};
}

}  // namespace

std::string SplitPartPath(const std::string& path, uint32_t part) {
  if (path.size() < kSplitSuffixLen) return "";
  const std::string_view suffix = std::string_view(path).substr(path.size() - kSplitSuffixLen);
  if (suffix[0] != '-' || !IsDigits(suffix.substr(1, 5)) || suffix.substr(6, 4) != "-of-" ||
      !IsDigits(suffix.substr(10, 5)) || suffix.substr(15) != ".gguf" || part > 99999) {
    return "";
  }
  char digits[8];
  std::snprintf(digits, sizeof digits, "%05u", part);
  std::string out = path;
  out.replace(path.size() - kSplitSuffixLen + 1, 5, digits);
  return out;
}

Result<GgufSplitSet> CheckSplitSet(const std::string& first_part) {
  GgufSplitSet set;
  Result<GgufFile> first = GgufFile::Open(first_part);
  if (!first.ok()) return first.error();
  const std::optional<uint64_t> count = ReadCount(*first, "split.count");
  const uint64_t total = ReadCount(*first, "split.tensors.count").value_or(first->tensors().size());
  set.parts.push_back(std::move(*first));
  if (count.value_or(1) <= 1) {
    set.num_tensors = set.parts[0].tensors().size();
    return set;
  }
  if (*count > 99999 || SplitPartPath(first_part, 1) != first_part) {
    return Mismatch(first_part, "a split model's first part must be named NAME-00001-of-NNNNN.gguf "
                    "with split.count parts", std::to_string(*count));
  }
  if (Error error = CheckPart(set.parts[0], first_part, 0, *count, total); !error.ok()) return error;
  for (uint64_t index = 1; index < *count; ++index) {
    const std::string path = SplitPartPath(first_part, static_cast<uint32_t>(index + 1));
    Result<GgufFile> part = GgufFile::Open(path);
    if (!part.ok()) {
      Error error = part.error();
      if (error.code == ErrorCode::kIoError) {
        return Error{ErrorCode::kMissingShard, 0, "a part of a split model is missing", path};
      }
      error.context = path + (error.context.empty() ? "" : ": " + error.context);
      return error;
    }
    if (Error error = CheckPart(*part, path, index, *count, total); !error.ok()) return error;
    set.parts.push_back(std::move(*part));
  }
  for (const GgufFile& part : set.parts) set.num_tensors += part.tensors().size();
  if (set.num_tensors != total) {
    return Mismatch(first_part, "the parts of a split model do not hold split.tensors.count tensors",
                    std::to_string(set.num_tensors) + " != " + std::to_string(total));
  }
  if (Error error = CheckUniqueNames(set); !error.ok()) return error;
  return set;
}

}  // namespace stguard::gguf
