//go:build !linux

package hostfns

import "os/exec"

// watch reports when cmd's process has exited and been reaped. Without
// Linux's waitid(WNOWAIT) the pid is free again once reaped, so the group
// kill that follows has a narrow window in which the pid could be reused
// by a new group leader; the command's leftovers are still killed.
func watch(cmd *exec.Cmd) (exited <-chan struct{}, reap func() error) {
	done := make(chan struct{})
	var err error
	go func() {
		err = cmd.Wait()
		close(done)
	}()
	return done, func() error {
		<-done
		return err
	}
}
