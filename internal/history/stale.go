package history

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// RemoveStaleLocks removes the git lock files a Commit takes (index.lock,
// HEAD.lock and the branch's ref lock) when their modification time lies in
// [from, to]: the window in which a commit that was killed had them. The
// caller must know that commit's process is gone (sessionvault knows it by
// holding the vault lock and finding the commit's marker) and that it held
// the index lock then (HEAD.lock and the ref lock are taken only under it).
// A lock outside the window belongs to someone else — the git CLI, Obsidian
// Git — and is left alone. With index false, index.lock is left (the caller
// adopted it, see AdoptIndexLock). It returns the paths removed, relative to
// the git directory.
func (r *Repo) RemoveStaleLocks(from, to time.Time, index bool) ([]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	candidates := []string{"HEAD.lock"}
	if index {
		candidates = append(candidates, "index.lock")
	}
	if head, err := r.readHead(); err == nil && head.symbolic {
		candidates = append(candidates, filepath.FromSlash(head.ref)+".lock")
	}
	var removed []string
	for _, rel := range candidates {
		p := filepath.Join(r.gitdir, rel)
		fi, err := os.Lstat(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return removed, err
		}
		if fi.ModTime().Before(from) || fi.ModTime().After(to) {
			continue
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return removed, fmt.Errorf("history: removing stale %s: %w", p, err)
		}
		removed = append(removed, filepath.ToSlash(rel))
	}
	return removed, nil
}
