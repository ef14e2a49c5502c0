# SPDX-License-Identifier: Apache-2.0
"""How a numpy view becomes the caller's framework's array: numpy as is, or a torch tensor
sharing the view's memory, or another framework's array converted from the view. A
framework's package is imported only when asked for."""

import importlib
from typing import Any, Dict

import numpy as np

from ._error import (SafetensorImportError, SafetensorTypeError, SafetensorValueError,
                     refusal)
from ._views import DTYPES, NUMPY_DTYPES, is_numpy_own


class NumpyFramework:
    """Arrays stay numpy arrays (see _views for the dtype table)."""

    def numpy_dtype(self, dtype_name: str) -> str:
        return NUMPY_DTYPES[dtype_name]

    def wrap(self, array: np.ndarray, dtype_name: str) -> np.ndarray:
        return array


def numpy_type_for_torch(numpy_type: str) -> str:
    """The numpy type torch.from_numpy accepts for `numpy_type`: torch 1.13 has no unsigned
    integer wider than a byte, so those become the signed type of their size, holding the
    same bits ("<u2" -> "<i2")."""
    if np.dtype(numpy_type).kind == "u" and np.dtype(numpy_type).itemsize > 1:
        return numpy_type.replace("u", "i")
    return numpy_type


class TorchFramework:
    """Tensors are torch.from_numpy over the view (no copy), retyped where torch has a
    type numpy lacks (the library's dtype table names it): BF16 -> torch.bfloat16, and the
    F8_* types -> torch.float8_* where this torch has them. torch 1.13 has no unsigned
    16/32/64-bit type: U16, U32 and U64 come back as int16/int32/int64 holding the same
    bits; F8_* (without torch float8), F6_* and F4 as uint8 bytes, as for numpy."""

    def __init__(self, device: Any = "cpu") -> None:
        try:
            import torch  # the numpy module must work without torch installed
        except ImportError:
            raise refusal(SafetensorImportError, "framework 'pt' needs the 'torch' package, "
                          "which is not installed") from None

        self._torch = torch
        self._device = torch.device(device)
        # The whole-byte types numpy lacks, read as their bits, become torch's own type.
        self._retype: Dict[str, Any] = {
            name: getattr(torch, framework_name)
            for name, bits, numpy_type, framework_name in DTYPES
            if bits % 8 == 0 and framework_name and not is_numpy_own(numpy_type, framework_name)
            and isinstance(getattr(torch, framework_name, None), torch.dtype)
        }

    def numpy_dtype(self, dtype_name: str) -> str:
        return numpy_type_for_torch(NUMPY_DTYPES[dtype_name])

    def wrap(self, array: np.ndarray, dtype_name: str):
        tensor = self._torch.from_numpy(array)
        retype = self._retype.get(dtype_name)
        if retype is not None:
            tensor = tensor.view(retype)
        if self._device.type != "cpu":
            tensor = tensor.to(self._device)
        return tensor


class ConvertedFramework:
    """Frameworks stguard does not build on (TensorFlow, JAX/Flax, MLX, Paddle): each
    array is the numpy view handed to the framework's own converter, as the reference
    package does. Its package is imported when the file is opened, so a missing one is an
    error at open naming it."""

    def __init__(self, framework: str, package: str, converter: Any) -> None:
        try:
            module = importlib.import_module(package)
        except ImportError:
            raise refusal(SafetensorImportError,
                          f"framework {framework!r} needs the {package!r} package, which is "
                          f"not installed (or use framework='np' or 'pt')") from None
        self._convert = converter(module)

    def numpy_dtype(self, dtype_name: str) -> str:
        return NUMPY_DTYPES[dtype_name]

    def wrap(self, array: np.ndarray, dtype_name: str):
        return self._convert(array)


# Every spelling the reference package accepts, and what it needs.
_FRAMEWORK_NAMES = {"np": "numpy", "numpy": "numpy", "pt": "torch", "torch": "torch",
                    "pytorch": "torch", "tf": "tensorflow", "tensorflow": "tensorflow",
                    "jax": "flax", "flax": "flax", "mlx": "mlx", "paddle": "paddle"}

# (package to import, converter from that module to a numpy -> framework function).
_CONVERTED = {
    "tensorflow": ("tensorflow", lambda tf: tf.convert_to_tensor),
    "flax": ("jax.numpy", lambda jnp: jnp.asarray),
    "mlx": ("mlx.core", lambda mx: mx.array),
    "paddle": ("paddle", lambda paddle: paddle.to_tensor),
}


def get_framework(framework: str, device: Any = "cpu"):
    """Returns the adapter for a framework name ("np", "pt", "tf", "flax", ...)."""
    if not isinstance(framework, str):
        raise refusal(SafetensorTypeError,
                      f"framework must be a str, not {type(framework).__name__}")
    name = _FRAMEWORK_NAMES.get(framework)
    if name is None:
        raise refusal(SafetensorValueError, f"framework {framework!r} is invalid (expected one "
                      f"of: {', '.join(repr(known) for known in _FRAMEWORK_NAMES)})")
    if name == "torch":
        return TorchFramework(device)
    if str(device) != "cpu":
        raise refusal(SafetensorValueError,
                      f"device {device!r} is not supported for framework {framework!r}: "
                      f"its arrays live on the cpu")
    if name == "numpy":
        return NumpyFramework()
    package, converter = _CONVERTED[name]
    return ConvertedFramework(framework, package, converter)
