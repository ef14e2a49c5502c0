# SPDX-License-Identifier: Apache-2.0
"""torch tensors to and from safetensors, strictly: ``stguard.torch`` is a drop-in for
``safetensors.torch``.

Loading gives zero-copy cpu tensors over a private copy-on-write mapping (writing into
them never changes the file). BF16 loads as ``torch.bfloat16``. Types this torch lacks
come back as raw bits (torch 1.13: U16/U32/U64 as int16/int32/int64; F8_*, F6_*, F4 as
uint8). Saving writes the canonical file, byte for byte what the reference writes,
crash-safely. Like the reference ``save_file`` refuses tensors that overlap in memory
(a RuntimeError) and non-contiguous tensors (a ValueError), and ``save_model``/``load_model``
handle tied weights by saving one name and restoring the others (``save_model`` saves
contiguous copies unless ``force_contiguous=False``). The helpers other libraries import
from ``safetensors.torch`` (``storage_ptr``, ``storage_size``, ``_find_shared_tensors``,
``_is_complete``, ``_end_ptr``, ``_remove_duplicate_names``) give the reference's results.
"""

import os
from typing import Any, Dict, List, Optional, Set, Tuple

import numpy as np
import torch

from . import _core
from ._error import (SafetensorError, SafetensorRuntimeError, SafetensorValueError,
                     invalid_argument, reference_refusal, refusal)
from ._frameworks import TorchFramework, numpy_type_for_torch
from ._open import safe_open
from ._serialize import check_metadata, check_name
from ._views import DTYPES, is_numpy_own, view
from ._torch_shared import (  # noqa: F401 (re-exported: libraries import them from here)
    _end_ptr, _find_shared_tensors, _is_complete, _remove_duplicate_names, overlapping_groups,
    storage_ptr, storage_size)

__all__ = ["load", "load_file", "load_model", "save", "save_file", "save_model",
           "storage_ptr", "storage_size", "SafetensorError"]


def _save_dtypes() -> Dict[Any, Any]:
    """torch dtype -> (safetensors dtype, the same-size torch dtype whose .numpy() works,
    or None when its own does), for the whole-byte dtypes of the library's table that
    this torch has."""
    table: Dict[Any, Any] = {}
    for name, bits, numpy_type, framework_name in DTYPES:
        torch_type = getattr(torch, framework_name, None) if framework_name else None
        if bits % 8 or not isinstance(torch_type, torch.dtype):
            continue
        torch_numpy_type = numpy_type_for_torch(numpy_type)
        if is_numpy_own(numpy_type, framework_name) and torch_numpy_type == numpy_type:
            table[torch_type] = (name, None)
        else:  # its bits, as the integer type torch.from_numpy makes of them
            table[torch_type] = (name, torch.from_numpy(np.empty(0, torch_numpy_type)).dtype)
    return table


_SAVE_DTYPES: Dict[Any, Any] = _save_dtypes()


def _entries(tensors: Dict[str, torch.Tensor]) -> list:
    # The checks run in the reference's order, with its messages: types and sparse
    # layouts first, then shared memory, then contiguity.
    if not isinstance(tensors, dict):
        raise reference_refusal(
            SafetensorValueError,
            f"Expected a dict of [str, torch.Tensor] but received {type(tensors)}")
    sparse = []
    for name, tensor in tensors.items():
        check_name(name)
        if not isinstance(tensor, torch.Tensor):
            raise reference_refusal(
                SafetensorValueError,
                f"Key `{name}` is invalid, expected torch.Tensor but received {type(tensor)}",
                name)
        if tensor.layout != torch.strided:
            sparse.append(name)
    if sparse:
        raise reference_refusal(
            SafetensorValueError,
            f"You are trying to save a sparse tensors: `{sparse}` which this library does "
            "not support. You can make it a dense tensor before saving with `.to_dense()` "
            "but be aware this might make a much larger file than needed.", sparse[0])
    for name, tensor in tensors.items():
        if tensor.dtype not in _SAVE_DTYPES:
            raise invalid_argument(f"torch dtype {tensor.dtype} has no safetensors dtype", name)
    shared = overlapping_groups(tensors)
    if shared:
        listed = ", ".join(str(sorted(group)) for group in shared)
        raise refusal(
            SafetensorRuntimeError,
            f"some tensors share memory, which would store the bytes twice and load them as "
            f"separate tensors: {listed}; to save a model with tied weights use "
            f"stguard.torch.save_model (it saves one name and load_model restores the "
            f"others), or save a .clone() of all but one of each group",
            sorted(shared[0])[0])
    for name, tensor in tensors.items():
        if not tensor.is_contiguous():
            # Saving a view's bytes as its own tensor hides that it was a view: the
            # caller chooses (.contiguous(), or save_model(force_contiguous=True)).
            raise reference_refusal(
                SafetensorValueError,
                f"You are trying to save a non contiguous tensor: `{name}` which is not "
                "allowed. It either means you are trying to save tensors which are "
                "reference of each other in which case it's recommended to save only the "
                "full tensors, and reslice at load time, or simply call `.contiguous()` on "
                "your tensor to pack it before saving.", name)
    entries = []
    for name, tensor in tensors.items():
        dtype_name, numpy_type = _SAVE_DTYPES[tensor.dtype]
        tensor = tensor.detach()
        if tensor.device.type != "cpu":
            tensor = tensor.cpu()
        if numpy_type is not None:
            tensor = tensor.view(numpy_type)
        entries.append((name, dtype_name, tuple(int(d) for d in tensor.shape), tensor.numpy()))
    return entries


