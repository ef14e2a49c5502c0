// SPDX-License-Identifier: Apache-2.0
// The WebAssembly glue: the page's (and node's) entry points over the public library API.
// Thin on purpose: it turns JavaScript byte sources into stguard::ByteSource, calls the
// front door, and writes its results as JSON. Every rule lives in the library.
//
// Entry points (C names; the JavaScript side calls them through cwrap, see web/GLUE.md):
//   stguard_check_source(source_id, name, size, remote) -> JSON text
//   stguard_check_folder(path)                          -> JSON text
// Each returns a pointer to a string owned here, valid until the next call.
//
// A remote source is read asynchronously (fetch, streamed and abortable), which a
// synchronous reader inside WebAssembly cannot wait for. So the check is resumable: the
// page's read answers only from the bytes it holds; a read of bytes it does not hold yet
// says so (stguard_js_read returns kNotYetRead), the check runs to its end regardless, and
// its answer is {"need":true} instead of a result. The page fetches the missing range and
// runs the check again; it is deterministic, so each run reads further (web/GLUE.md).
#include <emscripten/emscripten.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "stguard/byte_source.h"
#include "stguard/checkpoint_dir.h"
#include "stguard/dtype.h"
#include "stguard/error.h"
#include "stguard/json_escape.h"
#include "stguard/lint_verdict.h"
#include "stguard/verdict.h"

// stguard_js_read asks the page's Module.stguardRead(sourceId, offset, length) for the
// bytes and copies them into `dest`. It returns 0 on success; 2 when stguardRead returned
// null (the bytes are not fetched yet: the page will fetch them and run the check again);
// otherwise it writes the JavaScript error's message (or what was wrong with the answer)
// into `error`, at most error_size bytes with the terminating NUL, and returns 1. The call
// is synchronous: a Worker reads a File with FileReaderSync, a URL from its cache.
// clang-format off
EM_JS(int, stguard_js_read, (int source_id, double offset, int length, void* dest,
                             char* error, int error_size), {
  try {
    if (typeof Module.stguardRead !== 'function') {
      throw new Error('Module.stguardRead is not set');
    }
    const bytes = Module.stguardRead(source_id, offset, length);
    if (bytes === null) return 2;
    if (!(bytes instanceof Uint8Array)) {
      throw new Error('stguardRead returned ' + typeof bytes + ', not a Uint8Array');
    }
    if (bytes.length !== length) {
      throw new Error('stguardRead returned ' + bytes.length + ' bytes where ' + length +
                      ' were asked at offset ' + offset);
    }
    HEAPU8.set(bytes, dest);
    return 0;
  } catch (e) {
    stringToUTF8(String((e && e.message) || e), error, error_size);
    return 1;
  }
});
// clang-format on

namespace {

// kMaxExactOffset: JavaScript numbers hold integers exactly up to 2^53; every offset and
// size crossing the boundary stays below it.
constexpr double kMaxExactOffset = 9007199254740992.0;
// kMaxReadLength bounds one call into JavaScript (an int32 length); the readers ask for
// headers, far smaller, and a larger request is split.
constexpr size_t kMaxReadLength = size_t{1} << 30;
// What stguard_js_read returns for bytes the page has not fetched yet.
constexpr int kNotYetRead = 2;

// g_not_yet_read is set by a read the page could not answer yet: the check's result is
// then not an answer (it rests on a read that failed only for now) but a request to run
// again once the page has the bytes.
bool g_not_yet_read = false;

// JsByteSource reads through Module.stguardRead. Its size is the one the page found
// (File.size, or Content-Range's total) when it opened the source.
class JsByteSource final : public stguard::ByteSource {
 public:
  JsByteSource(int id, std::string name, uint64_t size, bool remote)
      : id_(id), name_(std::move(name)), size_(size), remote_(remote) {}

  uint64_t size() const override { return size_; }
  bool remote() const override { return remote_; }

  stguard::Error ReadAt(uint64_t offset, std::span<std::byte> out) const override {
    if (offset > size_ || out.size() > size_ - offset) {
      return {stguard::ErrorCode::kIoError, offset, "read past the end of the source", name_};
    }
    size_t done = 0;
    while (done < out.size()) {
      const size_t length = std::min(out.size() - done, kMaxReadLength);
      char message[512] = {};
      const int status = stguard_js_read(id_, static_cast<double>(offset + done),
                                         static_cast<int>(length), out.data() + done, message,
                                         sizeof message);
      if (status == kNotYetRead) {
        g_not_yet_read = true;
        return {stguard::ErrorCode::kIoError, offset + done, "bytes not fetched yet", name_};
      }
      if (status != 0) {
        return {stguard::ErrorCode::kIoError, offset + done, "cannot read the source",
                name_ + ": " + message};
      }
      done += length;
    }
    return {};
  }

