// SPDX-License-Identifier: Apache-2.0
// stguard/gguf_convert.h: a GGUF model written as safetensors (the conversion layer over
// stguard/gguf.h, the ggml block decoders and the crash-safe writer).
//
// WHAT A TENSOR BECOMES
// Every tensor keeps its GGUF name; its shape is ne reversed (outermost first), as
// TensorInfo::shape gives it. Plain types are copied as their safetensors dtype (F32,
// F16, BF16, F64, I8, I16, I32, I64). Block-quantized types are dequantized to F32 by
// the ggml block decoders (bit-identical to ggml's dequantize_row_*). With a target dtype
// (F32, F16 or BF16), every floating tensor, plain or dequantized, is converted to it as
// stguard/convert.h's ConvertElements does (one rounding, to nearest even); integer
// tensors are copied. A type no decoder handles is kGgufNotDequantizable naming the
// tensor and its type, found before anything is written.
//
// METADATA
// Every GGUF key/value pair goes into __metadata__ (GgufMetadataText): a string as it
// is, any other value as compact JSON text naming its GGUF type: {"u32":4096},
// {"f32":0.1}, {"bool":true}, {"i32":[1,2,3]}, {"string":["a","b"]}. Non-finite floats,
// which JSON cannot write, are the strings "nan", "inf" and "-inf". Arrays longer than
// kGgufMetadataArrayLimit elements (token lists, merges) are left out unless
// GgufConvertOptions::all_metadata; the report lists them. The header's 100,000,000-byte
// cap (kHeaderTooLarge) still holds.
//
// SPLIT MODELS
// The first part of a split model ("NAME-00001-of-0000M.gguf", split.count M > 1) is
// converted as the whole set (gguf::CheckSplitSet validates every part first) into a
// folder: model-0000N-of-0000M.safetensors for part N, each with its part's tensors and
// metadata, and model.safetensors.index.json. The folder is written as ConvertTorchFolder
// writes one (stguard/torch_checkpoint.h, OUTPUT FOLDER): names reached through the
// folder's descriptor, every file staged and renamed into place only once all are
// complete, the index last. A later part given alone is refused (kGgufSplitMismatch).
// A folder that ConvertGguf created is removed again when it fails; a signal that ends
// the process leaves it behind, empty (the staged files are removed by the handler).
//
// RESOURCES
// Tensors are read with pread(2) (never through a mapping, whose pages would stay
// resident; a file truncated meanwhile is kIoError) and streamed into the crash-safe
// writer kGgufConvertStepElements elements at a time: peak memory is the headers plus
// a few fixed buffers (about 3 MiB), whatever the model's size. On any error, or a
// signal the program handles with RemoveTemporaryFilesOnSignals, nothing is left at OUT.
#ifndef STGUARD_GGUF_CONVERT_H_
#define STGUARD_GGUF_CONVERT_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "stguard/dtype.h"
#include "stguard/error.h"
#include "stguard/export.h"
#include "stguard/gguf.h"

namespace stguard {

class MappedFile;
class Writer;

// kGgufMetadataArrayLimit: longer arrays are left out of __metadata__ by default.
inline constexpr uint64_t kGgufMetadataArrayLimit = 1024;
// kGgufConvertStepElements: how many elements are read, decoded and written at a time.
inline constexpr uint64_t kGgufConvertStepElements = uint64_t{1} << 18;

// GgufConvertOptions tunes the conversion. The defaults keep every plain dtype.
struct STGUARD_API GgufConvertOptions {
  // F32, F16 or BF16: what every floating tensor becomes. Unset: plain tensors keep their
  // dtype and quantized ones become F32.
  std::optional<Dtype> dtype;
  // Keep arrays longer than kGgufMetadataArrayLimit elements in __metadata__.
  bool all_metadata = false;
};

// GgufOmittedKey is a metadata array left out of __metadata__.
struct STGUARD_API GgufOmittedKey {
  std::string key;
  std::string element_type;  // "string", "i32"...
  uint64_t count = 0;
};

// GgufConvertReport says what a conversion wrote.
struct STGUARD_API GgufConvertReport {
  std::vector<std::string> written;  // the output file, or the folder's file names, index last
  size_t num_tensors = 0;
  size_t num_dequantized = 0;  // tensors of a block type
  size_t num_converted = 0;    // tensors whose dtype changed: dequantized, or to `dtype`
  uint64_t total_size = 0;     // data bytes written
  std::vector<GgufOmittedKey> omitted;
};

// GgufMetadataText renders one metadata value for __metadata__ (see METADATA above).
STGUARD_API std::string GgufMetadataText(const gguf::Value& value);

// GgufOutputDtype is the safetensors dtype `tensor` is written as with `target` (see WHAT
// A TENSOR BECOMES), or kGgufNotDequantizable naming the tensor and its type.
[[nodiscard]] STGUARD_API Result<Dtype> GgufOutputDtype(const gguf::TensorInfo& tensor,
                                                        std::optional<Dtype> target);

// DequantizeTensor decodes `blocks` (a whole tensor's bytes of `type`, such as
// TensorInfo::data) to F32 in `out`, which must hold exactly the tensor's elements. Block
// types use the ggml decoders; F32, F16, BF16 and F64 are converted as ConvertToF32 does.
// Returns kGgufNotDequantizable for any other type (integers, types without a decoder),
// kInvalidArgument when the sizes do not match; nothing is written then.
[[nodiscard]] STGUARD_API Error DequantizeTensor(const gguf::GgmlType& type,
                                                 std::span<const std::byte> blocks,
                                                 std::span<float> out);

// AddGgufTensors adds every tensor of `file` to `writer` as a producer that reads its
// bytes from `data` (the same file, opened with MappedFile::OpenUnmapped: pread, no
// mapping) and the metadata as __metadata__. Both must outlive the writer's last write.
// Omitted arrays are appended to report->omitted; the counts are added to the report.
[[nodiscard]] STGUARD_API Error AddGgufTensors(const gguf::GgufFile& file,
                                               const MappedFile& data,
                                               const GgufConvertOptions& options,
                                               Writer* writer, GgufConvertReport* report);

// ConvertGguf converts the GGUF file `in_path` to the safetensors file `out_path`, or,
// when `in_path` is the first part of a split model, the whole set into the folder
// `out_path` (created when absent; removed again on failure if this call created it).
// On any error nothing is written: the error names the file, tensor and offset.
[[nodiscard]] STGUARD_API Error ConvertGguf(const std::string& in_path,
                                            const std::string& out_path,
                                            const GgufConvertOptions& options,
                                            GgufConvertReport* report);

// IsGgufSplitFirstPart says whether `file` is the first of several parts (split.no 0,
// split.count above 1): ConvertGguf then writes a folder.
STGUARD_API bool IsGgufSplitFirstPart(const gguf::GgufFile& file);

}  // namespace stguard

#endif  // STGUARD_GGUF_CONVERT_H_
