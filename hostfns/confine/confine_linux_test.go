package confine

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// run runs argv confined with ws writable and returns its output and exit
// status.
func run(t *testing.T, spec Spec) (string, int) {
	t.Helper()
	cmd, err := Command(spec)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start: %v", err)
	}
	_ = cmd.Wait()
	return out.String(), cmd.ProcessState.ExitCode()
}

func shell(t *testing.T, ws, script string) Spec {
	return Spec{Path: "/bin/sh", Args: []string{"sh", "-c", script}, Env: []string{"PATH=/usr/bin:/bin", "HOME=" + ws}, Dir: ws, Write: []string{ws}}
}

func TestProbe(t *testing.T) {
	s := Probe()
	t.Logf("support: %+v mode %s", s, s.Mode())
	if s.Mode() != ModeFull {
		t.Skipf("this machine gives %s confinement", s.Mode())
	}
}

func TestConfinedShell(t *testing.T) {
	if !Probe().Full() {
		t.Skip("no full confinement here")
	}
	ws := t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(outside, []byte("s3cret"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, code := run(t, shell(t, ws, "echo hi > $HOME/f && cat $HOME/f && cat "+outside+"; touch /tmp/x-packs-confine; id -u"))
	t.Logf("out %q code %d", out, code)
	if !strings.Contains(out, "hi") || strings.Contains(out, "s3cret") {
		t.Errorf("out = %q", out)
	}
	_, err := os.Stat("/tmp/x-packs-confine")
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("touch outside: %v", err)
	}
}
