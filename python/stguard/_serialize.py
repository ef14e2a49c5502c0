# SPDX-License-Identifier: Apache-2.0
"""The reference package's framework-free API: ``serialize``, ``serialize_file``,
``deserialize`` and ``TensorSpec``, over the same canonical writer and strict reader.

A tensor is given either as the released form, a dict ``{"dtype", "shape", "data"}``, or
as a ``TensorSpec``. Dtypes are named as torch and numpy name them (``"float32"``,
``"bfloat16"``, ``"float8_e4m3fn"``); safetensors' own codes (``"F32"``) are accepted too.
"""

import ctypes
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple

from . import _core
from ._error import SafetensorTypeError, SafetensorValueError, refusal
from ._views import DTYPES

# torch's and numpy's dtype names -> safetensors dtype codes, from the library's table.
_DTYPE_CODES: Dict[str, str] = {
    framework_name: name for name, _, _, framework_name in DTYPES if framework_name}
_CODES = frozenset(name for name, _, _, _ in DTYPES)


def _dtype_code(dtype: Any) -> str:
    """Returns the safetensors code for a dtype name; SafetensorError (a ValueError) for
    a name neither torch, numpy nor safetensors has."""
    if isinstance(dtype, str):
        code = _DTYPE_CODES.get(dtype, dtype if dtype in _CODES else None)
        if code is not None:
            return code
    raise refusal(SafetensorValueError, f"unknown dtype {dtype!r}; supported: "
                  f"{', '.join(_DTYPE_CODES)} (or the safetensors codes F32, BF16, ...)")


def _shape(shape: Any) -> List[int]:
    try:
        dims = [int(dim) for dim in shape]
    except (TypeError, ValueError):
        raise refusal(SafetensorTypeError, f"shape must be a sequence of ints, not {shape!r}") from None
    if any(dim < 0 for dim in dims):
        raise refusal(SafetensorValueError, f"shape {dims} has a negative dimension")
    return dims


class TensorSpec:
    """One tensor for ``serialize``/``serialize_file``: its dtype, its shape and where its
    little-endian bytes are. Keyword-only, as in the reference package.

    ``data`` (any object exporting a C-contiguous buffer: bytes, bytearray, a numpy array,
    a memoryview) is the safe way to give the bytes, without a copy: the buffer is held for
    the whole write. ``data_ptr``/``data_len`` is the reference's form: an address of raw
    process memory. Nothing can check such an address: a wrong or freed pointer reads
    whatever memory is there or crashes the process, and the caller must keep the memory
    alive and unchanged until the write returns. Prefer ``data``.

    ``data_len`` (or the buffer's length) is checked against shape x dtype when writing.
    For ``float4_e2m1fn_x2`` (two F4 values per byte) the given shape is torch's storage
    shape; the last dimension is doubled to the logical shape, as the reference does.

    Raises:
        SafetensorError (also a ValueError): an unknown dtype, at construction.
        SafetensorError (also a TypeError): neither or both of ``data`` and ``data_ptr``.

    Example:
        >>> spec = stguard.TensorSpec(dtype="float32", shape=[2], data=b"\\0" * 8)
        >>> spec.dtype, spec.shape, spec.data_len
        ('F32', [2], 8)
    """

    __slots__ = ("_dtype", "_shape", "_data_ptr", "_data_len", "_data")

    def __init__(self, *, dtype: str, shape: Sequence[int], data_ptr: Optional[int] = None,
                 data_len: Optional[int] = None, data: Any = None) -> None:
        self._dtype = _dtype_code(dtype)
        self._shape = _shape(shape)
        if self._dtype == "F4" and self._shape:
            self._shape[-1] *= 2
        if (data is None) == (data_ptr is None):
            raise refusal(SafetensorTypeError, "give either data= (a buffer) or data_ptr= and "
                          "data_len=, not both and not neither")
        if data is not None:
            try:
                view = memoryview(data)
            except TypeError:
                raise refusal(SafetensorTypeError, "data must support the buffer protocol, "
                              f"not {type(data).__name__}") from None
            if not view.c_contiguous:
                raise refusal(SafetensorValueError, "data must be a C-contiguous buffer")
            self._data, self._data_ptr, self._data_len = data, 0, view.nbytes
            return
        if not isinstance(data_ptr, int) or not isinstance(data_len, int) or \
                data_ptr < 0 or data_len < 0:
            raise refusal(SafetensorTypeError, "data_ptr and data_len must be ints >= 0")
        if data_ptr == 0 and data_len != 0:
            raise refusal(SafetensorValueError, "data_ptr is null but data_len is not 0")
        self._data, self._data_ptr, self._data_len = None, data_ptr, data_len

    @property
    def dtype(self) -> str:
        """The safetensors dtype code written in the header (``"F32"``, ``"BF16"``...)."""
        return self._dtype

    @property
    def shape(self) -> List[int]:
        """The logical shape written in the header."""
        return list(self._shape)

    @property
    def data_ptr(self) -> int:
        """The raw address given, or 0 when the bytes were given as ``data``."""
        return self._data_ptr

    @property
    def data_len(self) -> int:
        """The number of bytes."""
        return self._data_len

    def buffer(self) -> Any:
        """Returns the bytes as a buffer: ``data`` itself, or a ctypes array over
        ``data_ptr`` (no copy; see the class's warning)."""
        if self._data is not None:
            return self._data
        if self._data_len == 0:
            return b""
        return (ctypes.c_ubyte * self._data_len).from_address(self._data_ptr)

    def __repr__(self) -> str:
        where = f"data_ptr={self._data_ptr:#x}" if self._data is None else "data=<buffer>"
        return (f"TensorSpec(dtype={self._dtype!r}, shape={self._shape}, {where}, "
                f"data_len={self._data_len})")


