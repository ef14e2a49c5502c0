# SPDX-License-Identifier: Apache-2.0
"""The front door: check, scan, lint and convert any file stguard recognises.

Every result carries the envelope's fields, the same as ``stguard ... --json`` prints and
the C API returns (README "Verdicts and the JSON envelope"): ``schema_version``, ``file``,
``format``, ``verdict`` (``"valid"``, ``"invalid"``, ``"refused"``, ``"error"``) and, when not valid,
``code``, ``message``, ``offset`` (only when it points into the file) and ``tensor``. The
verdicts come from the library (python/src/front_door.cc): nothing is decided here.
"""

import json
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from . import _core
from ._error import SafetensorError, invalid_argument

PathLike = Union["os.PathLike[str]", str]
KeyPath = Union[str, Sequence[str], None]


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
class Envelope:
    """The fields every result has (README "Verdicts and the JSON envelope").

    Attributes:
        schema_version: the envelope's version (2, ``_core.ENVELOPE_SCHEMA_VERSION``).
        file: the path given (in a folder's ``results``: the name inside the folder).
        format: what the sniffer found by content, a word of the library's list of
            formats (include/stguard/formats.def: ``"safetensors"``, ``"pytorch-zip"``,
            ``"gguf"``, ``"unknown"``...), or ``"folder"``.
        verdict: ``"valid"``; ``"invalid"`` (malformed); ``"refused"`` (would run code, or
            cannot be proven safe); ``"error"`` (I/O or usage: no verdict on the file).
        code, message, offset, tensor: when not valid, the error's name, sentence, byte
            offset (None unless it points into the file, or into ``member``) and tensor
            (may be "").
        member: inside a folder, the file the error is about ("" otherwise).
        unchecked: for a URL, the checks whose bytes were not read ("1 storage checksum");
            empty when every byte was (and for a local file).
    """

    schema_version: int = _core.ENVELOPE_SCHEMA_VERSION
    file: str = ""
    format: str = "unknown"
    verdict: str = "error"
    code: Optional[str] = None
    message: Optional[str] = None
    offset: Optional[int] = None
    tensor: Optional[str] = None
    member: str = ""
    unchecked: Tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """Whether the verdict is valid."""
        return self.verdict == "valid"

    @property
    def sentence(self) -> str:
        """The verdict's meaning in one sentence for a person: the library's, as the
        browser page shows it."""
        return _core.verdict_sentence(self.verdict)

    def __bool__(self) -> bool:
        return self.ok


def _envelope_fields(raw: Dict[str, Any]) -> Dict[str, Any]:
    """Returns the envelope's fields of a result dict from the core."""
    return {"schema_version": raw.get("schema_version", _core.ENVELOPE_SCHEMA_VERSION),
            "file": raw.get("file", ""),
            "format": raw.get("format", "unknown"), "verdict": raw.get("verdict", "error"),
            "code": raw.get("code"), "message": raw.get("message"), "offset": raw.get("offset"),
            "tensor": raw.get("tensor"), "member": raw.get("member", ""),
            "unchecked": tuple(raw.get("unchecked", ()))}


def _warnings(raw: Dict[str, Any]) -> List[CheckWarning]:
    return [CheckWarning(*warning) for warning in raw.get("warnings", [])]


def _key_path(key: KeyPath) -> List[str]:
    if key is None:
        return []
    if isinstance(key, str):
        return [key]
    keys = list(key)
    if not all(isinstance(k, str) for k in keys):
        raise invalid_argument("key must be a str or a sequence of str")
    return keys


# ------------------------------------------------------------------------------ check


