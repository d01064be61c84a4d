//go:build !linux

package confine

import (
	"fmt"
	"os/exec"
	"runtime"
	"time"
)

// Cmd is a confined command; on this system none can be made.
type Cmd struct {
	*exec.Cmd
}

// Probe reports that this system gives no confinement: Landlock and
// seccomp are Linux's. macOS (Seatbelt) and Windows (AppContainer) are the
// plan, docs/abi.md §5.
func Probe() Support { return Support{OS: runtime.GOOS} }

// Command refuses: native commands are not confined here, so they do not
// run unless the policy says best-effort (and then hostfns runs them as
// before, saying so).
func Command(spec Spec) (*Cmd, error) {
	return nil, fmt.Errorf("%w: native commands cannot be confined on %s yet", ErrUnavailable, runtime.GOOS)
}

// Prepare does nothing: no supervisor runs here.
func Prepare() {}

// Start is never reached: Command refuses.
func (c *Cmd) Start() error { return c.Cmd.Start() }

// Release is never reached: Command refuses.
func (c *Cmd) Release() {}

// Exited is never reached: Command refuses.
func (c *Cmd) Exited() <-chan struct{} { return nil }

// Finish is never reached: Command refuses.
func (c *Cmd) Finish(time.Duration) (int, error) { return -1, c.Cmd.Wait() }
