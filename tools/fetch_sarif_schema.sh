#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fetches the SARIF 2.1.0 JSON schema, a TEST-ONLY oracle for `--sarif` logs: the file
# lib/schemas/sarif-2.1.0-rtm.5.json inside the npm package @microsoft/jest-sarif@1.0.0-beta.0.
# The package is pinned by the sha256 of its tarball and the schema by its own
# (fetch_npm_file.sh); the schema lands in
#   ${STGUARD_CACHE:-$HOME/.cache/stguard}/sarif-schema/sarif-2.1.0-rtm.5.json
# and tests find it there (or through STGUARD_SARIF_SCHEMA). Prints the schema's path.
set -euo pipefail

exec "$(dirname "$0")/fetch_npm_file.sh" @microsoft/jest-sarif 1.0.0-beta.0 \
  748e2c3d1a842e7bb258416685c7ea3a0da40005b72267b2052c2856d48ad102 \
  package/lib/schemas/sarif-2.1.0-rtm.5.json \
  2d99159ae54a3eea97f81781cff48780548657c35949f4b7f25e99a2ba4de4f8 \
  "${STGUARD_CACHE:-$HOME/.cache/stguard}/sarif-schema"
