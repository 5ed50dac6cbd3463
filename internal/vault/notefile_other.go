//go:build !linux

package vault

import (
	"errors"
	"os"
	"syscall"

	"github.com/sessionvault/sessionvault/internal/errs"
)

// Without Linux's leases and renameat2, the write path falls back to
// settling reads by their stat data (see heldFile.read) and to checks made
// just before each rename.

func openNoFollow(path string) (*os.File, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return nil, &os.PathError{Op: "open", Path: path, Err: errSymlink}
	}
	if !fi.Mode().IsRegular() {
		return nil, &os.PathError{Op: "open", Path: path, Err: errNotRegular}
	}
	return os.Open(path)
}

var errSymlink = errors.New("is a symbolic link")

func isSymlinkErr(err error) bool { return errors.Is(err, errSymlink) }

func idOf(fi os.FileInfo) fileID {
	return fileID{size: fi.Size(), mtime: fi.ModTime().UnixNano(), ctime: fi.ModTime().UnixNano()}
}

func statID(f *os.File) (fileID, error) {
	fi, err := f.Stat()
	if err != nil {
		return fileID{}, err
	}
	return idOf(fi), nil
}

func lstatID(path string) (fileID, bool, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return fileID{}, false, err
	}
	return idOf(fi), fi.Mode().IsRegular(), nil
}

func tryLease(*os.File) (ok, busy bool) { return false, false }

func leaseBreakPending(*os.File) bool { return false }

func unlease(*os.File) {}

func renameNoReplace(from, to string) error {
	if _, err := os.Lstat(to); err == nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: os.ErrExist}
	}
	return os.Rename(from, to)
}

func osErrorCode(err error) errs.Code {
	switch {
	case errors.Is(err, os.ErrPermission):
		return errs.PermissionDenied
	case errors.Is(err, errNotRegular):
		return errs.NoteNotAFile
	}
	var errno syscall.Errno
	if errors.As(err, &errno) && errno == syscall.ENOSPC {
		return errs.DiskFull
	}
	return errs.InternalError
}

// exchange puts the new file at tmp in place at abs and keeps the file it
// replaced at tmp (see the Linux version; here by link and rename).
func exchange(tmp, abs string) error { return linkAndRename(tmp, abs) }