def save(tensors: Dict[str, torch.Tensor], metadata: Optional[Dict[str, str]] = None) -> bytes:
    """Returns the canonical safetensors file for ``tensors`` as bytes.

    Raises SafetensorError (nothing is returned) for a tensor named ``__metadata__`` or a
    dtype safetensors lacks; as the reference, RuntimeError for tensors sharing memory,
    ValueError for a sparse tensor, a value that is not a tensor or a non-dict, TypeError
    for a name or metadata that is not str (all SafetensorErrors too).

    Example:
        >>> data = stguard.torch.save({"w": torch.zeros(2, 2)}, metadata={"format": "pt"})
    """
    check_metadata(metadata)
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
    check_metadata(metadata)
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


def load_file(filename: "os.PathLike[str] | str", device: Any = "cpu", *,
              backend: str = "mmap") -> Dict[str, torch.Tensor]:
    """Validates ``filename`` and returns its tensors in file order. On the cpu with
    ``backend="mmap"`` they are lazy zero-copy views of a private copy-on-write mapping;
    with ``backend="pread"`` fresh tensors read with pread; on another device, copies.
    Raises FileNotFoundError for a missing file, SafetensorError for an invalid one.

    Example:
        >>> state = stguard.torch.load_file("model.safetensors")
        >>> model.load_state_dict(state)
    """
    with safe_open(filename, framework="pt", device=device, backend=backend) as f:
        return f.get_tensors()


def save_model(model: torch.nn.Module, filename: "os.PathLike[str] | str",
               metadata: Optional[Dict[str, str]] = None,
               force_contiguous: bool = True) -> None:
    """Saves ``model.state_dict()`` where tied weights (names sharing one storage) are
    saved once: the name kept is the first, in sorted order, of those covering the whole
    storage, and each dropped name is recorded in the metadata as ``{dropped: kept}``
    (unless the caller's metadata already has that key). The caller's dict is not changed.

    With ``force_contiguous`` (the default, as the reference) non-contiguous tensors are
    saved as contiguous copies; without it they are refused (ValueError, as ``save_file``,
    its text suggesting ``force_contiguous=True``). Raises RuntimeError when no name of a
    shared group covers its whole storage (saving it would store more than needed).

    Example:
        >>> stguard.torch.save_model(model, "model.safetensors")  # lm_head tied to embed
    """
    state_dict = model.state_dict()
    metadata = None if metadata is None else dict(metadata)
    for kept_name, dropped_names in _remove_duplicate_names(state_dict).items():
        for dropped in dropped_names:
            if metadata is None:
                metadata = {}
            metadata.setdefault(dropped, kept_name)
            del state_dict[dropped]
    if force_contiguous:
        state_dict = {name: tensor.contiguous() for name, tensor in state_dict.items()}
    try:
        save_file(state_dict, filename, metadata=metadata)
    except SafetensorValueError as error:
        # The reference's hint, on its text; stguard's code and tensor are kept.
        raise SafetensorValueError(
            f"{error} Or use save_model(..., force_contiguous=True), read the docs for "
            "potential caveats.", error.code, error.offset, error.tensor) from None


def load_model(model: torch.nn.Module, filename: "os.PathLike[str] | str", strict: bool = True,
               device: Any = "cpu", *, backend: str = "mmap") -> Tuple[Set[str], List[str]]:
    """Loads ``filename`` into ``model``, restoring tied weights that ``save_model`` saved
    under one name. Returns ``(missing, unexpected)``: names of the model the file did not
    set, and names of the file the model did not use. With ``strict`` (the default) either
    is a RuntimeError listing them.

    Example:
        >>> missing, unexpected = stguard.torch.load_model(model, "model.safetensors")
    """
    state_dict = load_file(filename, device=device, backend=backend)
    aliases = _remove_duplicate_names(model.state_dict(), preferred_names=list(state_dict))
    missing, unexpected = model.load_state_dict(state_dict, strict=False)
    missing = set(missing)
    for alias_names in aliases.values():
        for alias in alias_names:
            if alias in missing:
                missing.remove(alias)  # set through the name it shares storage with
            else:
                unexpected.append(alias)
    if strict and (missing or unexpected):
        message = f"Error(s) in loading state_dict for {type(model).__name__}:"
        if missing:
            message += "\n    Missing key(s) in state_dict: " + \
                ", ".join(f'"{name}"' for name in sorted(missing))
        if unexpected:
            message += "\n    Unexpected key(s) in state_dict: " + \
                ", ".join(f'"{name}"' for name in sorted(unexpected))
        raise RuntimeError(message)
    return missing, unexpected  # missing is a set, as the reference returns it
