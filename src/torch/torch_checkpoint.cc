// SPDX-License-Identifier: Apache-2.0
// TorchCheckpoint: open, stream tensors (gathering strided views), scan and convert.
#include "stguard/torch_checkpoint.h"

#include <algorithm>
#include <mutex>
#include <utility>

#include "data/conversion_target.h"
#include "stguard/mapped_file.h"
#include "stguard/writer.h"
#include "torch/containers.h"
#include "torch/scan_loaded.h"
#include "torch/strided_gather.h"
#include "torch/tensor_views.h"
#include "torch/torch_sources.h"
#include "write/converting_sink.h"
#include "write/string_sink.h"
#include "zip/zip_archive.h"

namespace stguard {
namespace {

// kChunkLen is the fixed buffer a contiguous tensor is read into (pread) and written from,
// its CRC-32 computed on the same bytes while they are in cache; strided views are
// gathered into a second buffer of the same size.
constexpr size_t kChunkLen = size_t{1} << 20;

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

Error ChecksumError(const StoragePlacement& place, const std::string& key) {
  return Error{ErrorCode::kZipChecksum, place.data_offset, "record bytes fail their CRC-32",
               "data/" + key};
}

}  // namespace

struct TorchCheckpoint::Impl {
  // The file (Open only). It stays mapped for the pickle's value graph and the strided
  // gather of views larger than a buffer; every other data byte is read with pread, so a
  // file truncated meanwhile is kIoError, not SIGBUS, and resident memory stays at the
  // buffers whatever the checkpoint's size.
  std::unique_ptr<MappedFile> file;
  std::span<const std::byte> bytes;
  LoadedPickle loaded;
  std::vector<TorchTensor> tensors;
  std::vector<TorchStorage> storages;
  std::vector<TorchGlobal> globals;
  // crc_checked[k]: storage k's CRC-32 was verified (ZIP only). Guarded by crc_mutex so
  // that const streaming stays safe from several threads.
  mutable std::mutex crc_mutex;
  mutable std::vector<bool> crc_checked;

  bool CrcPending(size_t k) const {
    if (!loaded.placements[k].has_crc) return false;
    std::lock_guard<std::mutex> lock(crc_mutex);
    return !crc_checked[k];
  }
  void MarkCrcChecked(size_t k) const {
    std::lock_guard<std::mutex> lock(crc_mutex);
    crc_checked[k] = true;
  }

