# SPDX-License-Identifier: Apache-2.0
"""stguard: a strict, zero-copy reader and canonical writer for safetensors checkpoints.

A drop-in for the ``safetensors`` package that refuses what it silently accepts
(duplicate names, ``"__metadata__": null``, unknown fields, ...) and writes byte-identical
files deterministically::

    from stguard.torch import load_file, save_file     # or stguard.numpy
    state = load_file("model.safetensors")             # SafetensorError if invalid
    save_file(state, "copy.safetensors", metadata={"format": "pt"})

    with stguard.safe_open("model.safetensors", framework="pt") as f:
        rows = f.get_slice("embed.weight")[1000:1010]  # reads only those rows

    result = stguard.check("model_folder/")            # a file, a folder or an index
    print(result.ok, result.tensors, result.error)
"""

import os
from dataclasses import dataclass, field
from typing import List, Optional

from . import _core
from ._error import SafetensorError
from ._open import TensorSlice, _safe_open_handle, safe_open
from ._serialize import TensorSpec, deserialize, serialize, serialize_file

__version__: str = _core.__version__

__all__ = ["CheckResult", "CheckWarning", "SafetensorError", "TensorSlice", "TensorSpec",
           "__version__", "_safe_open_handle", "check", "deserialize", "safe_open", "serialize",
           "serialize_file"]


@dataclass(frozen=True)
class CheckWarning:
    """Something worth reporting that does not make a checkpoint invalid.

    ``kind`` is the command's name for it (``"total-size-mismatch"``, ``"pickle-file"``,
    ``"lm-head-missing"``...), ``file`` the file in the folder, ``tensor`` may be empty.
    """

    kind: str
    file: str
    tensor: str
    message: str


@dataclass(frozen=True)
class CheckResult:
    """What ``check`` found. True in a boolean context when the checkpoint is valid.

    Attributes:
        path: the path checked.
        ok: whether every file is valid (and, for a folder, the cross-checks pass).
        files: how many safetensors files were validated (0 on error).
        tensors: how many tensors they hold (0 on error).
        header_size: the header bytes (N) of the file, summed over shards.
        error: the SafetensorError that makes it invalid, or None.
        warnings: CheckWarning list (folders and indexes only).
    """

    path: str
    ok: bool
    files: int
    tensors: int
    header_size: int
    error: Optional[SafetensorError]
    warnings: List[CheckWarning] = field(default_factory=list)

    def __bool__(self) -> bool:
        return self.ok


def check(path: "os.PathLike[str] | str", allow_external_symlinks: bool = False) -> CheckResult:
    """Validates a safetensors file, a model folder or a sharded index, as ``stguard
    check`` does, without raising for an invalid checkpoint.

    The GIL is released while validating. Folders are checked with the folder rules
    (index, shard names, cross-checks); ``allow_external_symlinks`` accepts shards that
    link out of the folder, as the Hugging Face cache does.

    Example:
        >>> result = stguard.check("model.safetensors")
        >>> result.ok, result.tensors, result.header_size
        (True, 291, 23712)
        >>> stguard.check("bad.safetensors").error.code
        'DuplicateKey'
    """
    text = os.fspath(path)
    error, files, tensors, header_size, warnings = _core.check(text, allow_external_symlinks)
    return CheckResult(path=text, ok=error is None, files=files, tensors=tensors,
                       header_size=header_size, error=error,
                       warnings=[CheckWarning(*warning) for warning in warnings])
