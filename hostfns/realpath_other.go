//go:build !linux

package hostfns

import (
	"os"
	"path/filepath"
)

// realPath returns the host path of the file f actually is: the lexical
// path with its symbolic links resolved (os.Root already confined it).
func realPath(_ *os.File, lexical string) string {
	p, err := filepath.EvalSymlinks(lexical)
	if err != nil {
		return lexical
	}
	return p
}
