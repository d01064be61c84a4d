package hostfns

import (
	"context"
	"maps"
	"slices"
	"strings"

	extism "github.com/extism/go-sdk"
)

// Environ returns the variables of environ ("K=V" pairs, as os.Environ gives
// them) that c's grant lets the guest see, and records each one it exposes.
// The runtime passes the result as the WASI environment and as the Extism
// config; a variable the grant does not cover is never visible. The map is
// also kept in c for config_get. A later duplicate of a name wins. A
// variable whose exposure cannot be recorded is not exposed (fail closed,
// logged), and a Call that cannot record at all exposes nothing.
func Environ(c *Call, environ []string) map[string]string {
	out := map[string]string{}
	if c.check() != nil {
		return out
	}
	vars := map[string]string{}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		vars[k] = v
	}
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		d := c.Grant.Env(k)
		if !d.Allowed() {
			continue
		}
		if err := c.decide(d); err != nil {
			c.logger().Error("hostfns: variable not exposed", "name", k, "err", err)
			continue
		}
		out[k] = vars[k]
	}
	c.mu.Lock()
	c.env = maps.Clone(out)
	c.mu.Unlock()
	return out
}

// configGet serves Extism's config_get (renamed into ConfigNamespace by
// RewriteImports) from what Environ exposed. Each read is decided by
// Grant.Env and recorded, so an attempt on a variable that was not granted is
// audited; the guest sees "not set" (0).
func configGet(ctx context.Context, p *extism.CurrentPlugin, stack []uint64) {
	c := mustCall(ctx)
	name := mustRead(p, stack[0])
	if err := c.decide(c.Grant.Env(name)); err != nil {
		if isDenied(err) {
			stack[0] = 0
			return
		}
		panic(err)
	}
	c.mu.Lock()
	v, ok := c.env[name]
	c.mu.Unlock()
	if !ok {
		stack[0] = 0
		return
	}
	stack[0] = mustWrite(p, []byte(v))
}
