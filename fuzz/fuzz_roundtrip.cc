// SPDX-License-Identifier: Apache-2.0
// fuzz_roundtrip: for any file the reader accepts, the canonical writer's output
// (CanonicalBytes, what `stguard canon` writes) is accepted, holds the same tensors,
// metadata and bytes, is its own canonical form (a fixed point), and is laid out as
// include/stguard/writer.h specifies. CompareToCanonical must say "canonical" exactly when
// the input already is its canonical form, and point at the first differing byte when not.
// The shape of BoringSSL's fuzz/der_roundtrip.cc: parse, re-encode, abort on a difference.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "checkpoint_checks.h"
#include "fuzz_support.h"
#include "reference_checker.h"
#include "safetensors_mutator.h"
#include "stguard/reader.h"
#include "stguard/writer.h"

namespace {

using stguard::Checkpoint;
using stguard::Result;
using stguard_fuzz::BytesOf;

// ChunkSink collects a file written in pieces.
class ChunkSink final : public stguard::ByteSink {
 public:
  stguard::Error Write(std::span<const std::byte> bytes) override {
    out.append(BytesOf(bytes));
    return {};
  }
  std::string out;
};

std::span<const std::byte> AsBytes(std::string_view text) {
  return std::as_bytes(std::span<const char>(text.data(), text.size()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const stguard_fuzz::ExactCopy input(data, size);
  const Result<Checkpoint> original = Checkpoint::FromBytes(input.bytes());
  stguard_fuzz::CountExecution(original.ok());  // everything below is the oracle
  if (!original.ok()) return 0;
  stguard_fuzz::CheckInvariants(*original, input.bytes());

  // Canonical form of a valid checkpoint always exists.
  const Result<std::string> canon = stguard::CanonicalBytes(*original);
  FUZZ_CHECK_MSG(canon.ok(), canon.error().ToString());
  const std::string& canon_bytes = *canon;

  // It is accepted, by the reader and by the reference checker, and holds the same content.
  const Result<Checkpoint> reread = Checkpoint::FromBytes(AsBytes(canon_bytes));
  FUZZ_CHECK_MSG(reread.ok(), "canonical output rejected: " + reread.error().ToString());
  stguard_fuzz::CheckInvariants(*reread, AsBytes(canon_bytes));
  stguard_fuzz::CheckAgreesWithReference(reread,
                                         stguard_fuzz::reference::CheckFile(canon_bytes));
  stguard_fuzz::CheckSameContent(*original, *reread);
  stguard_fuzz::CheckCanonicalLayout(*reread);

  // It is a fixed point.
  const Result<std::string> canon_again = stguard::CanonicalBytes(*reread);
  FUZZ_CHECK_MSG(canon_again.ok(), canon_again.error().ToString());
  FUZZ_CHECK_MSG(*canon_again == canon_bytes, "canon(canon(x)) != canon(x)");

  // The Writer's other outputs agree with CanonicalBytes.
  stguard::Writer writer;
  FUZZ_CHECK(writer.AddCheckpoint(*original).ok());
  const Result<std::string> header = writer.CanonicalHeader();
  FUZZ_CHECK(header.ok() && *header == reread->header_text());
  const Result<uint64_t> file_size = writer.FileSize();
  FUZZ_CHECK(file_size.ok() && *file_size == canon_bytes.size());
  ChunkSink sink;
  FUZZ_CHECK(writer.WriteTo(sink).ok());
  FUZZ_CHECK(sink.out == canon_bytes);

  // The canonical check: the output is canonical; the input is canonical exactly when it
  // equals its canonical form, and otherwise the first difference is where it says.
  const Result<stguard::CanonicalDiff> self = stguard::CompareToCanonical(*reread);
  FUZZ_CHECK(self.ok() && self->canonical && self->reason == stguard::CanonicalDiffReason::kNone);
  FUZZ_CHECK(self->canonical_header_len == reread->header_len());
  const Result<stguard::CanonicalDiff> diff = stguard::CompareToCanonical(*original);
  FUZZ_CHECK_MSG(diff.ok(), diff.error().ToString());
  const std::string_view in = input.text();
  FUZZ_CHECK_MSG(diff->canonical == (in == canon_bytes), stguard::DescribeCanonicalDiff(*diff));
  FUZZ_CHECK(diff->canonical_header_len == reread->header_len());
  if (!diff->canonical) {
    const size_t common = std::min(in.size(), canon_bytes.size());
    const size_t first = static_cast<size_t>(
        std::mismatch(in.begin(), in.begin() + common, canon_bytes.begin()).first - in.begin());
    FUZZ_CHECK_MSG(diff->offset == first, stguard::DescribeCanonicalDiff(*diff) +
                                              "; the first differing byte is " +
                                              std::to_string(first));
    FUZZ_CHECK(diff->reason != stguard::CanonicalDiffReason::kNone);
    FUZZ_CHECK_MSG(diff->reason_offset >= 8 && diff->reason_offset <= 8 + original->header_len(),
                   stguard::DescribeCanonicalDiff(*diff));
    FUZZ_CHECK(!stguard::CanonicalDiffReasonName(diff->reason).empty());
  }
  return 0;
}

// Structure-aware mutation (fuzz/safetensors_mutator.h): decode, change the tensor set and
// its text, re-encode; byte-level mutation for what does not decode.
STGUARD_FUZZ_CUSTOM_MUTATORS(stguard_fuzz::mutator::MutateSafetensors,
                             stguard_fuzz::mutator::CrossOverSafetensors)
