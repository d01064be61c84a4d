package hostfns

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/packs-run/packs/capability"
)

// TestLogGuest: go-pdk's log calls reach the call's Logger with the call's
// attributes; a level the Logger drops is not even sent (get_log_level).
func TestLogGuest(t *testing.T) {
	c, _ := newCall(t, capability.Request{})
	lg, buf := bufLogger(slog.LevelInfo)
	c.Logger = lg
	mustProbe(t, c, "base", op{"op": "log", "data": "hello from the guest"})
	out := buf.String()
	for _, want := range []string{"hello from the guest", "pack=probe", "invocation=inv-1", "source=guest", "level=INFO"} {
		if !strings.Contains(out, want) {
			t.Fatalf("log output %q lacks %q", out, want)
		}
	}

	c, _ = newCall(t, capability.Request{})
	lg, buf = bufLogger(slog.LevelWarn)
	c.Logger = lg
	mustProbe(t, c, "base", op{"op": "log", "data": "quiet"})
	if strings.Contains(buf.String(), "quiet") {
		t.Fatalf("an info message reached a warn logger: %q", buf.String())
	}
}

// TestLogCap: a guest that logs without end writes at most MaxLogBytes and
// one warning.
func TestLogCap(t *testing.T) {
	c, _ := newCall(t, capability.Request{})
	lg, buf := bufLogger(slog.LevelInfo)
	c.Logger = lg
	line := strings.Repeat("é", 500) // 1000 bytes, two per rune
	mustProbe(t, c, "base", op{"op": "log", "data": line, "count": 200})
	out := buf.String()
	if got := strings.Count(out, "é"); got*2 > MaxLogBytes || got*2 < MaxLogBytes-1000 {
		t.Fatalf("%d bytes of guest log written, want just under %d", got*2, MaxLogBytes)
	}
	if got := strings.Count(out, "guest log cut"); got != 1 {
		t.Fatalf("%d cut warnings, want 1", got)
	}
	if strings.Contains(out, "\\x") || strings.Contains(out, "\ufffd") {
		t.Fatal("a rune was split")
	}
}

// TestNoCall: a host function run without a Call in its context traps the
// guest with ErrNoCall; the host carries on.
func TestNoCall(t *testing.T) {
	ctx := context.Background()
	if _, ok := CallFrom(ctx); ok {
		t.Fatal("CallFrom found a call in an empty context")
	}
	c, _ := newCall(t, capability.Request{})
	if got, ok := CallFrom(WithCall(ctx, c)); !ok || got != c {
		t.Fatal("CallFrom did not return the call WithCall stored")
	}
	cp := compiled(t, "base")
	fsc, err := FS(c)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := cp.Instance(ctx, pluginInstance(fsc))
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close(ctx)
	_, _, err = inst.CallWithContext(ctx, "probe", []byte(`{"op":"log","data":"x"}`))
	if !errors.Is(err, ErrNoCall) {
		t.Fatalf("call without a Call: %v, want ErrNoCall", err)
	}
}
