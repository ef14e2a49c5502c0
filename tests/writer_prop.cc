// SPDX-License-Identifier: Apache-2.0
// Properties of the canonical writer against the strict reader. CI runs each with
// RC_PARAMS=max_success=1000 (tests/CMakeLists.txt).
//
// Tensor sets: 0-64 tensors of every dtype, ranks 0-5 with zero dims, names from the whole
// Unicode range (empty names, quotes, backslashes, control characters, DEL, surrogate
// neighbours, supplementary planes), 0-8 metadata entries. See support/tensor_set_gen.h.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>
#include <string>

#include "stguard/convert.h"
#include "stguard/reader.h"
#include "stguard/writer.h"
#include "support/tensor_set.h"
#include "support/tensor_set_gen.h"
#include "write/string_sink.h"

namespace stguard {
namespace {

using testing::DescribeDifference;
using testing::FromCheckpoint;
using testing::GenTensorSet;
using testing::TensorSet;

std::string MustWrite(const TensorSet& set) {
  Result<std::string> bytes = testing::WriteSet(set);
  RC_ASSERT(bytes.ok());
  return *bytes;
}

// CopyExact copies bytes into a heap block of exactly their size, so that AddressSanitizer
// sees any read one past the end.
std::unique_ptr<char[]> CopyExact(std::string_view bytes) {
  std::unique_ptr<char[]> copy(new char[bytes.size() + (bytes.empty() ? 1 : 0)]);
  std::memcpy(copy.get(), bytes.data(), bytes.size());
  return copy;
}

// (1) read(write(T)) == T.
RC_GTEST_PROP(WriterProp, ReadOfWriteGivesBackTheSameTensors, ()) {
  const TensorSet set = *GenTensorSet();
  RC_CLASSIFY(set.tensors.empty(), "no tensors");
  RC_CLASSIFY(set.metadata.empty(), "no metadata");
  RC_CLASSIFY(set.tensors.size() >= 32, "32-64 tensors");
  RC_CLASSIFY(std::any_of(set.tensors.begin(), set.tensors.end(),
                          [](const testing::TestTensor& t) { return t.shape.size() == 5; }),
              "a rank-5 tensor");
  RC_CLASSIFY(std::any_of(set.tensors.begin(), set.tensors.end(),
                          [](const testing::TestTensor& t) { return t.data.empty(); }),
              "an empty tensor");
  const std::string written = MustWrite(set);
  RC_ASSERT(written.size() >= 16u);
  Result<Checkpoint> checkpoint = Checkpoint::FromBytes(written);
  RC_ASSERT(checkpoint.ok());
  RC_ASSERT(DescribeDifference(set, *checkpoint) == "");
  RC_ASSERT(checkpoint->header_len() % 8 == 0);
  RC_ASSERT(checkpoint->has_metadata_object() == !set.metadata.empty());
}

// (2) write(read(write(T))) == write(T): canon of a canonical file is itself.
RC_GTEST_PROP(WriterProp, WriteIsAFixedPoint, ()) {
  const TensorSet set = *GenTensorSet();
  const std::string written = MustWrite(set);
  Result<Checkpoint> checkpoint = Checkpoint::FromBytes(written);
  RC_ASSERT(checkpoint.ok());
  Result<std::string> again = CanonicalBytes(*checkpoint);
  RC_ASSERT(again.ok());
  RC_ASSERT(*again == written);
  // Through a Writer fed from plain copies too, not only from the checkpoint's views.
  RC_ASSERT(MustWrite(FromCheckpoint(*checkpoint)) == written);
}

// (3) The order in which tensors and metadata are given does not matter.
RC_GTEST_PROP(WriterProp, OutputDoesNotDependOnInputOrder, ()) {
  const TensorSet set = *GenTensorSet();
  TensorSet shuffled = set;
  std::mt19937_64 random(*rc::gen::arbitrary<uint64_t>());
  std::shuffle(shuffled.tensors.begin(), shuffled.tensors.end(), random);
  std::shuffle(shuffled.metadata.begin(), shuffled.metadata.end(), random);
  RC_ASSERT(MustWrite(shuffled) == MustWrite(set));
}

// (4) Every written file passes check --canonical.
RC_GTEST_PROP(WriterProp, EveryWrittenFileIsCanonical, ()) {
  const TensorSet set = *GenTensorSet();
  const std::string written = MustWrite(set);
  Result<Checkpoint> checkpoint = Checkpoint::FromBytes(written);
  RC_ASSERT(checkpoint.ok());
  Result<CanonicalDiff> diff = CompareToCanonical(*checkpoint);
  RC_ASSERT(diff.ok());
  RC_ASSERT(diff->canonical);
  RC_ASSERT(diff->canonical_header_len == checkpoint->header_len());
}

// (4b) ... and valid files that are not canonical are told apart: extra padding, and
// whitespace after the opening brace.
RC_GTEST_PROP(WriterProp, NonCanonicalVariantsAreReported, ()) {
  const TensorSet set = *GenTensorSet(8, 2);
  const std::string written = MustWrite(set);
  Result<Checkpoint> original = Checkpoint::FromBytes(written);
  RC_ASSERT(original.ok());
  const uint64_t n = original->header_len();
  const std::string data = written.substr(8 + n);
  const std::string text = written.substr(8, n);

  const auto diff_of = [](const std::string& file) {
    Result<Checkpoint> checkpoint = Checkpoint::FromBytes(file);
    RC_ASSERT(checkpoint.ok());
    Result<CanonicalDiff> diff = CompareToCanonical(*checkpoint);
    RC_ASSERT(diff.ok());
    return *diff;
  };
  const auto with_header = [&data](const std::string& new_header) {
    std::string file;
    for (int i = 0; i < 8; ++i) {
      file.push_back(static_cast<char>((new_header.size() >> (8 * i)) & 0xFF));
    }
    return file + new_header + data;
  };

  const CanonicalDiff padded = diff_of(with_header(text + std::string(8, ' ')));
  RC_ASSERT(!padded.canonical);
  RC_ASSERT(padded.reason == CanonicalDiffReason::kPadding);
  RC_ASSERT(padded.offset < 8u);

  const char space = *rc::gen::element(' ', '\t', '\n', '\r');
  const CanonicalDiff spaced = diff_of(with_header("{" + std::string(1, space) + text.substr(1)));
  RC_ASSERT(!spaced.canonical);
  RC_ASSERT(spaced.reason == CanonicalDiffReason::kWhitespace);
  RC_ASSERT(spaced.reason_offset == 9u);
}

// (4c) The streamed canonical writer (WriteCanonical and WriteCanonicalFile, which never
// build the header whole) gives the Writer's bytes, for canonical and non-canonical input.
RC_GTEST_PROP(WriterProp, StreamedCanonicalFormIsTheWritersBytes, ()) {
  const TensorSet set = *GenTensorSet();
  const std::string written = MustWrite(set);
  Result<Checkpoint> original = Checkpoint::FromBytes(written);
  RC_ASSERT(original.ok());
  const uint64_t n = original->header_len();
  const char space = *rc::gen::element(' ', '\t', '\n', '\r');
  std::string header = "{" + std::string(1, space) + written.substr(9, n - 1) + "   ";
  std::string file;
  for (int i = 0; i < 8; ++i) file.push_back(static_cast<char>((header.size() >> (8 * i)) & 0xFF));
  file += header + written.substr(8 + n);
  for (const std::string* input : std::initializer_list<const std::string*>{&written, &file}) {
    Result<Checkpoint> checkpoint = Checkpoint::FromBytes(*input);
    RC_ASSERT(checkpoint.ok());
    Result<std::string> expected = CanonicalBytes(*checkpoint);
    RC_ASSERT(expected.ok());
    RC_ASSERT(*expected == written);
    std::string streamed;
    StringSink sink(&streamed);
    RC_ASSERT(WriteCanonical(*checkpoint, sink).ok());
    RC_ASSERT(streamed == written);
  }
}

// (4d) The streamed conversion (WriteConverted, WriteConvertedFile) gives the bytes of
// AddConvertedCheckpoint and a Writer, for every target.
RC_GTEST_PROP(WriterProp, StreamedConversionIsTheWritersBytes, ()) {
  const TensorSet set = *GenTensorSet();
  const std::string written = MustWrite(set);
  Result<Checkpoint> checkpoint = Checkpoint::FromBytes(written);
  RC_ASSERT(checkpoint.ok());
  const Dtype target = *rc::gen::element(Dtype::kF32, Dtype::kF16, Dtype::kBF16);
  Writer writer;
  size_t expected_converted = 0;
  RC_ASSERT(AddConvertedCheckpoint(*checkpoint, target, &writer, &expected_converted).ok());
  Result<std::string> expected = writer.WriteToString();
  RC_ASSERT(expected.ok());
  std::string streamed;
  StringSink sink(&streamed);
  size_t converted = 0;
  RC_ASSERT(WriteConverted(*checkpoint, target, sink, &converted).ok());
  RC_ASSERT(streamed == *expected);
  RC_ASSERT(converted == expected_converted);
  RC_ASSERT(WriteConverted(*checkpoint, Dtype::kI8, sink).code == ErrorCode::kInvalidArgument);
}

// (5) One flipped, inserted or deleted byte: rejected with an error offset inside the
// file, or accepted as a file that reads back consistently. Never a crash (ASan/UBSan
// builds run this too).
RC_GTEST_PROP(WriterProp, OneByteMutationsAreRejectedOrConsistent, ()) {
  const TensorSet set = *GenTensorSet(16, 4);
  const std::string written = MustWrite(set);
  std::string mutated = written;
  // Drawn at full size: RapidCheck would otherwise keep early cases near offset 0.
  const auto full = [](auto gen) { return *rc::gen::resize(testing::kFullSize, gen); };
  const int kind = full(rc::gen::inRange(0, 3));
  if (kind == 0) {
    const size_t at = full(rc::gen::inRange<size_t>(0, mutated.size()));
    mutated[at] = static_cast<char>(mutated[at] ^ full(rc::gen::inRange(1, 256)));
    RC_TAG("flip");
  } else if (kind == 1) {
    const size_t at = full(rc::gen::inRange<size_t>(0, mutated.size() + 1));
    mutated.insert(at, 1, static_cast<char>(full(rc::gen::inRange(0, 256))));
    RC_TAG("insert");
  } else {
    const size_t at = full(rc::gen::inRange<size_t>(0, mutated.size()));
    mutated.erase(at, 1);
    RC_TAG("delete");
  }

  const std::unique_ptr<char[]> exact = CopyExact(mutated);
  const std::string_view bytes(exact.get(), mutated.size());
  Result<Checkpoint> checkpoint = Checkpoint::FromBytes(bytes);
  if (!checkpoint.ok()) {
    RC_TAG("rejected");
    RC_ASSERT(checkpoint.error().offset <= bytes.size());
    return;
  }
  RC_TAG("accepted");
  // Consistent: the tensors tile the data buffer inside the file ...
  uint64_t total = 0;
  for (const TensorView& tensor : checkpoint->tensors()) {
    RC_ASSERT(tensor.data.data() >= reinterpret_cast<const std::byte*>(bytes.data()));
    RC_ASSERT(tensor.data.data() + tensor.data.size() <=
              reinterpret_cast<const std::byte*>(bytes.data() + bytes.size()));
    total += tensor.data.size();
  }
  RC_ASSERT(total == checkpoint->data().size());
  // ... and rewriting it gives a file that reads back as the same tensors and metadata.
  Result<std::string> canonical = CanonicalBytes(*checkpoint);
  RC_ASSERT(canonical.ok());
  Result<Checkpoint> reread = Checkpoint::FromBytes(*canonical);
  RC_ASSERT(reread.ok());
  RC_ASSERT(DescribeDifference(FromCheckpoint(*checkpoint), *reread) == "");
  Result<CanonicalDiff> diff = CompareToCanonical(*checkpoint);
  RC_ASSERT(diff.ok());
  RC_ASSERT(diff->canonical == (*canonical == mutated));
}

// Refusals write nothing: a set with one bad entry added is refused with the right code
// before the first byte reaches the sink.
RC_GTEST_PROP(WriterProp, RefusedSetsWriteNothing, ()) {
  TensorSet set = *GenTensorSet(8, 3);
  const int flaw = *rc::gen::inRange(0, 5);
  ErrorCode expected = ErrorCode::kOk;
  testing::TestTensor bad;
  bad.dtype = Dtype::kU8;
  bad.shape = {1};
  bad.data = "x";
  switch (flaw) {
    case 0:
      bad.name = "__metadata__";
      expected = ErrorCode::kInvalidTensorName;
      break;
    case 1:
      RC_PRE(!set.tensors.empty());
      bad = set.tensors[*rc::gen::inRange<size_t>(0, set.tensors.size())];
      bad.dtype = *rc::gen::elementOf(kAllDtypes);
      bad.shape = {0};
      bad.data.clear();
      expected = ErrorCode::kDuplicateName;
      break;
    case 2:
      bad.name = *rc::gen::element<std::string>("\xc0\xaf", "\xed\xa0\x80", "\xf8\x88\x80\x80",
                                                "x\x80", "\xe2\x82");
      expected = ErrorCode::kInvalidArgument;
      break;
    case 3:
      bad.name = "\x01 unique-for-mismatch";
      bad.data = "xy";  // shape [1] of U8 is one byte
      expected = ErrorCode::kInvalidArgument;
      break;
    case 4:
      bad.name = "\x01 unique-for-misaligned";
      bad.dtype = *rc::gen::element(Dtype::kF4, Dtype::kF6_E2M3, Dtype::kF6_E3M2);
      bad.shape = {1};
      bad.data.clear();
      expected = ErrorCode::kMisalignedSlice;
      break;
  }
  std::mt19937_64 random(*rc::gen::arbitrary<uint64_t>());
  set.tensors.insert(set.tensors.begin() + static_cast<std::ptrdiff_t>(
                                               random() % (set.tensors.size() + 1)),
                     bad);

  class CountingSink final : public ByteSink {
   public:
    Error Write(std::span<const std::byte> bytes) override {
      count += bytes.size();
      return Error{};
    }
    size_t count = 0;
  } sink;
  Writer writer;
  const Error added = testing::AddToWriter(set, &writer);
  const Error written = writer.WriteTo(sink);
  RC_ASSERT(written.code == expected);
  // Entry-level flaws are reported by Add* already; duplicates only when writing.
  RC_ASSERT(added.code == (flaw == 1 ? ErrorCode::kOk : expected));
  RC_ASSERT(sink.count == 0u);
}

}  // namespace
}  // namespace stguard
