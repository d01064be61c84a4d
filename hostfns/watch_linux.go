package hostfns

import (
	"errors"
	"os/exec"

	"golang.org/x/sys/unix"
)

// watch reports when cmd's process exits without reaping it: while it is a
// zombie its pid cannot be reused, so killing its process group after the
// exit cannot hit anyone else. reap then collects it and its output.
func watch(cmd *exec.Cmd) (exited <-chan struct{}, reap func() error) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		var info unix.Siginfo
		for {
			err := unix.Waitid(unix.P_PID, cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
			if !errors.Is(err, unix.EINTR) {
				return
			}
		}
	}()
	return done, cmd.Wait
}
