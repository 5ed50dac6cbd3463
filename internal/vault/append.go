package vault

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/filelock"
)

// AppendNote appends to the note rel (a vault-relative path) without
// rewriting any byte it holds: an append-only log, such as the command
// history. It makes rel's folders and rel when missing, takes an exclusive
// lock on the file itself (flock on Unix, LockFileEx on
// Windows; appenders take turns, waiting at most the vault's lock timeout,
// errs.LockTimeout past it), reads the file's last tail bytes (fewer when it
// is shorter), and asks build what to append given that tail and the file's
// size (0: a new or empty file). The bytes build returns (none: nothing is
// written) go in one write to the file opened O_APPEND, then the file is
// fsynced, and its folder too when the file is new. Readers and the engine's
// commits take no lock: they see a prefix of the log, up to a whole entry.
// It makes no commit (CommitAgentEdits commits the log). A folder of rel that
// is a symbolic link out of the vault is errs.PathOutsideVault; rel itself a
// symbolic link or not a regular file is errs.NoteNotAFile.
func (v *Vault) AppendNote(rel string, tail int, build func(tail []byte, size int64) ([]byte, error)) error {
	abs, err := v.Abs(rel)
	if err != nil {
		return err
	}
	if err := v.checkParents(rel); err != nil {
		return err
	}
	dir := filepath.Dir(abs)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return osError(err, filepath.ToSlash(filepath.Dir(rel)), "creating")
	}
	if fi, err := os.Lstat(abs); err == nil && !fi.Mode().IsRegular() {
		return errs.New(errs.NoteNotAFile, "%s is not a regular file (a link or a folder); sessionvault appends only to its own log files", rel).With("note", rel)
	}
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return osError(err, rel, "opening")
	}
	defer f.Close()
	held, err := filelock.Within(f, v.Config.LockTimeout.Duration, 100*time.Microsecond, 10*time.Millisecond)
	if err != nil {
		return fmt.Errorf("locking %s: %w", rel, err)
	}
	if !held {
		return errs.New(errs.LockTimeout, "another process has held %s for over %s", rel, v.Config.LockTimeout.Duration).With("note", rel)
	}
	defer filelock.Unlock(f)
	fi, err := f.Stat()
	if err != nil {
		return osError(err, rel, "reading")
	}
	size := fi.Size()
	n := min(int64(tail), size)
	buf := make([]byte, n)
	if n > 0 {
		if _, err := f.ReadAt(buf, size-n); err != nil && !errors.Is(err, io.EOF) {
			return osError(err, rel, "reading")
		}
	}
	data, err := build(buf, size)
	if err != nil || len(data) == 0 {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return osError(err, rel, "appending to")
	}
	if err := f.Sync(); err != nil {
		return osError(err, rel, "syncing")
	}
	if size == 0 {
		return syncDir(dir)
	}
	return nil
}