 private:
  int id_;
  std::string name_;
  uint64_t size_;
  bool remote_;
};

std::string& LastAnswer() {
  static std::string answer;
  return answer;
}

// AppendResult writes a result's envelope, its summary, sentence and warnings; a folder's files
// follow, each written the same way.
void AppendResult(const stguard::CheckResult& result, std::string* out) {
  *out += "{";
  stguard::AppendEnvelopeJson(result, out);
  *out += ",\"tensors_count\":" + std::to_string(result.summary.tensors) +
          ",\"data_bytes\":" + std::to_string(result.summary.data_bytes) + ",\"detail\":";
  stguard::AppendJsonText(result.summary.detail, out);
  // The verdict's sentence is the library's (stguard/verdict.h): the page prints it.
  *out += ",\"sentence\":";
  stguard::AppendJsonString(stguard::VerdictSentence(result.verdict), out);
  // What a remote read left out, listed and on the verdict line (stguard/verdict.h).
  *out += ",\"verdict_line\":";
  stguard::AppendJsonText(stguard::VerdictLine(result), out);
  // The envelope lists them when there are any; the page always gets the list.
  if (result.unchecked.empty()) *out += ",\"unchecked\":[]";
  *out += ",";
  stguard::AppendWarningsJson(result.warnings, out);
  if (result.is_folder) {
    *out += ",\"files\":[";
    for (size_t i = 0; i < result.files.size(); ++i) {
      if (i > 0) *out += ",";
      AppendResult(result.files[i], out);
    }
    *out += "]";
  }
  *out += "}";
}

// AppendShardTensors writes "contents":{"tensors":[...]} for a folder of safetensors
// shards: every tensor as a file's contents list it (begin and end absolute in its
// shard), with "shard", the file holding it. Empty when the folder holds no valid
// checkpoint (its result then says why). The shards' headers are read again, by ranges:
// no data.
void AppendShardTensors(const std::string& folder, std::string* out) {
  stguard::DirOptions options;
  options.headers_only = true;
  const stguard::Result<stguard::CheckpointDir> dir = stguard::CheckpointDir::Open(folder, options);
  *out += ",\"contents\":{\"tensors\":[";
  bool first = true;
  for (const stguard::ShardFile& shard : dir.ok() ? dir->shards()
                                                  : std::span<const stguard::ShardFile>()) {
    const uint64_t data_start = 8 + shard.checkpoint.header_len();
    for (const stguard::TensorView& tensor : shard.checkpoint.tensors()) {
      *out += first ? "{\"name\":" : ",{\"name\":";
      first = false;
      stguard::AppendJsonText(tensor.name, out);
      *out += ",\"dtype\":";
      stguard::AppendJsonString(stguard::DtypeName(tensor.dtype), out);
      *out += ",\"shape\":[";
      bool first_dim = true;
      for (const uint64_t dim : tensor.shape) {
        if (!first_dim) *out += ",";
        first_dim = false;
        *out += std::to_string(dim);
      }
      *out += "],\"begin\":" + std::to_string(data_start + tensor.begin) +
              ",\"end\":" + std::to_string(data_start + tensor.end) +
              ",\"bytes\":" + std::to_string(tensor.byte_size()) + ",\"shard\":";
      stguard::AppendJsonText(shard.name, out);
      *out += "}";
    }
  }
  *out += "],\"metadata\":[],\"notes\":[]}";
}

bool FileExists(const std::string& path) {
  FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return false;
  std::fclose(file);
  return true;
}

}  // namespace

extern "C" {

// stguard_check_source judges the JavaScript byte source `source_id` of `size` bytes, named
// `name` in the result: the envelope, then "contents" (tensors, metadata, notes).
EMSCRIPTEN_KEEPALIVE const char* stguard_check_source(int source_id, const char* name,
                                                      double size, int remote) {
  std::string& answer = LastAnswer();
  if (!(size >= 0 && size < kMaxExactOffset) || std::floor(size) != size) {
    stguard::CheckResult bad = stguard::UsageError(name, stguard::Format::kUnknown, "size",
                                                   "a whole number of bytes below 2^53");
    answer.clear();
    AppendResult(bad, &answer);
    return answer.c_str();
  }
  const JsByteSource source(source_id, name, static_cast<uint64_t>(size), remote != 0);
  stguard::CheckOptions options;
  options.list_contents = true;
  g_not_yet_read = false;
  const stguard::CheckResult result = stguard::CheckSource(source, name, options);
  answer.clear();
  if (g_not_yet_read) {
    answer = "{\"need\":true}";
    return answer.c_str();
  }
  AppendResult(result, &answer);
  answer.pop_back();  // the closing brace: "contents" follows
  answer += ",\"contents\":{";
  stguard::AppendContentsJson(result, &answer);
  answer += "}}";
  return answer.c_str();
}

// stguard_check_folder judges a folder of the virtual file system (a dropped folder the
// worker mounted with WORKERFS) with CheckPath, and lints it when it holds config.json.
EMSCRIPTEN_KEEPALIVE const char* stguard_check_folder(const char* path) {
  std::string& answer = LastAnswer();
  const std::string folder = path;
  const stguard::CheckResult result = stguard::CheckPath(folder);
  answer.clear();
  AppendResult(result, &answer);
  answer.pop_back();
  if (result.summary.shards > 0) AppendShardTensors(folder, &answer);
  if (result.valid() && FileExists(folder + "/config.json")) {
    // Lint's result as `stguard lint --json` prints it, on the check just made.
    answer += ",\"lint\":" + stguard::LintJson(stguard::LintChecked(folder, result, {}));
  } else {
    answer += ",\"lint\":null";
  }
  answer += "}";
  return answer.c_str();
}

}  // extern "C"
