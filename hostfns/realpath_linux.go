package hostfns

import (
	"os"
	"strconv"
)

// realPath returns the host path of the file f actually is, as the kernel
// names it, or lexical when the kernel cannot say.
func realPath(f *os.File, lexical string) string {
	p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	if err != nil || len(p) == 0 || p[0] != '/' {
		return lexical
	}
	return p
}
