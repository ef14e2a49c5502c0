// SPDX-License-Identifier: Apache-2.0
// TorchCheckpoint: open, stream tensors (gathering strided views), scan and convert.
#include "stguard/torch_checkpoint.h"

#include <algorithm>
#include <mutex>
#include <utility>

#include "base/release_pages.h"
#include "stguard/mapped_file.h"
#include "torch/containers.h"
#include "torch/tensor_views.h"
#include "zip/zip_archive.h"

namespace stguard {
namespace {

// kGatherBufferLen is how many bytes a strided view is gathered into before each write.
constexpr size_t kGatherBufferLen = size_t{1} << 20;
// kStreamChunkLen is the largest single write of a contiguous tensor (CRC-32 runs per
// chunk, while the bytes are in cache).
constexpr size_t kStreamChunkLen = size_t{4} << 20;

std::vector<TorchGlobal> ToTorchGlobals(const std::vector<GlobalUse>& uses) {
  std::vector<TorchGlobal> out;
  out.reserve(uses.size());
  for (const GlobalUse& use : uses) out.push_back({use.module, use.name, use.allowed, use.offset});
  return out;
}

std::vector<TorchStorage> ToTorchStorages(const LoadedPickle& loaded) {
  std::vector<TorchStorage> out;
  for (size_t k = 0; k < loaded.pickle.storages.size(); ++k) {
    const StorageRef& ref = loaded.pickle.storages[k];
    const StoragePlacement placement =
        k < loaded.placements.size() ? loaded.placements[k] : StoragePlacement{};
    out.push_back({ref.key, ref.dtype, ref.num_elements, ref.location, placement.data_offset,
                   placement.byte_len});
  }
  return out;
}

// StringSink collects bytes in memory.
class StringSink : public ByteSink {
 public:
  Error Write(std::span<const std::byte> bytes) override {
    text.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    return {};
  }
  std::string text;
};

}  // namespace

struct TorchCheckpoint::Impl {
  std::unique_ptr<MappedFile> file;  // null for FromBytes
  // Release each streamed chunk's pages (Open only: the bytes are a file mapping, so
  // resident memory stays near one chunk whatever the checkpoint's size).
  bool release_pages = false;
  std::span<const std::byte> bytes;
  LoadedPickle loaded;
  std::vector<TorchTensor> tensors;
  std::vector<TorchStorage> storages;
  std::vector<TorchGlobal> globals;
  // crc_checked[k]: storage k's CRC-32 was verified (ZIP only). Guarded by crc_mutex so
  // that const streaming stays safe from several threads.
  mutable std::mutex crc_mutex;
  mutable std::vector<bool> crc_checked;

