package packs

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestStampText: a stamp kept as text (Index) comes back Same as the
// stamp it was, a stamp without an inode and change time comes back never
// Same, and neither kind of damage to the text is read as a stamp.
func TestStampText(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	full := StampOf(fi)
	partial := Stamp{mode: 0o644, size: 1, mtime: time.Unix(1, 0)}
	cases := []struct {
		name     string
		s        Stamp
		wantSame bool
	}{
		{"full", full, full.full}, // Same only where the platform gives an inode and a change time
		{"partial", partial, false},
	}
	for _, c := range cases {
		text, err := c.s.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back Stamp
		if err := back.UnmarshalText(text); err != nil {
			t.Fatalf("%s: %q: %v", c.name, text, err)
		}
		if got := back.Same(c.s); got != c.wantSame {
			t.Errorf("%s: %q read back Same = %t, want %t", c.name, text, got, c.wantSame)
		}
		if back.SettledBefore(time.Now().Add(time.Hour)) != c.wantSame {
			t.Errorf("%s: read back settled = %t, want %t", c.name, !c.wantSame, c.wantSame)
		}
	}
	for _, bad := range []string{"", "1:2:3", "1:2:3:4:5:6", "1:2:3:4:5:6:x", "1:2:3:4:5:6:1:8"} {
		var s Stamp
		if err := s.UnmarshalText([]byte(bad)); err == nil {
			t.Errorf("UnmarshalText(%q) = %+v, want an error", bad, s)
		}
	}
}
