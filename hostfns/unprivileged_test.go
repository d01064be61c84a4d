package hostfns

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// asNobody is set in the test binary re-run as an unprivileged user by
// TestConfinedUnprivileged; it names the root-owned fixtures.
const asNobody = "PACKS_TEST_AS_NOBODY"

// TestConfinedUnprivileged: people do not run packs as root. The test
// binary runs again as nobody (setpriv) and tries, confined: a file of
// nobody's outside the grant (only Landlock stands in the way, not
// permissions), a setuid-root program reading a root-only file, and a
// fork bomb, which the process limit stops (the kernel exempts root from
// it, so only this run shows it).
func TestConfinedUnprivileged(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("run as root: the test drops to nobody itself")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv (util-linux) is not installed")
	}
	// Fixtures nobody can reach: a setuid-root cat, a root-only file in a
	// folder nobody may list (granted to the command for reading).
	shared, err := os.MkdirTemp("", "packs-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(shared) })
	if err := os.Chmod(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	copyFile := func(src, dst string, mode os.FileMode) {
		in, err := os.Open(src)
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(out, in); err != nil {
			t.Fatal(err)
		}
		out.Close()
		if err := os.Chmod(dst, mode); err != nil {
			t.Fatal(err)
		}
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	copyFile(self, filepath.Join(shared, "hostfns.test"), 0o755)
	copyFile("/bin/cat", filepath.Join(shared, "suidcat"), os.ModeSetuid|0o755)
	if err := os.WriteFile(filepath.Join(shared, "root-only"), []byte("VICTIM-root"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--",
		filepath.Join(shared, "hostfns.test"), "-test.run=^TestConfinedAsNobody$", "-test.v")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "TMPDIR=/tmp", asNobody + "=" + shared}
	out, err := cmd.CombinedOutput()
	t.Logf("as nobody:\n%s", out)
	if err != nil || !strings.Contains(string(out), "--- PASS: TestConfinedAsNobody") {
		t.Fatalf("the confinement failed as an unprivileged user: %v", err)
	}
}

// TestConfinedAsNobody is TestConfinedUnprivileged's inner half.
func TestConfinedAsNobody(t *testing.T) {
	shared := os.Getenv(asNobody)
	if shared == "" {
		t.Skip("run by TestConfinedUnprivileged")
	}
	mine := filepath.Join(t.TempDir(), "mine")
	if err := os.WriteFile(mine, []byte("VICTIM-mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	suid := filepath.Join(shared, "suidcat")
	req := execReq("sh", "cat", suid)
	req.FilesystemRead = []string{shared}
	c, _ := newCall(t, req)
	res, err := Exec(context.Background(), c, []string{"sh", "-c", "cat " + mine + "; " + suid + " " + filepath.Join(shared, "root-only")}, ExecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if out := string(res.Stdout) + string(res.Stderr); strings.Contains(out, "VICTIM-") || strings.Count(out, "Permission denied") != 2 {
		t.Errorf("outside the grant, or through setuid:\n%s", out)
	}

	tag := "4243." + strconv.Itoa(os.Getpid())
	res, err = Exec(context.Background(), c, []string{"sh", "-c", "i=0; while [ $i -lt 1000 ]; do sleep " + tag + " & i=$((i+1)); done; echo spawned $i"},
		ExecOptions{Timeout: 5 * time.Second, Grace: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if out := string(res.Stderr); !strings.Contains(out, "fork") && !strings.Contains(out, "Resource temporarily unavailable") {
		t.Errorf("1000 processes started under a limit of %d:\n%s%s", 256, res.Stdout, out[:min(len(out), 500)])
	}
	if n := processesWith(tag); n != 0 {
		t.Errorf("%d processes outlived the call", n)
	}
}