@dataclass(frozen=True)
class CheckResult(Envelope):
    """What ``check`` found: the envelope and the counts. True in a boolean context when
    the verdict is valid.

    Attributes (beside the envelope's):
        path: the path checked.
        files: how many safetensors files were validated (0 when not valid).
        tensors: how many tensors the checkpoint holds (0 when not known).
        header_size: the JSON header's bytes of a single safetensors file.
        error: the SafetensorError behind the verdict, or None.
        warnings: CheckWarning list (folders: pickle files, index mismatches, ...).
        member: for a folder, the file inside it the error is about ("" for the folder).
        results: for a folder, each file examined, as CheckResult, once each.
    """

    path: str = ""
    files: int = 0
    tensors: int = 0
    header_size: int = 0
    error: Optional[SafetensorError] = None
    warnings: List[CheckWarning] = field(default_factory=list)
    member: str = ""
    results: List["CheckResult"] = field(default_factory=list)


def _check_result(raw: Dict[str, Any]) -> CheckResult:
    summary = raw["summary"]
    valid = raw.get("verdict") == "valid"
    return CheckResult(**_envelope_fields(raw), path=raw.get("file", ""),
                       files=summary["shards"] if valid else 0, tensors=summary["tensors"],
                       header_size=summary["header_bytes"], error=raw["error"],
                       warnings=_warnings(raw),
                       results=[_check_result(f) for f in raw["files"]])


def check(path: PathLike, allow_external_symlinks: bool = False, *,
          require_aligned_data: bool = False, key: KeyPath = None,
          max_output_ratio: Optional[int] = None) -> CheckResult:
    """Validates a file of any format stguard recognises (safetensors, PyTorch, GGUF,
    npy, npz), a model folder or a sharded index, as ``stguard check`` does, without
    raising for an invalid one: the same library function decides both verdicts.

    A folder is checked whole: its safetensors checkpoint, config.json, and every
    pickle-bearing file in it (found by content, scanned statically, never run), so a
    valid model beside a malicious ``pytorch_model.bin`` is refused. The GIL is released.
    ``allow_external_symlinks`` accepts files that link out of the folder, as the Hugging
    Face cache does; ``key`` and ``max_output_ratio`` apply to PyTorch files as ``scan``'s.

    Example:
        >>> result = stguard.check("model.safetensors")
        >>> result.ok, result.verdict, result.tensors
        (True, 'valid', 291)
        >>> stguard.check("bad.safetensors").error.code
        'DuplicateKey'
    """
    raw = _core.check_path(os.fspath(path), allow_external_symlinks, require_aligned_data,
                           _key_path(key), max_output_ratio)
    return _check_result(raw)


# ------------------------------------------------------------------------------- scan


@dataclass(frozen=True)
class TorchTensorInfo:
    """One tensor a PyTorch pickle rebuilds: ``alias_of`` names the earlier tensor this
    name shares its data with (tied weights), or is None."""

    name: str
    dtype: str
    shape: Tuple[int, ...]
    contiguous: bool
    alias_of: Optional[str]


@dataclass(frozen=True)
class PickleGlobal:
    """One global a pickle names, whether the allowlist admits it, and where."""

    module: str
    name: str
    allowed: bool
    offset: int


@dataclass(frozen=True)
class ScanResult(Envelope):
    """The static scan of a PyTorch file (nothing in it is run), or of every
    pickle-bearing file under a folder (``results``).

    Attributes (beside the envelope's):
        scan_verdict: ``"clean"``, ``"needs-key"``, ``"names-code"`` or
            ``"cannot-prove-safe"`` (a folder: the first failing file's, else "clean").
        description: the command's sentence for it.
        globals, tensors: what the pickle names, up to the first refusal.
        key_paths: for needs-key, the keys leading to the tensors (pass one as ``key``).
        error: the SafetensorError behind the verdict, or None.
        member, results: for a folder, the failing file's name and each file's ScanResult.
    """

    scan_verdict: str = "cannot-prove-safe"
    description: str = ""
    globals: List[PickleGlobal] = field(default_factory=list)
    tensors: List[TorchTensorInfo] = field(default_factory=list)
    key_paths: List[List[str]] = field(default_factory=list)
    error: Optional[SafetensorError] = None
    member: str = ""
    results: List["ScanResult"] = field(default_factory=list)


