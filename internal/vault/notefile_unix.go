//go:build unix && (!linux || portable)

package vault

import (
	"errors"
	"os"
	"syscall"

	"github.com/sessionvault/sessionvault/internal/errs"
)

// openFileNoFollow opens path read-only without following a final symlink
// (ELOOP) and without blocking on a FIFO put there since the caller's
// lstat.
func openFileNoFollow(path string) (*os.File, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: path, Err: err}
		}
		return os.NewFile(uintptr(fd), path), nil
	}
}

func isOSSymlinkErr(err error) bool { return errors.Is(err, syscall.ELOOP) }

// fileIdentity returns the device and inode of an open file (fi is its
// stat).
func fileIdentity(_ *os.File, fi os.FileInfo) (dev, ino uint64, err error) {
	dev, ino = statIdentity(fi)
	return dev, ino, nil
}

// pathIdentity returns the device and inode of the file at path (fi is its
// lstat).
func pathIdentity(_ string, fi os.FileInfo) (dev, ino uint64, err error) {
	dev, ino = statIdentity(fi)
	return dev, ino, nil
}

func statIdentity(fi os.FileInfo) (dev, ino uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), uint64(st.Ino) // Dev is an int32 on macOS
	}
	return 0, 0
}

// replaceFile renames from to to, replacing a file at to.
func replaceFile(from, to string) error { return os.Rename(from, to) }

// errnoCode classifies an errno as the Linux path does.
func errnoCode(errno syscall.Errno) (errs.Code, bool) {
	switch errno {
	case syscall.EACCES, syscall.EPERM, syscall.EROFS:
		return errs.PermissionDenied, true
	case syscall.ENOSPC, syscall.EDQUOT:
		return errs.DiskFull, true
	case syscall.EISDIR, syscall.ENOTDIR, syscall.ENXIO:
		return errs.NoteNotAFile, true
	case syscall.ELOOP:
		return errs.PathOutsideVault, true
	}
	return errs.Code{}, false
}
