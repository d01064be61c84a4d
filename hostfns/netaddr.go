package hostfns

import (
	"context"
	"net/netip"
	"slices"
)

type reservedKey struct{}

// WithReserved returns a context under which the network host functions
// never connect to addrs, whatever the call's grant: packs' own listening
// addresses (the web app, the MCP HTTP server), so that no tool can reach
// the interfaces that change grants, policy or approvals. An address whose
// IP is unspecified (0.0.0.0:7777, [::]:7777), as a server listening on
// every interface reports, reserves its port on every address. Addresses
// add to those ctx already reserves. The list is copied; nothing can change
// it afterwards.
func WithReserved(ctx context.Context, addrs ...netip.AddrPort) context.Context {
	all := append(slices.Clip(reservedFrom(ctx)), addrs...)
	return context.WithValue(ctx, reservedKey{}, all)
}

// reservedFrom returns the addresses WithReserved put in ctx. The caller
// must not modify the slice.
func reservedFrom(ctx context.Context) []netip.AddrPort {
	r, _ := ctx.Value(reservedKey{}).([]netip.AddrPort)
	return r
}
