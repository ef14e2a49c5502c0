// SPDX-License-Identifier: Apache-2.0
// fuzz_source: arbitrary bytes checked by ranges (CheckSource over a byte source).
//
// 1. Through a MemorySource, the verdict (code and offset) is the one the format's
//    whole-bytes reader gives for the same bytes (SniffFormat, then Checkpoint::FromBytes,
//    GgufFile::FromBytes, ParseNpy, ParseNpz or JudgePickleBytes).
// 2. Through a source that fails from an input-chosen read on (the input's last byte picks
//    it), the result is kIoError when that read was reached, and otherwise the verdict of 1:
//    a failed read is never taken for data, never crashes.
// 3. Through a remote source, the verdict of 1, but for the checks a remote read skips
//    (GGUF padding; a PyTorch ZIP's storage records' local headers, the tiling around
//    them and their CRC-32s; an npz's members' CRC-32s and deflated streams past their
//    .npy headers), which its notes name.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "fuzz_support.h"
#include "gguf_mutator.h"
#include "npy_mutator.h"
#include "npz_mutator.h"
#include "safetensors_mutator.h"
#include "stguard/byte_source.h"
#include "stguard/file_verdict.h"
#include "stguard/gguf.h"
#include "stguard/npy.h"
#include "stguard/npz.h"
#include "stguard/reader.h"
#include "stguard/sniff.h"
#include "stguard/verdict.h"
#include "zip_mutator.h"

namespace {

// CountingSource forwards to `inner`, counts reads, fails from read `fail_from` on (0:
// never) and says it is remote when asked to.
class CountingSource final : public stguard::ByteSource {
 public:
  CountingSource(const stguard::ByteSource& inner, size_t fail_from, bool remote)
      : inner_(inner), fail_from_(fail_from), remote_(remote) {}
  uint64_t size() const override { return inner_.size(); }
  bool remote() const override { return remote_; }
  stguard::Error ReadAt(uint64_t offset, std::span<std::byte> out) const override {
    ++reads_;
    if (fail_from_ != 0 && reads_ >= fail_from_) {
      return stguard::Error{stguard::ErrorCode::kIoError, offset, "injected failure"};
    }
    return inner_.ReadAt(offset, out);
  }
  size_t reads() const { return reads_; }

