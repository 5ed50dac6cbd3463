//go:build linux

package guard

import (
	"io/fs"
	"syscall"
)

// statExtra adds the inode and the change time, which a rewrite in place
// cannot keep.
func statExtra(b []byte, fi fs.FileInfo) []byte {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return appendInts(b, int64(st.Ino), int64(st.Ctim.Sec), int64(st.Ctim.Nsec))
	}
	return b
}
