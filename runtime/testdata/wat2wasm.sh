#!/bin/sh
# Rebuilds every testdata/*.wasm from its .wat (run by go generate ./runtime).
set -e
cd "$(dirname "$0")"
for f in *.wat; do
	wat2wasm -o "${f%.wat}.wasm" "$f"
done
