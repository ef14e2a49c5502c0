# SPDX-License-Identifier: Apache-2.0
"""The drop-in's surface: README's "switching is an import change" example runs as
written and differs from reference code only in its imports; every public name of the
reference package exists; the typed stub of the compiled core lists what it has."""

import ast
import os
import re
from pathlib import Path

import pytest

import stguard
import stguard.numpy

REPO = Path(__file__).resolve().parents[2]


def readme_python_example() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text[text.index("\n## Python\n"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_readme_example_changes_only_imports():
    code = readme_python_example()
    for line in code.splitlines():
        if "stguard" in line:
            assert line.startswith(("from stguard", "import stguard")), line
            assert "# from safetensors" in line, line  # the reference's import beside it
    assert "save_model(" in code and "load_model(" in code and "lm_head.weight = " in code


def test_readme_example_runs(tmp_path, monkeypatch):
    pytest.importorskip("torch", reason="torch is not installed: README's example not run")
    monkeypatch.chdir(tmp_path)
    exec(compile(readme_python_example(), "README.md", "exec"), {"__name__": "readme"})
    with stguard.safe_open("model.safetensors", "pt") as f:
        assert f.keys() == ["embed.weight"]  # the tied weight saved once
        assert f.metadata()["lm_head.weight"] == "embed.weight"
    assert os.path.exists("copy.safetensors")


def test_reference_names_exist():
    for name in ("safe_open", "serialize", "serialize_file", "deserialize", "TensorSpec",
                 "_safe_open_handle", "SafetensorError", "__version__"):
        assert hasattr(stguard, name), name
    for name in ("load", "load_file", "save", "save_file"):
        assert hasattr(stguard.numpy, name), name
    for method in ("keys", "offset_keys", "metadata", "get_tensor", "get_tensors",
                   "get_slice", "__enter__", "__exit__"):
        assert hasattr(stguard.safe_open, method) and hasattr(stguard._safe_open_handle, method)
    torch_module = pytest.importorskip("stguard.torch", reason="torch is not installed")
    for name in ("load", "load_file", "save", "save_file", "save_model", "load_model",
                 "storage_ptr", "storage_size", "_find_shared_tensors", "_is_complete",
                 "_end_ptr", "_remove_duplicate_names"):
        assert callable(getattr(torch_module, name)), name


def test_core_stub_lists_the_core():
    import stguard._core as core
    stub = ast.parse((REPO / "python" / "stguard" / "_core.pyi").read_text(encoding="utf-8"))
    declared = {node.name for node in stub.body
                if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    # Constants are declared as annotated names ("ENVELOPE_SCHEMA_VERSION: int").
    declared |= {node.target.id for node in stub.body
                 if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)}
    public = {name for name in dir(core) if not name.startswith("_")}
    assert public <= declared, public - declared
    header_file = next(node for node in stub.body
                       if isinstance(node, ast.ClassDef) and node.name == "HeaderFile")
    methods = {node.name for node in header_file.body if isinstance(node, ast.FunctionDef)}
    assert {"open", "tensors", "metadata", "size"} <= methods
