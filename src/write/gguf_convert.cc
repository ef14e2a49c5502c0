// SPDX-License-Identifier: Apache-2.0
// ConvertGguf: a GGUF file (or split model) streamed into safetensors. Each tensor is
// planned first (its output dtype, or the error that stops the conversion before any
// byte is written), then read with pread a step at a time, decoded or converted into a
// fixed buffer and handed to the crash-safe writer (stguard/gguf_convert.h).
#include "stguard/gguf_convert.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include "base/checked_math.h"
#include "base/out_of_memory.h"
#include "data/conversion_target.h"
#include "stguard/convert.h"
#include "stguard/gguf_dequant.h"
#include "stguard/mapped_file.h"
#include "stguard/writer.h"
#include "write/gguf_sources.h"
#include "write/sharded_output.h"

namespace stguard {
namespace {

using gguf::GgmlType;
using gguf::GgufFile;
using gguf::TensorInfo;

// TensorPlan is what one GGUF tensor becomes.
struct TensorPlan {
  const TensorInfo* info = nullptr;
  Dtype out_dtype = Dtype::kF32;
  bool dequantize = false;  // a block type, decoded to F32 first
  uint64_t out_len = 0;     // bytes written
};

Error CannotDequantize(const TensorInfo& tensor, const char* why) {
  return Error{ErrorCode::kGgufNotDequantizable, tensor.info_offset, why,
               "type " + std::string(tensor.type->name), std::string(tensor.name)};
}

Result<TensorPlan> PlanGgufTensor(const TensorInfo& tensor, std::optional<Dtype> target) {
  TensorPlan plan;
  plan.info = &tensor;
  Result<Dtype> dtype = GgufOutputDtype(tensor, target);
  if (!dtype.ok()) return dtype.error();
  plan.out_dtype = *dtype;
  plan.dequantize = !tensor.type->dtype.has_value();
  if (!CheckedMul(tensor.num_elements(), ElementSize(plan.out_dtype), &plan.out_len)) {
    return Error{ErrorCode::kValidationOverflow, tensor.info_offset,
                 "the converted tensor's size is beyond 64 bits", "",
                 std::string(tensor.name)};
  }
  return plan;
}

// StreamDequantized reads whole blocks a step at a time and writes them decoded to F32
// (the tensor's stored form; a target dtype is the pipeline's decorator's, AddSource).
Error StreamDequantized(const MappedFile& data, const TensorInfo& tensor, ByteSink& sink) {
  const GgmlType& type = *tensor.type;
  const uint64_t num_blocks = tensor.byte_size / type.type_size;
  const uint64_t step = std::min<uint64_t>(
      num_blocks, std::max<uint64_t>(1, kGgufConvertStepElements / type.block_size));
  std::vector<std::byte> in(static_cast<size_t>(step * type.type_size));
  std::vector<float> decoded(static_cast<size_t>(step * type.block_size));
  for (uint64_t done = 0; done < num_blocks;) {
    const uint64_t n = std::min(step, num_blocks - done);
    const std::span<std::byte> blocks(in.data(), static_cast<size_t>(n * type.type_size));
    if (Error error = data.ReadAt(tensor.absolute_offset + done * type.type_size, blocks);
        !error.ok()) {
      return error;
    }
    const std::span<float> values(decoded.data(), static_cast<size_t>(n * type.block_size));
    if (Error error = gguf::DequantizeRow(type, blocks, values); !error.ok()) {
      error.tensor = std::string(tensor.name);
      return error;
    }
    if (Error error = sink.Write(std::as_bytes(values)); !error.ok()) return error;
    done += n;
  }
  return {};
}

// StreamPlain copies a plain tensor's stored bytes a step at a time.
Error StreamPlain(const MappedFile& data, const TensorInfo& tensor, ByteSink& sink) {
  const uint64_t src_size = ElementSize(*tensor.type->dtype);
  const uint64_t count = tensor.byte_size / src_size;
  const uint64_t step = std::min(count, kGgufConvertStepElements);
  std::vector<std::byte> in(static_cast<size_t>(step * src_size));
  for (uint64_t done = 0; done < count;) {
    const uint64_t n = std::min(step, count - done);
    const std::span<std::byte> src(in.data(), static_cast<size_t>(n * src_size));
    if (Error error = data.ReadAt(tensor.absolute_offset + done * src_size, src); !error.ok()) {
      return error;
    }
    if (Error error = sink.Write(src); !error.ok()) return error;
    done += n;
  }
  return {};
}

// GgufMetadata is __metadata__'s entries: every key, but arrays longer than
// kGgufMetadataArrayLimit unless options.all_metadata (those are listed in the report).
std::vector<std::pair<std::string, std::string>> GgufMetadata(const GgufFile& file,
                                                              const GgufConvertOptions& options,
                                                              GgufConvertReport* report) {
  std::vector<std::pair<std::string, std::string>> metadata;
  for (const gguf::MetadataEntry& entry : file.metadata()) {
    const gguf::Value& value = entry.value;
    if (value.type == gguf::ValueType::kArray && value.count > kGgufMetadataArrayLimit &&
        !options.all_metadata) {
      report->omitted.push_back({std::string(entry.key),
                                 std::string(gguf::ValueTypeName(value.element_type)),
                                 value.count});
      continue;
    }
    metadata.emplace_back(std::string(entry.key), GgufMetadataText(value));
  }
  return metadata;
}

// PlanFile plans every tensor of `file`: the first one that cannot be written stops
// everything before any output exists.
Result<std::vector<TensorPlan>> PlanFile(const GgufFile& file, std::optional<Dtype> target) {
  std::vector<TensorPlan> plans;
  plans.reserve(file.tensors().size());
  for (const TensorInfo& tensor : file.tensors()) {
    Result<TensorPlan> plan = PlanGgufTensor(tensor, target);
    if (!plan.ok()) return plan.error();
    plans.push_back(*plan);
  }
  return plans;
}

Error NameFile(Error error, const std::string& path) {
  if (error.context.find(path) == std::string::npos) {
    error.context = "file '" + path + "'" + (error.context.empty() ? "" : "; " + error.context);
  }
  return error;
}

// ConvertSplit writes every part of `set` into the folder `out_dir`, then the index
// (WriteShardedFolder), after planning every part: a tensor that cannot be written
// stops everything before any output exists.
Error ConvertSplit(const gguf::GgufSplitSet& set, const std::vector<std::string>& paths,
                   const std::string& out_dir, const GgufConvertOptions& options,
                   GgufConvertReport* report) {
  for (size_t k = 0; k < set.parts.size(); ++k) {
    if (Result<std::vector<TensorPlan>> plans = PlanFile(set.parts[k], options.dtype);
        !plans.ok()) {
      return NameFile(plans.error(), paths[k]);
    }
  }
  std::unique_ptr<MappedFile> data;  // the part being written; read until it is staged
  const FillShard fill = [&](size_t k, Writer* writer, ShardContent* content) -> Error {
    Result<std::unique_ptr<MappedFile>> opened = MappedFile::OpenUnmapped(paths[k]);
    if (!opened.ok()) return opened.error();
    data = std::move(opened).value();
    const size_t before = report->num_tensors;
    const uint64_t size_before = report->total_size;
    if (Error error = AddGgufTensors(set.parts[k], *data, options, writer, report);
        !error.ok()) {
      return NameFile(error, paths[k]);
    }
    for (size_t t = 0; t < report->num_tensors - before; ++t) {
      content->names.emplace_back(set.parts[k].tensors()[t].name);
    }
    content->data_bytes = report->total_size - size_before;
    return {};
  };
  uint64_t total_size = 0;
  return WriteShardedFolder(out_dir, set.parts.size(), fill, {}, &report->written, &total_size);
}

// SplitCount reads split.no or split.count as gguf::CheckSplitSet does: an unsigned or a
// non-negative signed integer of any width (llama.cpp writes u16).
std::optional<uint64_t> SplitCount(const GgufFile& file, std::string_view key) {
  const gguf::MetadataEntry* entry = file.FindKey(key);
  if (entry == nullptr) return std::nullopt;
  if (auto u = entry->value.AsUnsigned()) return *u;
  if (auto v = entry->value.AsSigned(); v && *v >= 0) return static_cast<uint64_t>(*v);
  return std::nullopt;
}

// MakeFolder creates `path` when it does not exist; *created says whether it did.
Error MakeFolder(const std::string& path, bool* created) {
  *created = false;
  struct stat info;
  if (::stat(path.c_str(), &info) == 0) {
    if (S_ISDIR(info.st_mode)) return {};
    return Error{ErrorCode::kNotARegularFile, 0,
                 "a split model converts to a folder, and this path is not one", path};
  }
  if (::mkdir(path.c_str(), 0777) != 0) {
    return Error{ErrorCode::kIoError, 0, "cannot create output folder",
                 path + ": " + std::strerror(errno)};
  }
  *created = true;
  return {};
}

Error ConvertSplitPath(const std::string& in_path, const std::string& out_dir,
                       const GgufConvertOptions& options, GgufConvertReport* report) {
  Result<gguf::GgufSplitSet> set = gguf::CheckSplitSet(in_path);
  if (!set.ok()) return set.error();
  std::vector<std::string> paths;
  for (size_t k = 0; k < set->parts.size(); ++k) {
    paths.push_back(gguf::SplitPartPath(in_path, static_cast<uint32_t>(k + 1)));
  }
  bool created = false;
  if (Error error = MakeFolder(out_dir, &created); !error.ok()) return error;
  Error error = ConvertSplit(*set, paths, out_dir, options, report);
  if (!error.ok() && created) ::rmdir(out_dir.c_str());  // empty again: only ours
  return error;
}

}  // namespace

Result<Dtype> GgufOutputDtype(const TensorInfo& tensor, std::optional<Dtype> target) {
  if (target && !IsConversionTarget(*target)) return CheckConversionTarget(*target);
  if (const std::optional<Dtype> plain = tensor.type->dtype) {
    return OutputDtype(*plain, target);
  }
  if (!gguf::CanDequantize(*tensor.type)) {
    return CannotDequantize(tensor, "no decoder for this ggml type: it cannot be dequantized");
  }
  return target.value_or(Dtype::kF32);
}

Error DequantizeTensor(const GgmlType& type, std::span<const std::byte> blocks,
                       std::span<float> out) {
  if (const std::optional<Dtype> plain = type.dtype) {
    if (!IsConvertibleFloat(*plain)) {
      return Error{ErrorCode::kGgufNotDequantizable, 0, "an integer tensor is not dequantized",
                   "type " + std::string(type.name)};
    }
    return ConvertToF32(*plain, blocks, out);
  }
  if (!gguf::CanDequantize(type)) {
    return Error{ErrorCode::kGgufNotDequantizable, 0,
                 "no decoder for this ggml type: it cannot be dequantized",
                 "type " + std::string(type.name)};
  }
  if (blocks.size() % type.type_size != 0 ||
      blocks.size() / type.type_size != out.size() / type.block_size ||
      out.size() % type.block_size != 0) {
    return Error{ErrorCode::kInvalidArgument, 0,
                 "the blocks and the output hold different element counts",
                 "type " + std::string(type.name)};
  }
  return gguf::DequantizeRow(type, blocks, out);
}

Result<GgufSourceSet> GgufSources(const GgufFile& file, const MappedFile& data,
                                  const GgufConvertOptions& options,
                                  GgufConvertReport* report) {
  Result<std::vector<TensorPlan>> plans = PlanFile(file, options.dtype);
  if (!plans.ok()) return plans.error();
  GgufSourceSet set;
  for (const TensorPlan& plan : *plans) {
    const TensorInfo* tensor = plan.info;
    const MappedFile* source = &data;
    // The stored form: a plain dtype as is, a block type decoded to F32.
    const Dtype stored = plan.dequantize ? Dtype::kF32 : *tensor->type->dtype;
    set.shapes.push_back(tensor->shape());
    TensorProducer stream = [source, tensor, dequantize = plan.dequantize](ByteSink& sink) {
      return dequantize ? StreamDequantized(*source, *tensor, sink)
                        : StreamPlain(*source, *tensor, sink);
    };
    set.sources.tensors.push_back(TensorSource{
        tensor->name, stored, set.shapes.back(), tensor->num_elements() * ElementSize(stored),
        std::move(stream)});
    ++report->num_tensors;
    if (plan.dequantize) ++report->num_dequantized;
    // A decoded block type is a change of dtype whatever the target.
    if (plan.dequantize || ChangesDtype(stored, options.dtype)) ++report->num_converted;
    report->total_size += plan.out_len;
  }
  set.sources.metadata = GgufMetadata(file, options, report);
  return set;
}

Error AddGgufTensors(const GgufFile& file, const MappedFile& data,
                     const GgufConvertOptions& options, Writer* writer,
                     GgufConvertReport* report) {
  return CatchOutOfMemory("out of memory while adding tensors to the writer", [&]() -> Error {
    Result<GgufSourceSet> set = GgufSources(file, data, options, report);
    if (!set.ok()) return set.error();
    return AddSources(*writer, std::move(set->sources), options.dtype, nullptr);
  });
}

bool IsGgufSplitFirstPart(const GgufFile& file) {
  return SplitCount(file, "split.count").value_or(0) > 1 &&
         SplitCount(file, "split.no").value_or(1) == 0;
}

Error ConvertGguf(const std::string& in_path, const std::string& out_path,
                  const GgufConvertOptions& options, GgufConvertReport* report) {
  if (Error e = CheckOutputIsNotInput(in_path, out_path); !e.ok()) return e;
  Result<GgufFile> file = GgufFile::Open(in_path);
  if (!file.ok()) return file.error();
  if (IsGgufSplitFirstPart(*file)) return ConvertSplitPath(in_path, out_path, options, report);
  if (SplitCount(*file, "split.count").value_or(0) > 1) {
    return Error{ErrorCode::kGgufSplitMismatch, file->FindKey("split.count")->offset,
                 "a later part of a split model: convert the first part (NAME-00001-of-...), "
                 "which brings every part",
                 in_path};
  }
  Result<std::unique_ptr<MappedFile>> data = MappedFile::OpenUnmapped(in_path);
  if (!data.ok()) return data.error();
  Writer writer;
  if (Error error = AddGgufTensors(*file, **data, options, &writer, report); !error.ok()) {
    return error;
  }
  if (Error error = writer.WriteToFile(out_path); !error.ok()) return error;
  report->written = {out_path};
  return {};
}

}  // namespace stguard
