# SPDX-License-Identifier: Apache-2.0
"""torch tensors to and from safetensors, strictly: ``stguard.torch`` is a drop-in for
``safetensors.torch``.

Loading gives zero-copy cpu tensors over a private copy-on-write mapping (writing into
them never changes the file). BF16 loads as ``torch.bfloat16``. Types this torch lacks
come back as raw bits (torch 1.13: U16/U32/U64 as int16/int32/int64; F8_*, F6_*, F4 as
uint8). Saving writes the canonical file, byte for byte what the reference writes,
crash-safely. Like the reference it refuses tensors that overlap in memory (tied
weights: save a ``.clone()`` of one); unlike it, it makes non-contiguous tensors
contiguous instead of refusing them.
"""

import os
from collections import defaultdict
from typing import Any, Dict, List, Optional, Set

import torch

from . import _core
from ._error import SafetensorError, invalid_argument
from ._frameworks import TorchFramework
from ._open import safe_open
from ._views import view

__all__ = ["load", "load_file", "save", "save_file", "SafetensorError"]

# torch dtype -> (safetensors dtype, the same-size torch dtype whose .numpy() works).
_SAVE_DTYPES: Dict[Any, Any] = {
    torch.bool: ("BOOL", None), torch.uint8: ("U8", None), torch.int8: ("I8", None),
    torch.int16: ("I16", None), torch.float16: ("F16", None),
    torch.bfloat16: ("BF16", torch.int16), torch.int32: ("I32", None),
    torch.float32: ("F32", None), torch.complex64: ("C64", None),
    torch.float64: ("F64", None), torch.int64: ("I64", None),
}
for _name, _attribute in (("F8_E4M3", "float8_e4m3fn"), ("F8_E5M2", "float8_e5m2")):
    if hasattr(torch, _attribute):
        _SAVE_DTYPES[getattr(torch, _attribute)] = (_name, torch.uint8)
for _name, _attribute, _bits in (("U16", "uint16", torch.int16), ("U32", "uint32", torch.int32),
                                 ("U64", "uint64", torch.int64)):
    if hasattr(torch, _attribute):
        _SAVE_DTYPES[getattr(torch, _attribute)] = (_name, _bits)


def _storage_key(tensor: torch.Tensor):
    try:
        storage = tensor.untyped_storage()
    except AttributeError:  # torch < 2.0
        storage = tensor.storage()
    return (tensor.device, storage.data_ptr(), storage.nbytes())


def _byte_range(tensor: torch.Tensor):
    """Returns [start, stop) of the bytes the tensor's elements can touch."""
    start = tensor.data_ptr()
    if tensor.numel() == 0:
        return start, start
    span = sum((size - 1) * stride for size, stride in zip(tensor.shape, tensor.stride())) + 1
    return start, start + span * tensor.element_size()


def _shared_groups(tensors: Dict[str, torch.Tensor]) -> List[Set[str]]:
    """Returns the groups of tensors whose bytes overlap within one storage, as the
    reference's save_file finds them (it refuses these too)."""
    by_storage = defaultdict(list)
    for name, tensor in tensors.items():
        if tensor.device.type == "meta":
            continue
        key = _storage_key(tensor)
        if key[1] != 0 and key[2] != 0:
            by_storage[key].append(name)
    groups = []
    for names in by_storage.values():
        if len(names) < 2:
            continue
        areas = sorted((*_byte_range(tensors[name]), name) for name in names)
        current, last_stop = {areas[0][2]}, areas[0][1]
        for start, stop, name in areas[1:]:
            if start < last_stop:
                current.add(name)
            else:
                if len(current) > 1:
                    groups.append(current)
                current = {name}
            last_stop = max(last_stop, stop)
        if len(current) > 1:
            groups.append(current)
    return groups


