// SPDX-License-Identifier: Apache-2.0
// bench/writer_bench.cc: the canonical writer's throughput against a plain write() loop of
// the same bytes to the same filesystem, and the time to generate an 800,000-tensor
// header against the time to validate it.
#include <benchmark/benchmark.h>

#include "benchmarks.h"

#if STGUARD_BENCH_HAVE_WRITER

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fixtures.h"
#include "stguard/reader.h"
#include "stguard/writer.h"

namespace stguard_bench {
namespace {

void Fail(benchmark::State& state, std::string message) {
  static std::string last_message;
  last_message = std::move(message);
  state.SkipWithError(last_message.c_str());
}

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "stguard bench: %s\n", what.c_str());
  std::abort();
}

bool WriteAll(int fd, const void* data, size_t len) {
  const auto* p = static_cast<const char*>(data);
  while (len > 0) {
    const ssize_t n = ::write(fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    len -= static_cast<size_t>(n);
  }
  return true;
}

// FdSink hands the writer's bytes straight to write(2): no temporary file, no fsync.
class FdSink final : public stguard::ByteSink {
 public:
  explicit FdSink(int fd) : fd_(fd) {}
  stguard::Error Write(std::span<const std::byte> bytes) override {
    if (WriteAll(fd_, bytes.data(), bytes.size())) return stguard::Error{};
    stguard::Error error;
    error.code = stguard::ErrorCode::kIoError;
    error.message = "write failed";
    error.context = std::strerror(errno);
    return error;
  }

 private:
  int fd_;
};

// AddAll adds every tensor of `tensors` to `writer`, each tensor's bytes being the first
// ByteSize bytes of `data`, plus the metadata {"format":"pt"}.
void AddAll(const std::vector<TensorSpec>& tensors, std::span<const std::byte> data,
            stguard::Writer* writer) {
  for (const TensorSpec& tensor : tensors) {
    stguard::Error error =
        writer->AddTensor(tensor.name, tensor.dtype, tensor.shape, data.first(ByteSize(tensor)));
    if (!error.ok()) Die(error.ToString());
  }
  if (stguard::Error error = writer->AddMetadata("format", "pt"); !error.ok()) {
    Die(error.ToString());
  }
}

// WriterInput is one checkpoint ready to write: the writer, and for the plain loop the
// same bytes as spans in file order.
struct WriterInput {
  std::vector<TensorSpec> tensors;  // canonical (file) order
  std::vector<std::byte> data;      // pseudo-random bytes, as long as the largest tensor
  stguard::Writer writer;
  std::string head;                 // length prefix and header, from the writer
  uint64_t file_size = 0;
  bool header_matches_generator = false;
};

std::vector<std::byte> PatternBytes(uint64_t len) {
  std::vector<std::byte> data(len);
  uint64_t state = 0x9E3779B97F4A7C15;
  for (std::byte& b : data) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    b = static_cast<std::byte>(state);
  }
  return data;
}

// GetWriterInput builds the input for `layout` on first use. Data written to disk is
// pseudo-random; the header-generation input never writes data, so its bytes are zeros.
const WriterInput& GetWriterInput(Layout layout) {
  static std::map<Layout, std::unique_ptr<WriterInput>> inputs;
  std::unique_ptr<WriterInput>& input = inputs[layout];
  if (input) return *input;
  const bool random_data = layout == Layout::kWriter1GB;
  input = std::make_unique<WriterInput>();
  GeneratedHeader generated = BuildCanonicalHeader(MakeTensors(layout));
  input->tensors = std::move(generated.tensors);
  uint64_t largest = 0;
  for (const TensorSpec& tensor : input->tensors) largest = std::max(largest, ByteSize(tensor));
  input->data = random_data ? PatternBytes(largest) : std::vector<std::byte>(largest);
  AddAll(input->tensors, input->data, &input->writer);
  stguard::Result<std::string> header = input->writer.CanonicalHeader();
  if (!header.ok()) Die(header.error().ToString());
  input->header_matches_generator = *header == generated.text;
  input->head = LengthPrefix(header->size()) + *header;
  input->file_size = input->head.size() + generated.data_len;
  return *input;
}

