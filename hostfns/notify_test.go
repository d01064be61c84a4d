package hostfns

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/packs-run/packs/capability"
)

// notes is a Notifier that keeps what it hears, passing log lines at
// level and above.
type notes struct {
	level    slog.Level
	mu       sync.Mutex
	logs     []string
	progress []capability.Progress
}

func (n *notes) LogEnabled(l slog.Level) bool { return l >= n.level }
func (n *notes) Log(l slog.Level, msg string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.logs = append(n.logs, l.String()+" "+msg)
}
func (n *notes) Progress(p capability.Progress) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.progress = append(n.progress, p)
}

// TestLogReachesNotifier: a guest's log line reaches the call's Notifier
// when it wants the level, even when the host's Logger writes nothing, and
// a granted secret's value never does.
func TestLogReachesNotifier(t *testing.T) {
	for _, tt := range []struct {
		name   string
		level  slog.Level
		want   []string
		logger slog.Level
	}{
		{"client wants info", slog.LevelInfo, []string{"INFO hello [secret]"}, slog.LevelError},
		{"client wants warnings only", slog.LevelWarn, nil, slog.LevelError},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := newCall(t, capability.Request{})
			lg, buf := bufLogger(tt.logger)
			c.Logger = lg
			n := &notes{level: tt.level}
			ctx := WithSecrets(capability.WithNotifier(context.Background(), n), NewSecrets(map[string][]byte{"TOKEN": []byte("s3cr3t-value")}))
			if _, err := runProbeIn(ctx, t, c, "base", op{"op": "log", "data": "hello s3cr3t-value"}); err != nil {
				t.Fatal(err)
			}
			if strings.Join(n.logs, "|") != strings.Join(tt.want, "|") {
				t.Fatalf("the client heard %q, want %q", n.logs, tt.want)
			}
			if buf.String() != "" {
				t.Fatalf("an error-level Logger wrote %q", buf.String())
			}
		})
	}
}

// TestProgress: a guest's progress reports reach the Notifier in order;
// a malformed or shrinking report traps with ErrInvalidRequest; a call
// without a Notifier accepts them all the same.
func TestProgress(t *testing.T) {
	tests := []struct {
		name    string
		reports []string
		want    []capability.Progress
		wantErr string
	}{
		{"counts up", []string{`{"progress": 1, "total": 3, "message": "one"}`, `{"progress": 2.5, "total": 3}`, `{"progress": 3}`},
			[]capability.Progress{{Progress: 1, Total: 3, Message: "one"}, {Progress: 2.5, Total: 3}, {Progress: 3}}, ""},
		{"not JSON", []string{`{progress`}, nil, "invalid"},
		{"missing progress", []string{`{"total": 3}`}, nil, `"progress" is missing`},
		{"negative", []string{`{"progress": -1}`}, nil, "at least 0"},
		{"unknown key", []string{`{"progress": 1, "percent": 10}`}, nil, "unknown field"},
		{"total below progress", []string{`{"progress": 4, "total": 3}`}, nil, `"total"`},
		{"trailing data", []string{`{"progress": 1} {}`}, nil, "extra data"},
		{"shrinks", []string{`{"progress": 2}`, `{"progress": 2}`}, []capability.Progress{{Progress: 2}}, "not greater"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := newCall(t, capability.Request{})
			n := &notes{}
			_, err := runProbeIn(capability.WithNotifier(context.Background(), n), t, c, "base", op{"op": "progress", "argv": tt.reports})
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("progress: %v", err)
			case tt.wantErr != "" && (!errors.Is(err, ErrInvalidRequest) || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("progress: %v, want ErrInvalidRequest saying %q", err, tt.wantErr)
			}
			if fmt.Sprint(n.progress) != fmt.Sprint(tt.want) {
				t.Fatalf("the client heard %v, want %v", n.progress, tt.want)
			}
		})
	}
	c, _ := newCall(t, capability.Request{})
	mustProbe(t, c, "base", op{"op": "progress", "argv": []string{`{"progress": 1}`}})
}

// TestProgressCap: past MaxProgressNotes reports the rest are dropped,
// with one warning.
func TestProgressCap(t *testing.T) {
	c, _ := newCall(t, capability.Request{})
	lg, buf := bufLogger(slog.LevelWarn)
	c.Logger = lg
	var reports []string
	for i := range MaxProgressNotes + 10 {
		reports = append(reports, fmt.Sprintf(`{"progress": %d}`, i+1))
	}
	n := &notes{}
	if _, err := runProbeIn(capability.WithNotifier(context.Background(), n), t, c, "base", op{"op": "progress", "argv": reports}); err != nil {
		t.Fatal(err)
	}
	if len(n.progress) != MaxProgressNotes || strings.Count(buf.String(), "progress reports dropped") != 1 {
		t.Fatalf("%d reports passed on, %d warnings; want %d and 1", len(n.progress), strings.Count(buf.String(), "progress reports dropped"), MaxProgressNotes)
	}
}

// FuzzParseProgress: no report makes the parser panic, and what it accepts
// is finite and ordered.
func FuzzParseProgress(f *testing.F) {
	for _, s := range []string{`{"progress": 1, "total": 2, "message": "m"}`, `{"progress": 1e308, "total": 1e309}`, `{"progress": -0}`, `null`, `{"progress": 1}{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := parseProgress(b)
		if err != nil {
			if !errors.Is(err, ErrInvalidRequest) {
				t.Fatalf("error %v does not wrap ErrInvalidRequest", err)
			}
			return
		}
		if p.Progress < 0 || p.Total != 0 && p.Total < p.Progress {
			t.Fatalf("accepted %q as %+v", b, p)
		}
	})
}
