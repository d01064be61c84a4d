package mcpserver

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestWatcherHammer: subscriptions come and go from many goroutines while
// the files change; every notification names a URI that was subscribed,
// and after close nothing can subscribe. Run with -race.
func TestWatcherHammer(t *testing.T) {
	dir := t.TempDir()
	const files = 8
	var paths []string
	for i := range files {
		p := filepath.Join(dir, fmt.Sprintf("sub%d", i%2), fmt.Sprintf("f%d.txt", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("0"), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	var mu sync.Mutex
	heard := map[string]int{}
	w := newWatcher(slog.New(slog.DiscardHandler), func(uri string) {
		mu.Lock()
		heard[uri]++
		mu.Unlock()
	})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				n := (g + i) % files
				uri := fmt.Sprintf("x://f%d", n)
				if err := w.add(uri, paths[n]); err != nil {
					t.Error(err)
					return
				}
				if err := os.WriteFile(paths[n], []byte(fmt.Sprint(i)), 0o644); err != nil {
					t.Error(err)
					return
				}
				if i%3 == 0 {
					w.remove(uri)
				}
			}
		}()
	}
	wg.Wait()
	w.close()
	if err := w.add("x://late", paths[0]); !errors.Is(err, errWatcherClosed) {
		t.Fatalf("add after close = %v, want errWatcherClosed", err)
	}
	mu.Lock()
	defer mu.Unlock()
	for uri := range heard {
		var n int
		if _, err := fmt.Sscanf(uri, "x://f%d", &n); err != nil || n >= files {
			t.Errorf("notified %q, which was never subscribed", uri)
		}
	}
}
