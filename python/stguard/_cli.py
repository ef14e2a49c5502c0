# SPDX-License-Identifier: Apache-2.0
"""The `stguard` command that `pip install` puts on PATH.

It is not a second implementation: the wheel ships the C++ command-line tool itself (the
one `cmake --install` installs, built from the same sources by setup.py) as
stguard/_bin/stguard, and this launcher replaces its own process with it, arguments, exit
status, standard streams and signals all passed through unchanged.
"""

import os
import sys
from pathlib import Path


def binary() -> Path:
    """Returns the path of the bundled stguard executable."""
    return Path(__file__).resolve().parent / "_bin" / "stguard"


def main() -> None:
    """Runs the bundled stguard with this process's arguments; never returns."""
    path = binary()
    if not os.access(path, os.X_OK):
        sys.exit(f"stguard: the bundled command-line tool is missing or not executable: {path}")
    os.execv(path, ["stguard", *sys.argv[1:]])


if __name__ == "__main__":
    main()
