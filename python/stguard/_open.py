# SPDX-License-Identifier: Apache-2.0
"""safe_open: a validated checkpoint whose tensors are lazy, zero-copy views."""

import os
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from . import _core, _views
from ._error import SafetensorError
from ._frameworks import get_framework


class safe_open:  # noqa: N801 (the reference's name)
    """Opens and validates a safetensors file; its tensors are views over one private
    copy-on-write mapping of it.

    Opening reads only the header: a 16 GB checkpoint opens in microseconds and
    ``get_tensor`` reads a data page only when the array touches it. Writing into an
    array never changes the file. The mapping lives as long as the handle or any array or
    tensor taken from it, so closing the handle early is safe. Usable with or without
    ``with``.

    Args:
        filename: path to a ``.safetensors`` file.
        framework: ``"np"`` (or ``"numpy"``) for numpy arrays, ``"pt"`` (or ``"torch"``)
            for torch tensors.
        device: torch device for the tensors (``"cpu"``, the default, shares memory
            with the mapping; any other device gets a copy).

    Raises:
        SafetensorError: the file is missing, unreadable or not a valid checkpoint under
            stguard's strict rules (``.code`` says which rule).

    Example:
        >>> with stguard.safe_open("model.safetensors", framework="pt") as f:
        ...     weight = f.get_tensor("lm_head.weight")
        ...     rows = f.get_slice("embed.weight")[1000:1010, ::2]
    """

    def __init__(self, filename: "os.PathLike[str] | str", framework: str,
                 device: Any = "cpu") -> None:
        self._framework = get_framework(framework, device)
        self._storage: Optional[_core.Storage] = _core.Storage.open(os.fspath(filename))
        self._tensors = self._storage.tensors()  # file order
        self._by_name = {info[0]: info for info in self._tensors}
        self._metadata = self._storage.metadata()

    def __enter__(self) -> "safe_open":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def close(self) -> None:
        """Drops the handle's reference to the mapping; tensors taken keep it alive."""
        self._storage = None

    def _info(self, name: str) -> Tuple[Any, tuple]:
        if self._storage is None:
            raise SafetensorError("IoError at byte 0: the file was closed", "IoError", 0, name)
        info = self._by_name.get(name)
        if info is None:
            raise SafetensorError(f"InvalidArgument at byte 0: no tensor named {name!r}",
                                  "InvalidArgument", 0, name)
        return self._storage, info

    def keys(self) -> List[str]:
        """Returns the tensor names sorted (by code point, which is UTF-8 byte order).

        Example:
            >>> f.keys()
            ['a', 'b']
        """
        return sorted(self._by_name)

    def offset_keys(self) -> List[str]:
        """Returns the tensor names in file order (by data offset).

        Example:
            >>> f.offset_keys()
            ['b', 'a']
        """
        return [info[0] for info in self._tensors]

    def metadata(self) -> Optional[Dict[str, str]]:
        """Returns ``__metadata__`` as a dict, or None when the header has none.

        Example:
            >>> f.metadata()
            {'format': 'pt'}
        """
        return None if self._metadata is None else dict(self._metadata)

    def get_tensor(self, name: str):
        """Returns the tensor ``name``: a zero-copy view (a numpy array or a torch tensor)
        that reads its pages only when used. Raises SafetensorError for an unknown name.

        Example:
            >>> f.get_tensor("a").shape
            (2, 3)
        """
        storage, info = self._info(name)
        array = _views.view(storage, info, self._framework.numpy_dtype(info[1]))
        return self._framework.wrap(array, info[1])

    def get_slice(self, name: str) -> "TensorSlice":
        """Returns a lazy handle on tensor ``name``: index it with ints, slices (with
        steps, on any dimension) and ``...`` to read only the part needed.

        Example:
            >>> part = f.get_slice("embed.weight")
            >>> part.get_shape()
            [50257, 768]
            >>> part[10:20, ::4].shape
            (10, 192)
        """
        storage, info = self._info(name)
        return TensorSlice(storage, info, self._framework)


class TensorSlice:
    """A tensor not yet read: ``slice[index]`` copies just the selected elements.

    The result is a new, C-contiguous array or tensor (independent of the file). For F4
    and F6_* the index applies to the packed bytes (see ``stguard._views``).
    """

    def __init__(self, storage: Any, info: tuple, framework: Any) -> None:
        self._storage = storage
        self._info = info
        self._framework = framework

    def get_shape(self) -> List[int]:
        """Returns the tensor's shape as the header declares it.

        Example:
            >>> f.get_slice("a").get_shape()
            [2, 3]
        """
        return list(self._info[2])

    def get_dtype(self) -> str:
        """Returns the safetensors dtype name ("F32", "BF16", ...).

        Example:
            >>> f.get_slice("a").get_dtype()
            'F32'
        """
        return self._info[1]

    def __len__(self) -> int:
        shape = self._info[2]
        if not shape:
            raise TypeError("len() of a scalar tensor")
        return shape[0]

    def __getitem__(self, index):
        """Returns ``tensor[index]`` as a copy, reading only the pages it covers.

        Example:
            >>> f.get_slice("a")[1, ::2]
            array([3., 5.], dtype=float32)
        """
        dtype_name = self._info[1]
        # A view, not a copy, even for a misaligned tensor: numpy reads unaligned
        # elements correctly, and the copy below is aligned.
        name, _, shape, offset, byte_len = self._info
        target_shape = _views.array_shape(dtype_name, shape, byte_len, name)
        dtype = np.dtype(self._framework.numpy_dtype(dtype_name))
        array = np.frombuffer(self._storage, dtype=dtype, count=byte_len // dtype.itemsize,
                              offset=offset).reshape(target_shape)
        return self._framework.wrap(_views.slice_copy(array, index, self._info[0]), dtype_name)
