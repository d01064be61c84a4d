package hostfns

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/hostfns/confine"
)

// countRecorder counts exercises without keeping them.
type countRecorder struct{ n int }

func (r *countRecorder) RecordExercise(capability.Exercise) error {
	r.n++
	return nil
}

func BenchmarkRewriteImports(b *testing.B) {
	if probeErr != nil {
		b.Skip(probeErr)
	}
	in := probes["full"]
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if _, err := RewriteImports(in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkImportedGroups(b *testing.B) {
	if probeErr != nil {
		b.Skip(probeErr)
	}
	in, err := RewriteImports(probes["full"])
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if _, err := ImportedGroups(in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFSOpenRead is one guest open+read+close of a workspace file
// through the confined, recorded filesystem (no wasm).
func BenchmarkFSOpenRead(b *testing.B) {
	c, _ := newCall(b, capability.Request{})
	c.Recorder = &countRecorder{}
	if err := os.WriteFile(filepath.Join(c.Workspace, "f.txt"), make([]byte, 4096), 0o644); err != nil {
		b.Fatal(err)
	}
	mounts, err := mountsFor(c)
	if err != nil {
		b.Fatal(err)
	}
	ws := mounts[0]
	buf := make([]byte, 4096)
	for b.Loop() {
		f, errno := ws.OpenFile("f.txt", experimentalsys.O_RDONLY, 0)
		if errno != 0 {
			b.Fatal(errno)
		}
		if _, errno := f.Read(buf); errno != 0 {
			b.Fatal(errno)
		}
		f.Close()
	}
}

// BenchmarkFSOpenReadGlob is the same in a glob mount, which also checks
// the path the kernel opened.
func BenchmarkFSOpenReadGlob(b *testing.B) {
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.log"), make([]byte, 4096), 0o644); err != nil {
		b.Fatal(err)
	}
	c, _ := newCall(b, capability.Request{FilesystemRead: []string{filepath.Join(dir, "*.log")}})
	c.Recorder = &countRecorder{}
	mounts, err := mountsFor(c)
	if err != nil {
		b.Fatal(err)
	}
	m := mounts[2]
	buf := make([]byte, 4096)
	for b.Loop() {
		f, errno := m.OpenFile("a.log", experimentalsys.O_RDONLY, 0)
		if errno != 0 {
			b.Fatal(errno)
		}
		if _, errno := f.Read(buf); errno != 0 {
			b.Fatal(errno)
		}
		f.Close()
	}
}

func BenchmarkEnviron(b *testing.B) {
	c, _ := newCall(b, capability.Request{EnvRead: []string{"PROBE_*"}})
	c.Recorder = &countRecorder{}
	environ := append(os.Environ(), probeEnv...)
	for b.Loop() {
		Environ(c, environ)
	}
}

// BenchmarkExec is one native command with the full treatment (grant
// check, lookup, private TMPDIR, confinement: the supervisor, namespaces,
// Landlock, seccomp; process group, watch, kill, reap) against its peer in
// the same run: the same program started by plain os/exec in a process
// group, unconfined. /bin/true shows the cost itself; python3 -c pass a
// command whose own start is most of it. Each iteration of the subject
// also runs the peer once, untimed there, and added-p50-ns is the median
// of the pairs' differences: what confinement adds, steady while the
// machine's load drifts between the two sub-benchmarks. The supervisor
// is ready at each call, as between a chat's calls (BenchmarkSupervisor
// in hostfns/confine measures a call that starts its own: cold).
func BenchmarkExec(b *testing.B) {
	for _, argv := range [][]string{{"true"}, {"python3", "-c", "pass"}} {
		name := argv[0]
		prog, err := lookPath(argv[0], "")
		if err != nil {
			b.Fatal(err)
		}
		plain := func() time.Duration {
			start := time.Now()
			var out bytes.Buffer
			cmd := &exec.Cmd{Path: prog, Args: argv, Env: []string{"PATH=" + SafePath}, Stdout: &out, Stderr: &out,
				SysProcAttr: &syscall.SysProcAttr{Setpgid: true}}
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
			return time.Since(start)
		}
		b.Run(name+"/packs", func(b *testing.B) {
			c, _ := newCall(b, execReq(argv[0]))
			c.Recorder = &countRecorder{}
			ctx := context.Background()
			durs := make([]time.Duration, 0, b.N)
			added := make([]time.Duration, 0, b.N)
			for b.Loop() {
				b.StopTimer()
				confine.Prepare()
				peer := plain()
				b.StartTimer()
				start := time.Now()
				if _, err := Exec(ctx, c, argv, ExecOptions{}); err != nil {
					b.Fatal(err)
				}
				d := time.Since(start)
				durs = append(durs, d)
				added = append(added, d-peer)
			}
			reportP50(b, durs, "p50-ns")
			reportP50(b, added, "added-p50-ns")
		})
		b.Run(name+"/peer=unconfined", func(b *testing.B) {
			durs := make([]time.Duration, 0, b.N)
			for b.Loop() {
				durs = append(durs, plain())
			}
			reportP50(b, durs, "p50-ns")
		})
	}
}

// reportP50 reports the median of durs as unit.
func reportP50(b *testing.B, durs []time.Duration, unit string) {
	if len(durs) == 0 {
		return
	}
	slices.Sort(durs)
	b.ReportMetric(float64(durs[len(durs)/2].Nanoseconds()), unit)
}

// BenchmarkHTTPFetch is one granted GET to a loopback server.
func BenchmarkHTTPFetch(b *testing.B) {
	s := newServer(b, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	c, _ := newCall(b, capability.Request{Network: loopback})
	c.Recorder = &countRecorder{}
	n := newNetwork()
	ctx := context.Background()
	for b.Loop() {
		if _, err := n.fetch(ctx, c, HTTPRequest{URL: s.at("localhost", "/")}, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAsk is the host's side of one question (parse, decide, record,
// ask a person who answers at once, check the answer, record), against
// its peer, the host's side of one progress report.
func BenchmarkAsk(b *testing.B) {
	c, _ := newCall(b, capability.Request{AskPerson: true})
	c.Recorder = &countRecorder{}
	ctx := capability.WithAsker(context.Background(), &person{answer: capability.Answer{Action: "accept", Content: map[string]any{"name": "Ada", "n": 2.0}}})
	q := []byte(nameQuestion)
	b.Run("ask", func(b *testing.B) {
		for b.Loop() {
			c.asked = 0
			if _, err := c.ask(ctx, q); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("progress (peer)", func(b *testing.B) {
		c.progressed = 0
		n := 0.0
		for b.Loop() {
			n++
			p, err := parseProgress([]byte(`{"progress": 1, "total": 2, "message": "Which name?"}`))
			if err != nil {
				b.Fatal(err)
			}
			p.Progress = n
			if err := c.progress(ctx, p); err != nil {
				b.Fatal(err)
			}
		}
	})
}
