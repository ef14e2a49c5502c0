#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# hostile_rss.sh BUILD_DIR [TMPDIR]: peak memory of every stguard command on the three
# hostile header shapes, in units of N (the header length) beyond
# the header's own bytes: (peak RSS - N) / N, peak from /usr/bin/time -f %M. The bound is 2.
# The files (about 99 MB of header each, no data) are made by `rss_probe --write-hostile`
# in TMPDIR (default /tmp) and kept for the next run.
set -euo pipefail
build=${1:?usage: hostile_rss.sh BUILD_DIR [TMPDIR]}
dir=${2:-/tmp}
stguard="$build/stguard"
probe="$build/bench/rss_probe"
out="$dir/stguard-hostile-out.safetensors"
echo "| shape | check | inspect | inspect --json | inspect --stats | check --canonical | canon | convert --dtype F16 |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for shape in meta_8m dims_49m zero_1_7m; do
  file="$dir/stguard-hostile-$shape.safetensors"
  [[ -f "$file" ]] || "$probe" --write-hostile "$shape" "$file"
  n=$(( $(stat -c %s "$file") - 8 ))
  row="| \`$shape\`"
  for cmd in "check $file" "inspect $file" "inspect --json $file" "inspect --stats $file" \
             "check --canonical $file" "canon $file $out" "convert $file $out --dtype F16"; do
    rm -f "$out"
    # check --canonical exits 1 on these files (not canonical): only the peak matters.
    /usr/bin/time -o "$dir/stguard-hostile-time" -f %M $stguard $cmd > /dev/null 2>&1 || true
    kb=$(tail -n 1 "$dir/stguard-hostile-time")
    row+=" | $(awk -v kb="$kb" -v n="$n" 'BEGIN { printf "%.2f", (kb * 1024 - n) / n }')"
  done
  echo "$row |"
done
rm -f "$out" "$dir/stguard-hostile-time"
