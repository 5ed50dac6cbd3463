//go:build linux && !portable

package vault

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/sessionvault/sessionvault/internal/errs"
)

// openNoFollow opens path read-only, failing on a final symlink (ELOOP) and
// never blocking on a FIFO.
func openNoFollow(path string) (*os.File, error) {
	for {
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: path, Err: err}
		}
		return os.NewFile(uintptr(fd), path), nil
	}
}

func isSymlinkErr(err error) bool { return errors.Is(err, unix.ELOOP) }

// statID returns the fileID of an open file.
func statID(f *os.File) (fileID, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return fileID{}, &os.PathError{Op: "fstat", Path: f.Name(), Err: err}
	}
	return fileID{dev: st.Dev, ino: st.Ino, size: st.Size,
		mtime: st.Mtim.Sec*1e9 + st.Mtim.Nsec, ctime: st.Ctim.Sec*1e9 + st.Ctim.Nsec}, nil
}

// lstatID returns the fileID of path without following a final symlink,
// and whether it is a regular file.
func lstatID(path string) (fileID, bool, error) {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return fileID{}, false, &os.PathError{Op: "lstat", Path: path, Err: err}
	}
	return fileID{dev: st.Dev, ino: st.Ino, size: st.Size,
		mtime: st.Mtim.Sec*1e9 + st.Mtim.Nsec, ctime: st.Ctim.Sec*1e9 + st.Ctim.Nsec}, st.Mode&unix.S_IFMT == unix.S_IFREG, nil
}

// tryLease takes a read lease on f (fcntl F_SETLEASE F_RDLCK). busy reports
// that another process has the file open for writing; ok false and busy
// false mean leases are not available (another owner without CAP_LEASE, a
// file system without them, /proc/sys/fs/leases-enable 0).
func tryLease(f *os.File) (ok, busy bool) {
	_, err := unix.FcntlInt(f.Fd(), unix.F_SETLEASE, unix.F_RDLCK)
	switch {
	case err == nil:
		return true, false
	case errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EBUSY):
		return false, true
	}
	return false, false
}

// leaseBreakPending reports whether another process is waiting to open f
// for writing (the kernel is breaking our read lease).
func leaseBreakPending(f *os.File) bool {
	l, err := unix.FcntlInt(f.Fd(), unix.F_GETLEASE, 0)
	return err == nil && l == unix.F_UNLCK
}

// unlease gives up f's lease; closing f gives it up too, so an error here
// changes nothing.
func unlease(f *os.File) { _, _ = unix.FcntlInt(f.Fd(), unix.F_SETLEASE, unix.F_UNLCK) }

// renameNoReplace renames from to to, failing with os.ErrExist when to
// exists (renameat2 RENAME_NOREPLACE); where the file system does not
// support it, it checks first (a small race).
func renameNoReplace(from, to string) error {
	err := unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		if _, serr := os.Lstat(to); serr == nil {
			return &os.LinkError{Op: "rename", Old: from, New: to, Err: os.ErrExist}
		}
		return os.Rename(from, to)
	}
	if err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	return nil
}

// osErrorCode classifies an operating-system error.
func osErrorCode(err error) errs.Code {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return errs.InternalError
	}
	switch errno {
	case unix.EACCES, unix.EPERM, unix.EROFS:
		return errs.PermissionDenied
	case unix.ENOSPC, unix.EDQUOT:
		return errs.DiskFull
	case unix.EISDIR, unix.ENOTDIR, unix.ENXIO:
		return errs.NoteNotAFile
	case unix.ELOOP:
		return errs.PathOutsideVault
	}
	return errs.InternalError
}

// exchange swaps the files at tmp and abs atomically (renameat2
// RENAME_EXCHANGE): afterwards abs is the new file and tmp the one it
// replaced — whatever was there at that instant, even a file another
// process renamed over abs a moment before. Where the file system cannot
// exchange, the old file is linked to tmp and the new one renamed over abs
// (a rename by someone else in between is then lost to the check after).
func exchange(tmp, abs string) error {
	err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, abs, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		return linkAndRename(tmp, abs)
	}
	if err != nil {
		return &os.LinkError{Op: "exchange", Old: tmp, New: abs, Err: err}
	}
	return nil
}
