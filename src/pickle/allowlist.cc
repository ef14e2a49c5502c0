// SPDX-License-Identifier: Apache-2.0
// The allowlist table (see allowlist.h for where each row comes from).
#include "pickle/allowlist.h"

namespace stguard {
namespace {

constexpr AllowedGlobal kAllowed[] = {
    {"collections", "OrderedDict", GlobalKind::kOrderedDict, Dtype::kU8},
    {"torch._utils", "_rebuild_tensor_v2", GlobalKind::kRebuildTensorV2, Dtype::kU8},
    {"torch._utils", "_rebuild_parameter", GlobalKind::kRebuildParameter, Dtype::kU8},
    // torch/storage.py _dtype_to_storage_type_map, the rows with a safetensors dtype.
    {"torch", "DoubleStorage", GlobalKind::kStorageType, Dtype::kF64},
    {"torch", "FloatStorage", GlobalKind::kStorageType, Dtype::kF32},
    {"torch", "HalfStorage", GlobalKind::kStorageType, Dtype::kF16},
    {"torch", "BFloat16Storage", GlobalKind::kStorageType, Dtype::kBF16},
    {"torch", "LongStorage", GlobalKind::kStorageType, Dtype::kI64},
    {"torch", "IntStorage", GlobalKind::kStorageType, Dtype::kI32},
    {"torch", "ShortStorage", GlobalKind::kStorageType, Dtype::kI16},
    {"torch", "CharStorage", GlobalKind::kStorageType, Dtype::kI8},
    {"torch", "ByteStorage", GlobalKind::kStorageType, Dtype::kU8},
    {"torch", "BoolStorage", GlobalKind::kStorageType, Dtype::kBOOL},
    {"torch", "ComplexFloatStorage", GlobalKind::kStorageType, Dtype::kC64},
};

}  // namespace

const AllowedGlobal* FindAllowedGlobal(std::string_view module, std::string_view name) {
  for (const AllowedGlobal& row : kAllowed) {
    if (row.module == module && row.name == name) return &row;
  }
  return nullptr;
}

std::span<const AllowedGlobal> AllowedGlobals() { return kAllowed; }

}  // namespace stguard
