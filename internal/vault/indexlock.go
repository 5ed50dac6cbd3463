package vault

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/history"
)

func (w *writer) lockIndex() error {
	if w.il != nil {
		return nil
	}
	at := time.Now().UTC().Format(time.RFC3339Nano)
	if err := w.v.writeStateInPlace(commitMarker, []byte(at+"\n")); err != nil {
		return osError(err, ".sessionvault/state/"+commitMarker, "writing")
	}
	il, err := w.repo.LockIndex()
	if err != nil {
		w.v.clearState(commitMarker)
		return gitError(err, "locking the git index")
	}
	w.il = il
	// Which index.lock is ours: the next operation takes over (or removes)
	// only that one if this process is killed, never a git process's.
	if err := w.v.writeStateInPlace(commitMarker, []byte(at+"\n"+strconv.FormatUint(il.Inode(), 10)+"\n")); err != nil {
		return osError(err, ".sessionvault/state/"+commitMarker, "writing")
	}
	return nil
}

func (w *writer) releaseIndex() {
	if w.il != nil {
		w.il.Release()
		w.il = nil
		w.v.clearState(commitMarker)
	}
}

// commitMarker is the state file that says the engine holds git's locks:
// written before it takes index.lock and removed after it releases it, so
// that the next operation can tell locks left by a killed process from locks
// another git process holds.
const commitMarker = "committing"

// clearKilledCommit handles a commit marker left by a process killed while
// holding git's locks. The caller holds the vault lock, so that process is
// gone: the index.lock it left becomes w's (the roll-forward commits with
// it; otherwise w releases it), the other git lock files it may have left
// (made after its marker) are removed, and locks of other git processes are
// left alone.
func (v *Vault) clearKilledCommit(repo *history.Repo, w *writer) error {
	data, err := v.readStateInPlace(commitMarker)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	w.killed = true
	if err != nil {
		return osError(err, ".sessionvault/state/"+commitMarker, "reading")
	}
	fields := strings.Fields(string(data))
	var at time.Time
	var ino uint64
	if len(fields) > 0 {
		at, _ = time.Parse(time.RFC3339Nano, fields[0])
	}
	if len(fields) > 1 {
		ino, _ = strconv.ParseUint(fields[1], 10, 64)
	}
	// The killed process's index.lock — the one whose inode it recorded —
	// is taken over, not removed: a `git add -A` waiting for it must not
	// sweep the killed operation's notes into its own commit before the
	// roll-forward commits them. An index.lock that is not that one is a
	// git process's, and is left alone (the operation then waits for it).
	if ino == 0 && !at.IsZero() {
		// Killed between taking the index lock and recording it: an
		// index.lock made after the marker that outlasts the wait for
		// another git process is the killed process's.
		ino = v.survivingIndexLock(at)
	}
	if il := repo.AdoptIndexLock(ino); il != nil {
		w.il = il
	}
	if ino != 0 && !at.IsZero() {
		// It held the index lock, so it may have died between its index
		// and its ref update: HEAD.lock and the branch's lock made since its
		// marker are its — once they are a second old, as no git process
		// keeps a ref lock that long (git itself waits 100 ms for one).
		v.waitRefLocksAge(at, time.Second)
		if _, err := repo.RemoveStaleLocks(at.Add(-time.Second), time.Now().Add(-time.Second), false); err != nil {
			return gitError(err, "removing git locks left by a killed sessionvault")
		}
	}
	if w.il == nil {
		v.clearState(commitMarker)
	}
	return nil
}

// waitRefLocksAge waits (at most age) until HEAD.lock and the branch's lock,
// when made after at, are age old.
func (v *Vault) waitRefLocksAge(at time.Time, age time.Duration) {
	var paths []string
	paths = append(paths, filepath.Join(v.Root, ".git", "HEAD.lock"))
	if head, err := os.ReadFile(filepath.Join(v.Root, ".git", "HEAD")); err == nil {
		if ref, ok := strings.CutPrefix(strings.TrimSpace(string(head)), "ref: "); ok {
			paths = append(paths, filepath.Join(v.Root, ".git", filepath.FromSlash(ref)+".lock"))
		}
	}
	var youngest time.Time
	for _, p := range paths {
		if fi, err := os.Lstat(p); err == nil && fi.ModTime().After(at.Add(-time.Second)) && fi.ModTime().After(youngest) {
			youngest = fi.ModTime()
		}
	}
	if wait := time.Until(youngest.Add(age)); !youngest.IsZero() && wait > 0 {
		time.Sleep(min(wait, age))
	}
}

// survivingIndexLock returns the inode of .git/index.lock when it was made
// after at and is still there, the same file, after the git lock timeout;
// else 0.
func (v *Vault) survivingIndexLock(at time.Time) uint64 {
	p := filepath.Join(v.Root, ".git", "index.lock")
	first, _, err := lstatID(p)
	if err != nil || time.Unix(0, first.mtime).Before(at.Add(-time.Second)) {
		return 0
	}
	deadline := time.Now().Add(history.DefaultLockTimeout)
	for time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		if id, _, err := lstatID(p); err != nil || id.ino != first.ino {
			return 0 // another git process's, now gone
		}
	}
	return first.ino
}
