package vault

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/sessionvault/sessionvault/internal/errs"
)

// How long the write path waits for other writers: for a writer that keeps
// a note open to close it, for a note that does not parse to settle, and for
// a save that was waiting on our lease to land.
const (
	settleWait  = 2 * time.Second
	pendingWait = 500 * time.Millisecond
	// stillFor: a note that does not parse and keeps the same stat identity
	// this long is not being written: it is broken (a person's edit), and the
	// wait stops there rather than at settleWait.
	stillFor = 250 * time.Millisecond
)

// fileID identifies one version of a file: its inode and the stat fields
// any write changes (size, modification and change times in nanoseconds).
// Two reads with equal fileIDs read the same bytes.
type fileID struct {
	dev, ino     uint64
	size         int64
	mtime, ctime int64
}

// sameContent reports whether two stats of one inode show no write between
// them: same inode, size and modification time. The change time is left
// out, as the engine's own rename of a replaced file changes it, and so
// does removing the second name of a new version once it is committed.
func (id fileID) sameContent(o fileID) bool {
	return id.dev == o.dev && id.ino == o.ino && id.size == o.size && id.mtime == o.mtime
}

// heldFile is a note opened read-only. Where the platform allows (Linux
// read leases, fcntl F_SETLEASE), it is held with a lease: while the lease
// is held no other process can open the file for writing — their open waits
// until it is released — so its content cannot change in place. A rename
// over its path can still replace it; the old inode then stays reachable
// through f.
type heldFile struct {
	abs    string
	f      *os.File
	leased bool
	id     fileID
}

// errNotRegular marks a note path that is not a regular file.
var errNotRegular = errors.New("not a regular file")

// holdFile opens the note at abs for reading without following a final
// symlink and without blocking on a FIFO, checks it is a regular file, and
// takes a read lease, waiting (up to settleWait) while another process has
// it open for writing; past that, or where leases are not available, it
// returns the file unleased. A missing file gives an error satisfying
// errors.Is(err, os.ErrNotExist); a symlink, folder, FIFO, socket or device
// gives errs.NoteNotAFile.
func holdFile(abs, rel string) (*heldFile, error) {
	// Special files first: opening a FIFO, a socket or a device has effects
	// of its own (a FIFO without a writer blocks; O_NONBLOCK covers the
	// race below).
	if fi, err := os.Lstat(abs); err == nil && !fi.Mode().IsRegular() {
		if fi.Mode()&os.ModeSymlink != 0 {
			return nil, errs.New(errs.NoteNotAFile, "%s is a symbolic link; sessionvault reads and writes notes only as regular files inside the vault (replace the link by the file it points to)", rel).With("note", rel)
		}
		return nil, notRegular(rel, fi.Mode())
	}
	f, err := openNoFollow(abs)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		if isSymlinkErr(err) {
			return nil, errs.New(errs.NoteNotAFile, "%s is a symbolic link; sessionvault reads and writes notes only as regular files inside the vault (replace the link by the file it points to)", rel).With("note", rel)
		}
		return nil, osError(err, rel, "opening")
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, osError(err, rel, "reading")
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, notRegular(rel, fi.Mode())
	}
	h := &heldFile{abs: abs, f: f}
	deadline := time.Now().Add(settleWait)
	backoff := 200 * time.Microsecond
	for {
		ok, busy := tryLease(f)
		if ok {
			h.leased = true
			break
		}
		if !busy || time.Now().After(deadline) {
			break // no leases here, or a writer keeps it open: unleased
		}
		time.Sleep(backoff)
		backoff = min(2*backoff, 20*time.Millisecond)
	}
	if h.id, err = statID(f); err != nil {
		h.close()
		return nil, osError(err, rel, "reading")
	}
	return h, nil
}

