//go:build !linux && !darwin && !freebsd && !netbsd

package packs

import (
	"io/fs"
	"time"
)

// statIDs has no inode or change time to give on this platform: every
// stamp is incomplete, and files are read again each time (Stamp.Same).
func statIDs(fs.FileInfo) (dev, ino uint64, ctime time.Time, ok bool) {
	return 0, 0, time.Time{}, false
}
