package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The cold packs run benchmarks: a new process per call, against a native
// build of the same tool from the guest's own source, built here.

const examples = "../../wasm-examples"

// nativeJSONTools builds json-tools' tool code (every non-test file but its
// wasm exports and empty main) natively, with a main that runs query on
// stdin, with the tags query's module is built with (noschema).
func nativeJSONTools(b *testing.B) string {
	b.Helper()
	src, err := filepath.Abs(filepath.Join(examples, "json-tools"))
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	files, _ := filepath.Glob(filepath.Join(src, "*.go"))
	for _, f := range files {
		base := filepath.Base(f)
		if strings.HasSuffix(base, "_test.go") || base == "main.go" || base == "exports.go" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		writeBenchFiles(b, dir, map[string]string{base: string(data)})
	}
	writeBenchFiles(b, dir, map[string]string{
		"go.mod": "module nativepeer\n\ngo 1.24\n",
		"native_main.go": `package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	in, _ := io.ReadAll(os.Stdin)
	out, err := query(in)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Stdout.Write(append(out, '\n'))
}
`})
	bin := filepath.Join(dir, "json-tools-native")
	cmd := exec.Command("go", "build", "-trimpath", "-tags", "noschema", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Skipf("native json-tools does not build: %v\n%s", err, out)
	}
	return bin
}

// nativeTextKit builds text-kit (a crate with no dependencies) natively
// with Debian's cargo, offline, with a main that runs slugify on stdin.
func nativeTextKit(b *testing.B) string {
	b.Helper()
	src, err := filepath.Abs(filepath.Join(examples, "text-kit"))
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	writeBenchFiles(b, dir, map[string]string{
		"Cargo.toml": "[package]\nname = \"text-kit-native\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\ntext-kit = { path = \"" + src + "\" }\n\n[profile.release]\nopt-level = 3\n",
		"src/main.rs": `use std::io::{Read, Write};

fn main() {
    let mut input = Vec::new();
    std::io::stdin().read_to_end(&mut input).unwrap();
    match text_kit::slugify(&input) {
        Ok(out) => { let mut o = std::io::stdout(); o.write_all(out.as_bytes()).unwrap(); o.write_all(b"\n").unwrap(); }
        Err(e) => { eprintln!("{}", e); std::process::exit(1); }
    }
}
`})
	cmd := exec.Command("/usr/bin/cargo", "build", "--release", "--offline", "--quiet")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "RUSTC=/usr/bin/rustc", "RUSTDOC=/usr/bin/rustdoc", "CARGO_TARGET_DIR="+filepath.Join(dir, "target"))
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Skipf("native text-kit does not build with /usr/bin/cargo offline: %v\n%s", err, out)
	}
	return filepath.Join(dir, "target", "release", "text-kit-native")
}

// nativeCSVStats builds csv-stats (a WASI command: JSON on stdin, JSON on
// stdout) natively, as it is, with Debian's cargo and crates, offline.
func nativeCSVStats(b *testing.B) string {
	b.Helper()
	src, err := filepath.Abs(filepath.Join(examples, "csv-stats"))
	if err != nil {
		b.Fatal(err)
	}
	target := filepath.Join(b.TempDir(), "target")
	cmd := exec.Command("/usr/bin/cargo", "build", "--release", "--offline", "--quiet")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "RUSTC=/usr/bin/rustc", "RUSTDOC=/usr/bin/rustdoc", "CARGO_TARGET_DIR="+target)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Skipf("native csv-stats does not build with /usr/bin/cargo offline: %v\n%s", err, out)
	}
	return filepath.Join(target, "release", "csv-stats")
}

// exampleHome installs the example pack name into a fresh state directory
// (compiling its module into the cache, as packs add does).
func exampleHome(b *testing.B, name string) string {
	b.Helper()
	if _, err := os.Stat(filepath.Join(examples, name, "bin")); err != nil {
		b.Skipf("%s is not built (make examples): %v", name, err)
	}
	home := filepath.Join(b.TempDir(), "home")
	if err := runBench(b, home, "add", filepath.Join(examples, name), "--yes", "--grant", "all"); err != nil {
		b.Fatal(err)
	}
	return home
}

