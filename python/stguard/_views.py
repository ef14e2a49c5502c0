# SPDX-License-Identifier: Apache-2.0
"""Zero-copy numpy views over a validated checkpoint's memory, and the dtype tables.

numpy has no bfloat16, float8, float6 or float4: those come back as raw bits. BF16 is
``uint16`` (the bit pattern: ``(x.astype(numpy.uint32) << 16).view(numpy.float32)``
gives the values), F8_* are ``uint8`` (one byte per element). F4 and F6_* pack several
elements per byte: they come back as ``uint8`` bytes whose last dimension counts bytes
(shape[-1] * bits / 8), or as a flat byte array when the last dimension does not fill
whole bytes.
"""

from typing import Dict, List, Tuple

import numpy as np

from . import _core
from ._error import SafetensorError, invalid_argument, reference_refusal

# The library's dtype table (stguard/dtype.h), in its order: (name, bits per element, the
# numpy type its elements are read as, torch's name for it or ""). Python keeps no dtype
# table of its own: the ones below are read from it.
DTYPES: List[Tuple[str, int, str, str]] = _core.dtypes()

# What each safetensors dtype becomes in numpy (little-endian): its own type, or for a
# type numpy lacks unsigned integers of its size holding the bits (BF16 as uint16, F8_*
# as uint8), and F4 and F6_* as their bytes.
NUMPY_DTYPES: Dict[str, str] = {name: numpy_type for name, _, numpy_type, _ in DTYPES}


def is_numpy_own(numpy_type: str, framework_name: str) -> bool:
    """Whether numpy has the dtype itself: its numpy type bears the dtype's own name
    (float32 is F32; uint16 is U16, not BF16's bits)."""
    return np.dtype(numpy_type).name == framework_name


# What numpy arrays are saved as, by (kind, itemsize). numpy's own types only: uint16
# is U16 (a BF16 tensor loaded as bits is saved back as U16).
SAVE_DTYPES: Dict[Tuple[str, int], str] = {
    (np.dtype(numpy_type).kind, np.dtype(numpy_type).itemsize): name
    for name, _, numpy_type, framework_name in DTYPES if is_numpy_own(numpy_type, framework_name)
}

# The packed types (F4, F6_*): bits per element.
SUB_BYTE_BITS: Dict[str, int] = {name: bits for name, bits, _, _ in DTYPES if bits % 8}


# numpy's limits: at most 32 dimensions, and the product of the non-zero dimensions must
# fit in a signed 64-bit integer. A valid file can go past both (a zero-size tensor of
# shape [0, 2**40, 2**40], or 40 dimensions of 1): such a tensor cannot be an array.
_MAX_NUMPY_DIMS = 32
_MAX_NUMPY_SIZE = 2**63 - 1


def _check_representable(name: str, shape: Tuple[int, ...]) -> None:
    if len(shape) > _MAX_NUMPY_DIMS:
        raise SafetensorError(
            f"ValidationOverflow at byte 0: {len(shape)} dimensions; numpy arrays have at "
            f"most {_MAX_NUMPY_DIMS} (tensor {name!r})", "ValidationOverflow", 0, name)
    product = 1
    for dim in shape:
        product *= max(dim, 1)
    if product > _MAX_NUMPY_SIZE:
        raise SafetensorError(
            f"ValidationOverflow at byte 0: shape {list(shape)} is beyond numpy's size "
            f"limit (tensor {name!r})", "ValidationOverflow", 0, name)


