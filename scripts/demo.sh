#!/usr/bin/env bash
# demo.sh: what `make run` runs. It builds bin/packs (static) and the example
# packs, installs the built-in packs (internal/builtin) and every pack under
# wasm-examples/ into .demo/home, and starts the web app (packs serve). Extra arguments go to packs serve, e.g.
#   scripts/demo.sh --provider openai --base-url http://localhost:11434/v1 --model llama3.2
# Without a model the app says how to set one; tools still run by hand.
# Each step says what it does and how long it took: the first run installs
# Debian packages and compiles Rust and Go to WebAssembly, which takes minutes.
set -euo pipefail

cd "$(dirname "$0")/.."
GO=${GO:-go}
HOME_DIR=${PACKS_DEMO_HOME:-.demo/home}
STEPS=6
step_no=0
step_start=$SECONDS

# step N TEXT: announce the next step, after the time the last one took.
step() {
	finish_step
	step_no=$((step_no + 1))
	step_start=$SECONDS
	echo "demo: [$step_no/$STEPS] $*" >&2
}

finish_step() {
	if [ "$step_no" -gt 0 ]; then
		echo "demo:       done in $((SECONDS - step_start)) s" >&2
	fi
}

step "checking the Debian packages the examples need (scripts/deps.sh; minutes the first time)…"
scripts/deps.sh

step "building bin/packs (static, CGO_ENABLED=0)…"
make --no-print-directory build GO="$GO"

step "building the example packs' WebAssembly tools (Rust and Go; minutes the first time)…"
make --no-print-directory -C wasm-examples

# Grants: each pack gets what it needs for the demo, nothing more. A pack
# not listed here is installed with nothing granted.
grant_for() {
	case "$1" in
	csv-stats | incident-triage) echo filesystem_read ;; # read the chat's workspace
	web-reader) echo network ;;                           # the documentation hosts it lists
	*) echo none ;;
	esac
}

mkdir -p "$HOME_DIR"
# The built-in packs install themselves on first use; granting the built-in
# web-fetch its documentation hosts is that first use here. Every other
# built-in asks for nothing (session-file-system works in the chat's own
# workspace, which every pack has).
step "installing the built-in packs into $HOME_DIR (current-time, session-file-system, web-fetch, …)…"
bin/packs --home "$HOME_DIR" grant web-fetch \
	'network=*.wikipedia.org,developer.mozilla.org,docs.python.org,pkg.go.dev,go.dev,docs.rs,doc.rust-lang.org,github.com,raw.githubusercontent.com' >/dev/null
echo "demo:       built in: $(bin/packs --home "$HOME_DIR" list | awk '$NF ~ /^builtin:/ {printf "%s ", $1}')" >&2

# No example shares a built-in's name (wasm-examples'
# TestNoExampleNamedLikeABuiltin), so installing every example replaces none:
# the built-in web-fetch and the example web-reader are both installed.
step "installing the example packs into $HOME_DIR (each module is compiled once, then cached)…"
for dir in wasm-examples/*/; do
	[ -f "$dir/SKILL.md" ] || continue
	name=$(basename "$dir")
	bin/packs --home "$HOME_DIR" add "$dir" --yes --grant "$(grant_for "$name")" >/dev/null
	echo "demo:       installed $name (granted: $(grant_for "$name"))" >&2
done

abs_home=$(cd "$HOME_DIR" && pwd)
step "starting the web app…"
cat >&2 <<EOF

demo: open the address packs serve prints below, in a browser: it ends in
demo: ?token=... (the page needs the token; a bare address cannot get in).
demo: Ctrl-C here stops it.
demo: from another terminal, use the same packs with the demo home:
demo:   PACKS_HOME=$abs_home bin/packs list
demo:   PACKS_HOME=$abs_home bin/packs run json-tools query --yes --input '{"data":{"a":1},"path":".a"}'
demo:   PACKS_HOME=$abs_home bin/packs run current-time get_current_time --yes --input '{"format":"human"}'
demo:   PACKS_HOME=$abs_home bin/packs audit
EOF
exec bin/packs --home "$abs_home" serve "$@"