  Error CheckStorageCrc(size_t k) const {
    const StoragePlacement& place = loaded.placements[k];
    if (!place.has_crc) return {};
    {
      std::lock_guard<std::mutex> lock(crc_mutex);
      if (crc_checked[k]) return {};
    }
    if (Crc32(0, bytes.subspan(place.data_offset, place.byte_len)) != place.crc32) {
      return Error{ErrorCode::kZipChecksum, place.data_offset, "record bytes fail their CRC-32",
                   "data/" + storages[k].key};
    }
    std::lock_guard<std::mutex> lock(crc_mutex);
    crc_checked[k] = true;
    return {};
  }
};

TorchCheckpoint::TorchCheckpoint(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TorchCheckpoint::TorchCheckpoint(TorchCheckpoint&&) noexcept = default;
TorchCheckpoint& TorchCheckpoint::operator=(TorchCheckpoint&&) noexcept = default;
TorchCheckpoint::~TorchCheckpoint() = default;

TorchFormat TorchCheckpoint::format() const { return impl_->loaded.format; }
const std::vector<TorchTensor>& TorchCheckpoint::tensors() const { return impl_->tensors; }
const std::vector<TorchStorage>& TorchCheckpoint::storages() const { return impl_->storages; }
const std::vector<TorchGlobal>& TorchCheckpoint::globals() const { return impl_->globals; }

Result<TorchCheckpoint> TorchCheckpoint::FromBytes(std::span<const std::byte> bytes,
                                                   const TorchOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->bytes = bytes;
  std::vector<GlobalUse> uses;
  Error error = LoadTorchContainer(bytes, &impl->loaded, &uses);
  impl->globals = ToTorchGlobals(uses);
  if (!error.ok()) return error;
  if (Error select = SelectTensors(impl->loaded, options, bytes.size(), &impl->tensors); !select.ok()) {
    return select;
  }
  impl->storages = ToTorchStorages(impl->loaded);
  impl->crc_checked.assign(impl->storages.size(), false);
  return TorchCheckpoint(std::move(impl));
}

Result<TorchCheckpoint> TorchCheckpoint::Open(const std::string& path,
                                              const TorchOptions& options) {
  Result<std::unique_ptr<MappedFile>> file = MappedFile::Open(path);
  if (!file.ok()) return file.error();
  std::unique_ptr<MappedFile> mapped = std::move(file).value();
  Result<TorchCheckpoint> checkpoint = FromBytes(mapped->bytes(), options);
  if (!checkpoint.ok()) return checkpoint.error();
  checkpoint->impl_->file = std::move(mapped);  // the spans stay valid: same mapping
  checkpoint->impl_->release_pages = true;
  return checkpoint;
}

Error TorchCheckpoint::StreamTensor(size_t index, ByteSink& sink) const {
  if (index >= impl_->tensors.size()) {
    return Error{ErrorCode::kInvalidArgument, 0, "no tensor of that index"};
  }
  const TorchTensor& tensor = impl_->tensors[index];
  if (tensor.byte_len == 0) return {};
  const StoragePlacement& place = impl_->loaded.placements[tensor.storage];
  const std::span<const std::byte> storage =
      impl_->bytes.subspan(place.data_offset, place.byte_len);
  const uint64_t element_len = DtypeBits(tensor.dtype) / 8;
  if (tensor.contiguous) {
    // Bounds were checked when the checkpoint was opened: offset + byte_len <= storage.
    std::span<const std::byte> view =
        storage.subspan(tensor.storage_offset * element_len, tensor.byte_len);
    // A view of the whole storage is CRC-checked as it streams (each byte read once);
    // otherwise the storage is checked first, once.
    const bool whole = place.has_crc && view.size() == storage.size();
    if (place.has_crc && !whole) {
      if (Error error = impl_->CheckStorageCrc(tensor.storage); !error.ok()) return error;
    }
    uint32_t crc = 0;
    while (!view.empty()) {
      const size_t n = std::min(view.size(), kStreamChunkLen);
      if (whole) crc = Crc32(crc, view.first(n));
      if (Error error = sink.Write(view.first(n)); !error.ok()) return error;
      if (impl_->release_pages) ReleasePages(view.data(), n);
      view = view.subspan(n);
    }
    if (whole && crc != place.crc32) {
      return Error{ErrorCode::kZipChecksum, place.data_offset, "record bytes fail their CRC-32",
                   "data/" + impl_->storages[tensor.storage].key};
    }
    return {};
  }
  // A strided view: walk its elements in row-major order with an odometer over the
  // dimensions, copying element by element into a fixed buffer.
  if (Error error = impl_->CheckStorageCrc(tensor.storage); !error.ok()) return error;
  const size_t dims = tensor.shape.size();
  std::vector<uint64_t> counter(dims, 0);
  std::vector<std::byte> buffer;
  buffer.reserve(std::min<uint64_t>(kGatherBufferLen, tensor.byte_len));
  uint64_t element = tensor.storage_offset;
  const uint64_t num_elements = tensor.byte_len / element_len;
  for (uint64_t n = 0; n < num_elements; ++n) {
    const std::byte* source = storage.data() + element * element_len;
    buffer.insert(buffer.end(), source, source + element_len);
    if (buffer.size() + element_len > kGatherBufferLen) {
      if (Error error = sink.Write(buffer); !error.ok()) return error;
      buffer.clear();
    }
    for (size_t d = dims; d-- > 0;) {
      if (++counter[d] < tensor.shape[d]) {
        element += tensor.strides[d];
        break;
      }
      element -= (tensor.shape[d] - 1) * tensor.strides[d];
      counter[d] = 0;
    }
  }
  if (!buffer.empty()) return sink.Write(buffer);
  return {};
}

Result<std::string> TorchCheckpoint::TensorBytes(size_t index) const {
  StringSink sink;
  if (Error error = StreamTensor(index, sink); !error.ok()) return error;
  return std::move(sink.text);
}

TorchScanReport ScanTorchBytes(std::span<const std::byte> bytes, const TorchOptions& options) {
  TorchScanReport report;
  LoadedPickle loaded;
  std::vector<GlobalUse> uses;
  report.error = LoadTorchContainer(bytes, &loaded, &uses);
  report.format = loaded.format;
  report.globals = ToTorchGlobals(uses);
  report.storages = ToTorchStorages(loaded);
  if (report.error.ok()) report.error = SelectTensors(loaded, options, bytes.size(), &report.tensors);
  if (report.error.ok()) {
    // Scanning verifies every storage's CRC-32 too: "converts cleanly" includes the data.
    for (size_t k = 0; k < loaded.placements.size(); ++k) {
      const StoragePlacement& place = loaded.placements[k];
      if (place.has_crc &&
          Crc32(0, bytes.subspan(place.data_offset, place.byte_len)) != place.crc32) {
        report.error = Error{ErrorCode::kZipChecksum, place.data_offset,
                             "record bytes fail their CRC-32", "data/" + report.storages[k].key};
        break;
      }
    }
  }
  return report;
}

TorchScanReport ScanTorchFile(const std::string& path, const TorchOptions& options) {
  Result<std::unique_ptr<MappedFile>> file = MappedFile::Open(path);
  if (!file.ok()) {
    TorchScanReport report;
    report.error = file.error();
    return report;
  }
  return ScanTorchBytes((*file)->bytes(), options);
}

Error AddTorchTensors(const TorchCheckpoint& checkpoint, const TorchConvertOptions& options,
                      Writer* writer, std::vector<TorchDroppedAlias>* dropped) {
  const std::vector<TorchTensor>& tensors = checkpoint.tensors();
  for (size_t k = 0; k < tensors.size(); ++k) {
    const TorchTensor& tensor = tensors[k];
    if (options.drop_aliases && tensor.alias_of.has_value()) {
      if (dropped != nullptr) dropped->push_back({tensor.name, tensors[*tensor.alias_of].name});
      continue;
    }
    Error error = writer->AddTensor(
        tensor.name, tensor.dtype, tensor.shape, tensor.byte_len,
        [&checkpoint, k](ByteSink& sink) { return checkpoint.StreamTensor(k, sink); });
    if (!error.ok()) return error;
  }
  return writer->AddMetadata("format", "pt");
}

Error ConvertTorchFile(const std::string& in_path, const std::string& out_path,
                       const TorchOptions& options, const TorchConvertOptions& convert_options,
                       std::vector<TorchDroppedAlias>* dropped) {
  Result<TorchCheckpoint> checkpoint = TorchCheckpoint::Open(in_path, options);
  if (!checkpoint.ok()) return checkpoint.error();
  Writer writer;
  if (Error error = AddTorchTensors(*checkpoint, convert_options, &writer, dropped);
      !error.ok()) {
    return error;
  }
  return writer.WriteToFile(out_path);
}

}  // namespace stguard
