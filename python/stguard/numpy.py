# SPDX-License-Identifier: Apache-2.0
"""numpy arrays to and from safetensors, strictly: ``stguard.numpy`` is a drop-in for
``safetensors.numpy``.

Loading gives zero-copy, writable views over a private copy-on-write mapping (writing
into them never changes the file). Saving writes the canonical file, byte for byte what
the reference ``save_file`` writes, crash-safely.

numpy lacks bfloat16, float8, float6 and float4: BF16 loads as ``uint16`` bit patterns,
F8_* as ``uint8``, F4/F6_* as packed ``uint8`` bytes (see ``stguard._views``). Saving maps
numpy's own types only, so those arrays are saved as U16/U8.
"""

import os
from typing import Dict, Optional

import numpy as np

from . import _core
from ._error import SafetensorError, SafetensorValueError, invalid_argument, refusal
from ._open import safe_open
from ._serialize import check_metadata, check_name
from ._views import NUMPY_DTYPES, SAVE_DTYPES, view

__all__ = ["load", "load_file", "save", "save_file", "SafetensorError"]


def _entries(tensor_dict: Dict[str, np.ndarray]) -> list:
    """Returns the core's (name, dtype, shape, contiguous little-endian array) list."""
    if not isinstance(tensor_dict, dict):
        raise refusal(SafetensorValueError,
                      f"expected a dict of str to numpy.ndarray, not {type(tensor_dict).__name__}")
    entries = []
    for name, array in tensor_dict.items():
        check_name(name)
        if isinstance(array, np.generic):  # a numpy scalar: a 0-d array
            array = np.asarray(array)
        if not isinstance(array, np.ndarray):
            raise refusal(SafetensorValueError,
                          f"expected a numpy.ndarray, not {type(array).__name__}", name)
        dtype_name = SAVE_DTYPES.get((array.dtype.kind, array.dtype.itemsize))
        if dtype_name is None:
            raise invalid_argument(f"numpy dtype {array.dtype} has no safetensors dtype", name)
        if array.dtype.byteorder == ">":
            array = array.astype(array.dtype.newbyteorder("<"))
        if not array.flags.c_contiguous:
            array = array.copy(order="C")
        entries.append((name, dtype_name, tuple(int(d) for d in array.shape), array))
    return entries


def save(tensor_dict: Dict[str, np.ndarray], metadata: Optional[Dict[str, str]] = None) -> bytes:
    """Returns the canonical safetensors file for ``tensor_dict`` as bytes.

    Raises SafetensorError (nothing is returned) for a tensor named ``__metadata__`` or a
    dtype safetensors lacks; as the reference, ValueError for a value that is not an array
    or a ``tensor_dict`` that is not a dict, TypeError for a name or metadata that is not
    str (both are SafetensorErrors too).

    Example:
        >>> data = stguard.numpy.save({"a": numpy.zeros((2, 2), numpy.float32)})
        >>> data[:8]
        b'@\\x00\\x00\\x00\\x00\\x00\\x00\\x00'
    """
    check_metadata(metadata)
    return _core.serialize(_entries(tensor_dict), metadata)


def save_file(tensor_dict: Dict[str, np.ndarray], filename: "os.PathLike[str] | str",
              metadata: Optional[Dict[str, str]] = None) -> None:
    """Writes ``tensor_dict`` to ``filename`` in canonical form, crash-safely (a
    temporary file beside it, fsync, rename): on any error the file keeps its old content.

    Non-contiguous and big-endian arrays are converted first. Raises SafetensorError for
    what ``save`` refuses and for I/O errors (``.code == "IoError"``).

    Example:
        >>> stguard.numpy.save_file({"a": numpy.arange(6.0).reshape(2, 3)}, "a.safetensors",
        ...                         metadata={"format": "np"})
    """
    check_metadata(metadata)
    _core.write_file(os.fspath(filename), _entries(tensor_dict), metadata)


def load(data: bytes) -> Dict[str, np.ndarray]:
    """Validates ``data`` (a whole file in memory) and returns its tensors in file order.

    The arrays share one private copy of ``data``. Raises SafetensorError when ``data``
    is not a valid checkpoint.

    Example:
        >>> stguard.numpy.load(stguard.numpy.save({"a": numpy.ones(3)}))["a"]
        array([1., 1., 1.])
    """
    storage = _core.Storage.from_bytes(data)
    return {info[0]: view(storage, info, NUMPY_DTYPES[info[1]]) for info in storage.tensors()}


def load_file(filename: "os.PathLike[str] | str", *,
              backend: str = "mmap") -> Dict[str, np.ndarray]:
    """Validates ``filename`` and returns its tensors in file order, as lazy zero-copy
    views of a private copy-on-write mapping (``backend="mmap"``), or as fresh arrays read
    with pread (``backend="pread"``, see ``safe_open``). Raises FileNotFoundError for a
    missing file, SafetensorError for an invalid one.

    Example:
        >>> tensors = stguard.numpy.load_file("a.safetensors")
        >>> tensors["a"][0, 0] = 7.0  # changes this process's copy, never the file
    """
    with safe_open(filename, framework="np", backend=backend) as f:
        return f.get_tensors()

