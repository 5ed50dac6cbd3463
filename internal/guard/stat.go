package guard

import (
	"fmt"
	"os"
)

// StatIdentity is a file's stat identity: its size and modification time
// (ns) and, where the platform has them, its inode and change time (ns),
// which a rewrite in place cannot keep. Two reads with the same identity see
// the same version of the file.
func StatIdentity(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%d %d", fi.Size(), fi.ModTime().UnixNano()) + statExtra(fi), nil
}
