//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package guard

import (
	"fmt"
	"io/fs"
	"syscall"
)

// statExtra adds the inode and change time, which a rewrite in place cannot
// keep (BSD and macOS name the field Ctimespec).
func statExtra(fi fs.FileInfo) string {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fmt.Sprintf(" %d %d %d", st.Ino, st.Ctimespec.Sec, st.Ctimespec.Nsec)
	}
	return ""
}
