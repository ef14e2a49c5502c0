# SPDX-License-Identifier: Apache-2.0
"""GGUF files (llama.cpp's checkpoints) as numpy arrays, read strictly.

``open`` validates the file with stguard's strict GGUF reader and gives its metadata and
tensors: plain types (F32, F16, BF16, F64, I8..I64) as zero-copy, writable views over a
private copy-on-write mapping (writing never changes the file; BF16 comes back as
``uint16`` bits, as in ``stguard.numpy``), block-quantized types (Q4_0, Q4_K, IQ2_XXS...)
dequantized to float32, bit for bit what ggml's ``dequantize_row_*`` computes (the GIL
is released meanwhile). Shapes are ``ne`` reversed, outermost first, as numpy orders them.

Example:
    >>> import stguard.gguf
    >>> with stguard.gguf.open("model-Q4_K_M.gguf") as f:
    ...     print(f.version, f.metadata["general.architecture"])
    ...     info = f.tensor_info("blk.0.attn_q.weight")   # type 'q4_K', ne, shape, ...
    ...     w = f.get_tensor("blk.0.attn_q.weight")        # float32, shape info.shape
    >>> stguard.gguf.convert("model-Q4_K_M.gguf", "model.safetensors")
"""

import os
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from . import _core
from ._error import SafetensorError
from ._views import NUMPY_DTYPES

__all__ = ["ConvertReport", "GgufFile", "TensorInfo", "convert", "load_file", "open",
           "SafetensorError"]

# load_file's default limit on the memory its dequantized tensors take (plain tensors are
# views of the file and take none).
DEFAULT_MAX_BYTES = 8 << 30


@dataclass(frozen=True)
class TensorInfo:
    """One tensor as the GGUF file describes it.

    Attributes:
        type: ggml's type name (``"f32"``, ``"q4_K"``, ``"iq2_xxs"``...).
        ne: ggml's dims, innermost first.
        shape: ``ne`` reversed (outermost first), the shape ``get_tensor`` returns.
        offset: the absolute byte offset of the tensor's data in the file.
        bytes: the tensor's size in the file.
        dtype: the safetensors dtype of a plain type (``"F32"``...), None for a block type.
    """

    type: str
    ne: Tuple[int, ...]
    shape: Tuple[int, ...]
    offset: int
    bytes: int
    dtype: Optional[str]
    block_size: int
    type_size: int

    @property
    def quantized(self) -> bool:
        """True for a block-quantized type (dequantized by ``get_tensor``)."""
        return self.dtype is None

    @property
    def dequantized_bytes(self) -> int:
        """The float32 size of the tensor once dequantized."""
        count = 1
        for dim in self.ne:
            count *= dim
        return 4 * count


class GgufFile:
    """A validated GGUF file; use it as a context manager (``with stguard.gguf.open(p)``).

    Attributes:
        version: the GGUF version (2 or 3).
        alignment: the data alignment (general.alignment, else 32).
        metadata: every key/value pair in file order, as Python values (int, float, bool,
            str, or a list of them).
    """

    def __init__(self, path: "os.PathLike[str] | str") -> None:
        self._core = _core.GgufFile.open(os.fspath(path))
        self.version: int = self._core.version
        self.alignment: int = self._core.alignment
        self.metadata: Dict[str, Any] = self._core.metadata()
        self._tensors: Dict[str, TensorInfo] = {}
        for name, type_name, _, ne, shape, offset, size, dtype, block, type_size in \
                self._core.tensors():
            self._tensors[name] = TensorInfo(type_name, ne, shape, offset, size, dtype, block,
                                             type_size)

    def __enter__(self) -> "GgufFile":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        # Arrays already returned keep the mapping alive; the handle itself lets go.
        self._core = None

    def keys(self) -> List[str]:
        """The tensor names, in file order."""
        return list(self._tensors)

    def tensor_info(self, name: str) -> TensorInfo:
        """The tensor's TensorInfo; SafetensorError (InvalidArgument) for an unknown name."""
        info = self._tensors.get(name)
        if info is None:
            raise SafetensorError(f"InvalidArgument: no tensor of that name (tensor {name!r})",
                                  "InvalidArgument", 0, name)
        return info

    def get_tensor(self, name: str, dequantize: bool = True) -> np.ndarray:
        """Returns tensor ``name`` as a numpy array of shape ``tensor_info(name).shape``.

        A plain type is a zero-copy, writable view (copy-on-write: the file never
        changes). A block type is dequantized to a new float32 array (SafetensorError
        GgufNotDequantizable for q8_1, which has no decoder); with ``dequantize=False`` it
        is the raw blocks as ``uint8``, shape ``shape[:-1] + (bytes per row,)``.
        """
        if self._core is None:
            raise SafetensorError("InvalidArgument: the file is closed", "InvalidArgument")
        info = self.tensor_info(name)
        if info.dtype is not None:
            array = np.frombuffer(self._core, dtype=NUMPY_DTYPES[info.dtype],
                                  count=info.bytes // np.dtype(NUMPY_DTYPES[info.dtype]).itemsize,
                                  offset=info.offset)
            return array.reshape(info.shape)
        if not dequantize:
            row_bytes = info.ne[0] // info.block_size * info.type_size
            array = np.frombuffer(self._core, dtype=np.uint8, count=info.bytes, offset=info.offset)
            return array.reshape(info.shape[:-1] + (row_bytes,))
        out = np.empty(info.shape, dtype="<f4")
        self._core.dequantize_into(name, out)
        return out