def _entry(name: Any, value: Any) -> Tuple[str, str, Tuple[int, ...], Any]:
    """Returns the core's (name, dtype code, shape, buffer) for one tensor."""
    if isinstance(value, TensorSpec):
        return name, value.dtype, tuple(value.shape), value.buffer()
    if not isinstance(value, dict):
        raise refusal(SafetensorTypeError, "expected a TensorSpec or a dict with dtype, shape "
                      f"and data, not {type(value).__name__}", str(name))
    missing = [key for key in ("dtype", "shape", "data") if key not in value]
    if missing:
        raise refusal(SafetensorTypeError, f"the tensor dict lacks {', '.join(missing)} (a "
                      "dict needs dtype, shape and data; for a pointer use TensorSpec)", str(name))
    spec = TensorSpec(dtype=value["dtype"], shape=value["shape"], data=value["data"])
    return name, spec.dtype, tuple(spec.shape), spec.buffer()


def check_metadata(metadata: Any) -> None:
    """Raises TypeError (a SafetensorError too) unless ``metadata`` is None or a dict of
    str to str, as the reference does; the writer checks the text itself."""
    if metadata is None:
        return
    if not isinstance(metadata, dict):
        raise refusal(SafetensorTypeError,
                      f"metadata must be a dict of str to str, not {type(metadata).__name__}")
    for key, value in metadata.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise refusal(SafetensorTypeError, "metadata must be a dict of str to str, not "
                          f"{type(key).__name__} to {type(value).__name__}")


def check_name(name: Any) -> None:
    """Raises TypeError (a SafetensorError too) for a tensor name that is not a str."""
    if not isinstance(name, str):
        raise refusal(SafetensorTypeError, f"tensor names must be str, not {type(name).__name__}")


def _entries(tensor_dict: Any) -> list:
    if not isinstance(tensor_dict, dict):
        raise refusal(SafetensorTypeError,
                      f"expected a dict of str to TensorSpec, not {type(tensor_dict).__name__}")
    for name in tensor_dict:
        check_name(name)
    return [_entry(name, value) for name, value in tensor_dict.items()]


def serialize(tensor_dict: Dict[str, Any], metadata: Optional[Dict[str, str]] = None) -> bytes:
    """Returns the canonical safetensors file for ``tensor_dict`` (name -> TensorSpec or
    ``{"dtype", "shape", "data"}``) as bytes, the bytes the reference writes.

    Raises SafetensorError for what the writer refuses (a byte count that does not match
    shape x dtype, a tensor named ``__metadata__``, metadata that is not str to str...);
    TypeError (a SafetensorError too) for values of the wrong type.

    Example:
        >>> data = stguard.serialize({"a": {"dtype": "float32", "shape": [1], "data": b"\\0" * 4}})
    """
    check_metadata(metadata)
    return _core.serialize(_entries(tensor_dict), metadata)


def serialize_file(tensor_dict: Dict[str, Any], filename: "os.PathLike[str] | str",
                   metadata: Optional[Dict[str, str]] = None) -> None:
    """Writes what ``serialize`` returns to ``filename``, crash-safely (a temporary file
    beside it, fsync, rename). The GIL is released while writing, so threads save in
    parallel.

    Example:
        >>> stguard.serialize_file({"a": stguard.TensorSpec(dtype="int8", shape=[2],
        ...                                                 data=b"\\1\\2")}, "a.safetensors")
    """
    check_metadata(metadata)
    _core.write_file(os.fspath(filename), _entries(tensor_dict), metadata)


def deserialize(data: Any) -> List[Tuple[str, Dict[str, Any]]]:
    """Validates ``data`` (a whole file in memory) and returns its tensors in file order
    as ``[(name, {"dtype": "F32", "shape": [2, 3], "data": bytearray})]``.

    Raises SafetensorError when ``data`` is not a valid checkpoint.

    Example:
        >>> stguard.deserialize(stguard.serialize({"a": {"dtype": "int8", "shape": [1],
        ...                                                "data": b"\\7"}}))
        [('a', {'dtype': 'I8', 'shape': [1], 'data': bytearray(b'\\x07')})]
    """
    storage = _core.Storage.from_bytes(data)
    with memoryview(storage) as memory:
        return [(name, {"dtype": dtype, "shape": list(shape),
                        "data": bytearray(memory[offset:offset + byte_len])})
                for name, dtype, shape, offset, byte_len in storage.tensors()]
