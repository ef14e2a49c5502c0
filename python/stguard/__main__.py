# SPDX-License-Identifier: Apache-2.0
"""`python -m stguard ARGS` runs the bundled stguard command, as `stguard ARGS` does."""

from stguard._cli import main

main()
