//go:build !linux || portable

package vault

import (
	"errors"
	"os"
	"syscall"

	"github.com/sessionvault/sessionvault/internal/errs"
)

// Without Linux's leases, the write path falls back to settling reads by
// their stat data (see heldFile.read) and to checks made just before each
// rename. What each system offers beyond that is in the files per system:
// a file's identity (device and inode, or volume and file index), an open
// that neither follows a final symlink nor blocks, a rename that replaces
// an open file (Windows), and an atomic swap and no-replace rename where
// the system has them (macOS). The build tag portable makes Linux take this
// path too, so that its tests and stress runs cover it.

// openNoFollow opens path read-only, failing on a final symlink or on a
// path that is not a regular file, and never blocking on a FIFO.
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
	return openFileNoFollow(path)
}

var errSymlink = errors.New("is a symbolic link")

func isSymlinkErr(err error) bool { return errors.Is(err, errSymlink) || isOSSymlinkErr(err) }

// idOf is the part of a fileID every system's FileInfo has. The change
// time is the modification time here (FileInfo has no ctime).
func idOf(fi os.FileInfo) fileID {
	return fileID{size: fi.Size(), mtime: fi.ModTime().UnixNano(), ctime: fi.ModTime().UnixNano()}
}

// statID returns the fileID of an open file.
func statID(f *os.File) (fileID, error) {
	fi, err := f.Stat()
	if err != nil {
		return fileID{}, err
	}
	id := idOf(fi)
	if id.dev, id.ino, err = fileIdentity(f, fi); err != nil {
		return fileID{}, err
	}
	return id, nil
}

// lstatID returns the fileID of path without following a final symlink,
// and whether it is a regular file.
func lstatID(path string) (fileID, bool, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return fileID{}, false, err
	}
	id := idOf(fi)
	if id.dev, id.ino, err = pathIdentity(path, fi); err != nil {
		return fileID{}, false, err
	}
	return id, fi.Mode().IsRegular(), nil
}

func tryLease(*os.File) (ok, busy bool) { return false, false }

func leaseBreakPending(*os.File) bool { return false }

func unlease(*os.File) {}

// renameNoReplace renames from to to, failing with os.ErrExist when to
// exists: atomically where the system can (renameExclusive), else by a
// check first (a small race).
func renameNoReplace(from, to string) error {
	err := renameExclusive(from, to)
	if !errors.Is(err, errUnsupported) {
		return err
	}
	if _, err := os.Lstat(to); err == nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: os.ErrExist}
	}
	return replaceFile(from, to)
}

// errUnsupported says the system or file system cannot do an atomic swap or
// an exclusive rename: the caller falls back.
var errUnsupported = errors.New("not supported here")

// osErrorCode classifies an operating-system error.
func osErrorCode(err error) errs.Code {
	switch {
	case errors.Is(err, os.ErrPermission):
		return errs.PermissionDenied
	case errors.Is(err, errNotRegular):
		return errs.NoteNotAFile
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		if code, ok := errnoCode(errno); ok {
			return code
		}
	}
	return errs.InternalError
}

// exchange puts the new file at tmp in place at abs and keeps the file it
// replaced at tmp (see the Linux version): by an atomic swap where the
// system has one (swapFiles), else by link and rename (linkAndReplace).
func exchange(tmp, abs string) error {
	err := swapFiles(tmp, abs)
	if !errors.Is(err, errUnsupported) {
		return err
	}
	return linkAndReplace(tmp, abs)
}

// linkAndReplace is linkAndRename with the system's replacing rename
// (replaceFile), which on Windows replaces a note another process (or this
// one) has open. A file someone renames over abs between the link and the
// rename is replaced without being kept at tmp: the settle after the swap
// finds tmp is not the file the round checked and holds (fileID), and reads
// it; a file renamed over abs in that instant is lost.
func linkAndReplace(tmp, abs string) error {
	side := tmp + ".new"
	if err := replaceFile(tmp, side); err != nil {
		return err
	}
	if err := os.Link(abs, tmp); err != nil {
		_ = replaceFile(side, tmp)
		return err
	}
	if err := replaceFile(side, abs); err != nil {
		os.Remove(tmp)
		_ = replaceFile(side, tmp)
		return err
	}
	return nil
}
