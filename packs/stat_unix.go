//go:build linux || darwin || freebsd || netbsd

package packs

import (
	"io/fs"
	"syscall"
	"time"
)

// statIDs returns a file's device, inode and change time from its stat.
func statIDs(fi fs.FileInfo) (dev, ino uint64, ctime time.Time, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, time.Time{}, false
	}
	return uint64(st.Dev), uint64(st.Ino), changeTime(st), true
}