// PlainWrite writes the file's bytes in file order with one write() loop per tensor.
bool PlainWrite(int fd, const WriterInput& input) {
  if (!WriteAll(fd, input.head.data(), input.head.size())) return false;
  for (const TensorSpec& tensor : input.tensors) {
    if (!WriteAll(fd, input.data.data(), ByteSize(tensor))) return false;
  }
  return true;
}

int CreateFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) Die("cannot create " + path + ": " + std::strerror(errno));
  return fd;
}

// The four ways to write the 1 GB checkpoint. Each returns an empty string on success.
//   stguard_file  Writer::WriteToFile: temporary file, 1 MB buffer, fsync, rename, fsync
//                 of the directory
//   plain_fsync   its baseline: the same bytes with write(), then fsync and close
//   stguard_sink  Writer::WriteTo a sink that calls write(): the writer's own overhead
//   plain         its baseline: the same bytes with write(), no fsync
std::string WriteStguardFile(const WriterInput& input, const std::string& path) {
  stguard::Error error = input.writer.WriteToFile(path);
  return error.ok() ? std::string() : error.ToString();
}

std::string WritePlainFsync(const WriterInput& input, const std::string& path) {
  const int fd = CreateFile(path);
  const bool ok = PlainWrite(fd, input) && ::fsync(fd) == 0;
  const std::string message = ok ? std::string() : std::strerror(errno);
  ::close(fd);
  return message;
}

std::string WriteStguardSink(const WriterInput& input, const std::string& path) {
  const int fd = CreateFile(path);
  FdSink sink(fd);
  stguard::Error error = input.writer.WriteTo(sink);
  ::close(fd);
  return error.ok() ? std::string() : error.ToString();
}

std::string WritePlain(const WriterInput& input, const std::string& path) {
  const int fd = CreateFile(path);
  const std::string message = PlainWrite(fd, input) ? std::string() : std::strerror(errno);
  ::close(fd);
  return message;
}

using WriteFunction = std::string (*)(const WriterInput&, const std::string&);

// WritePaired writes the file once with the writer and once with its baseline, in
// alternating order, and reports both throughputs and their ratio as counters, so that
// each repetition compares two runs made seconds apart. On a shared VM, write speed
// swings several-fold over tens of seconds; the median of paired ratios is stable where
// the ratio of separately taken medians is not. The file is removed after each write.
void WritePaired(benchmark::State& state, WriteFunction writer, WriteFunction baseline) {
  const WriterInput& input = GetWriterInput(Layout::kWriter1GB);
  const std::string path = ScratchPath("written.safetensors");
  static int turn = 0;
  double writer_seconds = 0;
  double baseline_seconds = 0;
  for (auto _ : state) {
    const bool writer_first = (turn++ % 2) == 0;
    for (int i = 0; i < 2; ++i) {
      const bool is_writer = (i == 0) == writer_first;
      const auto start = std::chrono::steady_clock::now();
      const std::string message = (is_writer ? writer : baseline)(input, path);
      const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
      if (!message.empty()) return Fail(state, message);
      (is_writer ? writer_seconds : baseline_seconds) += elapsed.count();
      ::unlink(path.c_str());
    }
  }
  const auto size = static_cast<double>(input.file_size);
  const auto iterations = static_cast<double>(state.iterations());
  state.counters["file_bytes"] = size;
  state.counters["header_bytes"] = static_cast<double>(input.head.size() - 8);
  state.counters["tensors"] = static_cast<double>(input.tensors.size());
  state.counters["writer_seconds"] = writer_seconds / iterations;
  state.counters["baseline_seconds"] = baseline_seconds / iterations;
  state.counters["writer_gb_per_s"] = size * iterations / writer_seconds / 1e9;
  state.counters["baseline_gb_per_s"] = size * iterations / baseline_seconds / 1e9;
  state.counters["throughput_ratio"] = baseline_seconds / writer_seconds;
  state.counters["header_matches_generator"] = input.header_matches_generator ? 1 : 0;
}