def open(path: "os.PathLike[str] | str") -> GgufFile:  # noqa: A001 (as safe_open, by design)
    """Opens and validates the GGUF file at ``path``; raises SafetensorError if invalid.

    Example:
        >>> with stguard.gguf.open("model.gguf") as f:
        ...     embeddings = f.get_tensor("token_embd.weight")
    """
    return GgufFile(path)


def load_file(path: "os.PathLike[str] | str", max_bytes: int = DEFAULT_MAX_BYTES) -> Dict[str, np.ndarray]:
    """Returns every tensor of the GGUF file at ``path`` as numpy arrays, in file order.

    Plain tensors are views of the file; quantized ones are dequantized to float32, which
    takes memory: 4 bytes per element (a quantized 70B model is ~280 GB). When that total
    exceeds ``max_bytes`` (default 8 GiB), SafetensorError (InvalidArgument) says how much
    is needed and nothing is allocated: read tensors one at a time with ``open()``, or
    write safetensors with ``stguard.gguf.convert`` (or ``stguard.convert``).
    """
    with open(path) as f:
        needed = sum(f.tensor_info(name).dequantized_bytes for name in f.keys()
                     if f.tensor_info(name).quantized)
        if needed > max_bytes:
            raise SafetensorError(
                f"InvalidArgument: dequantizing needs {needed} bytes, past "
                f"max_bytes={max_bytes}; read tensors one at a time with "
                f"stguard.gguf.open(), or convert with stguard.gguf.convert(path, out)",
                "InvalidArgument", 0)
        return {name: f.get_tensor(name) for name in f.keys()}


@dataclass(frozen=True)
class ConvertReport:
    """What ``convert`` wrote: files (OUT, or the folder's file names, index last), the
    tensors, how many were dequantized, the data bytes, and the metadata arrays left out
    as (key, element type, count)."""

    files: List[str]
    tensors: int
    dequantized: int
    data_bytes: int
    omitted: List[Tuple[str, str, int]]


def convert(path: "os.PathLike[str] | str", out: "os.PathLike[str] | str",
            dtype: Optional[str] = None, all_metadata: bool = False) -> ConvertReport:
    """Converts the GGUF file ``path`` to the safetensors file ``out``, streaming and
    crash-safely (nothing is left at ``out`` on error), as ``stguard convert`` does.

    Tensors keep their GGUF names, shape ``ne`` reversed; plain types keep their dtype,
    block types are dequantized to F32; ``dtype`` ("F32", "F16" or "BF16") converts every
    floating tensor. Metadata goes into ``__metadata__`` (strings as they are, other values
    as JSON keeping their type: ``{"u32":4096}``); arrays over 1,024 elements are left out
    (listed in the report) unless ``all_metadata``. The first part of a split model
    (``NAME-00001-of-0000N.gguf``) converts into the folder ``out`` with an index.
    The GIL is released while converting.

    Example:
        >>> stguard.gguf.convert("model-Q8_0.gguf", "model.safetensors", dtype="BF16")
    """
    files, tensors, dequantized, data_bytes, omitted = _core.gguf_convert(
        os.fspath(path), os.fspath(out), dtype, all_metadata)
    return ConvertReport(list(files), tensors, dequantized, data_bytes, list(omitted))
