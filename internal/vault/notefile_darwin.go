package vault

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// swapFiles swaps the files at tmp and abs atomically (renamex_np
// RENAME_SWAP, as Linux's RENAME_EXCHANGE): afterwards abs is the new file
// and tmp the one it replaced, whatever was there at that instant. A file
// system without it (ENOTSUP, EINVAL) gives errUnsupported.
func swapFiles(tmp, abs string) error {
	err := unix.RenamexNp(tmp, abs, unix.RENAME_SWAP)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS):
		return errUnsupported
	}
	return &os.LinkError{Op: "exchange", Old: tmp, New: abs, Err: err}
}

// renameExclusive renames from to to, failing with os.ErrExist when to
// exists (renamex_np RENAME_EXCL); a file system without it gives
// errUnsupported.
func renameExclusive(from, to string) error {
	err := unix.RenamexNp(from, to, unix.RENAME_EXCL)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS):
		return errUnsupported
	case errors.Is(err, unix.EEXIST):
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: os.ErrExist}
	}
	return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
}
