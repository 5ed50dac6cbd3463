//go:build linux

package guard

import (
	"fmt"
	"io/fs"
	"syscall"
)

// statExtra adds the change time, which a rewrite in place cannot keep.
func statExtra(fi fs.FileInfo) string {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fmt.Sprintf(" %d %d %d", st.Ino, st.Ctim.Sec, st.Ctim.Nsec)
	}
	return ""
}
