package web

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// serveCommands are the exact commands that start this server again with
// a model: this executable, this state directory. A bare "packs serve"
// would not do: after make run, packs is not on PATH, and without
// PACKS_HOME it opens another home, without the demo's packs.
func (s *Server) serveCommands() []string {
	prefix := "PACKS_HOME=" + shellQuote(s.cfg.App.Home.Dir()) + " " + shellQuote(s.executable())
	return []string{
		prefix + " serve --provider openai --base-url http://localhost:11434/v1 --model llama3.2",
		"ANTHROPIC_API_KEY=... " + prefix + " serve --provider anthropic",
	}
}

// executable is how a shell in the server's working directory names this
// program: "packs" when that is what PATH finds, a relative path under the
// working directory ("bin/packs" after make run), else the absolute path.
func (s *Server) executable() string {
	if s.cfg.Executable != "" {
		return s.cfg.Executable
	}
	exe, err := os.Executable()
	if err != nil {
		return "packs"
	}
	if p, err := exec.LookPath("packs"); err == nil {
		if a, err := filepath.Abs(p); err == nil && sameFile(a, exe) {
			return "packs"
		}
	}
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, exe); err == nil && filepath.IsLocal(rel) {
			if !strings.Contains(rel, string(filepath.Separator)) {
				rel = "." + string(filepath.Separator) + rel
			}
			return rel
		}
	}
	return exe
}

func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// shellQuote quotes s for a POSIX shell when it holds anything but safe
// characters.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+=:,@", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
