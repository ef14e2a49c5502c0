// SPDX-License-Identifier: Apache-2.0
// The state dict's tensors: selection, view bounds (overflow-checked) and aliases.
#include "torch/tensor_views.h"

#include <map>
#include <string>
#include <tuple>
#include <unordered_map>

#include "base/checked_math.h"

namespace stguard {
namespace {

Error NotAStateDict(uint64_t at, const char* message, std::string context = {}) {
  return Error{ErrorCode::kNotAStateDict, at, message, std::move(context)};
}

// CheckView validates `ref` against its storage and fills the view fields of *out.
Error CheckView(const TensorRef& ref, const StorageRef& storage, TorchTensor* out) {
  auto fail = [&](const char* message, std::string context = {}) {
    Error error{ErrorCode::kTensorOutOfBounds, ref.offset, message, std::move(context)};
    error.tensor = out->name;
    return error;
  };
  if (ref.storage_offset < 0) return fail("negative storage offset");
  out->storage_offset = static_cast<uint64_t>(ref.storage_offset);
  uint64_t num_elements = 1;
  for (size_t d = 0; d < ref.sizes.size(); ++d) {
    if (ref.sizes[d] < 0) return fail("negative size", std::to_string(ref.sizes[d]));
    if (ref.strides[d] < 0) return fail("negative stride", std::to_string(ref.strides[d]));
    out->shape.push_back(static_cast<uint64_t>(ref.sizes[d]));
    out->strides.push_back(static_cast<uint64_t>(ref.strides[d]));
    if (!CheckedMul(num_elements, out->shape.back(), &num_elements)) {
      return fail("element count overflows 64 bits");
    }
  }
  const uint64_t element_len = DtypeBits(out->dtype) / 8;
  if (!CheckedMul(num_elements, element_len, &out->byte_len)) {
    return fail("byte count overflows 64 bits");
  }
  // The last element a view touches: offset + sum (size - 1) * stride; for an empty view,
  // none (torch still requires offset <= the storage's size).
  uint64_t last = out->storage_offset;
  if (num_elements == 0) {
    if (out->storage_offset > storage.num_elements) return fail("storage offset past the end");
  } else {
    for (size_t d = 0; d < out->shape.size(); ++d) {
      uint64_t reach = 0;
      if (!CheckedMul(out->shape[d] - 1, out->strides[d], &reach) ||
          !CheckedAdd(last, reach, &last)) {
        return fail("view extent overflows 64 bits");
      }
    }
    if (last >= storage.num_elements) {
      return fail("view reaches past the end of its storage",
                  "last element " + std::to_string(last) + " of " +
                      std::to_string(storage.num_elements));
    }
  }
  // Contiguous: each dimension of size > 1 has the row-major stride.
  out->contiguous = true;
  uint64_t expected = 1;
  for (size_t d = out->shape.size(); d-- > 0;) {
    if (out->shape[d] != 1 && out->strides[d] != expected) out->contiguous = false;
    expected *= out->shape[d] == 0 ? 1 : out->shape[d];  // cannot overflow: product checked
  }
  return {};
}

// SelectStateDict follows options.key_path from the root to the state dict.
Error SelectStateDict(const PickleResult& p, const TorchOptions& options,
                      const PickleValue** out) {
  const PickleValue* dict = &p.at(p.root);
  std::string path;  // the keys followed so far, for messages: "model" / "state_dict"
  for (const std::string& wanted : options.key_path) {
    if (dict->kind != ValueKind::kDict) {
      return NotAStateDict(dict->offset,
                           path.empty() ? "the checkpoint is not a dict, so it has no key"
                                        : "the value under the key path is not a dict",
                           path.empty() ? wanted : path);
    }
    path += path.empty() ? wanted : " / " + wanted;
    const PickleValue* found = nullptr;
    for (size_t k = 0; k + 1 < dict->items.size(); k += 2) {
      const PickleValue& key = p.at(dict->items[k]);
      if (key.kind == ValueKind::kString && key.text == wanted) {
        found = &p.at(dict->items[k + 1]);
      }
    }
    if (found == nullptr) return NotAStateDict(dict->offset, "no such key", path);
    dict = found;
  }
  if (dict->kind != ValueKind::kDict) {
    return NotAStateDict(dict->offset, "the object is not a dict of names to tensors", path);
  }
  *out = dict;
  return {};
}

// CheckOutputBound refuses views whose bytes, all together, exceed the bound of
// TorchOptions::max_output_ratio (see torch_checkpoint.h, OUTPUT BOUND).
Error CheckOutputBound(const std::vector<TorchTensor>& tensors, const TorchOptions& options,
                       uint64_t input_size) {
  if (options.max_output_ratio == 0) return {};
  uint64_t bound = 0;
  if (!CheckedMul(input_size, options.max_output_ratio, &bound) ||
      !CheckedAdd(bound, kTorchOutputAllowance, &bound)) {
    return {};  // beyond 2^64 bytes: no checkpoint's views can reach it
  }
  uint64_t total = 0;
  for (const TorchTensor& tensor : tensors) {
    if (!CheckedAdd(total, tensor.byte_len, &total) || total > bound) {
      Error error{ErrorCode::kOutputTooLarge, tensor.offset,
                  "the tensors ask for more output bytes than the checkpoint's size allows "
                  "(overlapping views or many names on one storage)",
                  "more than " + std::to_string(bound) + " bytes from a " +
                      std::to_string(input_size) + "-byte checkpoint, at most " +
                      std::to_string(options.max_output_ratio) + "x"};
      error.tensor = tensor.name;
      return error;
    }
  }
  return {};
}

// ChargeShape accounts for copying one name's shape and strides (the pickle's shared
// TensorRef, copied per name: a tensor of many dimensions under many names) against the
// pickle's copy budget (pickle_reader.h, BOUNDS).
Error ChargeShape(const PickleResult& p, const TensorRef& ref, const std::string& name,
                  uint64_t* copied) {
  const uint64_t items = 2 * static_cast<uint64_t>(ref.sizes.size());
  const uint64_t budget = CopyBudget(p.length);
  if (*copied > budget || items > budget - *copied) {
    Error error{ErrorCode::kOutputTooLarge, ref.offset,
                "the names' shapes hold more dimensions than the pickle's length allows (one "
                "tensor of many dimensions under many names)",
                "more than " + std::to_string(budget) + " sizes and strides from a " +
                    std::to_string(p.length) + "-byte pickle"};
    error.tensor = name;
    return error;
  }
  *copied += items;
  return {};
}

}  // namespace

Error SelectTensors(const LoadedPickle& loaded, const TorchOptions& options,
                    uint64_t input_size, std::vector<TorchTensor>* tensors) {
  const PickleResult& p = loaded.pickle;
  const PickleValue* dict = nullptr;
  if (Error error = SelectStateDict(p, options, &dict); !error.ok()) return error;
  std::unordered_map<std::string, size_t> names;
  // (storage, offset, shape, strides) -> first tensor: tied weights.
  std::map<std::tuple<size_t, uint64_t, std::vector<uint64_t>, std::vector<uint64_t>, int>,
           size_t>
      views;
  uint64_t copied = p.copied_items;
  for (size_t k = 0; k + 1 < dict->items.size(); k += 2) {
    const PickleValue& key = p.at(dict->items[k]);
    const PickleValue& value = p.at(dict->items[k + 1]);
    if (key.kind != ValueKind::kString) {
      return NotAStateDict(key.offset, "a state dict key that is not a string");
    }
    if (value.kind != ValueKind::kTensor) {
      return NotAStateDict(value.offset,
                           value.kind == ValueKind::kDict
                               ? "value is a dict, not a tensor (select it with --key)"
                               : "value is not a tensor",
                           key.text);
    }
    if (!names.emplace(key.text, tensors->size()).second) {
      Error error{ErrorCode::kDuplicateKey, key.offset, "tensor name given twice"};
      error.tensor = key.text;
      return error;
    }
    const TensorRef& ref = p.tensors[static_cast<size_t>(value.integer)];
    if (Error error = ChargeShape(p, ref, key.text, &copied); !error.ok()) return error;
    const StorageRef& storage = p.storages[ref.storage];
    TorchTensor tensor;
    tensor.name = key.text;
    tensor.dtype = storage.dtype;
    tensor.storage = ref.storage;
    tensor.offset = ref.offset;
    if (Error error = CheckView(ref, storage, &tensor); !error.ok()) return error;
    const auto [it, added] = views.emplace(
        std::make_tuple(tensor.storage, tensor.storage_offset, tensor.shape, tensor.strides,
                        static_cast<int>(tensor.dtype)),
        tensors->size());
    if (!added) tensor.alias_of = it->second;
    tensors->push_back(std::move(tensor));
  }
  return CheckOutputBound(*tensors, options, input_size);
}

}  // namespace stguard
