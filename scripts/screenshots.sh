#!/usr/bin/env bash
# screenshots.sh: regenerate the README's screenshots of the web app. The
# headless-Chromium tests in internal/web take them (TestBrowser*, into
# $PACKS_E2E_ARTIFACTS); the ones named web-*.png are copied to docs/img.
# Needs Chromium (Debian: apt-get install chromium, or set PACKS_CHROMIUM).
set -euo pipefail

cd "$(dirname "$0")/.."
GO=${GO:-go}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "screenshots: running the browser tests (internal/web, TestBrowser*)…" >&2
PACKS_E2E_ARTIFACTS=$out CI=1 "$GO" test -count=1 -run 'TestBrowser' ./internal/web/ >&2
shopt -s nullglob
shots=("$out"/web-*.png)
if [ ${#shots[@]} -eq 0 ]; then
	echo "screenshots: the tests left no web-*.png in $out" >&2
	exit 1
fi
mkdir -p docs/img
cp "${shots[@]}" docs/img/
for s in "${shots[@]}"; do echo "screenshots: docs/img/$(basename "$s")" >&2; done
