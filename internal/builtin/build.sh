#!/bin/sh
# build.sh [OUTDIR]: builds the built-in packs' WebAssembly modules from
# guest/ into OUTDIR, gzipped (default wasm/, where go:embed finds them, and
# then records the Go version in wasm/GOVERSION). wasip1, an Extism reactor
# (c-shared), no paths or symbols in the binary: the same Go toolchain gives
# the same bytes (TestModulesReproducible runs this into a temporary folder
# and compares). go generate ./internal/builtin runs it, then gen.
set -eu
cd "$(dirname "$0")"
out=$(cd "${1:-wasm}" && pwd)
cd guest
for m in builtins:./cmd/builtins web-fetch:./cmd/webfetch; do
	GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 GOFLAGS=-mod=mod \
		${GO:-go} build -trimpath -buildvcs=false -ldflags='-s -w' -buildmode=c-shared -o "$out/${m%%:*}.wasm" "${m#*:}"
	gzip -n -9 -f "$out/${m%%:*}.wasm"
done
if [ -z "${1:-}" ]; then
	${GO:-go} env GOVERSION >../wasm/GOVERSION
fi
