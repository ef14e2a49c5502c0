# SPDX-License-Identifier: Apache-2.0
"""safe_open: a validated checkpoint whose tensors are lazy, zero-copy views (the "mmap"
backend) or fresh buffers read with pread (the "pread" backend)."""

import os
import sys
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from . import _core, _views
from ._error import (SafetensorError, SafetensorFileNotFoundError, SafetensorTypeError,
                     SafetensorValueError, refusal)
from ._frameworks import get_framework

BACKENDS = ("mmap", "pread")


class _MappedSource:
    """The whole file mapped copy-on-write (see _core.Storage): tensors are views of it."""

    def __init__(self, path: str) -> None:
        self._storage = _core.Storage.open(path)
        self.tensors = self._storage.tensors()
        self.metadata = self._storage.metadata()

    def tensor_bytes(self, info: tuple) -> Tuple[Any, int]:
        """Returns (buffer, offset of the tensor's first byte in it)."""
        return self._storage, info[3]

    def close(self) -> None:
        """Nothing to do: the handle drops this source, and the slices and arrays taken
        from it keep the mapping alive as long as they need it."""


class _PreadSource:
    """The header validated with pread (see _core.HeaderFile) and the descriptor kept: each
    tensor is read with pread into a fresh buffer, so nothing is mapped. A file that
    shrinks while it is read is an IoError, never a crash."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        header = _core.HeaderFile.open(_descriptor_path(fd))
        self.tensors = header.tensors()
        self.metadata = header.metadata()

    def tensor_bytes(self, info: tuple) -> Tuple[Any, int]:
        name, _, _, offset, byte_len = info
        if self._fd < 0:
            raise SafetensorError("File is closed", "IoError", 0, name)
        buffer = bytearray(byte_len)
        done = 0
        with memoryview(buffer) as whole:
            while done < byte_len:
                got = os.preadv(self._fd, [whole[done:]], offset + done)
                if got == 0:
                    raise SafetensorError(
                        f"IoError at byte {offset + done}: the file shrank while it was being "
                        f"read (tensor {name!r})", "IoError", offset + done, name)
                done += got
        return buffer, 0

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def _descriptor_path(fd: int) -> str:
    """Returns a path that opens the file behind ``fd`` itself, whatever its name is now
    (a rename or a replaced path cannot substitute another file)."""
    return f"/proc/self/fd/{fd}" if sys.platform.startswith("linux") else f"/dev/fd/{fd}"


def _check_backend(backend: Any) -> str:
    if not isinstance(backend, str):
        raise refusal(SafetensorTypeError, f"backend must be a str, not {type(backend).__name__}")
    if backend not in BACKENDS:
        raise refusal(SafetensorValueError,
                      f"backend {backend!r} is invalid (expected one of: 'mmap', 'pread')")
    return backend


def _open_source(path: str, backend: str, shown_name: str):
    """Opens ``path`` with ``backend``; a missing file is a FileNotFoundError (that is
    also a SafetensorError with code IoError)."""
    try:
        if backend == "mmap":
            return _MappedSource(path)
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        fd = None
    except OSError as error:
        raise SafetensorError(f"IoError: {error.strerror}: {shown_name}",
                              "IoError", 0, None) from None
    except SafetensorError as error:
        if error.code != "IoError" or os.path.lexists(path):
            raise
        fd = None
    if fd is None:
        # The reference's text (no code prefix): code written against it compares it.
        raise SafetensorFileNotFoundError(
            f"No such file or directory: {shown_name}", "IoError", 0, None)
    try:
        return _PreadSource(fd)
    except BaseException:
        os.close(fd)
        raise


class safe_open:  # noqa: N801 (the reference's name)
    """Opens and validates a safetensors file.

    With ``backend="mmap"`` (the default) its tensors are views over one private
    copy-on-write mapping of it: opening reads only the header, a 16 GB checkpoint opens
    in microseconds and ``get_tensor`` reads a data page only when the array touches it.
    Writing into an array never changes the file. The mapping lives as long as the handle
    or any array or tensor taken from it, so closing the handle early is safe.

    With ``backend="pread"`` nothing is mapped: the header is read and validated with
    pread, and each ``get_tensor`` reads its tensor with pread into a fresh buffer. For
    network file systems and for files that other processes may truncate (a mapping
    would fault; pread gives an IoError).

    Usable with or without ``with``; once closed, every method raises
    ``SafetensorError("File is closed")``.

    Args:
        filename: path to a ``.safetensors`` file.
        framework: ``"np"``/``"numpy"`` for numpy arrays, ``"pt"``/``"torch"``/
            ``"pytorch"`` for torch tensors; ``"tf"``/``"tensorflow"``, ``"jax"``/
            ``"flax"``, ``"mlx"``, ``"paddle"`` convert the numpy arrays with that
            framework (an error at open naming the package when it is not installed).
        device: torch device for the tensors (``"cpu"``, the default, shares memory
            with the mapping; any other device gets a copy).
        backend: ``"mmap"`` or ``"pread"`` (keyword only).

    Raises:
        FileNotFoundError: the file is missing (a SafetensorError too, code IoError).
        ValueError: an unknown framework or backend (a SafetensorError too).
        SafetensorError: the file is unreadable or not a valid checkpoint under
            stguard's strict rules (``.code`` says which rule).

    Example:
        >>> with stguard.safe_open("model.safetensors", framework="pt") as f:
        ...     weight = f.get_tensor("lm_head.weight")
        ...     rows = f.get_slice("embed.weight")[1000:1010, ::2]
    """

    def __init__(self, filename: "os.PathLike[str] | str", framework: str,
                 device: Any = "cpu", *, backend: str = "mmap") -> None:
        self._source = None
        backend = _check_backend(backend)
        self._framework = get_framework(framework, device)
        path = os.fspath(filename)
        self._set_source(_open_source(path, backend, path))

    def _set_source(self, source) -> None:
        self._source = source
        self._tensors = source.tensors  # file order
        self._by_name = {info[0]: info for info in self._tensors}
        self._metadata = source.metadata

    def __enter__(self) -> "safe_open":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()

    def close(self) -> None:
        """Closes the handle; tensors taken from a mapping keep it alive."""
        source = getattr(self, "_source", None)
        if source is not None:
            source.close()
        self._source = None

    def _open_source_or_raise(self):
        if self._source is None:
            raise SafetensorError("File is closed", "IoError", 0, None)
        return self._source

    def _info(self, name: str) -> Tuple[Any, tuple]:
        source = self._open_source_or_raise()
        info = self._by_name.get(name)
        if info is None:
            raise SafetensorError(f"InvalidArgument: no tensor named {name!r}",
                                  "InvalidArgument", 0, name)
        return source, info

    def keys(self) -> List[str]:
        """Returns the tensor names sorted (by code point, which is UTF-8 byte order).

        Example:
            >>> f.keys()
            ['a', 'b']
        """
        self._open_source_or_raise()
        return sorted(self._by_name)

    def offset_keys(self) -> List[str]:
        """Returns the tensor names in file order (by data offset).

        Example:
            >>> f.offset_keys()
            ['b', 'a']
        """
        self._open_source_or_raise()
        return [info[0] for info in self._tensors]

    def metadata(self) -> Optional[Dict[str, str]]:
        """Returns ``__metadata__`` as a dict, or None when the header has none.

        Example:
            >>> f.metadata()
            {'format': 'pt'}
        """
        self._open_source_or_raise()
        return None if self._metadata is None else dict(self._metadata)

    def get_tensor(self, name: str):
        """Returns the tensor ``name``: a zero-copy view (a numpy array or a torch tensor)
        that reads its pages only when used, or with the pread backend a fresh copy.
        Raises SafetensorError for an unknown name.

        Example:
            >>> f.get_tensor("a").shape
            (2, 3)
        """
        source, info = self._info(name)
        buffer, offset = source.tensor_bytes(info)
        array = _views.view_at(buffer, offset, info, self._framework.numpy_dtype(info[1]))
        return self._framework.wrap(array, info[1])

    def get_tensors(self) -> Dict[str, Any]:
        """Returns every tensor, in file order, as a dict of name to tensor.

        Example:
            >>> list(f.get_tensors())
            ['b', 'a']
        """
        self._open_source_or_raise()
        return {info[0]: self.get_tensor(info[0]) for info in self._tensors}

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
        source, info = self._info(name)
        return TensorSlice(source, info, self._framework)


class _safe_open_handle(safe_open):  # noqa: N801 (the reference's name)
    """``safe_open`` on a Python file object already open for reading.

    Unlike the reference package, which reopens ``file_object.name`` (a path that may have
    been renamed or replaced since), it reads the very file behind ``file_object.fileno()``.
    The file object stays the caller's: closing the handle does not close it.

    Example:
        >>> with open("model.safetensors", "rb") as raw:
        ...     with stguard._safe_open_handle(raw, "np") as f:
        ...         f.keys()
    """

    def __init__(self, file_object: Any, framework: str, device: Any = "cpu", *,
                 backend: str = "mmap") -> None:
        self._source = None
        backend = _check_backend(backend)
        fileno = getattr(file_object, "fileno", None)
        if fileno is None:
            raise refusal(SafetensorTypeError, "expected a file object with a fileno(), not "
                          f"{type(file_object).__name__}")
        readable = getattr(file_object, "readable", None)
        if readable is not None and not readable():
            raise refusal(SafetensorValueError, "the file object is not open for reading")
        self._framework = get_framework(framework, device)
        try:
            fd = fileno()
        except (OSError, ValueError):  # io.BytesIO has fileno() but no descriptor
            raise refusal(SafetensorTypeError, "expected a file object backed by a file "
                          f"descriptor, not {type(file_object).__name__}") from None
        shown_name = str(getattr(file_object, "name", fd))
        if backend == "pread":
            fd = os.dup(fd)  # ours to close; the caller's stays open
            try:
                self._set_source(_PreadSource(fd))
            except BaseException:
                os.close(fd)
                raise
        else:
            self._set_source(_open_source(_descriptor_path(fd), backend, shown_name))


class TensorSlice:
    """A tensor not yet read: ``slice[index]`` copies just the selected elements.

    The result is a new, C-contiguous array or tensor (independent of the file). For F4
    and F6_* the index applies to the packed bytes (see ``stguard._views``). Steps work on
    every dimension; a stop beyond its dimension is an error (not clamped); ``[]`` selects
    nothing; a non-empty list is refused.
    """

    def __init__(self, source: Any, info: tuple, framework: Any) -> None:
        self._source = source
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
        name, _, shape, _, byte_len = self._info
        target_shape = _views.array_shape(dtype_name, shape, byte_len, name)
        dtype = np.dtype(self._framework.numpy_dtype(dtype_name))
        buffer, offset = self._source.tensor_bytes(self._info)
        array = np.frombuffer(buffer, dtype=dtype, count=byte_len // dtype.itemsize,
                              offset=offset).reshape(target_shape)
        return self._framework.wrap(_views.slice_copy(array, index, name), dtype_name)
