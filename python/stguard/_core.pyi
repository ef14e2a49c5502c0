# SPDX-License-Identifier: Apache-2.0
# Type stubs for the compiled core stguard._core (python/src/module.cc).
from typing import Any, Dict, List, Optional, Tuple

from ._error import SafetensorError

__version__: str

# (name, dtype name, shape, absolute byte offset of the data, byte length)
TensorInfo = Tuple[str, str, Tuple[int, ...], int, int]
# (name, dtype name, shape, a C-contiguous buffer of the little-endian bytes)
TensorEntry = Tuple[str, str, Tuple[int, ...], object]

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

def write_file(path: str, tensors: List[TensorEntry], metadata: Optional[Dict[str, str]]) -> None: ...
def serialize(tensors: List[TensorEntry], metadata: Optional[Dict[str, str]]) -> bytes: ...

# The front door (python/src/front_door.cc, converting.cc). Results are dicts holding the
# envelope's fields (the library's JSON: schema_version, file, format, verdict, and when
# not valid code, message, offset, tensor) and: member, is_folder, warnings [(kind, file,
# tensor, message)], summary {tensors, data_bytes, header_bytes, shards, index}, scan
# (None, or {scan_verdict, description, globals, tensors, key_paths}), files (the same
# dicts, one per file of a folder) and error (SafetensorError or None).
Envelope = Dict[str, Any]

def sniff(path: str) -> str: ...
def check_path(
    path: str, allow_external_symlinks: bool, require_aligned_data: bool,
    key_path: List[str], max_output_ratio: Optional[int]
) -> Envelope: ...
def scan(
    path: str, key_path: List[str], max_output_ratio: Optional[int],
    allow_external_symlinks: bool
) -> Envelope: ...
# lint adds findings [{severity, rule, file, tensor, expected, found, transposed, message}],
# family, lint_error, num_errors, num_warnings, num_tensors, num_shards.
def lint(path: str, config_path: str, allow_external_symlinks: bool) -> Envelope: ...
# Conversions return {tensors, converted, dropped [(dropped, kept)]} (folders: + written).
def convert_safetensors(path: str, out: str, dtype: str) -> Dict[str, Any]: ...
def convert_torch_file(
    path: str, out: str, key_path: List[str], max_output_ratio: Optional[int],
    drop_aliases: bool
) -> Dict[str, Any]: ...
def convert_torch_folder(
    path: str, out: str, drop_aliases: bool, allow_external_symlinks: bool
) -> Dict[str, Any]: ...
def convert_npy(path: str, out: str, name: str) -> Dict[str, Any]: ...
