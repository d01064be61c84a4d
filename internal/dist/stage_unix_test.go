//go:build unix

package dist

import (
	"context"
	"errors"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/packs-run/packs/packs"
)

func TestStageRefusesSpecialFiles(t *testing.T) {
	src := writePack(t, t.TempDir(), "weather", "1.0.0")
	if err := syscall.Mkfifo(filepath.Join(src, "docs", "pipe"), 0o600); err != nil {
		t.Skip("no mkfifo here:", err)
	}
	h := openTestHome(t, filepath.Join(t.TempDir(), "home"))
	if _, err := h.Stage(context.Background(), src, StageOptions{}); !errors.Is(err, packs.ErrUnsupportedFile) {
		t.Fatalf("got %v, want ErrUnsupportedFile", err)
	}
	if left := tmpLeft(t, h); len(left) != 0 {
		t.Errorf("tmp/ not empty: %v", left)
	}
}
