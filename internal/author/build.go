package author

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// A pack built by packs build names its toolchain in its Makefile, on a
// line "PACKS_TOOLCHAIN := go" (or rust, wat): packs build checks that the
// toolchain is installed, then runs make with the programs it found.

// ErrNoMakefile is returned by Build for a pack without a Makefile.
var ErrNoMakefile = errors.New("author: the pack has no Makefile")

// ToolchainError says which program is missing and how to install it.
type ToolchainError struct {
	Toolchain string // go, rust, wat, make
	Missing   string // the program or part that is missing
	Install   string // how to install it
}

func (e *ToolchainError) Error() string {
	return fmt.Sprintf("author: the %s toolchain is missing %s: %s", e.Toolchain, e.Missing, e.Install)
}

// Toolchain reads the toolchain a pack's Makefile names ("" when it names
// none).
func Toolchain(dir string) (string, error) {
	f, err := os.Open(filepath.Join(dir, "Makefile"))
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("%w: %s", ErrNoMakefile, dir)
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	s := bufio.NewScanner(io.LimitReader(f, 1<<20))
	for s.Scan() {
		k, v, ok := strings.Cut(s.Text(), "=")
		k = strings.TrimRight(strings.TrimSpace(k), ":?")
		if ok && strings.TrimSpace(k) == "PACKS_TOOLCHAIN" {
			return strings.TrimSpace(v), nil
		}
	}
	return "", s.Err()
}

// lookPath is exec.LookPath, replaceable by tests.
type lookFunc func(string) (string, error)

// MakeVars checks the toolchain name and returns the make variables that
// point the Makefile at what was found.
func MakeVars(toolchain string, look lookFunc, stat func(string) (os.FileInfo, error)) ([]string, error) {
	if look == nil {
		look = exec.LookPath
	}
	if stat == nil {
		stat = os.Stat
	}
	if _, err := look("make"); err != nil {
		return nil, &ToolchainError{"make", "make", "install GNU make (apt-get install make)"}
	}
	switch toolchain {
	case "go":
		goBin, err := look("go")
		if err != nil {
			return nil, &ToolchainError{"go", "go", "install Go 1.24 or later from https://go.dev/dl/ (or apt-get install golang-go); TinyGo works too: make GO_WASM='tinygo build -target wasip1'"}
		}
		return []string{"GO=" + goBin}, nil
	case "rust":
		cargo, rustc := "/usr/bin/cargo", "/usr/bin/rustc"
		if _, err := stat(cargo); err != nil {
			return nil, &ToolchainError{"rust", cargo, "apt-get install cargo rustc libstd-rust-dev-wasm32 librust-serde-json-dev (Debian's toolchain has the wasm targets; with rustup, run make CARGO=cargo RUSTC=rustc after rustup target add wasm32-unknown-unknown wasm32-wasip1)"}
		}
		if _, err := stat(rustc); err != nil {
			return nil, &ToolchainError{"rust", rustc, "apt-get install rustc libstd-rust-dev-wasm32"}
		}
		if _, err := stat("/usr/lib/rustlib/wasm32-wasi"); err != nil {
			if _, err := stat("/usr/lib/rustlib/wasm32-unknown-unknown"); err != nil {
				return nil, &ToolchainError{"rust", "the wasm32 standard library", "apt-get install libstd-rust-dev-wasm32"}
			}
		}
		if _, err := stat("/usr/share/cargo/registry/serde_json-1.0.87"); err != nil {
			if _, err := stat("/usr/share/cargo/registry"); err != nil {
				return nil, &ToolchainError{"rust", "Debian's crate registry (/usr/share/cargo/registry)", "apt-get install librust-serde-json-dev, or delete .cargo/config.toml to fetch crates from crates.io"}
			}
		}
		return []string{"CARGO=" + cargo, "RUSTC=" + rustc}, nil
	case "wat":
		w, err := look("wat2wasm")
		if err != nil {
			return nil, &ToolchainError{"wat", "wat2wasm", "install wabt (apt-get install wabt, or https://github.com/WebAssembly/wabt/releases)"}
		}
		return []string{"WAT2WASM=" + w}, nil
	case "":
		return nil, nil
	}
	return nil, fmt.Errorf("author: the Makefile names toolchain %q: use go, rust or wat", toolchain)
}

// Build builds the pack in dir: it checks the toolchain its Makefile
// names, then runs make there, with make's output on out.
func Build(ctx context.Context, dir string, out io.Writer) error {
	tc, err := Toolchain(dir)
	if err != nil {
		return err
	}
	vars, err := MakeVars(tc, nil, nil)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "make", append([]string{"-C", dir, "all"}, vars...)...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("author: make in %s: %w", dir, err)
	}
	return nil
}
