package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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

// runProcess runs bin with args and stdin; it fails unless the output is want.
func runProcess(b *testing.B, env []string, stdin, want string, bin string, args ...string) {
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil || strings.TrimSpace(out.String()) != want {
		b.Fatalf("%s %v: %v: %q %s", bin, args, err, out.String(), errb.String())
	}
}

// BenchmarkColdRun is one packs run of a tool as a new process (the test
// binary standing in for packs) beside a native build of the same tool code
// run the same way, in the same run. x-native is packs' time over the
// native build's.
func BenchmarkColdRun(b *testing.B) {
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	cases := []struct {
		pack, tool, input, want string
		native                  func(*testing.B) string
	}{
		{"text-kit", "slugify", `{"text":"Hello, World"}`, `{"slug":"hello-world"}`, nativeTextKit},
		{"json-tools", "query", `{"data":{"a":[1,2]},"path":".a[0]"}`, `{"count":1,"results":[1]}`, nativeJSONTools},
	}
	for _, c := range cases {
		var native float64
		b.Run(c.pack+"/native", func(b *testing.B) {
			bin := c.native(b)
			for b.Loop() {
				runProcess(b, os.Environ(), c.input, c.want, bin)
			}
			native = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		})
		b.Run(c.pack+"/packs", func(b *testing.B) {
			home := exampleHome(b, c.pack)
			env := append(os.Environ(), "PACKS_CLI_CHILD=1")
			for b.Loop() {
				runProcess(b, env, c.input, c.want, self, "--home", home, "run", c.pack, c.tool, "--input", "-", "--yes")
			}
			if native > 0 {
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/native, "x-native")
			}
		})
	}
}

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
