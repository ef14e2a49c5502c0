// SPDX-License-Identifier: Apache-2.0
// pickle/allowlist.h: the only globals a pickle may name.
//
// GLOBAL and STACK_GLOBAL never import anything: they look the (module, name) pair up in
// this table and refuse the pickle (kPickleGlobalRefused) when it is not there. The table
// holds exactly what torch.save writes for a plain tensor or state dict in torch 1.x and
// 2.x, as read from PyTorch's sources:
// - torch/_tensor.py, Tensor._reduce_ex_internal: a dense CPU tensor pickles as
//   torch._utils._rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad,
//   backward_hooks[, metadata]) with backward_hooks an OrderedDict;
// - torch/nn/parameter.py, Parameter.__reduce_ex__: torch._utils._rebuild_parameter(data,
//   requires_grad, backward_hooks);
// - torch/serialization.py, _save / _legacy_save persistent_id: a storage is named by its
//   legacy type (torch.FloatStorage, ...), from the map in torch/storage.py
//   (_dtype_to_storage_type_map); only the types with a safetensors dtype are listed;
// - torch/nn/modules/module.py, state_dict: collections.OrderedDict, whose _metadata
//   attribute arrives through BUILD;
// - torch 2.x, for the dtypes that have no legacy storage type (torch/storage.py
//   _new_dtypes: float8_*, uint16/32/64, ...), torch/_tensor.py _reduce_ex_internal writes
//   torch._utils._rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad,
//   backward_hooks, dtype[, metadata]) (torch/_utils.py) on the tensor's untyped storage,
//   which torch/serialization.py persistent_id names ("storage", torch.storage.
//   UntypedStorage, key, location, nbytes); the dtype is a global such as
//   torch.float8_e4m3fn (torch.dtype pickles by name). Only the dtypes with a safetensors
//   dtype are listed; the others (complex32, float4_e2m1fn_x2, bits*) are refused with
//   their own message (TorchDtypeWithoutSafetensors).
// torch/_weights_only_unpickler.py (weights_only=True) allows more: every _rebuild_*
// function (sparse, quantized, meta, wrapper subclasses), torch.Size, torch.device, dtypes,
// and arbitrary BUILD on tensors. None of those is needed for dense weights, so none is here.
#ifndef STGUARD_SRC_PICKLE_ALLOWLIST_H_
#define STGUARD_SRC_PICKLE_ALLOWLIST_H_

#include <span>
#include <string_view>

#include "stguard/dtype.h"

namespace stguard {

// GlobalKind is what an allowed global is for.
enum class GlobalKind : uint8_t {
  kOrderedDict,      // collections.OrderedDict: called with () to make an empty mapping
  kRebuildTensorV2,  // torch._utils._rebuild_tensor_v2: makes a tensor view of a storage
  kRebuildParameter, // torch._utils._rebuild_parameter: wraps a tensor
  kStorageType,      // torch.<X>Storage: names a storage's dtype inside a persistent id
  kRebuildTensorV3,  // torch._utils._rebuild_tensor_v3: a tensor view of an untyped storage
  kUntypedStorage,   // torch.storage.UntypedStorage: a persistent id's tag (bytes, no dtype)
  kTorchDtype,       // torch.<dtype>: _rebuild_tensor_v3's dtype argument, never called
};

// AllowedGlobal is one row of the allowlist.
struct AllowedGlobal {
  std::string_view module;
  std::string_view name;
  GlobalKind kind;
  Dtype dtype;  // for kStorageType and kTorchDtype
};

// FindAllowedGlobal returns the row for module.name, or nullptr when it is not allowed.
const AllowedGlobal* FindAllowedGlobal(std::string_view module, std::string_view name);

// TorchDtypeWithoutSafetensors says whether module.name is a torch dtype that torch.save
// can write (torch/storage.py _new_dtypes) but that has no safetensors dtype, so that its
// refusal can say so.
bool TorchDtypeWithoutSafetensors(std::string_view module, std::string_view name);

// AllowedGlobals lists the whole table, in a fixed order. The pickle machine keeps an
// allowed global as its row's index in this span, and the pickle fuzz mutator builds its
// list of globals to try from it, so that a row added here is fuzzed too.
std::span<const AllowedGlobal> AllowedGlobals();

}  // namespace stguard

#endif  // STGUARD_SRC_PICKLE_ALLOWLIST_H_
