# SPDX-License-Identifier: Apache-2.0
"""NumPy's own files, read strictly: ``stguard.npy.load`` for ``.npy`` and
``stguard.npy.load_npz`` for ``.npz``.

Nothing in the file is evaluated: the header is parsed, never ``literal_eval``-ed, object
arrays (pickles) are refused, and every rule of ``stguard check`` applies (see
SECURITY.md), so a file either loads exactly as ``np.load`` would load it or raises
SafetensorError. Arrays of a ``.npy`` and of stored ``.npz`` members are zero-copy views
of a private copy-on-write mapping (writable; writes never reach the file) when their
data is aligned for their type, copies otherwise; deflated members are inflated into
memory of their own.
"""

import os
from typing import Dict

import numpy as np

from . import _core
from ._error import SafetensorError

__all__ = ["load", "load_npz", "SafetensorError"]


def _array(buffer, described, offset: int) -> np.ndarray:
    descr, fortran_order, shape, nbytes = described
    dtype = np.dtype(descr)
    count = nbytes // dtype.itemsize if dtype.itemsize else 0
    flat = np.frombuffer(buffer, dtype=dtype, count=count, offset=offset)
    if not flat.flags.aligned:
        flat = flat.copy()
    return flat.reshape(shape, order="F" if fortran_order else "C")


def load(path: "os.PathLike[str] | str") -> np.ndarray:
    """Validates the ``.npy`` file at ``path`` and returns its array.

    Raises SafetensorError for anything ``stguard check`` refuses (an object array, a
    header that is not a plain literal, trailing bytes...).

    Example:
        >>> numpy.save("a.npy", numpy.arange(6.0).reshape(2, 3))
        >>> stguard.npy.load("a.npy")
        array([[0., 1., 2.],
               [3., 4., 5.]])
    """
    mapping, described, offset = _core.open_npy(os.fspath(path))
    return _array(mapping, described, offset)


def load_npz(path: "os.PathLike[str] | str") -> Dict[str, np.ndarray]:
    """Validates the ``.npz`` archive at ``path`` whole and returns its arrays by key, in
    archive order.

    Raises SafetensorError for anything ``stguard check`` refuses (a bad CRC, a member
    that is not ``<key>.npy``, bzip2 or LZMA, an invalid DEFLATE stream...).

    Example:
        >>> numpy.savez_compressed("a.npz", x=numpy.ones(3))
        >>> stguard.npy.load_npz("a.npz")["x"]
        array([1., 1., 1.])
    """
    mapping, members = _core.open_npz(os.fspath(path))
    arrays = {}
    for key, described, offset, inflated in members:
        if inflated is not None:
            arrays[key] = _array(inflated, described, 0)
        else:
            arrays[key] = _array(mapping, described, offset)
    return arrays
