package vault

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/sessionvault/sessionvault/internal/errs"
)

// On Windows a file another process has open can be renamed, replaced or
// removed only when every open of it shares delete access. Go's os.Open
// does not share it, so the write path opens notes here with
// FILE_SHARE_DELETE: else holding a note to read or check it would make
// every save over it fail (the engine's own, and an editor's). And
// MoveFileEx refuses to replace a file that is open at all, so the
// replacing rename is the POSIX one (FileRenameInfoEx, Windows 10 1709 and
// later on NTFS), with MoveFileEx where that is not available.

// shareAll lets other processes read, write, rename and remove a file the
// engine has open.
const shareAll = windows.FILE_SHARE_READ | windows.FILE_SHARE_WRITE | windows.FILE_SHARE_DELETE

// openFileNoFollow opens path read-only, sharing delete access, without
// following a final symlink or junction (FILE_FLAG_OPEN_REPARSE_POINT).
func openFileNoFollow(path string) (*os.File, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	h, err := windows.CreateFile(p, windows.GENERIC_READ, shareAll, nil, windows.OPEN_EXISTING,
		windows.FILE_ATTRIBUTE_NORMAL|windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	var d windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &d); err != nil {
		windows.CloseHandle(h)
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	if d.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0 {
		windows.CloseHandle(h)
		return nil, &os.PathError{Op: "open", Path: path, Err: errSymlink}
	}
	return os.NewFile(uintptr(h), path), nil
}

func isOSSymlinkErr(error) bool { return false }

// fileIdentity returns the volume serial number and file index of an open
// file.
func fileIdentity(f *os.File, _ os.FileInfo) (dev, ino uint64, err error) {
	var d windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(windows.Handle(f.Fd()), &d); err != nil {
		return 0, 0, &os.PathError{Op: "stat", Path: f.Name(), Err: err}
	}
	return uint64(d.VolumeSerialNumber), uint64(d.FileIndexHigh)<<32 | uint64(d.FileIndexLow), nil
}

// pathIdentity returns the volume serial number and file index of the file
// at path, without following a final symlink: opened for no access (which
// no sharing mode of another process refuses), asked, and closed.
func pathIdentity(path string, _ os.FileInfo) (dev, ino uint64, err error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return 0, 0, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	h, err := windows.CreateFile(p, 0, shareAll, nil, windows.OPEN_EXISTING,
		windows.FILE_FLAG_BACKUP_SEMANTICS|windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return 0, 0, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	defer windows.CloseHandle(h)
	var d windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &d); err != nil {
		return 0, 0, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	return uint64(d.VolumeSerialNumber), uint64(d.FileIndexHigh)<<32 | uint64(d.FileIndexLow), nil
}

// swapFiles reports that Windows has no atomic swap: see exchange.
func swapFiles(string, string) error { return errUnsupported }

// renameExclusive renames from to to, failing with os.ErrExist when to
// exists: MoveFileEx without MOVEFILE_REPLACE_EXISTING, which is atomic.
func renameExclusive(from, to string) error {
	f, err := windows.UTF16PtrFromString(from)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	t, err := windows.UTF16PtrFromString(to)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	err = retrySharing(func() error { return windows.MoveFileEx(f, t, 0) })
	switch {
	case err == nil:
		return nil
	case errors.Is(err, windows.ERROR_ALREADY_EXISTS) || errors.Is(err, windows.ERROR_FILE_EXISTS):
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: os.ErrExist}
	}
	return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
}

// fileRenameInfo is FILE_RENAME_INFO, the header of SetFileInformationByHandle's
// FileRenameInfoEx buffer (the file name follows it).
type fileRenameInfo struct {
	Flags          uint32
	RootDirectory  windows.Handle
	FileNameLength uint32
	FileName       [1]uint16
}

// replaceFile renames from to to, replacing a file at to even while that
// file is open (by this process or another, sharing delete access): the
// POSIX rename (FILE_RENAME_FLAG_POSIX_SEMANTICS), where an open of the old
// file keeps reading it. Where the system or the file system does not have
// it (before Windows 10 1709, FAT, some network shares), MoveFileEx, which
// fails while to is open.
func replaceFile(from, to string) error {
	err := retrySharing(func() error { return posixRename(from, to) })
	if errors.Is(err, windows.ERROR_INVALID_PARAMETER) || errors.Is(err, windows.ERROR_NOT_SUPPORTED) ||
		errors.Is(err, windows.ERROR_INVALID_FUNCTION) {
		err = retrySharing(func() error { return os.Rename(from, to) })
	}
	if err != nil {
		var le *os.LinkError
		if errors.As(err, &le) {
			return err
		}
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	return nil
}

// posixRename is one SetFileInformationByHandle(FileRenameInfoEx) with
// FILE_RENAME_FLAG_REPLACE_IF_EXISTS | FILE_RENAME_FLAG_POSIX_SEMANTICS.
func posixRename(from, to string) error {
	abs, err := filepath.Abs(to)
	if err != nil {
		return err
	}
	if !strings.HasPrefix(abs, `\\`) {
		abs = `\\?\` + abs // a full path, long paths too
	} else if !strings.HasPrefix(abs, `\\?\`) {
		abs = `\\?\UNC\` + abs[2:]
	}
	name, err := windows.UTF16FromString(abs)
	if err != nil {
		return err
	}
	p, err := windows.UTF16PtrFromString(from)
	if err != nil {
		return err
	}
	h, err := windows.CreateFile(p, windows.DELETE|windows.SYNCHRONIZE, shareAll, nil, windows.OPEN_EXISTING,
		windows.FILE_FLAG_BACKUP_SEMANTICS|windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(h)
	head := int(unsafe.Offsetof(fileRenameInfo{}.FileName))
	size := head + 2*len(name) // the name with its NUL
	buf := make([]uint64, (size+7)/8)
	info := (*fileRenameInfo)(unsafe.Pointer(&buf[0]))
	info.Flags = windows.FILE_RENAME_REPLACE_IF_EXISTS | windows.FILE_RENAME_POSIX_SEMANTICS
	info.FileNameLength = uint32(2 * (len(name) - 1))
	copy(unsafe.Slice(&info.FileName[0], len(name)), name)
	return windows.SetFileInformationByHandle(h, windows.FileRenameInfoEx, (*byte)(unsafe.Pointer(&buf[0])), uint32(size))
}

// retrySharing runs op again, for up to a second, while it fails because
// another process (a virus scanner, the search indexer, an editor) has the
// file open without sharing delete access.
func retrySharing(op func() error) error {
	deadline := time.Now().Add(time.Second)
	pause := time.Millisecond
	for {
		err := op()
		if !(errors.Is(err, windows.ERROR_SHARING_VIOLATION) || errors.Is(err, windows.ERROR_ACCESS_DENIED)) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(pause)
		pause = min(2*pause, 50*time.Millisecond)
	}
}

// errnoCode classifies a Windows error code.
func errnoCode(errno syscall.Errno) (errs.Code, bool) {
	switch errno {
	case windows.ERROR_WRITE_PROTECT:
		return errs.PermissionDenied, true
	case windows.ERROR_DISK_FULL, windows.ERROR_HANDLE_DISK_FULL:
		return errs.DiskFull, true
	case windows.ERROR_DIRECTORY:
		return errs.NoteNotAFile, true
	case windows.ERROR_CANT_RESOLVE_FILENAME:
		return errs.PathOutsideVault, true
	}
	return errs.Code{}, false
}
