package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/store"
	"github.com/packs-run/packs/runtime"
)

// TestReview: under [review] after, a persistent grant older than the age
// is due for review; keeping it makes it young again; with lapse, a grant
// due for review holds no more until it is kept.
func TestReview(t *testing.T) {
	for _, lapse := range []bool{false, true} {
		t.Run(map[bool]string{false: "listed", true: "lapsed"}[lapse], func(t *testing.T) {
			ctx := context.Background()
			doc := "[review]\nafter = \"90d\"\n"
			if lapse {
				doc += "lapse = true\n"
			}
			pol := filepath.Join(t.TempDir(), "policy.toml")
			if err := os.WriteFile(pol, []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
			a, err := Open(ctx, Options{Home: filepath.Join(t.TempDir(), "home"), Policy: pol})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			res, err := a.Install(ctx, InstallRequest{Source: writePack(t, "weather", "1.0.0"), Consent: Granting(capability.Network), By: "test"})
			if err != nil {
				t.Fatal(err)
			}
			// Every reader of the grants agrees: the app's, and the
			// pipeline's that calls (and MCP's annotations) read.
			rt, err := runtime.New(ctx, runtime.Config{CacheDir: a.Home.CacheDir()})
			if err != nil {
				t.Fatal(err)
			}
			defer rt.Close(ctx)
			pl, err := a.NewPipeline(rt, &capability.MemoryRecorder{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			held := func() bool {
				t.Helper()
				var got []bool
				for _, src := range []capability.GrantSource{a.Grants(), pl.Grants()} {
					user, err := src.PeekGrants(ctx, res.Entry.Ref(), "")
					if err != nil || len(user) != 1 {
						t.Fatalf("grants = %+v, %v", user, err)
					}
					got = append(got, !user[0].Revoked)
				}
				if got[0] != got[1] {
					t.Fatalf("the app holds %v, the pipeline %v", got[0], got[1])
				}
				return got[0]
			}
			now := time.Now()
			if due, err := a.Review(ctx, now); err != nil || len(due) != 0 || !held() {
				t.Fatalf("a fresh grant: due %+v, %v", due, err)
			}
			old := now.Add(-100 * 24 * time.Hour).UTC().Format(store.TimeFormat)
			if _, err := a.DB.SQL().Exec(`UPDATE grants SET granted_at = ? WHERE pack = 'weather'`, old); err != nil {
				t.Fatal(err)
			}
			due, err := a.Review(ctx, now)
			if err != nil || len(due) != 1 || due[0].Pack != "weather" || due[0].Capability != capability.Network || due[0].Lapsed != lapse {
				t.Fatalf("a grant of 100 days: due %+v, %v", due, err)
			}
			if held() == lapse {
				t.Errorf("a grant due for review held = %v under lapse = %v", held(), lapse)
			}
			if err := a.KeepGrant(ctx, "weather", capability.Network); err != nil {
				t.Fatal(err)
			}
			if due, err := a.Review(ctx, now); err != nil || len(due) != 0 || !held() {
				t.Errorf("a kept grant: due %+v, %v, held %v", due, err, held())
			}
			if err := a.KeepGrant(ctx, "weather", capability.EnvRead); !errors.Is(err, ErrNothingToKeep) {
				t.Errorf("keep of no grant: err = %v, want ErrNothingToKeep", err)
			}
		})
	}
}
