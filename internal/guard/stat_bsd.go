//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package guard

import (
	"io/fs"
	"syscall"
)

// statExtra adds the inode and change time, which a rewrite in place cannot
// keep (BSD and macOS name the field Ctimespec).
func statExtra(b []byte, fi fs.FileInfo) []byte {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return appendInts(b, int64(st.Ino), int64(st.Ctimespec.Sec), int64(st.Ctimespec.Nsec))
	}
	return b
}
