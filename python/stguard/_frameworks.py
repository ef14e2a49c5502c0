# SPDX-License-Identifier: Apache-2.0
"""How a numpy view becomes the caller's framework's array: numpy as is, or a torch tensor
sharing the view's memory. torch is imported only when asked for."""

from typing import Any, Dict

import numpy as np

from ._views import NUMPY_DTYPES


class NumpyFramework:
    """Arrays stay numpy arrays (see _views for the dtype table)."""

    def numpy_dtype(self, dtype_name: str) -> str:
        return NUMPY_DTYPES[dtype_name]

    def wrap(self, array: np.ndarray, dtype_name: str) -> np.ndarray:
        return array


class TorchFramework:
    """Tensors are torch.from_numpy over the view (no copy), retyped where torch has a
    type numpy lacks: BF16 -> torch.bfloat16, and F8_E4M3 / F8_E5M2 -> torch.float8_*
    where this torch has them. torch 1.13 has no unsigned 16/32/64-bit type: U16, U32 and
    U64 come back as int16/int32/int64 holding the same bits; F8_* (without torch float8),
    F6_* and F4 as uint8 bytes, as for numpy."""

    # numpy types torch.from_numpy accepts, for the dtypes whose numpy type it does not.
    _NUMPY_FOR_TORCH: Dict[str, str] = {"BF16": "<i2", "U16": "<i2", "U32": "<i4", "U64": "<i8"}

    def __init__(self, device: Any = "cpu") -> None:
        import torch  # the numpy module must work without torch installed

        self._torch = torch
        self._device = torch.device(device)
        self._retype: Dict[str, Any] = {"BF16": torch.bfloat16}
        for dtype_name, attribute in (("F8_E4M3", "float8_e4m3fn"), ("F8_E5M2", "float8_e5m2")):
            if hasattr(torch, attribute):
                self._retype[dtype_name] = getattr(torch, attribute)

    def numpy_dtype(self, dtype_name: str) -> str:
        return self._NUMPY_FOR_TORCH.get(dtype_name, NUMPY_DTYPES[dtype_name])

    def wrap(self, array: np.ndarray, dtype_name: str):
        tensor = self._torch.from_numpy(array)
        retype = self._retype.get(dtype_name)
        if retype is not None:
            tensor = tensor.view(retype)
        if self._device.type != "cpu":
            tensor = tensor.to(self._device)
        return tensor


_FRAMEWORK_NAMES = {"np": "numpy", "numpy": "numpy", "pt": "torch", "torch": "torch",
                    "pytorch": "torch"}


def get_framework(framework: str, device: Any = "cpu"):
    """Returns the adapter for "np"/"numpy" or "pt"/"torch"/"pytorch"."""
    name = _FRAMEWORK_NAMES.get(framework)
    if name is None:
        raise ValueError(f"unknown framework {framework!r}: use 'np' or 'pt'")
    if name == "numpy":
        if str(device) != "cpu":
            raise ValueError(f"numpy arrays live on the cpu, not {device!r}")
        return NumpyFramework()
    return TorchFramework(device)
