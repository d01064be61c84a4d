package identity_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/packs-run/packs/internal/identity/identitytest"
)

// BenchmarkVerify is one bearer token's check: a token seen before (served
// by the cache) beside one seen for the first time (its signature checked
// against the issuer's keys, its claims read), alternately in the same
// run. It reports both medians and their ratio; ns/op also counts minting
// the fresh token, which the medians leave out.
func BenchmarkVerify(b *testing.B) {
	op := identitytest.Start(b)
	p := provider(b, op, "")
	ctx := context.Background()
	seen := op.Token(b, "alice", map[string]any{"roles": "member"})
	if _, err := p.Verify(ctx, seen); err != nil {
		b.Fatal(err)
	}
	var cached, first []time.Duration
	i := 0
	for b.Loop() {
		tok := op.Token(b, "alice", map[string]any{"roles": "member", "jti": i})
		i++
		start := time.Now()
		if _, err := p.Verify(ctx, tok); err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		if _, err := p.Verify(ctx, seen); err != nil {
			b.Fatal(err)
		}
		first, cached = append(first, mid.Sub(start)), append(cached, time.Since(mid))
	}
	median := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2].Nanoseconds())
	}
	c, f := median(cached), median(first)
	b.ReportMetric(c, "cached-p50-ns")
	b.ReportMetric(f, "first-p50-ns")
	b.ReportMetric(f/c, "first/cached")
}
