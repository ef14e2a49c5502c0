# SPDX-License-Identifier: Apache-2.0
"""check_many and scan_many: many paths at once, on the library's threads.

Each path is judged by the same library function as ``stguard check --json`` (or
``scan --json``) on C++ threads, with the GIL released for the whole call, so other Python
threads run meanwhile. Results come back in input order as the envelope dicts the CLI
prints: ``schema_version``, ``file``, ``format``, ``verdict`` (then ``code``, ``message``,
``offset``, ``member``, ``tensor`` when not valid) and the command's own fields.
"""

import json
import os
from typing import Any, Dict, Iterable, List, Optional, Sequence, Union

from . import _core

PathLike = Union[str, "os.PathLike[str]"]


def _paths(paths: Iterable[PathLike]) -> List[str]:
    return [os.fsdecode(os.fspath(path)) for path in paths]


def check_many(paths: Iterable[PathLike], workers: Optional[int] = None, *,
               allow_external_symlinks: bool = False,
               require_aligned_data: bool = False) -> List[Dict[str, Any]]:
    """Checks every path (file, folder or index) as ``stguard check --json`` does, on
    ``workers`` C++ threads (default: one per core), and returns one envelope dict per
    path, in order.

    Example:
        >>> [r["verdict"] for r in stguard.check_many(["a.safetensors", "evil.bin"])]
        ['valid', 'refused']
    """
    per_path = _core._check_many_json(_paths(paths), workers, allow_external_symlinks,
                                      require_aligned_data)
    return [json.loads(lines[0]) for lines in per_path]


def scan_many(paths: Iterable[PathLike], workers: Optional[int] = None, *,
              key: Union[None, str, Sequence[str]] = None,
              max_output_ratio: Optional[int] = None,
              allow_external_symlinks: bool = False) -> List[Dict[str, Any]]:
    """Scans every path as ``stguard scan --json`` does, on ``workers`` C++ threads
    (default: one per core), and returns the report dicts in input order: one per file
    (a folder gives one per pickle-bearing file in it, or one saying it holds none).
    """
    keys = [] if key is None else [key] if isinstance(key, str) else list(key)
    per_path = _core._scan_many_json(_paths(paths), workers, keys, max_output_ratio,
                                     allow_external_symlinks)
    return [json.loads(line) for lines in per_path for line in lines]
