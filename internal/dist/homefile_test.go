package dist

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHomeIsAFile: a state directory (or a module cache) that is a file,
// or that lies under a file, is called a file, not a permissions problem.
func TestHomeIsAFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "home")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, home string
		opt        HomeOptions
	}{
		{"the home", file, HomeOptions{}},
		{"under the home", filepath.Join(file, "sub"), HomeOptions{}},
		{"the module cache", t.TempDir(), HomeOptions{ModuleCache: file}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := OpenHome(context.Background(), tt.home, tt.opt)
			if err == nil {
				t.Fatal("opened")
			}
			msg := err.Error()
			if !strings.Contains(msg, "is a file, not a folder") || !strings.Contains(msg, file) || strings.Contains(msg, "permission") {
				t.Errorf("says %q", msg)
			}
		})
	}
}
