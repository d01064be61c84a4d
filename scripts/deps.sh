#!/usr/bin/env bash
# Installs what building and testing packs needs beyond Go, on Debian or Ubuntu.
# Idempotent: it installs only what is missing, so `make run` and `make test` call it every time.
#
#   rustc cargo libstd-rust-dev-wasm32 librust-serde-json-dev librust-csv-dev   Rust guests, offline (wasm32 targets, serde_json, csv)
#   lld-14                                                       rust-lld, the wasm linker; libstd-rust-dev-wasm32
#                                                                only recommends it, and we install without recommends
#   wabt binaryen                                                wat2wasm for test guests, wasm-opt for Rust guests
#   tmux                                                         the pseudo-terminal test of `packs chat`
#   chromium                                                     the end-to-end test of the web app
#   git openssh-client                                           the distribution tests: real git repositories (file://,
#                                                                git http-backend) and ssh-keygen -Y sign/verify
#   docker-registry                                              the OCI tests: a real registry the test starts on loopback
#   curl python3                                                 the confinement tests: a granted curl and python3 try to
#                                                                leave their grant (setpriv, from util-linux, drops to nobody)
#   postgresql                                                   the PostgreSQL store's tests: internal/testpg starts a server
#                                                                (initdb, postgres) in a temp dir, as the postgres user
#   prometheus                                                   promtool checks what /metrics serves, and a real Prometheus
#                                                                scrapes it (cmd/packs TestServeMetrics)
#
# With WITH_TEST_DEPS=1 it also installs the Node packages of the real MCP clients (test/mcp) and the
# OpenAPI linter (test/openapi: @redocly/cli, which lints internal/web/openapi.json in make test).
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES="rustc cargo libstd-rust-dev-wasm32 librust-serde-json-dev librust-csv-dev lld-14 wabt binaryen"
if [ "${WITH_TEST_DEPS:-0}" = 1 ]; then
	APT_PACKAGES="$APT_PACKAGES tmux chromium git openssh-client docker-registry curl python3 util-linux postgresql prometheus"
fi

missing=""
for p in $APT_PACKAGES; do
	dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
	if ! command -v apt-get >/dev/null; then
		echo "deps: missing$missing and no apt-get: install them with your package manager" >&2
		exit 1
	fi
	SUDO=""
	if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
	echo "deps: apt-get install$missing" >&2
	# Another apt-get (unattended upgrades, a second terminal) may hold the locks: wait for it, up to
	# 10 minutes, instead of failing at once.
	wait_lock=(-o DPkg::Lock::Timeout=600)
	for try in $(seq 1 60); do
		$SUDO apt-get "${wait_lock[@]}" update -q && break
		[ "$try" = 60 ] && exit 1
		echo "deps: apt-get update failed (lock held?); retrying in 10 s" >&2
		sleep 10
	done
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get "${wait_lock[@]}" install -y -q --no-install-recommends $missing
fi

for dir in test/mcp test/openapi; do
	if [ "${WITH_TEST_DEPS:-0}" = 1 ] && [ -f $dir/package-lock.json ] && [ ! -d $dir/node_modules ]; then
		echo "deps: npm ci --prefix $dir" >&2
		npm ci --prefix $dir --no-audit --no-fund
	fi
done
