#!/bin/bash -eu
# SPDX-License-Identifier: Apache-2.0
# ClusterFuzzLite build: the same build as OSS-Fuzz, from the project root.
cd "$SRC/stguard"
exec oss-fuzz/build.sh
