package tools

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestGetCurrentTime(t *testing.T) {
	Now = func() time.Time { return time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC) }
	defer func() { Now = time.Now }()
	tests := []struct{ in, want string }{
		{`{}`, `{"current_time":"2026-01-02T15:04:05Z","timezone":"UTC","format":"iso8601","utc_offset":"+00:00"}`},
		{`{"timezone":"America/New_York","format":"human"}`, `{"current_time":"Friday, January 2, 2026 at 10:04:05 AM EST","timezone":"America/New_York","format":"human","utc_offset":"-05:00"}`},
		{`{"timezone":"Asia/Kolkata","format":"unix"}`, `{"current_time":1767366245,"timezone":"Asia/Kolkata","format":"unix","utc_offset":"+05:30"}`},
	}
	for _, tt := range tests {
		got, err := GetCurrentTime([]byte(tt.in))
		if err != nil || string(got) != tt.want {
			t.Errorf("get_current_time %s = %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
	for _, in := range []string{`{"timezone":"Local"}`, `{"timezone":"../../etc/passwd"}`, `{"format":"x"}`} {
		if _, err := GetCurrentTime([]byte(in)); !errors.Is(err, ErrInvalid) {
			t.Errorf("get_current_time %s: %v, want ErrInvalid", in, err)
		}
	}
}

func TestWriteTodosWarnings(t *testing.T) {
	todo := func(s string) string { return `{"content":"c","activeForm":"a","status":"` + s + `"}` }
	tests := []struct {
		list []string
		want []string
	}{
		{nil, nil},
		{[]string{"completed"}, nil},
		{[]string{"pending"}, []string{WarnNoneInProgress}},
		{[]string{"in_progress", "pending"}, nil},
		{[]string{"in_progress", "in_progress", "in_progress"}, []string{"3 tasks are in_progress: exactly one task should be in_progress at a time"}},
	}
	for _, tt := range tests {
		in := `{"todos":[` + strings.Join(func() []string {
			var s []string
			for _, x := range tt.list {
				s = append(s, todo(x))
			}
			return s
		}(), ",") + `]}`
		out, err := WriteTodos([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		var r TodoResult
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatal(err)
		}
		if strings.Join(r.Warnings, "|") != strings.Join(tt.want, "|") || r.Total != len(tt.list) {
			t.Errorf("%v: warnings %q, want %q", tt.list, r.Warnings, tt.want)
		}
	}
}

func TestSessionFiles(t *testing.T) {
	Root = t.TempDir()
	defer func() { Root = "/workspace" }()
	if _, err := WriteFile([]byte(`{"path":"/a/b/c.txt","content":"hi"}`)); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(Root, "a", "b", "c.txt")); err != nil || string(b) != "hi" {
		t.Fatalf("parents not created: %q %v", b, err)
	}
	out, err := WriteFile([]byte(`{"path":"/a/b/c.txt","content":"again"}`))
	if err != nil || !strings.Contains(string(out), `"created":false`) {
		t.Errorf("overwrite: %s %v", out, err)
	}
	if _, err := DeleteFile([]byte(`{"path":"/a"}`)); !errors.Is(err, ErrInvalid) {
		t.Errorf("delete of a full directory without recursive: %v", err)
	}
}

// Whatever the path, it lands under Root.
func FuzzSessionPath(f *testing.F) {
	for _, s := range []string{"/a", "../../x", "a/../../b", "\\..\\x", "/", "", "./.", "//x//y/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		Root = "/workspace"
		sp, hp, err := sessionPath(p)
		if err != nil {
			return
		}
		if !strings.HasPrefix(sp, "/") || hp != "/workspace" && !strings.HasPrefix(hp, "/workspace/") {
			t.Errorf("sessionPath(%q) = %q, %q", p, sp, hp)
		}
	})
}