def array_shape(dtype_name: str, shape: Tuple[int, ...], byte_len: int,
                name: str = "") -> Tuple[int, ...]:
    """Returns the numpy shape for a tensor: its own, or bytes for packed sub-byte types.
    Raises SafetensorError (ValidationOverflow) for a shape numpy cannot represent."""
    _check_representable(name, shape)
    bits = SUB_BYTE_BITS.get(dtype_name)
    if bits is None:
        return shape
    if shape and (shape[-1] * bits) % 8 == 0:
        return shape[:-1] + (shape[-1] * bits // 8,)
    return (byte_len,)


_DTYPE_CACHE: Dict[str, np.dtype] = {}


def _numpy_dtype(text: str) -> np.dtype:
    dtype = _DTYPE_CACHE.get(text)
    if dtype is None:
        dtype = _DTYPE_CACHE[text] = np.dtype(text)
    return dtype


def view(storage, info, numpy_dtype: str) -> np.ndarray:
    """Returns the tensor described by ``info`` as an array over ``storage``'s memory.

    ``info`` is (name, dtype, shape, absolute offset, byte length). The array's base is
    the storage, which keeps the memory alive.
    """
    return view_at(storage, info[3], info, numpy_dtype)


def view_at(buffer, offset: int, info, numpy_dtype: str) -> np.ndarray:
    """Returns the tensor described by ``info`` as an array over ``buffer`` from byte
    ``offset`` (a whole file's memory, or a buffer holding only this tensor). A tensor
    whose offset is not a multiple of its element size (a valid, non-canonical file) is
    copied to aligned memory instead."""
    name, dtype_name, shape, _, byte_len = info
    target_shape = array_shape(dtype_name, shape, byte_len, name)
    dtype = _numpy_dtype(numpy_dtype)
    array = np.frombuffer(buffer, dtype=dtype, count=byte_len // dtype.itemsize, offset=offset)
    if offset % dtype.itemsize:
        array = array.copy()
    return array.reshape(target_shape)


def check_index(index, shape: Tuple[int, ...], name: str):
    """Returns ``index`` as a tuple if it holds only ints, slices and at most one Ellipsis
    and does not index more dimensions than ``shape`` has; raises SafetensorError
    (naming the slice and the shape) otherwise."""
    items = index if isinstance(index, tuple) else (index,)

    def refuse(reason: str) -> SafetensorError:
        return invalid_argument(f"slice {describe_index(index)} for shape {list(shape)}: "
                                f"{reason}", name)

    ellipses = 0
    indexed = 0
    for item in items:
        if item is Ellipsis:
            ellipses += 1
        elif isinstance(item, slice):
            for part in (item.start, item.stop, item.step):
                if part is not None and (isinstance(part, bool) or not isinstance(part, (int, np.integer))):
                    raise refuse(f"slice bounds must be ints, not {part!r}")
            if item.step == 0:
                raise refuse("slice step cannot be zero")
            indexed += 1
        elif isinstance(item, (int, np.integer)) and not isinstance(item, (bool, np.bool_)):
            indexed += 1
        else:
            raise refuse(f"get_slice takes ints, slices and '...', not {type(item).__name__}")
    if ellipses > 1:
        raise refuse("an index can only have a single ellipsis ('...')")
    if indexed > len(shape):
        raise refuse(f"too many indices: {indexed} for {len(shape)} dimensions")
    return items


def describe_index(index) -> str:
    """Returns ``index`` as written between brackets: ``[0:20, ::2]``."""
    items = index if isinstance(index, tuple) else (index,)

    def one(item) -> str:
        if item is Ellipsis:
            return "..."
        if isinstance(item, slice):
            text = ("" if item.start is None else str(item.start)) + ":" + \
                   ("" if item.stop is None else str(item.stop))
            return text if item.step is None else f"{text}:{item.step}"
        return repr(item)

    return "[" + ", ".join(one(item) for item in items) + "]"


def _check_bounds(items: tuple, shape: Tuple[int, ...], index, name: str) -> None:
    """Refuses, with the reference package's texts, an int index outside its dimension and
    a slice whose stop lies beyond it (``[:20]`` on 10 rows: numpy would clamp it and hide
    a wrong size)."""
    position = 0
    for item in items:
        if item is Ellipsis:  # the items after '...' index the trailing dimensions
            position = len(shape) - (len(items) - items.index(Ellipsis) - 1)
            continue
        size = shape[position]
        if isinstance(item, slice):
            past = item.stop - 1 if item.stop is not None and item.stop > size else None
        else:
            if item < -size:
                raise reference_refusal(
                    SafetensorError,
                    f"Invalid index {item} for dimension {position} of size {size}", name)
            past = item if item >= size else None
        if past is not None:
            raise reference_refusal(
                SafetensorError,
                f"Error during slicing {describe_index(index)} with shape {list(shape)}: "
                f"index {past} out of bounds for tensor dimension #{position} of size {size}",
                name)
        position += 1


def slice_copy(array: np.ndarray, index, name: str) -> np.ndarray:
    """Returns a C-contiguous copy of ``array[index]``; reads only the pages it copies.

    ``[]`` selects nothing (shape ``(0, ...)``), as the reference package's empty list
    does; a non-empty list is refused with its message (lists are not implemented)."""
    if isinstance(index, list):
        if index:
            raise reference_refusal(SafetensorError, "Non empty lists are not implemented",
                                    name)
        index = slice(0, 0)
    items = check_index(index, array.shape, name)
    _check_bounds(items, array.shape, index, name)
    try:
        selected = array[items]
    except IndexError as error:
        raise invalid_argument(f"slice {describe_index(index)} for shape {list(array.shape)}: "
                               f"{error}", name) from None
    return np.array(selected, copy=True, order="C")


__all__ = ["NUMPY_DTYPES", "SAVE_DTYPES", "SafetensorError", "view", "view_at",
           "slice_copy"]