// Header generation for 800,000 tensors: the Writer is filled once (outside the loop)
// and CanonicalHeader() is timed. Its bytes are also validated, below, from a sparse file.
const WriterInput& GenInput() { return GetWriterInput(Layout::kHeaderGen800k); }

const Fixture& GenFixture() {
  const WriterInput& input = GenInput();
  GeneratedHeader header;
  header.text = input.head.substr(8);
  header.tensors = input.tensors;
  header.data_len = input.file_size - input.head.size();
  return StoreFixture("gen_800k", std::move(header));
}

void DescribeHeader(benchmark::State& state, const WriterInput& input) {
  const auto header_len = static_cast<int64_t>(input.head.size() - 8);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * header_len);
  state.counters["header_bytes"] = static_cast<double>(header_len);
  state.counters["tensors"] = static_cast<double>(input.tensors.size());
  state.counters["header_matches_generator"] = input.header_matches_generator ? 1 : 0;
}

void GenerateHeader(benchmark::State& state) {
  const WriterInput& input = GenInput();
  for (auto _ : state) {
    stguard::Result<std::string> header = input.writer.CanonicalHeader();
    if (!header.ok()) return Fail(state, header.error().ToString());
    benchmark::DoNotOptimize(header->data());
  }
  DescribeHeader(state, input);
}

// As GenerateHeader, with filling the Writer (800,000 AddTensor calls) inside the loop.
void AddAndGenerateHeader(benchmark::State& state) {
  const WriterInput& input = GenInput();
  for (auto _ : state) {
    stguard::Writer writer;
    AddAll(input.tensors, input.data, &writer);
    stguard::Result<std::string> header = writer.CanonicalHeader();
    if (!header.ok()) return Fail(state, header.error().ToString());
    benchmark::DoNotOptimize(header->data());
  }
  DescribeHeader(state, input);
}

void ValidateGenerated(benchmark::State& state) {
  const Fixture& fixture = GenFixture();
  for (auto _ : state) {
    stguard::Result<stguard::Checkpoint> checkpoint =
        stguard::Checkpoint::FromBytes(fixture.bytes());
    if (!checkpoint.ok()) return Fail(state, checkpoint.error().ToString());
    benchmark::DoNotOptimize(checkpoint->tensors().data());
  }
  DescribeHeader(state, GenInput());
}

}  // namespace

void RegisterWriterBenchmarks() {
  benchmark::RegisterBenchmark("write/stguard_file_vs_plain_fsync/writer_1gb", WritePaired,
                               WriteStguardFile, WritePlainFsync)
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime()
      ->Iterations(1)
      ->Repetitions(7);
  benchmark::RegisterBenchmark("write/stguard_sink_vs_plain/writer_1gb", WritePaired,
                               WriteStguardSink, WritePlain)
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime()
      ->Iterations(1)
      ->Repetitions(7);
  benchmark::RegisterBenchmark("generate/stguard_header/gen_800k", GenerateHeader)
      ->Unit(benchmark::kMillisecond)
      ->Repetitions(5);
  benchmark::RegisterBenchmark("generate/stguard_add_and_header/gen_800k",
                               AddAndGenerateHeader)
      ->Unit(benchmark::kMillisecond)
      ->Iterations(1)
      ->Repetitions(3);
  benchmark::RegisterBenchmark("validate/stguard/gen_800k", ValidateGenerated)
      ->Unit(benchmark::kMillisecond)
      ->Repetitions(5);
}

}  // namespace stguard_bench

#else  // !STGUARD_BENCH_HAVE_WRITER

namespace stguard_bench {
// Built without include/stguard/writer.h: there is no writer to measure.
void RegisterWriterBenchmarks() {}
}  // namespace stguard_bench

#endif
