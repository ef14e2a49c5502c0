// SPDX-License-Identifier: Apache-2.0
// fuzz_writer: random tensor sets through the canonical Writer and back through the reader.
//
// FuzzedDataProvider turns the input into at most 16 tensors (rank <= 5, <= 64 KiB of data
// in all, names from arbitrary UTF-8, invalid UTF-8, "__metadata__" and repeats) and at
// most 8 metadata entries, added as spans or as streaming producers (some of which write
// too few or too many bytes). A plain model of writer.h's POLICY block predicts, for each
// Add* call and for the write, success or the error codes allowed; then:
// - a refused set is refused with the right code, everywhere (WriteTo, WriteToString,
//   CanonicalHeader, FileSize), and nothing at all reaches the sink;
// - an accepted set is written, read back by the reader (and the reference checker), and
//   holds exactly the tensors, bytes and metadata given, in canonical layout, as a fixed
//   point of CanonicalBytes, byte-identical however it is written and however often.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "checkpoint_checks.h"
#include "fuzz_support.h"
#include "reference_checker.h"
#include "stguard/dtype.h"
#include "stguard/reader.h"
#include "stguard/writer.h"

namespace {

using stguard::Dtype;
using stguard::Error;
using stguard::ErrorCode;
using stguard_fuzz::BytesOf;

constexpr size_t kMaxTensors = 16;
constexpr size_t kMaxRank = 5;
constexpr size_t kMaxDataBytes = 64 * 1024;
constexpr size_t kMaxMetadata = 8;

enum class Source : uint8_t {
  kSpan,           // AddTensor(name, dtype, shape, data span)
  kProducer,       // a producer that writes exactly byte_len bytes, in chunks
  kShortProducer,  // a producer that writes one byte too few
  kLongProducer,   // a producer that writes one byte too many
};

struct Entry {
  std::string name;
  Dtype dtype = Dtype::kU8;
  std::vector<uint64_t> shape;
  std::string data;        // the bytes given (span) or streamed (producer)
  uint64_t byte_len = 0;   // the count declared to the writer
  Source source = Source::kSpan;
  size_t chunk = 1;        // producer chunk size
  std::set<ErrorCode> allowed;  // empty: AddTensor must succeed
};

struct Meta {
  std::string key;
  std::string value;
  bool valid = true;
};

constexpr uint32_t kSpecialCodePoints[] = {'"', '\\', '/', 0x7F, ' '};

// MakeText returns a string: usually valid UTF-8 from code points of every length (ASCII
// controls, quotes and backslashes included), sometimes raw bytes (maybe invalid).
std::string MakeText(FuzzedDataProvider& fdp) {
  if (fdp.ConsumeIntegralInRange<int>(0, 7) == 0) return fdp.ConsumeRandomLengthString(24);
  std::string text;
  const size_t length = fdp.ConsumeIntegralInRange<size_t>(0, 12);
  for (size_t i = 0; i < length; ++i) {
    uint32_t cp;
    switch (fdp.ConsumeIntegralInRange<int>(0, 7)) {
      case 0: cp = fdp.ConsumeIntegralInRange<uint32_t>(0, 0x1F); break;        // controls
      case 1: cp = fdp.PickValueInArray(kSpecialCodePoints); break;
      case 2: cp = fdp.ConsumeIntegralInRange<uint32_t>(0x80, 0x7FF); break;
      case 3: cp = fdp.ConsumeIntegralInRange<uint32_t>(0x800, 0xD7FF); break;
      case 4: cp = fdp.ConsumeIntegralInRange<uint32_t>(0xE000, 0xFFFF); break;
      case 5: cp = fdp.ConsumeIntegralInRange<uint32_t>(0x10000, 0x10FFFF); break;
      default: cp = fdp.ConsumeIntegralInRange<uint32_t>('a', 'z'); break;
    }
    stguard_fuzz::AppendUtf8(cp, &text);
  }
  return text;
}

std::string MakeName(FuzzedDataProvider& fdp, const std::vector<Entry>& entries) {
  switch (fdp.ConsumeIntegralInRange<int>(0, 15)) {
    case 0:
      if (!entries.empty()) {
        return entries[fdp.ConsumeIntegralInRange<size_t>(0, entries.size() - 1)].name;
      }
      return "repeat";
    case 1:
      return "__metadata__";
    default:
      return MakeText(fdp);
  }
}

uint64_t MakeDim(FuzzedDataProvider& fdp) {
  switch (fdp.ConsumeIntegralInRange<int>(0, 15)) {
    case 0: return uint64_t{1} << fdp.ConsumeIntegralInRange<int>(20, 63);  // overflow bait
    case 1: return fdp.ConsumeIntegral<uint64_t>();
    case 2: return 0;
    default: return fdp.ConsumeIntegralInRange<uint64_t>(1, 8);
  }
}

// ExpectedSize models the size rule: the running product of the dims must fit in 64 bits
// at every step, and so must the bit count, which must be whole bytes.
ErrorCode ExpectedSize(Dtype dtype, const std::vector<uint64_t>& shape, uint64_t* out) {
  uint64_t count = 1;
  for (uint64_t dim : shape) {
    if (__builtin_mul_overflow(count, dim, &count)) return ErrorCode::kValidationOverflow;
  }
  uint64_t bits = 0;
  const uint64_t element_bits = stguard_fuzz::reference::DtypeBits(stguard::DtypeName(dtype));
  if (__builtin_mul_overflow(count, element_bits, &bits)) return ErrorCode::kValidationOverflow;
  if (bits % 8 != 0) return ErrorCode::kMisalignedSlice;
  *out = bits / 8;
  return ErrorCode::kOk;
}

std::span<const std::byte> AsBytes(std::string_view text) {
  return std::as_bytes(std::span<const char>(text.data(), text.size()));
}

stguard::TensorProducer MakeProducer(const Entry& entry) {
  return [&entry](stguard::ByteSink& sink) -> Error {
    std::string_view bytes = entry.data;
    std::string longer;
    if (entry.source == Source::kShortProducer) bytes.remove_suffix(1);
    if (entry.source == Source::kLongProducer) {
      longer = entry.data + "!";
      bytes = longer;
    }
    for (size_t at = 0; at < bytes.size(); at += entry.chunk) {
      const Error error = sink.Write(AsBytes(bytes.substr(at, entry.chunk)));
      if (!error.ok()) return error;
    }
    return {};
  };
}

class ChunkSink final : public stguard::ByteSink {
 public:
  Error Write(std::span<const std::byte> bytes) override {
    out.append(BytesOf(bytes));
    return {};
  }
  std::string out;
};

std::string CodeName(ErrorCode code) { return std::string(stguard::ErrorCodeName(code)); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const stguard_fuzz::ExactCopy input(data, size);
  FuzzedDataProvider fdp(input.data(), input.size());

  // Build the set. `entries` never reallocates: producers hold references into it.
  std::vector<Entry> entries;
  entries.reserve(kMaxTensors);
  size_t data_budget = kMaxDataBytes;
  const size_t num_tensors = fdp.ConsumeIntegralInRange<size_t>(0, kMaxTensors);
  for (size_t i = 0; i < num_tensors; ++i) {
    Entry entry;
    entry.name = MakeName(fdp, entries);
    entry.dtype = stguard::kAllDtypes[fdp.ConsumeIntegralInRange<size_t>(0, stguard::kNumDtypes - 1)];
    const size_t rank = fdp.ConsumeIntegralInRange<size_t>(0, kMaxRank);
    for (size_t d = 0; d < rank; ++d) entry.shape.push_back(MakeDim(fdp));
    uint64_t expected = 0;
    const ErrorCode size_code = ExpectedSize(entry.dtype, entry.shape, &expected);
    // Usually the right byte count; sometimes one off; and never above the budget.
    uint64_t len = expected;
    const int skew = fdp.ConsumeIntegralInRange<int>(0, 15);
    if (skew == 0) len = expected + 1;
    if (skew == 1 && expected > 0) len = expected - 1;
    // The fallback length is capped by the budget too: the budget is unsigned, and a
    // length above it would wrap it and let the next tensor ask for gigabytes
    // (corpus/fuzz_writer/regress_budget_wrap, 65,676 bytes).
    if (size_code != ErrorCode::kOk || len > data_budget) {
      len = fdp.ConsumeIntegralInRange<size_t>(0, std::min<size_t>(16, data_budget));
    }
    FUZZ_CHECK(len <= data_budget);  // the harness's own bound, checked before it is used
    data_budget -= len;
    entry.data = fdp.ConsumeBytesAsString(len);
    const char fill = static_cast<char>(fdp.ConsumeIntegral<uint8_t>());
    entry.data.resize(len, fill);
    entry.byte_len = len;
    entry.source = fdp.PickValueInArray(
        {Source::kSpan, Source::kSpan, Source::kProducer, Source::kShortProducer,
         Source::kLongProducer});
    if (entry.source == Source::kShortProducer && entry.data.empty()) entry.source = Source::kProducer;
    entry.chunk = fdp.ConsumeIntegralInRange<size_t>(1, 4096);

    // The model: every rule the entry breaks, any of whose codes AddTensor may return.
    if (entry.name == "__metadata__") entry.allowed.insert(ErrorCode::kInvalidTensorName);
    if (!stguard_fuzz::reference::IsValidUtf8(entry.name)) {
      entry.allowed.insert(ErrorCode::kInvalidArgument);
    }
    if (size_code != ErrorCode::kOk) {
      entry.allowed.insert(size_code);
    } else if (entry.byte_len != expected) {
      entry.allowed.insert(ErrorCode::kInvalidArgument);
    }
    entries.push_back(std::move(entry));
  }
  std::vector<Meta> metadata;
  const size_t num_metadata = fdp.ConsumeIntegralInRange<size_t>(0, kMaxMetadata);
  for (size_t i = 0; i < num_metadata; ++i) {
    Meta meta;
    meta.key = fdp.ConsumeBool() && !metadata.empty() ? metadata.back().key : MakeText(fdp);
    meta.value = MakeText(fdp);
    meta.valid = stguard_fuzz::reference::IsValidUtf8(meta.key) &&
                 stguard_fuzz::reference::IsValidUtf8(meta.value);
    metadata.push_back(std::move(meta));
  }

  // Add everything; tensors and metadata interleaved in an order the input picks.
  stguard::Writer writer;
  Error first_error;
  std::set<std::string> names;
  std::set<std::string> keys;
  bool duplicate = false;
  bool bad_producer = false;
  size_t next_tensor = 0;
  size_t next_meta = 0;
  while (next_tensor < entries.size() || next_meta < metadata.size()) {
    const bool take_tensor =
        next_meta == metadata.size() || (next_tensor < entries.size() && fdp.ConsumeBool());
    if (take_tensor) {
      const Entry& entry = entries[next_tensor++];
      Error error;
      if (entry.source == Source::kSpan) {
        error = writer.AddTensor(entry.name, entry.dtype, entry.shape, AsBytes(entry.data));
      } else {
        error = writer.AddTensor(entry.name, entry.dtype, entry.shape, entry.byte_len,
                                 MakeProducer(entry));
      }
      if (entry.allowed.empty()) {
        FUZZ_CHECK_MSG(error.ok(), "AddTensor refused a valid tensor: " + error.ToString());
        duplicate = duplicate || !names.insert(entry.name).second;
        bad_producer = bad_producer || entry.source == Source::kShortProducer ||
                       entry.source == Source::kLongProducer;
      } else {
        FUZZ_CHECK_MSG(entry.allowed.count(error.code) == 1,
                       "AddTensor(" + stguard_fuzz::Hex(entry.name) + ") returned " +
                           error.ToString());
        FUZZ_CHECK(error.offset == 0);
        if (first_error.ok()) first_error = error;
      }
    } else {
      const Meta& meta = metadata[next_meta++];
      const Error error = writer.AddMetadata(meta.key, meta.value);
      if (meta.valid) {
        FUZZ_CHECK_MSG(error.ok(), "AddMetadata refused a valid entry: " + error.ToString());
        duplicate = duplicate || !keys.insert(meta.key).second;
      } else {
        FUZZ_CHECK_MSG(error.code == ErrorCode::kInvalidArgument, error.ToString());
        if (first_error.ok()) first_error = error;
      }
    }
  }

  // The refusals: the first Add* error sticks; then duplicates; nothing reaches the sink.
  ErrorCode expected_plan = ErrorCode::kOk;
  if (!first_error.ok()) {
    expected_plan = first_error.code;
  } else if (duplicate) {
    expected_plan = ErrorCode::kDuplicateName;
  }
  const stguard::Result<std::string> header = writer.CanonicalHeader();
  const stguard::Result<uint64_t> file_size = writer.FileSize();
  ChunkSink sink;
  const Error write_error = writer.WriteTo(sink);
  const stguard::Result<std::string> file = writer.WriteToString();
  if (expected_plan != ErrorCode::kOk) {
    for (const Error* error : {&header.error(), &file_size.error(), &write_error, &file.error()}) {
      FUZZ_CHECK_MSG(error->code == expected_plan,
                     "expected " + CodeName(expected_plan) + ", got " + error->ToString());
    }
    FUZZ_CHECK_MSG(sink.out.empty(), "a refused set wrote " + std::to_string(sink.out.size()) +
                                         " bytes");
    stguard_fuzz::CountExecution(false);
    return 0;
  }
  FUZZ_CHECK_MSG(header.ok(), header.error().ToString());
  FUZZ_CHECK_MSG(file_size.ok(), file_size.error().ToString());
  if (bad_producer) {
    FUZZ_CHECK_MSG(write_error.code == ErrorCode::kInvalidArgument, write_error.ToString());
    FUZZ_CHECK_MSG(file.error().code == ErrorCode::kInvalidArgument, file.error().ToString());
    stguard_fuzz::CountExecution(false);
    return 0;
  }
  FUZZ_CHECK_MSG(write_error.ok(), write_error.ToString());
  FUZZ_CHECK_MSG(file.ok(), file.error().ToString());
  stguard_fuzz::CountExecution(true);  // the full write path and the read-back checks
  const std::string& bytes = *file;
  FUZZ_CHECK(sink.out == bytes);
  FUZZ_CHECK(*file_size == bytes.size());

  // Read it back: everything given is there, as given.
  const stguard::Result<stguard::Checkpoint> reread = stguard::Checkpoint::FromBytes(AsBytes(bytes));
  FUZZ_CHECK_MSG(reread.ok(), "written file rejected: " + reread.error().ToString());
  stguard_fuzz::CheckInvariants(*reread, AsBytes(bytes));
  stguard_fuzz::CheckAgreesWithReference(reread, stguard_fuzz::reference::CheckFile(bytes));
  stguard_fuzz::CheckCanonicalLayout(*reread);
  FUZZ_CHECK(reread->header_text() == *header);
  FUZZ_CHECK(reread->num_tensors() == entries.size());
  for (const Entry& entry : entries) {
    const stguard::TensorView* t = reread->Find(entry.name);
    FUZZ_CHECK_MSG(t != nullptr, "tensor " + stguard_fuzz::Hex(entry.name) + " missing");
    FUZZ_CHECK(t->dtype == entry.dtype);
    FUZZ_CHECK(std::equal(t->shape.begin(), t->shape.end(), entry.shape.begin(), entry.shape.end()));
    FUZZ_CHECK(BytesOf(t->data) == entry.data);
  }
  std::vector<std::pair<std::string, std::string>> want;
  for (const Meta& meta : metadata) want.emplace_back(meta.key, meta.value);
  std::sort(want.begin(), want.end());
  FUZZ_CHECK(reread->metadata().size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    FUZZ_CHECK(reread->metadata()[i].key == want[i].first);
    FUZZ_CHECK(reread->metadata()[i].value == want[i].second);
  }

  // A fixed point of CanonicalBytes, canonical by CompareToCanonical, and the same again
  // on a second write.
  const stguard::Result<std::string> canon = stguard::CanonicalBytes(*reread);
  FUZZ_CHECK(canon.ok() && *canon == bytes);
  const stguard::Result<stguard::CanonicalDiff> diff = stguard::CompareToCanonical(*reread);
  FUZZ_CHECK(diff.ok() && diff->canonical);
  const stguard::Result<std::string> second = writer.WriteToString();
  FUZZ_CHECK(second.ok() && *second == bytes);
  return 0;
}
