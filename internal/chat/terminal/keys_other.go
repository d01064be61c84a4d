//go:build !linux

package terminal

import (
	"errors"
	"os"
)

// oneKeyMode is not offered on this platform: cards take line input.
func oneKeyMode(*os.File) (func(), error) {
	return nil, errors.New("terminal: one-key answers need Linux")
}