def _scan_result(raw: Dict[str, Any]) -> ScanResult:
    results = [_scan_result(f) for f in raw["files"]]
    details = raw["scan"]
    if details is None:  # a folder: its verdict is the first failing file's
        failing = [r for r in results if r.file == raw["member"]]
        return ScanResult(**_envelope_fields(raw),
                          scan_verdict=failing[0].scan_verdict if failing else "clean",
                          description=failing[0].description if failing else "",
                          error=raw["error"], results=results)
    return ScanResult(
        **_envelope_fields(raw), scan_verdict=details["scan_verdict"],
        description=details["description"],
        globals=[PickleGlobal(*g) for g in details["globals"]],
        tensors=[TorchTensorInfo(n, d, tuple(s), c, a) for n, d, s, c, a in details["tensors"]],
        key_paths=details["key_paths"], error=raw["error"], results=results)


def scan(path: PathLike, key: KeyPath = None, *, max_output_ratio: Optional[int] = None,
         allow_external_symlinks: bool = False) -> ScanResult:
    """Scans a PyTorch checkpoint (``.bin``, ``.pt``, ``.pth``, ``.ckpt``, any name) or
    every pickle-bearing file under a folder statically, as ``stguard scan`` does: the
    pickle is read by a machine that runs nothing, and its verdict says whether loading it
    would run code the file chose.

    ``key`` selects the state dict (``"state_dict"`` or a sequence of keys);
    ``max_output_ratio`` bounds the output views may ask for (default 4x the file).

    Example:
        >>> result = stguard.scan("pytorch_model.bin")
        >>> result.verdict, result.scan_verdict, len(result.tensors)
        ('valid', 'clean', 291)
        >>> stguard.scan("evil.pt").code
        'PickleGlobalRefused'
    """
    raw = _core.scan(os.fspath(path), _key_path(key), max_output_ratio, allow_external_symlinks)
    return _scan_result(raw)


# ------------------------------------------------------------------------------- lint


@dataclass(frozen=True)
class LintFinding:
    """One lint finding, as ``stguard lint --json`` prints it: ``severity`` is ``"error"`` or
    ``"warning"``, ``rule`` a stable id (README "stguard lint"); ``file`` and ``tensor`` may be
    ""; ``expected`` and ``found`` are a shape (a list of ints) or text (``"BF16"``,
    ``"absent"``; may be "")."""

    severity: str
    rule: str
    file: str
    tensor: str
    expected: Union[str, List[int]]
    found: Union[str, List[int]]
    transposed: bool
    message: str


@dataclass(frozen=True)
class LintResult(Envelope):
    """What ``lint`` found: its verdict (check's, when check does not find the path valid;
    else invalid with code ``"LintError"`` when a finding is an error) and the findings.

    True in a boolean context when the verdict is valid.

    Attributes (beside the envelope's):
        family: the model family matched ("llama", "qwen2"...), or None.
        findings: LintFinding list.
        errors, warnings: how many findings of each severity.
        tensors, shards: the checkpoint's counts.
        error: the SafetensorError behind the verdict (check's, LintError, or lint's own
            failure to run: an unreadable config), or None.
        linted: whether lint ran to its end (False when check did not find the path valid,
            the path is of a format lint does not read, or lint could not run): the
            findings and counts are lint's only then.
    """

    family: Optional[str] = None
    findings: List[LintFinding] = field(default_factory=list)
    errors: int = 0
    warnings: int = 0
    tensors: int = 0
    shards: int = 0
    error: Optional[SafetensorError] = None
    linted: bool = False