// notRegular is the errs.NoteNotAFile error for a note path of mode m.
func notRegular(rel string, m os.FileMode) error {
	kind := "a special file"
	switch {
	case m.IsDir():
		kind = "a folder"
	case m&os.ModeSymlink != 0:
		kind = "a symbolic link"
	case m&os.ModeNamedPipe != 0:
		kind = "a FIFO (named pipe)"
	case m&os.ModeSocket != 0:
		kind = "a socket"
	case m&os.ModeDevice != 0:
		kind = "a device"
	}
	return errs.New(errs.NoteNotAFile, "%s is %s, not a note; sessionvault reads and writes notes only as regular files (move it away)", rel, kind).With("note", rel)
}

// read returns the file's content from offset 0 and its fileID. Unleased,
// it reads until two consecutive stats around a read agree (a writer may be
// between truncating and writing) and the file has not been written within
// the last 20 milliseconds (by its modification time, or as seen by this
// read: a clock ahead), waiting up to settleWait; past that it fails with
// errs.ConcurrentUpdate rather than return what may be half a save.
func (h *heldFile) read() ([]byte, fileID, error) {
	deadline := time.Now().Add(settleWait)
	var last fileID // unleased: the stat last read, seen unchanged since seen
	var seen time.Time
	var largest int64 // unleased: the largest size the note had while read
	for {
		before, err := statID(h.f)
		if err != nil {
			return nil, fileID{}, err
		}
		data := make([]byte, 0, before.size+512)
		buf := bytes.NewBuffer(data)
		if _, err := io.Copy(buf, io.NewSectionReader(h.f, 0, 1<<62)); err != nil {
			return nil, fileID{}, err
		}
		after, err := statID(h.f)
		if err != nil {
			return nil, fileID{}, err
		}
		settled := before == after && int64(buf.Len()) == after.size
		whole := settled // (unleased: read whole, whatever came after)
		largest = max(largest, before.size, after.size)
		if !h.leased && after != last {
			last, seen = after, time.Now()
		}
		if !h.leased && settled && time.Since(time.Unix(0, after.mtime)) < 20*time.Millisecond && time.Since(seen) < 20*time.Millisecond {
			settled = false // just written: a second half may follow
		}
		if settled || h.leased && before == after {
			h.id = after
			return buf.Bytes(), after, nil
		}
		if time.Now().After(deadline) {
			if !h.leased && !(whole && after.size >= largest) {
				// Unleased, what was read may be the middle of a save (the
				// note truncated and not yet written, or its first half):
				// written over, or merged with, it would drop the rest of
				// the note. A whole read as large as the note ever was while
				// read is not that (a note only appended to, as a log is,
				// never shrinks): it is taken. Anything else: nothing is
				// written; the caller may try again.
				return nil, fileID{}, errs.New(errs.ConcurrentUpdate, "%s kept being written by another program for %s without a pause, so it could not be read whole; nothing was written, try again", filepath.Base(h.abs), settleWait)
			}
			h.id = after
			return buf.Bytes(), after, nil
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// release gives the lease up, keeping the file open, and reports whether a
// writer was waiting on it (its open completes now, on this inode).
func (h *heldFile) release() (pending bool) {
	if !h.leased {
		return false
	}
	pending = leaseBreakPending(h.f)
	unlease(h.f)
	h.leased = false
	return pending
}

// close releases the lease and closes the file.
func (h *heldFile) close() {
	if h == nil || h.f == nil {
		return
	}
	h.release()
	h.f.Close()
	h.f = nil
}

// settleOld waits until no process has the (replaced) old inode open for
// writing, first giving a writer that was waiting on our lease (pending)
// time to arrive, and returns its content then.
func (h *heldFile) settleOld(pending bool, was fileID) ([]byte, error) {
	if pending {
		deadline := time.Now().Add(pendingWait)
		for time.Now().Before(deadline) {
			if id, err := statID(h.f); err != nil || id != was {
				break // the writer has started
			}
			if _, busy := tryLease(h.f); busy {
				break // it has the file open
			} else {
				unlease(h.f)
			}
			time.Sleep(200 * time.Microsecond)
		}
	}
	deadline := time.Now().Add(settleWait)
	backoff := 200 * time.Microsecond
	for {
		ok, busy := tryLease(h.f)
		if ok {
			h.leased = true
			break
		}
		if !busy || time.Now().After(deadline) {
			break
		}
		time.Sleep(backoff)
		backoff = min(2*backoff, 20*time.Millisecond)
	}
	data, _, err := h.read()
	h.release()
	return data, err
}

// readStable reads the note at abs once no other process is writing it (see
// holdFile). It returns the content and its fileID.
func readStable(abs, rel string) ([]byte, fileID, error) {
	data, id, _, err := readStableInfo(abs, rel)
	return data, id, err
}

// readStableInfo is readStable that also returns the file's stat.
func readStableInfo(abs, rel string) ([]byte, fileID, os.FileInfo, error) {
	h, err := holdFile(abs, rel)
	if err != nil {
		return nil, fileID{}, nil, err
	}
	defer h.close()
	data, id, err := h.read()
	if err != nil {
		return nil, fileID{}, nil, osError(err, rel, "reading")
	}
	fi, err := h.f.Stat()
	if err != nil {
		return nil, fileID{}, nil, osError(err, rel, "reading")
	}
	return data, id, fi, nil
}

// settle retries f (a reading of a note that may be half-saved, with the
// stat identity it read) with a growing pause until it succeeds, settleWait
// has passed, or the note kept the same stat identity for stillFor (nobody
// is writing it), and returns its last result.
func (v *Vault) settle(f func() ([]byte, fileID, error)) ([]byte, error) {
	start := time.Now()
	deadline := start.Add(settleWait)
	pause := 2 * time.Millisecond
	var last fileID
	since, seen := start, false
	for {
		time.Sleep(pause)
		data, id, err := f()
		now := time.Now()
		if err == nil || now.After(deadline) {
			return data, err
		}
		switch {
		case !seen || id != last:
			// Unchanged since its last write, by its modification time: a
			// note last written long ago is not being written now.
			last, since, seen = id, now, true
			if mt := time.Unix(0, id.mtime); id.mtime > 0 && mt.Before(now) {
				since = mt
			}
		case now.Sub(since) >= stillFor:
			return data, err
		}
		pause = min(2*pause, 100*time.Millisecond)
	}
}

// OSErrorCode classifies an operating-system error: errs.PermissionDenied,
// errs.DiskFull, errs.NoteNotAFile, errs.PathOutsideVault, or
// errs.InternalError for anything else.
func OSErrorCode(err error) errs.Code { return osErrorCode(err) }

// osError turns an operating-system error on a vault path into an error
// with a code of its own: errs.PermissionDenied (a read-only folder or
// file system), errs.DiskFull, errs.NoteNotAFile (a folder where a note
// should be), errs.PathOutsideVault; anything else keeps its text under
// errs.InternalError.
func osError(err error, rel, doing string) error {
	var e *errs.Error
	if errors.As(err, &e) {
		return err
	}
	code := osErrorCode(err)
	what := fmt.Sprintf("%s %s: %v", doing, rel, err)
	switch code {
	case errs.PermissionDenied:
		what += " (the folder or the file system is read-only to this user; fix its permissions and run the command again — nothing was changed)"
	case errs.DiskFull:
		what += " (the disk is full; free some space and run the command again — nothing was changed)"
	case errs.NoteNotAFile:
		what += " (a folder or another file is where a note should be; move it away)"
	}
	return (&errs.Error{Code: code, Message: what, Err: err}).With("note", rel)
}

// linkAndRename is exchange without renameat2: the new file moves aside, the
// old one is linked at tmp, and the new one renamed over abs.
func linkAndRename(tmp, abs string) error {
	side := tmp + ".new"
	if err := os.Rename(tmp, side); err != nil {
		return err
	}
	// On failure the new version goes back to tmp, best effort: the error
	// returned says the write did not happen, and a file left at side is
	// the engine's own temporary file (cleanTmp).
	if err := os.Link(abs, tmp); err != nil {
		_ = os.Rename(side, tmp)
		return err
	}
	if err := os.Rename(side, abs); err != nil {
		os.Remove(tmp)
		_ = os.Rename(side, tmp)
		return err
	}
	return nil
}
