// SPDX-License-Identifier: Apache-2.0
// check --canonical: is a valid file byte-identical to its canonical form, and if not, why.
//
// Only headers are compared. The canonical header fixes every data offset, so a file whose
// header equals the canonical one has the canonical data buffer too; a file whose header
// differs already differs within its first 8 + N bytes. The data pages are never touched.
//
// The reason is the first difference met reading the actual header from its start:
// whitespace found by a byte scan (outside strings), or the first token that differs from
// the canonical header's token at the same position, whichever comes first; if all tokens
// match and there is no inner whitespace, what follows the closing brace decides between
// whitespace and padding.
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "write/canonical_header.h"
#include "stguard/json_tokenizer.h"
#include "stguard/reader.h"
#include "stguard/writer.h"

namespace stguard {
namespace {

constexpr uint64_t kHeaderStart = 8;  // the header's absolute offset in the file
constexpr size_t kNotFound = std::string_view::npos;

Error InternalError(const char* message) {
  Error error;
  error.code = ErrorCode::kInvalidArgument;
  error.message = message;
  return error;
}

bool IsJsonWhitespace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// StructureScan finds, in a valid header, the first whitespace byte before the end of the
// top-level value (outside strings) and the index just past that value.
struct StructureScan {
  size_t first_inner_whitespace = kNotFound;
  size_t value_end = kNotFound;
};

StructureScan ScanStructure(std::string_view text) {
  StructureScan scan;
  bool in_string = false;
  int depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped byte cannot end the string
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) {
        scan.value_end = i + 1;
        return scan;
      }
    } else if (IsJsonWhitespace(c) && scan.first_inner_whitespace == kNotFound) {
      scan.first_inner_whitespace = i;
    }
  }
  return scan;
}

struct TokenMismatch {
  bool found = false;
  uint64_t offset = 0;  // absolute offset of the actual token
  CanonicalDiffReason reason = CanonicalDiffReason::kNone;
};

// FindTokenMismatch walks both headers token by token and classifies the first pair that
// differs.
Result<TokenMismatch> FindTokenMismatch(std::string_view actual, std::string_view canonical,
                                        bool metadata_empty) {
  JsonTokenizer actual_tokens(actual, kHeaderStart);
  JsonTokenizer canonical_tokens(canonical, kHeaderStart);
  std::string last_field;  // the last key at depth 2: a tensor field or a metadata key
  std::string actual_buffer;
  std::string canonical_buffer;
  TokenMismatch mismatch;
  for (;;) {
    Token a;
    Token c;
    if (!actual_tokens.Next(&a) || !canonical_tokens.Next(&c)) {
      return InternalError("could not tokenize a header while comparing it to canonical form");
    }
    if (a.kind == TokenKind::kEndOfInput && c.kind == TokenKind::kEndOfInput) return mismatch;
    const uint32_t depth = actual_tokens.depth();
    if (a.kind == c.kind && a.text == c.text) {
      if (a.kind == TokenKind::kKey && depth == 2) {
        last_field = std::string(TokenText(a, &actual_buffer));
      }
      continue;
    }
    mismatch.found = true;
    mismatch.offset = a.offset;
    mismatch.reason = CanonicalDiffReason::kOrder;
    const bool both_strings = a.kind == c.kind && (a.kind == TokenKind::kKey ||
                                                   a.kind == TokenKind::kString);
    if (both_strings && TokenText(a, &actual_buffer) == TokenText(c, &canonical_buffer)) {
      mismatch.reason = CanonicalDiffReason::kEscapes;
    } else if (a.kind == TokenKind::kKey && depth == 1 && metadata_empty &&
               TokenText(a, &actual_buffer) == "__metadata__") {
      mismatch.reason = CanonicalDiffReason::kEmptyMetadata;
    } else if (a.kind == TokenKind::kNumber && c.kind == TokenKind::kNumber &&
               last_field == "data_offsets") {
      mismatch.reason = CanonicalDiffReason::kOffsets;
    }
    return mismatch;
  }
}

// CompareToCanonicalOrThrow is CompareToCanonical, letting std::bad_alloc through.
Result<CanonicalDiff> CompareToCanonicalOrThrow(const Checkpoint& checkpoint);

}  // namespace

std::string_view CanonicalDiffReasonName(CanonicalDiffReason reason) {
  switch (reason) {
    case CanonicalDiffReason::kNone: return "none";
    case CanonicalDiffReason::kOrder: return "order";
    case CanonicalDiffReason::kOffsets: return "offsets";
    case CanonicalDiffReason::kEscapes: return "escapes";
    case CanonicalDiffReason::kWhitespace: return "whitespace";
    case CanonicalDiffReason::kPadding: return "padding";
    case CanonicalDiffReason::kEmptyMetadata: return "empty-metadata";
  }
  return "unknown";
}

