# SPDX-License-Identifier: Apache-2.0
"""The `stguard` command of the Python package: the C++ tool bundled in the package,
started by the launcher stguard._cli. Installed with pip, the console script `stguard`
beside the interpreter is run; in the build tree, `python -m stguard` (the same launcher).
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import stguard
from stguard import _cli

from conftest import CORPUS

SAMPLE = CORPUS / "sample.safetensors"


def installed_by_pip() -> bool:
    return "site-packages" in stguard.__file__ or "dist-packages" in stguard.__file__


def command():
    """The command line that starts stguard the way this package's users start it."""
    if installed_by_pip():
        script = Path(sys.executable).parent / "stguard"
        assert script.exists(), f"pip installed stguard but not its command: no {script}"
        return [str(script)]
    return [sys.executable, "-m", "stguard"]


def run(*arguments):
    return subprocess.run(command() + list(arguments), capture_output=True, text=True,
                          timeout=120)


def test_the_bundled_tool_is_the_cpp_executable():
    binary = _cli.binary()
    assert binary.parent.parent == Path(stguard.__file__).resolve().parent
    assert os.access(binary, os.X_OK), binary
    with open(binary, "rb") as f:
        assert f.read(4) == b"\x7fELF", "the bundled stguard is not a compiled executable"


def test_version_is_the_package_version():
    result = run("--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"stguard {stguard.__version__}\n"
    assert run("version").stdout == result.stdout


def test_check_accepts_the_sample_and_refuses_a_truncated_copy(tmp_path):
    good = run("check", str(SAMPLE))
    assert good.returncode == 0, good.stderr
    assert ": valid: " in good.stdout
    truncated = tmp_path / "truncated.safetensors"
    truncated.write_bytes(SAMPLE.read_bytes()[:-1])
    bad = run("check", str(truncated))
    assert bad.returncode == 1
    assert "invalid:" in bad.stdout


def test_help_and_man_page_come_from_the_bundled_tool():
    for arguments in (["help", "convert"], ["--man"], ["--bash-completion"]):
        launched = run(*arguments)
        direct = subprocess.run([str(_cli.binary()), *arguments], capture_output=True,
                                text=True, timeout=120)
        assert launched.returncode == direct.returncode == 0
        assert launched.stdout == direct.stdout


def test_usage_errors_keep_their_exit_status():
    result = run("check", "--no-such-option", str(SAMPLE))
    assert result.returncode == 2
    assert "unknown option" in result.stderr


def test_a_missing_bundled_tool_is_a_clear_error(monkeypatch, tmp_path):
    missing = tmp_path / "_bin" / "stguard"
    monkeypatch.setattr(_cli, "binary", lambda: missing)
    with pytest.raises(SystemExit) as exit_info:
        _cli.main()
    assert "bundled command-line tool is missing" in str(exit_info.value)
