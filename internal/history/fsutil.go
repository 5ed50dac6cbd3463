package history

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"time"
)

// statData is what the index records about a file, truncated to 32 bits as
// git does, plus the full mode bits.
type statData struct {
	ctimeSec, ctimeNsec uint32
	mtimeSec, mtimeNsec uint32
	dev, ino            uint32
	mode                uint32 // st_mode (file type and permission bits)
	uid, gid            uint32
	size                uint32
	fullSize            int64
}

const (
	sIFMT  = 0o170000
	sIFREG = 0o100000
	sIFLNK = 0o120000
	sIFDIR = 0o040000
)

// gitMode returns the index/tree mode git records for a file with this
// st_mode: 0100644 or 0100755 for regular files, 0120000 for symlinks, and 0
// for anything git cannot store as a blob.
func gitMode(stMode uint32) uint32 {
	switch stMode & sIFMT {
	case sIFREG:
		if stMode&0o100 != 0 {
			return 0o100755
		}
		return 0o100644
	case sIFLNK:
		return 0o120000
	}
	return 0
}

// fileStamp identifies one version of a file (by inode, size and times in
// nanoseconds), to tell whether a file we read earlier was replaced.
type fileStamp struct {
	dev, ino     uint64
	size         int64
	mtime, ctime int64
}

func (s fileStamp) valid() bool { return s.ino != 0 || s.mtime != 0 }

// isNotExist reports whether err means the path does not exist, counting
// ENOTDIR (a parent is now a file) as not existing.
func isNotExist(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || isENOTDIR(err)
}

// lockFile is a git lock file "<target>.lock" that we created.
type lockFile struct {
	target string
	path   string
	f      *os.File
	done   bool // renamed or removed: nothing left to clean up
}

// acquireLock creates target+".lock" with O_CREATE|O_EXCL. While another
// process holds it, it retries with a short backoff for up to timeout, then
// fails with an error wrapping ErrLocked that names the lock file.
func acquireLock(target string, timeout time.Duration) (*lockFile, error) {
	path := target + ".lock"
	deadline := time.Now().Add(timeout)
	backoff := time.Millisecond
	for {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if err == nil {
			return &lockFile{target: target, path: path, f: f}, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("history: create lock %s: %w", path, err)
		}
		if !time.Now().Before(deadline) {
			return nil, fmt.Errorf("%w: %s exists%s (waited %v); another git process is using the repository, or crashed and left it behind (remove it only if no git process is running)", ErrLocked, path, lockAge(path), timeout)
		}
		time.Sleep(backoff)
		if backoff < 50*time.Millisecond {
			backoff *= 2
		}
	}
}

// lockAge describes how long the lock file at path has existed (from its
// modification time), e.g. " (for 3.2s)", or "" when it is gone.
func lockAge(path string) string {
	fi, err := os.Lstat(path)
	if err != nil {
		return ""
	}
	return fmt.Sprintf(" (for %v)", time.Since(fi.ModTime()).Round(100*time.Millisecond))
}

// rewrite replaces the lock file's content with b and closes it; the lock
// stays held.
func (l *lockFile) rewrite(b []byte) error {
	if l.f == nil {
		f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			return fmt.Errorf("history: reopen %s: %w", l.path, err)
		}
		l.f = f
	}
	return l.write(b)
}

// write writes b to the lock file and closes it (without fsync: the
// commit's barrier makes it durable).
func (l *lockFile) write(b []byte) error {
	if _, err := l.f.Write(b); err != nil {
		return fmt.Errorf("history: write %s: %w", l.path, err)
	}
	return l.close()
}

func (l *lockFile) close() error {
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	if err != nil {
		return fmt.Errorf("history: close %s: %w", l.path, err)
	}
	return nil
}

// commit renames the lock file over its target.
func (l *lockFile) commit() error {
	if err := l.close(); err != nil {
		return err
	}
	if err := os.Rename(l.path, l.target); err != nil {
		return fmt.Errorf("history: rename %s: %w", l.path, err)
	}
	l.done = true
	return nil
}

// rollback removes the lock file unless it was already committed or removed.
// It only ever removes a lock this process created.
func (l *lockFile) rollback() {
	if l == nil || l.done {
		return
	}
	_ = l.close() // being rolled back: its content no longer matters
	os.Remove(l.path)
	l.done = true
}

// writeFileSync writes a new file and fsyncs it.
func writeFileSync(path string, b []byte, perm os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// syncDir fsyncs a directory, making renames and creations in it durable.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("history: fsync %s: %w", dir, err)
	}
	return nil
}

func sortStrings(s []string) { sort.Strings(s) }

// barrier makes files and dirs durable before the commit becomes visible:
// with r.syncfs (SyncFS, Linux only), one syncfs(2) of the file system
// holding .git; with r.batch (Batch on a journalled file system), a
// write-out of each file then one journal commit (journalBarrier), which
// also carries the directory entries; otherwise (FsyncOwn) an fsync of each
// file and directory, issued concurrently.
func (r *Repo) barrier(files, dirs []string) error {
	switch {
	case r.syncfs && haveSyncfs:
		return syncfs(r.gitdir)
	case r.batch:
		if err := writeoutAll(files); err != nil {
			return err
		}
		return journalBarrier(r.gitdir)
	}
	return fsyncAll(files, dirs)
}

// afterRename makes the renames that published a commit durable: one
// journal commit (Batch), else an fsync of each folder they changed.
func (r *Repo) afterRename(dirs []string) error {
	if r.batch {
		return journalBarrier(r.gitdir)
	}
	return fsyncAll(nil, dirs)
}

// writeoutAll writes out every file: it starts the write-back of all of
// them, then waits for each (writeout), so that their I/O overlaps, and
// returns the first error.
func writeoutAll(files []string) error {
	fs := make([]*os.File, 0, len(files))
	defer func() {
		for _, f := range fs {
			f.Close()
		}
	}()
	for _, p := range files {
		f, err := os.Open(p)
		if err != nil {
			return fmt.Errorf("history: write-out %s: %w", p, err)
		}
		fs = append(fs, f)
		startWriteout(f)
	}
	for _, f := range fs {
		if err := writeout(f); err != nil {
			return fmt.Errorf("history: %w", err)
		}
	}
	return nil
}

// journalBarrier commits the file system's journal and flushes the device:
// it creates a file in dir, fsyncs it and removes it. The new file's
// creation is the newest change of the running journal transaction, so
// its fsync commits every change made before it — the write-outs, the new
// files' directory entries, the renames (git's core.fsyncMethod=batch does
// the same with its bulk_fsync file).
func journalBarrier(dir string) error {
	f, err := os.CreateTemp(dir, "sessionvault-barrier-")
	if err != nil {
		return fmt.Errorf("history: barrier in %s: %w", dir, err)
	}
	err = f.Sync()
	f.Close()
	os.Remove(f.Name())
	if err != nil {
		return fmt.Errorf("history: barrier in %s: %w", dir, err)
	}
	return nil
}

// fsyncAll fsyncs every file and directory, concurrently, and returns the
// first error.
func fsyncAll(files, dirs []string) error {
	paths := append(append([]string(nil), files...), dirs...)
	if len(paths) == 1 {
		return fsyncPath(paths[0])
	}
	errs := make(chan error, len(paths))
	for _, p := range paths {
		go func(p string) { errs <- fsyncPath(p) }(p)
	}
	var first error
	for range paths {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

func fsyncPath(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("history: fsync %s: %w", p, err)
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("history: fsync %s: %w", p, err)
	}
	return nil
}
