//go:build unix && !linux

package history

import (
	"os"
	"syscall"
)

// fileIdentity is a file's device and inode from its stat data (macOS and
// the BSDs): what tells a lock file another process left from one made
// since at the same path.
func fileIdentity(fi os.FileInfo) (dev, ino uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), uint64(st.Ino)
	}
	return 0, 0
}
