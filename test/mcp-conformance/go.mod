module github.com/packs-run/packs/test/mcp-conformance

go 1.24

require github.com/extism/go-pdk v1.1.3
