#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs the page's tests in a real browser (tests/web/browser_test.js): Debian's chromium,
# headless, driven by puppeteer-core, against loopback servers started and stopped here.
#
# Needs: chromium ($STGUARD_CHROMIUM, default /usr/bin/chromium), node, puppeteer-core
# installed under $STGUARD_PUPPETEER_DIR (default /root/.cache/stguard-web; install with
# `npm install --prefix "$STGUARD_PUPPETEER_DIR" puppeteer-core@24.43.1`, as
# tools/deps.sh --all does), the built page ($STGUARD_WEB_DIR, default build-web/, made by
# tools/build-web.sh) and the native CLI ($STGUARD_CLI, default build/stguard) as the
# reference. When one is missing the tests are skipped with a message saying which, and
# the script exits 0; otherwise it fails on any mismatch.
set -eu

repo=$(cd "$(dirname "$0")/../.." && pwd)
export STGUARD_CHROMIUM="${STGUARD_CHROMIUM:-/usr/bin/chromium}"
export STGUARD_PUPPETEER_DIR="${STGUARD_PUPPETEER_DIR:-/root/.cache/stguard-web}"
export STGUARD_WEB_DIR="${STGUARD_WEB_DIR:-$repo/build-web}"
export STGUARD_CLI="${STGUARD_CLI:-$repo/build/stguard}"

skip() {
  echo "SKIPPED: browser tests: $1"
  exit 0
}

[ -x "$STGUARD_CHROMIUM" ] || skip "no chromium at $STGUARD_CHROMIUM"
command -v node >/dev/null 2>&1 || skip "no node on PATH"
[ -x /usr/bin/python3 ] || skip "no /usr/bin/python3 for the test server"
[ -f "$STGUARD_PUPPETEER_DIR/node_modules/puppeteer-core/package.json" ] ||
  skip "no puppeteer-core under $STGUARD_PUPPETEER_DIR (npm install --prefix \"$STGUARD_PUPPETEER_DIR\" puppeteer-core@24.43.1)"
for file in index.html app.js worker.js style.css stguard.js stguard.wasm; do
  [ -f "$STGUARD_WEB_DIR/$file" ] || skip "no $STGUARD_WEB_DIR/$file (build it with tools/build-web.sh)"
done
[ -x "$STGUARD_CLI" ] || skip "no native stguard at $STGUARD_CLI to compare with"

exec node "$repo/tests/web/browser_test.js"
