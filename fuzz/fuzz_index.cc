// SPDX-License-Identifier: Apache-2.0
// fuzz_index: arbitrary bytes as a sharded checkpoint's index file
// (model.safetensors.index.json), through ParseIndexFile and ValidateJsonUniqueKeys.
//
// Every rejection is a well-formed Error with an offset inside the input. The verdicts
// agree with the independent reference (reference_checker.cc: its own JSON parser with
// duplicate detection by std::set, and its own reading of the index schema), and so does
// every accepted index's weight_map (in file order, decoded), metadata and total_size.
// Entry offsets point at the opening quotes of their key and value.
#include <cstddef>
#include <cstdint>
#include <string>

#include "checkpoint_checks.h"
#include "fuzz_support.h"
#include "folder/index_file.h"
#include "index_mutator.h"
#include "reference_checker.h"
#include "stguard/json_tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const stguard_fuzz::ExactCopy input(data, size);
  const std::string_view text = input.text();

  const stguard::Error unique = stguard::ValidateJsonUniqueKeys(text);
  const bool reference_unique =
      stguard_fuzz::reference::IsJsonTextWithUniqueKeys(text, stguard::kDefaultMaxDepth);
  FUZZ_CHECK_MSG(unique.ok() == reference_unique,
                 unique.ok() ? std::string("ValidateJsonUniqueKeys accepts; the reference rejects")
                             : "ValidateJsonUniqueKeys rejects (" + unique.ToString() +
                                   "); the reference accepts");
  if (!unique.ok()) {
    stguard_fuzz::CheckRejection(unique, size);
    // Without the key rule, only duplicates can make the difference.
    if (stguard::ValidateJson(text).ok()) {
      FUZZ_CHECK_MSG(unique.code == stguard::ErrorCode::kDuplicateKey, unique.ToString());
    }
  }

  stguard::IndexFile index;
  const stguard::Error error = stguard::ParseIndexFile(text, stguard::Options{}, &index);
  const stguard_fuzz::reference::Index expected =
      stguard_fuzz::reference::CheckIndex(text, stguard::kDefaultMaxDepth);
  stguard_fuzz::CountExecution(error.ok());  // the comparison of accepted indexes below
  if (!error.ok()) {
    stguard_fuzz::CheckRejection(error, size);
    FUZZ_CHECK_MSG(!expected.ok,
                   "ParseIndexFile rejects (" + error.ToString() + "); the reference accepts");
    return 0;
  }
  FUZZ_CHECK_MSG(expected.ok, "ParseIndexFile accepts; the reference rejects");
  FUZZ_CHECK(unique.ok());
  FUZZ_CHECK(index.has_metadata == expected.has_metadata);
  FUZZ_CHECK(index.has_total_size == expected.has_total_size);
  if (index.has_total_size) {
    FUZZ_CHECK(index.total_size == expected.total_size);
    FUZZ_CHECK(index.total_size_offset < size);
  }
  FUZZ_CHECK(index.weight_map.size() == expected.weight_map.size());
  for (size_t i = 0; i < index.weight_map.size(); ++i) {
    const stguard::IndexEntry& got = index.weight_map[i];
    FUZZ_CHECK_MSG(got.tensor == expected.weight_map[i].first, "entry " + std::to_string(i));
    FUZZ_CHECK_MSG(got.shard == expected.weight_map[i].second, "entry " + std::to_string(i));
    FUZZ_CHECK(got.key_offset < got.value_offset && got.value_offset < size);
    FUZZ_CHECK(text[got.key_offset] == '"' && text[got.value_offset] == '"');
  }
  return 0;
}

// Structure-aware mutation (fuzz/index_mutator.h): parse, change weight_map, metadata and
// the text, write back; byte-level mutation for what is not JSON.
STGUARD_FUZZ_CUSTOM_MUTATORS(stguard_fuzz::mutator::MutateIndex,
                             stguard_fuzz::mutator::CrossOverIndex)
