package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/store"
)

// TestInPlaceGrantsBindContent: a grant to a folder holds for the content
// it was made at only; granting at another content drops the old grants;
// a chat grant holds in its chat; a once grant is refused.
func TestInPlaceGrantsBindContent(t *testing.T) {
	store.EachBackend(t, func(t *testing.T, openDB func(*testing.T) *store.DB) {
		ctx := context.Background()
		db := openDB(t)
		a := store.InPlaceContent{Dir: "/p/skills/tool", Name: "tool", Digest: "sha256:aa", Files: map[string]string{"SKILL.md": "01"}}
		exec := capability.UserGrant{Capability: capability.TerminalExec, Resources: []string{"python3"}, Scope: capability.ScopePersistent}
		env := capability.UserGrant{Capability: capability.EnvRead, Scope: capability.ScopeChat}
		if err := db.PutInPlaceGrants(ctx, a, "chat_1", []capability.UserGrant{exec, env}); err != nil {
			t.Fatal(err)
		}
		count := func(digest, chat string) int {
			t.Helper()
			got, err := db.InPlaceGrants(ctx, a.Dir, digest, chat, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			return len(got)
		}
		if got := count("sha256:aa", "chat_1"); got != 2 {
			t.Errorf("grants at the granted content in the chat = %d, want 2", got)
		}
		if got := count("sha256:aa", "chat_2"); got != 1 {
			t.Errorf("grants at the granted content in another chat = %d, want 1 (the persistent one)", got)
		}
		if got := count("sha256:bb", ""); got != 0 {
			t.Errorf("grants at another content = %d, want 0", got)
		}
		c, ok, err := db.InPlaceGranted(ctx, a.Dir)
		if err != nil || !ok || c.Digest != a.Digest || c.Files["SKILL.md"] != "01" {
			t.Errorf("InPlaceGranted = %+v, %v, %v", c, ok, err)
		}
		b := a
		b.Digest = "sha256:bb"
		if err := db.PutInPlaceGrants(ctx, b, "", []capability.UserGrant{exec}); err != nil {
			t.Fatal(err)
		}
		if got := count("sha256:aa", "chat_1"); got != 0 {
			t.Errorf("grants at the old content after a grant at the new = %d, want 0", got)
		}
		if got := count("sha256:bb", "chat_1"); got != 1 {
			t.Errorf("grants at the new content = %d, want 1 (the chat grant of the old content went)", got)
		}
		once := capability.UserGrant{Capability: capability.EnvRead, Scope: capability.ScopeOnce}
		if err := db.PutInPlaceGrants(ctx, b, "chat_1", []capability.UserGrant{once}); !errors.Is(err, store.ErrOnceInPlace) {
			t.Errorf("a once grant: %v, want ErrOnceInPlace", err)
		}
		if k, err := db.RevokeInPlaceGrant(ctx, a.Dir, capability.TerminalExec); err != nil || k != 1 {
			t.Errorf("revoke: %d, %v", k, err)
		}
		if got := count("sha256:bb", "chat_1"); got != 0 {
			t.Errorf("after the revoke: %d grants", got)
		}
		if err := db.DeleteInPlaceGrants(ctx, a.Dir); err != nil {
			t.Fatal(err)
		}
		if rows, err := db.InPlaceGrantRows(ctx, a.Dir); err != nil || len(rows) != 0 {
			t.Errorf("after delete: %v, %v", rows, err)
		}
	})
}
