package audit_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/packs-run/packs/internal/audit"
)

// TestAppendsDoNotWaitForTheCheckpoint: a checkpoint that cannot be moved
// (its file is a FIFO nobody writes, so reading it blocks) holds up no
// append: the checkpoint follows the writer, it is never written by it.
func TestAppendsDoNotWaitForTheCheckpoint(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openDB(t, filepath.Join(dir, "packs.db"))
	l, err := audit.Open(ctx, db, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cp := filepath.Join(dir, audit.CheckpointFile)
	if err := syscall.Mkfifo(cp, 0o600); err != nil {
		t.Fatal(err)
	}
	// Ends the read of the checkpoint, whatever it waits for, so the log
	// can close: EOF on the FIFO.
	release := func() {
		if f, err := os.OpenFile(cp, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	}
	t.Cleanup(func() {
		release()
		l.Close()
	})
	done := make(chan error, 1)
	go func() {
		for i := range 5 {
			if _, err := l.RecordInvocation(ctx, audit.Invocation{ID: fmt.Sprint("inv", i), Pack: "p", Tool: "t"}); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	// Not a measure of speed: the bound only turns a deadlock into a
	// failure instead of the test binary's timeout.
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the appends waited for the checkpoint")
	}
}
