//go:build linux && portable

package vault

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// The portable build on Linux stands in for Windows and for macOS on a file
// system without an atomic swap: notes are swapped by link and rename. A
// rename that fails when its target exists is atomic on every system the
// portable path runs on (renamex_np RENAME_EXCL on macOS, MoveFileEx without
// MOVEFILE_REPLACE_EXISTING on Windows), so here it is renameat2's.

// swapFiles reports that no atomic swap is used: see exchange.
func swapFiles(string, string) error { return errUnsupported }

// renameExclusive renames from to to, failing with os.ErrExist when to
// exists (renameat2 RENAME_NOREPLACE).
func renameExclusive(from, to string) error {
	err := unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_NOREPLACE)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS):
		return errUnsupported
	case errors.Is(err, unix.EEXIST):
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: os.ErrExist}
	}
	return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
}
