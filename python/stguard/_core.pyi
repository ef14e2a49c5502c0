# SPDX-License-Identifier: Apache-2.0
# Type stubs for the compiled core stguard._core (python/src/module.cc).
from typing import Any, Dict, List, Optional, Tuple

from ._error import SafetensorError

__version__: str

# (name, dtype name, shape, absolute byte offset of the data, byte length)
TensorInfo = Tuple[str, str, Tuple[int, ...], int, int]
# (name, dtype name, shape, a C-contiguous buffer of the little-endian bytes)
TensorEntry = Tuple[str, str, Tuple[int, ...], object]

# (safetensors dtype name, bits per element, numpy type string, torch's name or "")
DtypeRow = Tuple[str, int, str, str]

def dtypes() -> List[DtypeRow]: ...

class Storage:
    """A validated checkpoint and its private, writable (copy-on-write) memory, exposed
    through the buffer protocol."""

    @staticmethod
    def open(path: str) -> Storage: ...
    @staticmethod
    def from_bytes(data: bytes) -> Storage: ...
    def tensors(self) -> List[TensorInfo]: ...
    def metadata(self) -> Optional[Dict[str, str]]: ...
    @property
    def header_len(self) -> int: ...
    @property
    def size(self) -> int: ...
    def __buffer__(self, flags: int) -> memoryview: ...

class HeaderFile:
    """A checkpoint's validated header, read with pread: no mapping, no descriptor kept
    (safe_open's "pread" backend reads the tensors itself)."""

    @staticmethod
    def open(path: str) -> HeaderFile: ...
    def tensors(self) -> List[TensorInfo]: ...
    def metadata(self) -> Optional[Dict[str, str]]: ...
    @property
    def size(self) -> int: ...


# GGUF (python/src/gguf_bindings.cc): (name, type name, type id, ne, shape, absolute
# offset, byte length, safetensors dtype or None, block size, bytes per block)
GgufTensorInfo = Tuple[str, str, int, Tuple[int, ...], Tuple[int, ...], int, int, Optional[str], int, int]

class GgufFile:
    """A validated GGUF file in a private, writable (copy-on-write) mapping, exposed
    through the buffer protocol."""

    @staticmethod
    def open(path: str) -> GgufFile: ...
    @property
    def version(self) -> int: ...
    @property
    def alignment(self) -> int: ...
    @property
    def data_offset(self) -> int: ...
    def metadata(self) -> Dict[str, object]: ...
    def tensors(self) -> List[GgufTensorInfo]: ...
    def dequantize_into(self, name: str, out: object) -> None: ...
    def __buffer__(self, flags: int) -> memoryview: ...

def gguf_convert(
    path: str, out: str, dtype: Optional[str] = ..., all_metadata: bool = ...
) -> Tuple[List[str], int, int, int, List[Tuple[str, str, int]]]: ...

def write_file(path: str, tensors: List[TensorEntry], metadata: Optional[Dict[str, str]]) -> None: ...
def serialize(tensors: List[TensorEntry], metadata: Optional[Dict[str, str]]) -> bytes: ...

# The front door (python/src/front_door.cc, converting.cc). Results are dicts holding the
# envelope's fields (the library's JSON: schema_version, file, format, verdict, and when
# not valid code, message, offset, tensor) and: member, is_folder, warnings [(kind, file,
# tensor, message)], summary {tensors, data_bytes, header_bytes, shards, index}, scan
# (None, or {scan_verdict, description, globals, tensors, key_paths}), files (the same
# dicts, one per file of a folder) and error (SafetensorError or None).
Envelope = Dict[str, Any]
ENVELOPE_SCHEMA_VERSION: int  # the envelope's schema_version (stguard/verdict.h)

def sniff(path: str) -> str: ...
# set_url_timeout: seconds for connecting and for a stall when an input is a URL
# (http(s):// or hf://); a build without URL support reports that on each URL instead.
def set_url_timeout(seconds: int) -> None: ...
def verdict_sentence(verdict: str) -> str: ...
def check_path(
    path: str, allow_external_symlinks: bool, require_aligned_data: bool,
    key_path: List[str], max_output_ratio: Optional[int]
) -> Envelope: ...
def scan(
    path: str, key_path: List[str], max_output_ratio: Optional[int],
    allow_external_symlinks: bool
) -> Envelope: ...
# lint adds json: the object `stguard lint --json` prints (the library's LintJson).
def lint(path: str, config_path: str, allow_external_symlinks: bool) -> Envelope: ...
# convert returns {format, tensors, converted, dropped [(dropped, kept)], written (folders)}:
# one call of the library's ConvertPath, as `stguard convert` makes it; a failure raises
# SafetensorError with .verdict ("refused", "invalid", "error") and .member.
def convert(
    path: str, out: str, dtype: Optional[str] = None, key_path: List[str] = ...,
    max_output_ratio: Optional[int] = None, drop_aliases: bool = False,
    allow_external_symlinks: bool = False, name: str = "", all_metadata: bool = False
) -> Dict[str, Any]: ...
def _check_many_json(paths: List[str], workers: Optional[int], allow_external_symlinks: bool,
                     require_aligned_data: bool) -> List[List[str]]: ...
def _scan_many_json(paths: List[str], workers: Optional[int], key: List[str],
                    max_output_ratio: Optional[int],
                    allow_external_symlinks: bool) -> List[List[str]]: ...
# .npy / .npz (python/src/npy_bindings.cc): (descr, fortran_order, shape, data bytes)
NpyDescription = Tuple[str, bool, Tuple[int, ...], int]

class NumpyMapping:
    """A validated .npy/.npz file's private, writable (copy-on-write) mapping, exposed
    through the buffer protocol."""

    def __buffer__(self, flags: int) -> memoryview: ...

def open_npy(path: str) -> Tuple[NumpyMapping, NpyDescription, int]: ...
def open_npz(
    path: str,
) -> Tuple[NumpyMapping, List[Tuple[str, NpyDescription, Optional[int], Optional[bytearray]]]]: ...