def lint(path: PathLike, config: Optional[PathLike] = None, *,
         allow_external_symlinks: bool = False) -> LintResult:
    """Checks a model folder (or file) against its config.json, as ``stguard lint``
    does: first ``check``'s verdict on it, then every tensor's name and shape against the
    family's contracts.

    Example:
        >>> result = stguard.lint("Llama-3.2-1B/")
        >>> result.ok, result.family, result.errors
        (True, 'llama', 0)
    """
    raw = _core.lint(os.fspath(path), "" if config is None else os.fspath(config),
                     allow_external_symlinks)
    # The library's object, as the command prints it: when lint did not run (check did not
    # pass, or lint could not), it has no findings and "warnings" lists check's warnings.
    printed = json.loads(raw["json"])
    if "findings" not in printed:
        return LintResult(**_envelope_fields(raw), error=raw["error"])
    return LintResult(**_envelope_fields(raw), family=printed["family"],
                      findings=[LintFinding(**f) for f in printed["findings"]],
                      errors=printed["errors"], warnings=printed["warnings"],
                      tensors=printed["tensors"], shards=printed["shards"], error=raw["error"],
                      linted=True)


# ---------------------------------------------------------------------------- convert


@dataclass(frozen=True)
class ConvertResult(Envelope):
    """What ``convert`` wrote (the verdict is valid: a refusal raises instead).

    Attributes (beside the envelope's):
        output: the path written.
        tensors: how many tensors it holds; converted: how many changed dtype (for
        every format and folder kind; a GGUF block type dequantized counts as changed).
        dropped: (dropped name, kept name) for each tied name dropped (drop_aliases).
        written: for a folder, the file names written in it, the index last.
    """

    output: str = ""
    tensors: int = 0
    converted: int = 0
    dropped: List[Tuple[str, str]] = field(default_factory=list)
    written: List[str] = field(default_factory=list)


def convert(path: PathLike, out: PathLike, dtype: Optional[str] = None, *,
            key: KeyPath = None, drop_aliases: bool = False,
            max_output_ratio: Optional[int] = None, allow_external_symlinks: bool = False,
            name: Optional[str] = None, all_metadata: bool = False) -> ConvertResult:
    """Converts any file stguard reads to a canonical safetensors file, choosing by the
    file's content (never its name), as ``stguard convert`` does. Nothing in the input is
    run, and anything refused writes nothing (``out`` keeps its old content).

    - safetensors: floating tensors rewritten to ``dtype`` ("BF16", "F16" or "F32").
    - PyTorch (.bin, .pt, .pth, .ckpt): ``key`` selects the state dict,
      ``drop_aliases`` keeps one name per tied tensor, ``max_output_ratio`` bounds views.
    - a folder of pytorch_model.bin shards: ``out`` is a folder (created with its parents,
      as ``mkdir -p`` does; what this call created is removed again if nothing is written).
    - npy: one tensor, named ``name`` (default: the file name without ".npy").
    - npz: one tensor per array, named by its key.
    - GGUF: tensors keep their names, block types are dequantized to F32 (or ``dtype``);
      ``all_metadata`` keeps metadata arrays longer than 1,024 elements; the first part of
      a split model converts into the folder ``out``.
    ``dtype`` applies to every input: floating tensors are rewritten to it as they are
    converted (a PyTorch file streams: no intermediate file). An option that does not
    apply to the format found raises SafetensorError (InvalidArgument) naming it, as the
    library's rule says. A failure raises SafetensorError with ``.verdict`` ("refused",
    "invalid" or "error", the command's verdict) and ``.member`` (a folder's file at fault).

    Example:
        >>> stguard.convert("pytorch_model.bin", "model.safetensors").tensors
        291
        >>> stguard.convert("model.safetensors", "model.bf16.safetensors", "BF16").converted
        290
    """
    source, target = os.fspath(path), os.fspath(out)
    # One library call: it tells the format, refuses an option that does not apply to it
    # and decides the verdict, as `stguard convert` does.
    done = _core.convert(source, target, dtype, _key_path(key), max_output_ratio,
                         drop_aliases, allow_external_symlinks, name or "", all_metadata)
    return ConvertResult(schema_version=_core.ENVELOPE_SCHEMA_VERSION, file=source,
                         format=done["format"], verdict="valid", output=target,
                         tensors=done["tensors"], converted=done["converted"],
                         dropped=[tuple(d) for d in done["dropped"]],
                         written=list(done["written"]))
