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

    result = stguard.check("model_folder/")            # any file, a folder or an index
    print(result.verdict, result.tensors, result.error)  # "valid", "refused"...

    stguard.scan("pytorch_model.bin").verdict          # the static scan: nothing is run
    stguard.convert("pytorch_model.bin", "model.safetensors")   # any format, by content
    stguard.lint("model_folder/").findings             # shapes against config.json
"""

from . import _core
from ._error import SafetensorError
from ._front_door import (CheckResult, CheckWarning, ConvertResult, Envelope, LintFinding,
                          LintResult, PickleGlobal, ScanResult, TorchTensorInfo, check, convert,
                          lint, scan)
from ._many import check_many, scan_many
from ._open import TensorSlice, _safe_open_handle, safe_open
from ._serialize import TensorSpec, deserialize, serialize, serialize_file

__version__: str = _core.__version__

__all__ = ["CheckResult", "CheckWarning", "ConvertResult", "Envelope", "LintFinding",
           "LintResult", "PickleGlobal", "SafetensorError", "ScanResult", "TensorSlice",
           "TensorSpec", "TorchTensorInfo", "__version__", "_safe_open_handle", "check",
           "check_many", "convert", "deserialize", "lint", "safe_open", "scan", "scan_many",
           "serialize", "serialize_file"]
