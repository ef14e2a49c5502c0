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
    // torch 2.x: torch/_utils.py _rebuild_tensor_v3, written by torch/_tensor.py
    // _reduce_ex_internal for the dtypes of torch/storage.py _new_dtypes, on the untyped
    // storage that torch/serialization.py persistent_id tags torch.storage.UntypedStorage.
    {"torch._utils", "_rebuild_tensor_v3", GlobalKind::kRebuildTensorV3, Dtype::kU8},
    {"torch.storage", "UntypedStorage", GlobalKind::kUntypedStorage, Dtype::kU8},
    // The rows of _new_dtypes that have a safetensors dtype (a torch.dtype pickles as the
    // global torch.<name>).
    {"torch", "float8_e4m3fn", GlobalKind::kTorchDtype, Dtype::kF8_E4M3},
    {"torch", "float8_e5m2", GlobalKind::kTorchDtype, Dtype::kF8_E5M2},
    {"torch", "float8_e4m3fnuz", GlobalKind::kTorchDtype, Dtype::kF8_E4M3FNUZ},
    {"torch", "float8_e5m2fnuz", GlobalKind::kTorchDtype, Dtype::kF8_E5M2FNUZ},
    {"torch", "float8_e8m0fnu", GlobalKind::kTorchDtype, Dtype::kF8_E8M0},
    {"torch", "uint16", GlobalKind::kTorchDtype, Dtype::kU16},
    {"torch", "uint32", GlobalKind::kTorchDtype, Dtype::kU32},
    {"torch", "uint64", GlobalKind::kTorchDtype, Dtype::kU64},
};

// The rest of torch/storage.py _new_dtypes: written by torch 2.x, no safetensors dtype
// (complex32 has no C32; float4_e2m1fn_x2 packs two values a byte, unlike F4's shapes;
// bits* are opaque). ComplexDoubleStorage (complex128) has no safetensors dtype either.
constexpr std::string_view kDtypesWithoutSafetensors[] = {
    "complex32", "float4_e2m1fn_x2", "bits8", "bits16", "bits1x8", "bits2x4", "bits4x2",
    "ComplexDoubleStorage",
};

}  // namespace

const AllowedGlobal* FindAllowedGlobal(std::string_view module, std::string_view name) {
  for (const AllowedGlobal& row : kAllowed) {
    if (row.module == module && row.name == name) return &row;
  }
  return nullptr;
}

bool TorchDtypeWithoutSafetensors(std::string_view module, std::string_view name) {
  if (module != "torch") return false;
  for (std::string_view dtype : kDtypesWithoutSafetensors) {
    if (dtype == name) return true;
  }
  return false;
}

std::span<const AllowedGlobal> AllowedGlobals() { return kAllowed; }

}  // namespace stguard
