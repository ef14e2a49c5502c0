// SPDX-License-Identifier: Apache-2.0
// fuzz_npz: arbitrary bytes as a whole .npz archive.
//
// Every rejection is a well-formed Error with an offset inside the input. Every accepted
// archive keeps the reader's promises: each member's key is non-empty, plain, UTF-8 and
// no other member's name (numpy would look that name up first for the key), its
// bytes lie inside the input, and streaming it again (StreamNpzMember, which inflates a
// deflated member a second time and checks its CRC-32) gives exactly the bytes the .npy
// header declares; a stored member's data is the input's own bytes.
//
// The single-pass split a converter relies on holds: NpzDepth::kHeaders accepts every
// archive ParseNpz accepts, and an archive it accepts that ParseNpz refuses has a
// deflated member that fails when streamed (so a converter that streams every member
// refuses exactly what ParseNpz refuses).
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>

#include "base/utf8.h"
#include "fuzz_support.h"
#include "npz_mutator.h"
#include "stguard/npz.h"

namespace {

// CheckHeadersThenStream checks the kHeaders + StreamNpzMember split against ParseNpz's
// verdict `whole_ok`.
void CheckHeadersThenStream(std::span<const std::byte> bytes, bool whole_ok) {
  const stguard::Result<stguard::NpzInfo> headers =
      stguard::ParseNpz(bytes, stguard::NpzDepth::kHeaders);
  if (whole_ok) FUZZ_CHECK(headers.ok());
  if (!headers.ok()) return;
  bool all_streamed = true;
  for (const stguard::NpzMember& member : headers->members) {
    if (!member.compressed) continue;
    const stguard::Error streamed = stguard::StreamNpzMember(
        bytes, member, member.array.data_offset,
        [](std::span<const std::byte>) { return stguard::Error{}; });
    if (!streamed.ok()) {
      FUZZ_CHECK(streamed.offset <= bytes.size());
      all_streamed = false;
    }
  }
  FUZZ_CHECK(all_streamed == whole_ok);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const stguard_fuzz::ExactCopy input(data, size);
  const std::span<const std::byte> bytes = input.bytes();
  const stguard::Result<stguard::NpzInfo> result = stguard::ParseNpz(bytes);
  CheckHeadersThenStream(bytes, result.ok());
  stguard_fuzz::CountExecution(result.ok() && !result->members.empty());
  if (!result.ok()) {
    FUZZ_CHECK(result.error().code != stguard::ErrorCode::kOk);
    FUZZ_CHECK(result.error().offset <= size);
    FUZZ_CHECK(result.error().message != nullptr && result.error().message[0] != '\0');
    return 0;
  }
  // Every key answers to its own member in numpy: no key is another member's name, which
  // NpzFile[key] would look up first; and a key is UTF-8 (zipfile's reading of its name).
  std::set<std::string> names;
  for (const stguard::NpzMember& member : result->members) names.insert(member.key + ".npy");
  for (const stguard::NpzMember& member : result->members) {
    FUZZ_CHECK(!member.key.empty() && member.key.find('/') == std::string::npos &&
               member.key.find('\\') == std::string::npos);
    FUZZ_CHECK(names.count(member.key) == 0);
    FUZZ_CHECK(stguard::IsValidUtf8(member.key));
    FUZZ_CHECK(member.data_offset <= size && member.compressed_size <= size - member.data_offset);
    const stguard::NpyArrayInfo& array = member.array;
    uint64_t seen = 0;
    const stguard::Error streamed = stguard::StreamNpzMember(
        bytes, member, array.data_offset, [&](std::span<const std::byte> chunk) {
          if (!member.compressed) {
            FUZZ_CHECK(chunk.data() == bytes.data() + member.data_offset + array.data_offset);
          }
          seen += chunk.size();
          return stguard::Error{};
        });
    FUZZ_CHECK(streamed.ok());
    FUZZ_CHECK(seen == array.data_len);
  }
  return 0;
}

// Structure-aware mutation (npz_mutator.h): the member is mutated as a .npy and the
// archive rebuilt around it, CRC and sizes included, so mutations reach the member rules.
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  return stguard_fuzz::mutator::MutateNpz(data, size, max_size, seed);
}
