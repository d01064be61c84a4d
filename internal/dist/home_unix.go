//go:build linux || darwin || freebsd || openbsd || netbsd || dragonfly

package dist

import (
	"errors"
	"os"
	"syscall"
)

// flock tries to take an advisory lock on f without blocking. It returns
// false when another open file holds a conflicting lock.
func flock(f *os.File, exclusive bool) (bool, error) {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, syscall.EWOULDBLOCK):
			return false, nil
		case errors.Is(err, syscall.EINTR):
			continue
		}
		return false, err
	}
}
