# SPDX-License-Identifier: Apache-2.0
"""The one exception stguard raises for a bad file or a refused write."""

from typing import Optional


class SafetensorError(Exception):
    """A file that is not a valid safetensors checkpoint, or a write that was refused.

    Attributes:
        code: the error's name, as the ``stguard`` command prints it
            (``"DuplicateKey"``, ``"InvalidOffset"``, ``"IoError"``...).
        offset: the absolute byte offset in the file where the problem was found
            (0 for refused writes, which have no file yet).
        tensor: the tensor (or metadata key) concerned, or None.

    ``str(error)`` is the command's text: ``"DuplicateKey at byte 61: duplicate key
    (tensor 'w')"``; the offset is shown only when it points into a file (a refused
    write reads ``"InvalidArgument: ..."``). Where the reference package raises for the
    same reason (a missing file, a value that is not a tensor, a sparse or non-contiguous
    tensor, an index out of range), ``str(error)`` is the reference's text instead, and
    ``code``, ``offset`` and ``tensor`` still say what stguard found.

    Example:
        >>> import stguard
        >>> try:
        ...     stguard.safe_open("not-there.safetensors", framework="np")
        ... except stguard.SafetensorError as error:
        ...     print(error.code)
        IoError
    """

    def __init__(self, message: str, code: str = "InvalidArgument", offset: int = 0,
                 tensor: Optional[str] = None) -> None:
        super().__init__(message)
        self.code = code
        self.offset = offset
        self.tensor = tensor

    def __reduce__(self):
        return (type(self), (str(self), self.code, self.offset, self.tensor))


def invalid_argument(message: str, tensor: Optional[str] = None) -> SafetensorError:
    """Returns an InvalidArgument error for a refusal found in Python, in the CLI's format."""
    return refusal(SafetensorError, message, tensor)


# Where the reference package raises a built-in exception, stguard raises one of these:
# code written against it (``except FileNotFoundError``) keeps working, and code written
# against stguard (``except SafetensorError``, ``.code``) too.


class SafetensorFileNotFoundError(SafetensorError, FileNotFoundError):
    """A file that does not exist (``.code == "IoError"``)."""


class SafetensorValueError(SafetensorError, ValueError):
    """A value that cannot be saved or used: not a tensor, not a dict, sparse, an unknown
    framework or backend."""


class SafetensorTypeError(SafetensorError, TypeError):
    """An argument of the wrong type (a ``TensorSpec`` dict without ``data``...)."""


class SafetensorRuntimeError(SafetensorError, RuntimeError):
    """Tensors that share memory given to ``save_file`` (``save_model`` handles them)."""


class SafetensorImportError(SafetensorError, ImportError):
    """A framework whose package is not installed."""


def reference_refusal(kind: type, text: str, tensor: Optional[str] = None) -> SafetensorError:
    """Returns an InvalidArgument error of class ``kind`` whose ``str()`` is ``text``, the
    reference package's own message for the same refusal: code written against it compares
    the text. ``code``, ``offset`` and ``tensor`` are set as for every stguard error."""
    return kind(text, "InvalidArgument", 0, tensor)


def refusal(kind: type, message: str, tensor: Optional[str] = None) -> SafetensorError:
    """Returns an InvalidArgument error of class ``kind`` (one of the classes above), in
    the CLI's format."""
    # No byte offset: a refused argument points into no file.
    text = f"InvalidArgument: {message}"
    if tensor is not None:
        text += f" (tensor {tensor!r})"
    return kind(text, "InvalidArgument", 0, tensor)
