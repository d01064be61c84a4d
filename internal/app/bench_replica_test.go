package app

import (
	"context"
	"testing"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/testpg"
)

// BenchmarkSharedCallGrants measures what a store replicas share adds to
// the grants of one call (checkStoreContent: the store's record of the
// pack is read and compared with this replica's copy), against its peer,
// the same read of the grants on the same PostgreSQL without the check.
// The two alternate within each iteration, so a drift in the machine's
// load falls on both.
func BenchmarkSharedCallGrants(b *testing.B) {
	ctx := context.Background()
	a, err := Open(ctx, Options{Home: b.TempDir(), Store: testpg.URL(b), ModuleCache: cacheDir})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	installWith(b, a, "weather", "\n[capabilities]\nnetwork = [\"api.example.com\"]\n")
	e, err := a.Home.Entry("weather")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := a.Grant(ctx, "weather", "", whole(capability.Network)); err != nil {
		b.Fatal(err)
	}
	shared := a.Grants()
	plain := shared
	plain.Shared, plain.Home = false, nil
	var sharedNs, plainNs time.Duration
	for b.Loop() {
		for _, g := range []struct {
			src Grants
			sum *time.Duration
		}{{shared, &sharedNs}, {plain, &plainNs}} {
			start := time.Now()
			got, err := g.src.TakeGrants(ctx, e.Ref(), "")
			*g.sum += time.Since(start)
			if err != nil || !holds(got, capability.Network) {
				b.Fatalf("grants %+v (%v)", got, err)
			}
		}
	}
	b.ReportMetric(float64(sharedNs.Nanoseconds())/float64(b.N), "shared-ns/call")
	b.ReportMetric(float64(plainNs.Nanoseconds())/float64(b.N), "plain-ns/call")
	b.ReportMetric(float64(sharedNs)/float64(plainNs), "shared/plain")
}
