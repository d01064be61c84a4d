module github.com/packs-run/packs/wasm-examples/incident-triage

go 1.24
