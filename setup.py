# SPDX-License-Identifier: Apache-2.0
"""Builds the Python package: the pure-Python modules in python/stguard/ plus the
extension stguard._core, which CMake compiles (python/CMakeLists.txt) against the same
library as the stguard command, and that command itself, bundled as stguard/_bin/stguard
and started by the `stguard` console script (python/stguard/_cli.py). Metadata is in
pyproject.toml."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


def project_version() -> str:
    """The version in CMakeLists.txt's project() line, the one place it is kept."""
    text = (ROOT / "CMakeLists.txt").read_text()
    return re.search(r"project\(stguard VERSION ([0-9.]+)", text).group(1)


class CMakeExtension(Extension):
    """An extension whose sources CMake knows; setuptools compiles nothing itself."""

    def __init__(self, name: str, target: str) -> None:
        super().__init__(name, sources=[])
        self.target = target


# The command-line tool's CMake target, bundled beside the extension.
CLI_TARGET = "stguard_cli"


class CMakeBuild(build_ext):
    """Configures a Release build with this interpreter (static library, no tests or fuzz
    replays), builds the extension's target and the command-line tool, and copies both
    where setuptools packs them."""

    def build_extension(self, ext: CMakeExtension) -> None:
        # STGUARD_CMAKE_BUILD_DIR reuses a Release build folder already configured with
        # these options (CI's benchmarks build), instead of compiling the library again.
        reused = os.environ.get("STGUARD_CMAKE_BUILD_DIR")
        build_dir = Path(reused).resolve() if reused else Path(self.build_temp).resolve() / "cmake"
        configure = ["cmake", "-S", str(ROOT), "-B", str(build_dir),
                     "-DCMAKE_BUILD_TYPE=Release", "-DSTGUARD_BUILD_TESTS=OFF",
                     "-DSTGUARD_BUILD_FUZZ_REPLAY=OFF", "-DSTGUARD_BUILD_CLI=ON",
                     "-DBUILD_SHARED_LIBS=OFF",
                     "-DSTGUARD_PYTHON=ON", f"-DPython3_EXECUTABLE={sys.executable}"]
        if shutil.which("ccache"):
            configure += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache",
                          "-DCMAKE_C_COMPILER_LAUNCHER=ccache"]
        subprocess.run(configure, check=True)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", "2")
        subprocess.run(["cmake", "--build", str(build_dir), "--target", ext.target, CLI_TARGET,
                        "-j", jobs], check=True)
        module_name = Path(self.get_ext_filename(ext.name)).name
        built = build_dir / "python" / "stguard" / module_name
        if not built.exists():
            raise RuntimeError(f"CMake did not produce {built} (is the interpreter's "
                               "extension suffix the one CMake found?)")
        destination = Path(self.get_ext_fullpath(ext.name))
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, destination)
        # The CLI links the static library: the one file runs wherever the wheel goes.
        cli = destination.parent / "_bin" / "stguard"
        cli.parent.mkdir(exist_ok=True)
        shutil.copyfile(build_dir / "stguard", cli)
        cli.chmod(0o755)


setup(
    version=project_version(),
    packages=["stguard"],
    package_dir={"stguard": "python/stguard"},
    package_data={"stguard": ["*.pyi", "py.typed"]},
    ext_modules=[CMakeExtension("stguard._core", target="stguard_python_core")],
    cmdclass={"build_ext": CMakeBuild},
    # Not build/: that is the CMake build folder the README uses.
    options={"build": {"build_base": "build-pip"}},
    zip_safe=False,
)