  // ReadChunks hands [offset, offset + len) of the file to `visit` in chunks of at most
  // kChunkLen: read with pread into `buffer` (kChunkLen bytes) for a file, straight from
  // memory for FromBytes. A file that shrank is kIoError naming it.
  template <typename Visit>
  Error ReadChunks(uint64_t offset, uint64_t len, std::byte* buffer, Visit&& visit) const {
    while (len > 0) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(len, kChunkLen));
      std::span<const std::byte> chunk;
      if (file != nullptr) {
        if (Error error = file->ReadAt(offset, {buffer, n}); !error.ok()) return error;
        chunk = {buffer, n};
      } else {
        chunk = bytes.subspan(offset, n);
      }
      if (Error error = visit(chunk); !error.ok()) return error;
      offset += n;
      len -= n;
    }
    return {};
  }

  // CheckStorageCrc reads storage k once to verify its CRC-32 (if it has one, not yet
  // verified). For a file, it also shows that the storage's bytes are all still there.
  Error CheckStorageCrc(size_t k, std::byte* buffer) const {
    const StoragePlacement& place = loaded.placements[k];
    if (!CrcPending(k)) {
      // Verified before, or a legacy storage (no CRC): for a file, one byte at the end
      // shows that it did not shrink since.
      if (file == nullptr || place.byte_len == 0) return {};
      return file->ReadAt(place.data_offset + place.byte_len - 1, {buffer, 1});
    }
    uint32_t crc = 0;
    Error error = ReadChunks(place.data_offset, place.byte_len, buffer,
                             [&crc](std::span<const std::byte> chunk) {
                               crc = Crc32(crc, chunk);
                               return Error{};
                             });
    if (!error.ok()) return error;
    if (crc != place.crc32) return ChecksumError(place, storages[k].key);
    MarkCrcChecked(k);
    return {};
  }

  // A contiguous view is read once, in kChunkLen preads, each chunk going to the CRC-32 and
  // to the sink while it is in cache. The storage's CRC covers its whole record, so when
  // the view is a part of it and the record is not verified yet, the bytes before and after
  // the view are read too (for the CRC only): still one pass over the record.
  // (Defined in the class body, inline, so they stay out of the exported symbols.)
  Error StreamContiguous(const TorchTensor& tensor, ByteSink& sink) const {
    const StoragePlacement& place = loaded.placements[tensor.storage];
    const uint64_t element_len = DtypeBits(tensor.dtype) / 8;
    // Bounds were checked when the checkpoint was opened: offset + byte_len <= storage.
    const uint64_t view_begin = place.data_offset + tensor.storage_offset * element_len;
    const uint64_t view_end = view_begin + tensor.byte_len;
    const uint64_t record_end = place.data_offset + place.byte_len;
    const bool check = CrcPending(tensor.storage);
    auto buffer = std::make_unique_for_overwrite<std::byte[]>(kChunkLen);
    uint32_t crc = 0;
    auto crc_only = [&crc](std::span<const std::byte> chunk) {
      crc = Crc32(crc, chunk);
      return Error{};
    };
    if (check) {
      if (Error error = ReadChunks(place.data_offset, view_begin - place.data_offset,
                                   buffer.get(), crc_only);
          !error.ok()) {
        return error;
      }
    }
    Error error = ReadChunks(view_begin, tensor.byte_len, buffer.get(),
                             [&](std::span<const std::byte> chunk) {
                               if (check) crc = Crc32(crc, chunk);
                               return sink.Write(chunk);
                             });
    if (!error.ok()) return error;
    if (!check) return {};
    if (Error tail = ReadChunks(view_end, record_end - view_end, buffer.get(), crc_only);
        !tail.ok()) {
      return tail;
    }
    if (crc != place.crc32) return ChecksumError(place, storages[tensor.storage].key);
    MarkCrcChecked(tensor.storage);
    return {};
  }

  // A strided view is gathered in row-major order (torch/strided_gather.h: unit dimensions
  // dropped, contiguous ones merged, innermost runs copied at once, so the work is linear
  // in the elements written) into a fixed buffer written when full. Its source: when the
  // elements it touches span at most kChunkLen bytes, that span is read with one pread and
  // gathered from memory; a larger one (a transposed matrix) is gathered from the mapping,
  // after its storage was read once by pread for the CRC-32, which also shows the file
  // still holds every byte of it (a file truncated during that gather itself is the one
  // case left that touches a page past the end).
  Error StreamStrided(const TorchTensor& tensor, ByteSink& sink) const {
    const StoragePlacement& place = loaded.placements[tensor.storage];
    const uint64_t element_len = DtypeBits(tensor.dtype) / 8;
    const size_t dims = tensor.shape.size();
    // First and last element touched (bounds and overflow were checked at open).
    uint64_t first = tensor.storage_offset;
    uint64_t last = first;
    for (size_t d = 0; d < dims; ++d) last += (tensor.shape[d] - 1) * tensor.strides[d];
    const uint64_t span_len = (last - first + 1) * element_len;
    auto read_buffer = std::make_unique_for_overwrite<std::byte[]>(kChunkLen);
    const std::byte* base = nullptr;  // element e is at base + e * element_len
    if (Error error = CheckStorageCrc(tensor.storage, read_buffer.get()); !error.ok()) {
      return error;
    }
    if (file == nullptr) {
      base = bytes.data() + place.data_offset;
    } else if (span_len <= kChunkLen) {
      const uint64_t at = place.data_offset + first * element_len;
      if (Error error = file->ReadAt(at, {read_buffer.get(), static_cast<size_t>(span_len)});
          !error.ok()) {
        return error;
      }
      base = read_buffer.get() - first * element_len;
    } else {
      base = bytes.data() + place.data_offset;
    }
    auto buffer = std::make_unique_for_overwrite<std::byte[]>(kChunkLen);
    return GatherStrided(base, element_len, tensor.storage_offset,
                         PlanGather(tensor.shape, tensor.strides), {buffer.get(), kChunkLen},
                         [&sink](std::span<const std::byte> chunk) { return sink.Write(chunk); });
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
  Error error = LoadTorchContainer(SniffFormat(bytes), bytes, &impl->loaded, &uses);
  impl->globals = ToTorchGlobals(uses);
  if (!error.ok()) return error;
  if (Error select = SelectTensors(impl->loaded, options, bytes.size(), &impl->tensors);
      !select.ok()) {
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
  return checkpoint;
}

Error TorchCheckpoint::StreamTensor(size_t index, ByteSink& sink) const {
  if (index >= impl_->tensors.size()) {
    return Error{ErrorCode::kInvalidArgument, 0, "no tensor of that index"};
  }
  const TorchTensor& tensor = impl_->tensors[index];
  if (tensor.byte_len == 0) return {};
  return tensor.contiguous ? impl_->StreamContiguous(tensor, sink)
                           : impl_->StreamStrided(tensor, sink);
}

Result<std::string> TorchCheckpoint::TensorBytes(size_t index) const {
  std::string bytes;
  StringSink sink(&bytes);
  if (Error error = StreamTensor(index, sink); !error.ok()) return error;
  return bytes;
}

TorchScanReport ScanTorchSniffed(Format sniffed, std::span<const std::byte> bytes,
                                 const MappedFile* file, const TorchOptions& options) {
  LoadedPickle loaded;
  std::vector<GlobalUse> uses;
  const Error error = LoadTorchContainer(sniffed, bytes, &loaded, &uses);
  const MemorySource memory(bytes);
  return ScanLoaded(error, loaded, uses, bytes.size(),
                    file != nullptr ? static_cast<const ByteSource*>(file) : &memory, options);
}

TorchScanReport ScanLoaded(const Error& load_error, const LoadedPickle& loaded,
                           const std::vector<GlobalUse>& uses, uint64_t file_size,
                           const ByteSource* crc_source, const TorchOptions& options) {
  TorchScanReport report;
  report.error = load_error;
  report.format = loaded.format;
  report.globals = ToTorchGlobals(uses);
  report.storages = ToTorchStorages(loaded);
  if (report.error.ok()) {
    report.error = SelectTensors(loaded, options, file_size, &report.tensors);
  }
  if (!report.error.ok() || crc_source == nullptr) return report;
  // Scanning verifies every storage's CRC-32 too: "converts cleanly" includes the data.
  for (size_t k = 0; k < loaded.placements.size(); ++k) {
    const StoragePlacement& place = loaded.placements[k];
    if (!place.has_crc) continue;
    const Result<uint32_t> crc = Crc32OfRange(*crc_source, place.data_offset, place.byte_len);
    if (!crc.ok()) {
      report.error = crc.error();
      return report;
    }
    if (*crc != place.crc32) {
      report.error = ChecksumError(place, report.storages[k].key);
      return report;
    }
  }
  return report;
}

TorchScanReport ScanTorchBytes(std::span<const std::byte> bytes, const TorchOptions& options) {
  return ScanTorchSniffed(SniffFormat(bytes), bytes, nullptr, options);
}

TorchScanReport ScanTorchFile(const std::string& path, const TorchOptions& options) {
  Result<std::unique_ptr<MappedFile>> file = MappedFile::Open(path);
  if (!file.ok()) {
    TorchScanReport report;
    report.error = file.error();
    return report;
  }
  return ScanTorchSniffed(SniffFormat((*file)->bytes()), (*file)->bytes(), file->get(), options);
}

TensorSources TorchSources(const TorchCheckpoint& checkpoint, bool drop_aliases,
                           std::vector<TorchDroppedAlias>* dropped) {
  TensorSources sources;
  const std::vector<TorchTensor>& tensors = checkpoint.tensors();
  for (size_t k = 0; k < tensors.size(); ++k) {
    const TorchTensor& tensor = tensors[k];
    if (drop_aliases && tensor.alias_of.has_value()) {
      if (dropped != nullptr) dropped->push_back({tensor.name, tensors[*tensor.alias_of].name});
      continue;
    }
    sources.tensors.push_back({tensor.name, tensor.dtype, tensor.shape, tensor.byte_len,
                               [&checkpoint, k](ByteSink& sink) {
                                 return checkpoint.StreamTensor(k, sink);
                               }});
  }
  sources.metadata.emplace_back("format", "pt");
  return sources;
}

Error AddTorchTensors(const TorchCheckpoint& checkpoint, const TorchConvertOptions& options,
                      Writer* writer, std::vector<TorchDroppedAlias>* dropped,
                      size_t* num_converted) {
  if (options.dtype.has_value()) {
    if (Error error = CheckConversionTarget(*options.dtype); !error.ok()) return error;
  }
  return AddSources(*writer, TorchSources(checkpoint, options.drop_aliases, dropped),
                    options.dtype, num_converted);
}

}  // namespace stguard
