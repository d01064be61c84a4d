module github.com/packs-run/packs/internal/builtin/guest

go 1.24

require (
	github.com/extism/go-pdk v1.1.3
	golang.org/x/net v0.41.0
)
