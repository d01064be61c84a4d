package terminal

import (
	"os"

	"golang.org/x/sys/unix"
)

// oneKeyMode puts the terminal f in non-canonical mode without echo, so
// that a read returns each key as it is pressed, and drops what was typed
// before (a key pressed before the card was shown is no answer to it). It
// keeps the rest as it was: Ctrl-C still interrupts, and output still
// turns "\n" into a new line. golang.org/x/term's MakeRaw would turn both
// off. restore puts the mode back.
func oneKeyMode(f *os.File) (restore func(), err error) {
	fd := int(f.Fd())
	old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return nil, err
	}
	t := *old
	t.Lflag &^= unix.ICANON | unix.ECHO
	t.Cc[unix.VMIN], t.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, &t); err != nil {
		return nil, err
	}
	unix.IoctlSetInt(fd, unix.TCFLSH, unix.TCIFLUSH)
	return func() { unix.IoctlSetTermios(fd, unix.TCSETS, old) }, nil
}