// runProcess runs bin with args and stdin; it fails unless the output is
// want. It returns the CPU time the process used, user and system.
func runProcess(b *testing.B, env []string, stdin, want string, bin string, args ...string) time.Duration {
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil || strings.TrimSpace(out.String()) != want {
		b.Fatalf("%s %v: %v: %q %s", bin, args, err, out.String(), errb.String())
	}
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// loopProcess runs the process once per iteration and reports its CPU time
// per run as cpu-ns, the figure benchtable takes the ratio of.
func loopProcess(b *testing.B, env []string, stdin, want string, bin string, args ...string) {
	var cpu time.Duration
	for b.Loop() {
		cpu += runProcess(b, env, stdin, want, bin, args...)
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns")
}

// Binaries built for the process benchmarks: the packs binary as make build
// makes it, and a Go hello world. Each is built once per test process;
// go build's own cache makes a rebuild of unchanged code a link.
var (
	packsBinOnce sync.Once
	packsBin     string
	packsBinErr  error
	helloOnce    sync.Once
	helloBin     string
	helloErr     error

	binDirOnce sync.Once
	binDir     string
	binDirErr  error
)

// benchBinDir is this test process's folder for the binaries; TestMain
// removes it (removeBenchBins).
func benchBinDir() (string, error) {
	binDirOnce.Do(func() { binDir, binDirErr = os.MkdirTemp("", "packs-bench-bin-") })
	return binDir, binDirErr
}

// removeBenchBins removes the binaries' folder, if a benchmark made one.
func removeBenchBins() {
	if binDir != "" {
		os.RemoveAll(binDir)
	}
}

// buildPacks builds cmd/packs with make build's flags: stripped, trimmed,
// static.
func buildPacks(b *testing.B) string {
	b.Helper()
	packsBinOnce.Do(func() {
		dir, err := benchBinDir()
		if err != nil {
			packsBinErr = err
			return
		}
		packsBin = filepath.Join(dir, "packs")
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", packsBin, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			packsBinErr = fmt.Errorf("go build ./cmd/packs: %v\n%s", err, out)
		}
	})
	if packsBinErr != nil {
		b.Fatal(packsBinErr)
	}
	return packsBin
}

// buildHello builds a Go hello world with the same flags.
func buildHello(b *testing.B) string {
	b.Helper()
	helloOnce.Do(func() {
		dir, err := benchBinDir()
		if err != nil {
			helloErr = err
			return
		}
		src := filepath.Join(dir, "hello-src")
		if err := os.MkdirAll(src, 0o755); err != nil {
			helloErr = err
			return
		}
		files := map[string]string{
			"go.mod":  "module hello\n\ngo 1.24\n",
			"main.go": "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n",
		}
		for name, body := range files {
			if err := os.WriteFile(filepath.Join(src, name), []byte(body), 0o644); err != nil {
				helloErr = err
				return
			}
		}
		helloBin = filepath.Join(dir, "hello")
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", helloBin, ".")
		cmd.Dir = src
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			helloErr = fmt.Errorf("go build hello: %v\n%s", err, out)
		}
	})
	if helloErr != nil {
		b.Fatal(helloErr)
	}
	return helloBin
}

// BenchmarkVersion is packs --version as a new process beside a Go hello
// world: the cost of starting the binary at all (its size, its package
// initializers). The ratio is of the processes' CPU time; binary-MB is the
// size of the binary as make build makes it.
func BenchmarkVersion(b *testing.B) {
	if testing.Short() {
		b.Skip("builds binaries")
	}
	b.Run("packs", func(b *testing.B) {
		bin := buildPacks(b)
		out, err := exec.Command(bin, "--version").Output()
		if err != nil {
			b.Fatal(err)
		}
		want := strings.TrimSpace(string(out))
		loopProcess(b, os.Environ(), "", want, bin, "--version")
		if fi, err := os.Stat(bin); err == nil {
			b.ReportMetric(float64(fi.Size())/1e6, "binary-MB")
		}
	})
	b.Run("peer=hello", func(b *testing.B) {
		loopProcess(b, os.Environ(), "", "hello", buildHello(b))
	})
}

// BenchmarkColdRun is one packs run of a tool as a new process (the packs
// binary as make build makes it) beside a native build of the same tool code
// run the same way, in the same run. The ratio is of the processes' CPU time.
func BenchmarkColdRun(b *testing.B) {
	if testing.Short() {
		b.Skip("builds binaries and example packs")
	}
	cases := []struct {
		pack, tool, input, want string
		native                  func(*testing.B) string
	}{
		{"text-kit", "slugify", `{"text":"Hello, World"}`, `{"slug":"hello-world"}`, nativeTextKit},
		{"csv-stats", "describe", `{"csv":"a\n1\n3\n"}`, csvStatsWant, nativeCSVStats},
		{"json-tools", "query", `{"data":{"a":[1,2]},"path":".a[0]"}`, `{"count":1,"results":[1]}`, nativeJSONTools},
	}
	for _, c := range cases {
		b.Run(c.pack+"/packs", func(b *testing.B) {
			home := exampleHome(b, c.pack)
			loopProcess(b, os.Environ(), c.input, c.want, buildPacks(b), "--home", home, "run", c.pack, c.tool, "--input", "-", "--yes")
		})
		b.Run(c.pack+"/peer=native", func(b *testing.B) {
			loopProcess(b, os.Environ(), c.input, c.want, c.native(b))
		})
	}
}

// csvStatsWant is csv-stats' report on the benchmark's input.
const csvStatsWant = `{"source":"input","delimiter":",","header":true,"rows":2,"columns":[{"name":"a","index":1,"type":"integer","count":2,"nulls":0,"distinct":2,"top":[{"value":"1","count":1},{"value":"3","count":1}],"numeric":{"min":1.0,"max":3.0,"mean":2.0,"median":2.0,"p25":1.5,"p75":2.5,"stddev":1.414214,"sum":4.0}}]}`

// BenchmarkRunAmongInstalled is packs run of text-kit (in-process) with 1
// and with 10,000 other packs installed; x-1 is the time over the 1 case's.
func BenchmarkRunAmongInstalled(b *testing.B) {
	var base float64
	for _, n := range []int{1, 10000} {
		b.Run(fmt.Sprintf("others=%d", n), func(b *testing.B) {
			home := installedHome(b, n)
			if err := runBench(b, home, "add", filepath.Join(examples, "text-kit"), "--yes", "--grant", "all"); err != nil {
				b.Skip(err)
			}
			// The first command after an install brings packs.db in line
			// with the changed packs.lock, once; the benchmark is the steady
			// state.
			settle()
			if err := runBench(b, home, "run", "text-kit", "slugify", "--input", `{"text":"Hello"}`, "--yes"); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				if err := runBench(b, home, "run", "text-kit", "slugify", "--input", `{"text":"Hello"}`, "--yes"); err != nil {
					b.Fatal(err)
				}
			}
			per := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			if n == 1 {
				base = per
			} else if base > 0 {
				b.ReportMetric(per/base, "x-1")
			}
		})
	}
}
