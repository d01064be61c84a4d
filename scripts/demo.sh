#!/usr/bin/env bash
# demo.sh: what `make run` runs. It builds bin/packs and the example packs,
# installs every pack under wasm-examples/ into .demo/home, and starts the
# web app (packs serve). Extra arguments go to packs serve, e.g.
#   scripts/demo.sh --provider openai --base-url http://localhost:11434/v1 --model llama3.2
# Without a model the app says how to set one; tools still run by hand.
set -euo pipefail

cd "$(dirname "$0")/.."
GO=${GO:-go}
HOME_DIR=${PACKS_DEMO_HOME:-.demo/home}

"$GO" build -o bin/packs ./cmd/packs
make examples

# Grants: each pack gets what it needs for the demo, nothing more. A pack
# not listed here is installed with nothing granted.
grant_for() {
	case "$1" in
	csv-stats | incident-triage) echo filesystem_read ;; # read the chat's workspace
	web-fetch) echo network ;;                           # the documentation hosts its skill.toml lists
	*) echo none ;;
	esac
}

mkdir -p "$HOME_DIR"
for dir in wasm-examples/*/; do
	[ -f "$dir/SKILL.md" ] || continue
	name=$(basename "$dir")
	bin/packs --home "$HOME_DIR" add "$dir" --yes --grant "$(grant_for "$name")" >/dev/null
	echo "demo: installed $name (granted: $(grant_for "$name"))"
done

exec bin/packs --home "$HOME_DIR" serve "$@"