 private:
  const stguard::ByteSource& inner_;
  size_t fail_from_;
  bool remote_;
  mutable size_t reads_ = 0;
};

// WholeBytesError is the error the format's reader over all the bytes gives.
stguard::Error WholeBytesError(std::span<const std::byte> bytes, stguard::Format format) {
  using stguard::Format;
  switch (format) {
    case Format::kGguf: {
      auto file = stguard::gguf::GgufFile::FromBytes(bytes);
      return file.ok() ? stguard::Error{} : file.error();
    }
    case Format::kNpy: {
      auto info = stguard::ParseNpy(bytes, bytes.size());
      return info.ok() ? stguard::Error{} : info.error();
    }
    case Format::kNpz: {
      auto info = stguard::ParseNpz(bytes);
      return info.ok() ? stguard::Error{} : info.error();
    }
    case Format::kPytorchZip: case Format::kPytorchLegacy: case Format::kPickle:
    case Format::kTar: {
      const stguard::PickleFileReport report = stguard::JudgePickleBytes(bytes);
      return stguard::ResultForPickle("input", report).error;
    }
    case Format::kZip:
      return stguard::Error{stguard::ErrorCode::kZipUnexpectedRecord, 0, "other archive"};
    default: {
      auto checkpoint = stguard::Checkpoint::FromBytes(bytes);
      return checkpoint.ok() ? stguard::Error{} : checkpoint.error();
    }
  }
}

// SkippedByRemoteZip says whether a ZIP's local error can come from a check a remote read
// skips (a PyTorch storage record's local header, the tiling around it, its CRC-32; an npz
// member's CRC-32, a deflated member's stream past its .npy header) and the remote
// result's note says those were skipped.
bool SkippedByRemoteZip(const stguard::CheckResult& local, const stguard::CheckResult& far) {
  using stguard::ErrorCode;
  const ErrorCode code = local.error.code;
  const char* skipped = nullptr;  // what the note names
  if (local.format == stguard::Format::kPytorchZip) {
    if (code != ErrorCode::kZipFormat && code != ErrorCode::kZipLayout &&
        code != ErrorCode::kZipHeaderMismatch && code != ErrorCode::kZipChecksum) {
      return false;
    }
    skipped = "storage record";
  } else if (local.format == stguard::Format::kNpz) {
    if (code != ErrorCode::kZipChecksum && code != ErrorCode::kDeflateData) return false;
    skipped = "CRC-32s of";
  } else {
    return false;
  }
  for (const std::string& note : far.notes) {
    if (note.find(skipped) != std::string::npos &&
        note.find("not read: the file is remote") != std::string::npos) {
      return true;
    }
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const stguard_fuzz::ExactCopy input(data, size);
  const std::span<const std::byte> bytes = input.bytes();
  const stguard::MemorySource memory(bytes, "input");

  CountingSource counted(memory, 0, /*remote=*/false);
  const stguard::CheckResult result = stguard::CheckSource(counted, "input");
  stguard_fuzz::CountExecution(result.valid());
  const stguard::Format format = stguard::SniffFormat(bytes);
  FUZZ_CHECK(result.format == format);
  const stguard::Error whole = WholeBytesError(bytes, format);
  FUZZ_CHECK(result.error.code == whole.code);
  FUZZ_CHECK(result.error.offset == whole.offset);
  if (!result.valid()) FUZZ_CHECK(result.error.message != nullptr);

  const size_t fail_from = size == 0 ? 1 : 1 + data[size - 1] % 16;
  CountingSource failing(memory, fail_from, /*remote=*/false);
  const stguard::CheckResult failed = stguard::CheckSource(failing, "input");
  if (fail_from <= counted.reads()) {
    FUZZ_CHECK(failed.verdict == stguard::Verdict::kError);
    FUZZ_CHECK(failed.error.code == stguard::ErrorCode::kIoError);
  } else {
    FUZZ_CHECK(failed.error.code == result.error.code);
    FUZZ_CHECK(failed.error.offset == result.error.offset);
  }

  CountingSource remote(memory, 0, /*remote=*/true);
  const stguard::CheckResult far = stguard::CheckSource(remote, "input");
  if (result.error.code == stguard::ErrorCode::kGgufNonZeroPadding) {
    // Remotely the padding is not read: the file is valid, or a rule checked after the
    // padding fails, never the padding itself; a note says the padding went unchecked.
    FUZZ_CHECK(!far.notes.empty());
    FUZZ_CHECK(far.error.code != stguard::ErrorCode::kGgufNonZeroPadding);
  } else if (SkippedByRemoteZip(result, far)) {
    // Remotely a storage record's local header and CRC-32 (an npz member's CRC-32 and
    // deflated stream past its header) are not read: the file is valid, or fails a rule
    // checked later; the note says what went unchecked.
    FUZZ_CHECK(far.format == result.format);
  } else {
    FUZZ_CHECK(far.error.code == result.error.code);
    FUZZ_CHECK(far.error.offset == result.error.offset);
  }
  return 0;
}

// Structure-aware mutation: the mutator of the format the input is, so that mutations
// reach each format's range reader past its magic.
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  namespace mutator = stguard_fuzz::mutator;
  const auto bytes = std::as_bytes(std::span<const uint8_t>(data, size));
  switch (stguard::SniffFormat(bytes)) {
    case stguard::Format::kGguf: return mutator::MutateGguf(data, size, max_size, seed);
    case stguard::Format::kNpy: return mutator::MutateNpy(data, size, max_size, seed);
    case stguard::Format::kNpz: return mutator::MutateNpz(data, size, max_size, seed);
    case stguard::Format::kPytorchZip:
      return mutator::MutateTorchCheckpoint(data, size, max_size, seed);
    default: break;
  }
  return mutator::MutateSafetensors(data, size, max_size, seed);
}