Result<CanonicalDiff> CompareToCanonical(const Checkpoint& checkpoint) {
  try {
    return CompareToCanonicalOrThrow(checkpoint);
  } catch (const std::bad_alloc&) {
    return Error{ErrorCode::kOutOfMemory, 0,
                 "out of memory while building the canonical header to compare"};
  }
}

namespace {

Result<CanonicalDiff> CompareToCanonicalOrThrow(const Checkpoint& checkpoint) {
  std::vector<PlanTensor> tensors;
  tensors.reserve(checkpoint.num_tensors());
  for (const TensorView& tensor : checkpoint.tensors()) {
    tensors.push_back(PlanTensor{tensor.name, tensor.dtype, tensor.shape, tensor.byte_size()});
  }
  std::vector<PlanMetadata> metadata;
  metadata.reserve(checkpoint.metadata().size());
  for (const MetadataEntry& entry : checkpoint.metadata()) {
    metadata.push_back(PlanMetadata{entry.key, entry.value});
  }
  Result<CanonicalPlan> plan = PlanCanonicalFile(tensors, metadata);
  if (!plan.ok()) return plan.error();

  CanonicalDiff diff;
  diff.canonical_header_len = plan->header.size();
  const std::string prefix = EncodeLengthPrefix(plan->header.size());
  // The file's own prefix is N encoded: compare it from N, not from the file's bytes.
  const std::string actual_prefix = EncodeLengthPrefix(checkpoint.header_len());
  const std::string_view actual = checkpoint.header_text();

  // The first differing byte: in the length prefix, else (N equal) in the header.
  uint64_t first = UINT64_MAX;
  for (size_t i = 0; i < 8; ++i) {
    if (actual_prefix[i] != prefix[i]) {
      first = i;
      break;
    }
  }
  if (first == UINT64_MAX) {
    for (size_t i = 0; i < actual.size(); ++i) {
      if (actual[i] != plan->header[i]) {
        first = kHeaderStart + i;
        break;
      }
    }
  }
  if (first == UINT64_MAX) return diff;  // same header, so same offsets, so same file
  diff.canonical = false;
  diff.offset = first;

  const std::string_view canonical_text(plan->header.data(), plan->text_len);
  const StructureScan scan = ScanStructure(actual);
  if (scan.value_end == kNotFound) {
    return InternalError("a validated header has no end while comparing it to canonical form");
  }
  Result<TokenMismatch> mismatch =
      FindTokenMismatch(actual, canonical_text, checkpoint.metadata().empty());
  if (!mismatch.ok()) return mismatch.error();

  const bool has_whitespace = scan.first_inner_whitespace != kNotFound;
  const uint64_t whitespace_offset = kHeaderStart + scan.first_inner_whitespace;
  if (has_whitespace && (!mismatch->found || whitespace_offset < mismatch->offset)) {
    diff.reason = CanonicalDiffReason::kWhitespace;
    diff.reason_offset = whitespace_offset;
    return diff;
  }
  if (mismatch->found) {
    diff.reason = mismatch->reason;
    diff.reason_offset = mismatch->offset;
    return diff;
  }
  // The JSON text is the canonical text; only what follows it differs.
  const std::string_view tail = actual.substr(scan.value_end);
  const size_t first_non_space = tail.find_first_not_of(' ');
  if (first_non_space != kNotFound) {
    diff.reason = CanonicalDiffReason::kWhitespace;
    diff.reason_offset = kHeaderStart + scan.value_end + first_non_space;
    return diff;
  }
  const size_t canonical_pad = plan->header.size() - plan->text_len;
  if (tail.size() == canonical_pad) {
    return InternalError("headers differ but no difference was classified");
  }
  diff.reason = CanonicalDiffReason::kPadding;
  diff.reason_offset =
      kHeaderStart + scan.value_end + (tail.size() < canonical_pad ? tail.size() : canonical_pad);
  return diff;
}

}  // namespace

std::string DescribeCanonicalDiff(const CanonicalDiff& diff) {
  if (diff.canonical) return "canonical";
  std::string out = "not canonical: first difference at byte ";
  out += std::to_string(diff.offset);
  out += " (";
  out += CanonicalDiffReasonName(diff.reason);
  out += " at byte ";
  out += std::to_string(diff.reason_offset);
  out += ")";
  return out;
}

}  // namespace stguard