def _entries(tensors: Dict[str, torch.Tensor]) -> list:
    if not isinstance(tensors, dict):
        raise invalid_argument(f"expected a dict of str to torch.Tensor, not {type(tensors).__name__}")
    for name, tensor in tensors.items():
        if not isinstance(name, str):
            raise invalid_argument(f"tensor names must be str, not {type(name).__name__}")
        if not isinstance(tensor, torch.Tensor):
            raise invalid_argument(f"expected a torch.Tensor, not {type(tensor).__name__}", name)
        if tensor.layout != torch.strided:
            raise invalid_argument(f"cannot save a {tensor.layout} tensor: make it dense first", name)
        if tensor.dtype not in _SAVE_DTYPES:
            raise invalid_argument(f"torch dtype {tensor.dtype} has no safetensors dtype", name)
    shared = _shared_groups(tensors)
    if shared:
        listed = ", ".join(str(sorted(group)) for group in shared)
        raise invalid_argument(
            f"some tensors share memory, which would store the bytes twice and load them as "
            f"separate tensors: {listed}; save a .clone() of all but one of each group",
            sorted(shared[0])[0])
    entries = []
    for name, tensor in tensors.items():
        dtype_name, numpy_type = _SAVE_DTYPES[tensor.dtype]
        tensor = tensor.detach()
        if tensor.device.type != "cpu":
            tensor = tensor.cpu()
        if not tensor.is_contiguous():
            tensor = tensor.contiguous()
        if numpy_type is not None:
            tensor = tensor.view(numpy_type)
        entries.append((name, dtype_name, tuple(int(d) for d in tensor.shape), tensor.numpy()))
    return entries


def save(tensors: Dict[str, torch.Tensor], metadata: Optional[Dict[str, str]] = None) -> bytes:
    """Returns the canonical safetensors file for ``tensors`` as bytes.

    Raises SafetensorError (nothing is returned) for a tensor named ``__metadata__``,
    tensors sharing memory, sparse tensors, dtypes safetensors lacks, or metadata that is
    not a dict of str to str.

    Example:
        >>> data = stguard.torch.save({"w": torch.zeros(2, 2)}, metadata={"format": "pt"})
    """
    return _core.serialize(_entries(tensors), metadata)


def save_file(tensors: Dict[str, torch.Tensor], filename: "os.PathLike[str] | str",
              metadata: Optional[Dict[str, str]] = None) -> None:
    """Writes ``tensors`` to ``filename`` in canonical form, crash-safely (a temporary
    file beside it, fsync, rename): on any error the file keeps its old content. Raises
    SafetensorError for what ``save`` refuses and for I/O errors.

    Example:
        >>> stguard.torch.save_file(model.state_dict(), "model.safetensors",
        ...                         metadata={"format": "pt"})
    """
    _core.write_file(os.fspath(filename), _entries(tensors), metadata)


def load(data: bytes) -> Dict[str, torch.Tensor]:
    """Validates ``data`` (a whole file in memory) and returns its tensors in file order,
    sharing one private copy of ``data``. Raises SafetensorError for invalid data.

    Example:
        >>> stguard.torch.load(stguard.torch.save({"w": torch.ones(2)}))["w"]
        tensor([1., 1.])
    """
    storage = _core.Storage.from_bytes(data)
    framework = TorchFramework("cpu")
    return {info[0]: framework.wrap(view(storage, info, framework.numpy_dtype(info[1])), info[1])
            for info in storage.tensors()}


def load_file(filename: "os.PathLike[str] | str", device: Any = "cpu") -> Dict[str, torch.Tensor]:
    """Validates ``filename`` and returns its tensors in file order. On the cpu they are
    lazy zero-copy views of a private copy-on-write mapping; on another device, copies.
    Raises SafetensorError for an invalid file.

    Example:
        >>> state = stguard.torch.load_file("model.safetensors")
        >>> model.load_state_dict(state)
    """
    with safe_open(filename, framework="pt", device=device) as f:
        return {name: f.get_tensor(name) for name in f.offset_keys()}
