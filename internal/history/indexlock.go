package history

import (
	"errors"
	"math/rand/v2"
	"path/filepath"
	"time"
)

// IndexLock is git's index lock (.git/index.lock) held by this process: while
// it is held no other git process writes the index, so no `git add` or `git
// commit -a` can stage what the holder writes to the work tree before the
// holder commits it. Take it with Repo.LockIndex, finish with Commit, and
// always call Release (a no-op after a successful Commit).
type IndexLock struct {
	r    *Repo
	lock *lockFile
	// beforeVisible, when set (SetBeforeVisible), runs between a commit's
	// barrier and its publication.
	beforeVisible func() error
}

// LockIndex takes .git/index.lock, waiting while another process holds it
// for up to the lock timeout. Past it the error wraps ErrLocked and names
// the lock file and how long it has existed.
func (r *Repo) LockIndex() (*IndexLock, error) {
	lock, err := acquireLock(filepath.Join(r.gitdir, "index"), r.lockTimeout)
	if err != nil {
		return nil, err
	}
	return &IndexLock{r: r, lock: lock}, nil
}

// Inode returns the inode number of the index.lock this IndexLock holds
// (0 when unknown), so that a caller can tell it later from one another
// process made (see AdoptIndexLock).
func (l *IndexLock) Inode() uint64 {
	if l == nil || l.lock.done {
		return 0
	}
	st, _, err := lstatStamp(l.lock.path)
	if err != nil {
		return 0
	}
	return st.ino
}

// AdoptIndexLock takes over the index.lock a killed process of the caller's
// left behind, instead of removing it and racing other git processes for a
// new one. ino is that lock's inode (IndexLock.Inode) as the killed process
// recorded it; the lock is adopted only when the file there now is that
// file. The caller must know that process is gone (sessionvault knows it by
// holding the vault lock and finding its commit marker). It returns nil when
// there is no such lock.
func (r *Repo) AdoptIndexLock(ino uint64) *IndexLock {
	path := filepath.Join(r.gitdir, "index.lock")
	st, _, err := lstatStamp(path)
	if err != nil || ino == 0 || st.ino != ino {
		return nil
	}
	return &IndexLock{r: r, lock: &lockFile{target: filepath.Join(r.gitdir, "index"), path: path}}
}

// SetBeforeVisible makes Commit call fn once the commit's own files are
// durable and before anything becomes visible (the index, then the ref),
// on every try: the caller's writes the commit records (work-tree files it
// fsyncs itself) can so overlap the commit's work and barrier rather than
// precede them. An error from fn aborts the commit with nothing visible
// changed, and Commit returns it. fn must give the same answer each time
// it is called (a commit retried after a concurrent update calls it again).
func (l *IndexLock) SetBeforeVisible(fn func() error) { l.beforeVisible = fn }

// Release removes the index lock unless Commit already renamed it over the
// index. It is safe to call more than once.
func (l *IndexLock) Release() {
	if l != nil {
		l.lock.rollback()
	}
}

// Commit makes specs a chain of commits on top of HEAD (each the parent of
// the next), updates the index entries of every path they name to the last
// content given for it, moves the branch HEAD points to (or a detached
// HEAD) from its old value to the last commit with a compare-and-swap, and
// appends one reflog line per commit. A spec whose tree equals its parent's
// makes no commit; its hash in the result is "". When none makes a commit
// the result is all "" with a nil error, and nothing is written (the lock
// stays held until Release).
//
// When another process moves the branch between reading HEAD and the
// compare-and-swap (a `git commit` that released index.lock before
// updating its ref), the chain is rebuilt on the new HEAD and tried again,
// with a short growing backoff, up to 10 times; then the error wraps
// ErrConcurrentUpdate. Other errors are those of Repo.Commit. On any error
// nothing visible changed (except as Repo.Commit says for a failed final
// directory fsync).
func (l *IndexLock) Commit(specs []CommitSpec) ([]string, error) {
	r := l.r
	if l.lock.done {
		return nil, errors.New("history: the index lock was already released")
	}
	chain := make([]cleanSpec, len(specs))
	for i, s := range specs {
		c, err := cleanCommitSpec(s)
		if err != nil {
			return nil, err
		}
		chain[i] = c
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	backoff := time.Millisecond
	for attempt := 0; ; attempt++ {
		hashes, err := r.commitChain(l.lock, chain, l.beforeVisible)
		if !errors.Is(err, ErrConcurrentUpdate) || attempt >= r.casRetries {
			out := make([]string, len(hashes))
			for i, h := range hashes {
				if !h.IsZero() {
					out[i] = h.String()
				}
			}
			return out, err
		}
		time.Sleep(backoff + time.Duration(rand.Int64N(int64(backoff))))
		backoff = min(2*backoff, 50*time.Millisecond)
	}
}
