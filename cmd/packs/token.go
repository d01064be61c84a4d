package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/packs-run/packs/internal/httpguard"
)

// tokenEnv holds the token of packs' own HTTP servers (packs serve, and
// packs mcp --http unless PACKS_MCP_TOKEN is set). A token is never a flag
// value: those show in ps.
const tokenEnv = "PACKS_TOKEN"

// tokenFileName is the file in the state directory that holds a token the
// person chose, for scripts that reach a running server. It must be
// readable by its owner only (mode 0600).
const tokenFileName = "token"

// errTokenFile is returned for a token file in the state directory that
// others can read, or that is not a regular file.
var errTokenFile = errors.New("packs: unsafe token file")

// serverToken returns the token for packs serve or packs mcp --http:
// --token-file FILE,
// else the first of envs that is set, else <home>/token, else 32 fresh
// random bytes. A configured token must pass httpguard.CheckToken. The
// variables are removed from this process's environment once read, so no
// command a tool runs inherits them.
func (c *cli) serverToken(home, tokenFile string, envs ...string) (token string, err error) {
	for _, env := range envs {
		if token, err = c.readToken(env, tokenFile); err != nil || token != "" {
			break
		}
	}
	for _, env := range envs {
		os.Unsetenv(env)
	}
	if err != nil {
		return "", err
	}
	from := "$" + strings.Join(envs, " or $")
	if tokenFile != "" {
		from = "--token-file " + tokenFile
	}
	if token == "" {
		from = filepath.Join(home, tokenFileName)
		if token, err = readTokenFile(from); err != nil {
			return "", err
		}
	}
	if token == "" {
		return httpguard.NewToken()
	}
	if err := httpguard.CheckToken(token); err != nil {
		return "", usageError("the token from %s is too weak: %v: make one with: openssl rand -hex 32", from, err)
	}
	return token, nil
}

// readTokenFile reads the token in path, "" when there is no such file. A
// file that is not regular, or that its group or others may read or write,
// is refused.
func readTokenFile(path string) (string, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("packs: token file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%w: %s is not a regular file: put the token in a plain file", errTokenFile, path)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("%w: %s has mode %#o, so others can read it: run chmod 600 %s", errTokenFile, path, fi.Mode().Perm(), path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("packs: token file: %w", err)
	}
	token := strings.TrimSpace(string(b))
	if token == "" {
		return "", fmt.Errorf("%w: %s is empty: put the token in it, or remove it to get a fresh token at each start", errTokenFile, path)
	}
	return token, nil
}
