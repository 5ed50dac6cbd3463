package history

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The index.lock a killed holder left is taken over by the inode it
// recorded, and a commit made with it goes through; a lock that is not that
// file (another git's), or no lock, is not taken.
func TestAdoptIndexLock(t *testing.T) {
	r, dir := newRepo(t)
	writeFile(t, dir, "a.md", "a\n")
	mustCommit(t, r, "first", "a.md")
	held, err := r.LockIndex()
	if err != nil {
		t.Fatal(err)
	}
	ino := held.Inode()
	if ino == 0 {
		t.Fatal("the held lock has no inode")
	}
	// The holder is killed: its lock stays, and another Repo finds it.
	other, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if other.AdoptIndexLock(ino+1) != nil || other.AdoptIndexLock(0) != nil {
		t.Fatal("a lock that is not the recorded one was adopted")
	}
	l := other.AdoptIndexLock(ino)
	if l == nil {
		t.Fatal("the killed holder's lock was not adopted")
	}
	writeFile(t, dir, "a.md", "b\n")
	hashes, err := l.Commit([]CommitSpec{{Files: []File{{Path: "a.md", Content: []byte("b\n")}}, Message: "adopted", Author: agent}})
	if err != nil || len(hashes) != 1 || hashes[0] != headHash(t, dir) {
		t.Fatalf("commit with the adopted lock: %q, %v", hashes, err)
	}
	if l.Inode() != 0 {
		t.Error("a lock used by its commit still has an inode")
	}
	checkConsistent(t, dir)
	if other.AdoptIndexLock(ino) != nil {
		t.Error("a lock that is gone was adopted")
	}

	// Another git process's lock, made at the same path after ours went.
	if err := os.WriteFile(filepath.Join(dir, ".git", "index.lock"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if other.AdoptIndexLock(ino) != nil {
		t.Error("another process's index.lock was adopted")
	}
}

// Only the lock files made within the killed commit's window go; with
// index false index.lock stays (adopted by the caller); what is outside the
// window is another process's and stays.
func TestRemoveStaleLocks(t *testing.T) {
	r, dir := newRepo(t)
	writeFile(t, dir, "a.md", "a\n")
	mustCommit(t, r, "first", "a.md")
	now := time.Now()
	lock := func(rel string, mtime time.Time) {
		p := filepath.Join(dir, ".git", filepath.FromSlash(rel))
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	from, to := now.Add(-time.Minute), now.Add(-time.Second)
	lock("HEAD.lock", now.Add(-30*time.Second))
	lock("index.lock", now.Add(-30*time.Second))
	lock("refs/heads/main.lock", now.Add(-time.Hour))
	removed, err := r.RemoveStaleLocks(from, to, false)
	if err != nil || !slices.Equal(removed, []string{"HEAD.lock"}) {
		t.Fatalf("removed %q, %v; want HEAD.lock only", removed, err)
	}
	removed, err = r.RemoveStaleLocks(from, to, true)
	if err != nil || !slices.Equal(removed, []string{"index.lock"}) {
		t.Fatalf("with index: removed %q, %v; want index.lock", removed, err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "refs", "heads", "main.lock")); err != nil {
		t.Error("the branch lock made before the window was removed")
	}
}

// The read-only questions the write path asks: a commit's parent, whether a
// path is the same at a commit as at HEAD, whether a file's stat proves it
// holds HEAD's content (not for a changed file, nor for one whose change git
// staged), and how often a path changed since a commit.
func TestHistoryQuestions(t *testing.T) {
	t.Parallel()
	r, dir := newRepo(t)
	if same, err := r.SameAtHead(strings.Repeat("1", 40), "a.md"); err != nil || same {
		t.Errorf("SameAtHead on an unborn branch: %v, %v", same, err)
	}
	writeFile(t, dir, "a.md", "a\n")
	writeFile(t, dir, "b.md", "b\n")
	first := mustCommit(t, r, "first", "a.md", "b.md")
	writeFile(t, dir, "b.md", "b2\n")
	second := mustCommit(t, r, "second", "b.md")
	writeFile(t, dir, "b.md", "b3\n")
	third := mustCommit(t, r, "third", "b.md")

	if p, err := r.Parent(third); err != nil || p != second {
		t.Errorf("Parent(third) = %q, %v", p, err)
	}
	if p, err := r.Parent(first); err != nil || p != "" {
		t.Errorf("Parent of the root commit = %q, %v", p, err)
	}
	if _, err := r.Parent("HEAD"); err == nil {
		t.Error("Parent of a name that is not a hash: no error")
	}
	for _, c := range []struct {
		commit, path string
		want         bool
	}{{first, "a.md", true}, {first, "b.md", false}, {third, "b.md", true}, {first, "none.md", true}} {
		if same, err := r.SameAtHead(c.commit, c.path); err != nil || same != c.want {
			t.Errorf("SameAtHead(%.7s, %s) = %v, %v; want %v", c.commit, c.path, same, err, c.want)
		}
	}
	if _, err := r.SameAtHead("nope", "a.md"); err == nil {
		t.Error("SameAtHead of a name that is not a hash: no error")
	}
	if _, err := r.SameAtHead(first, "../a.md"); !errors.Is(err, ErrInvalidPath) {
		t.Errorf("SameAtHead of a bad path: %v", err)
	}

	n, head, ok, err := r.PathChangesSince(first, "b.md", 10)
	if err != nil || !ok || n != 2 || head != third {
		t.Errorf("PathChangesSince(first, b.md) = %d, %s, %v, %v", n, head, ok, err)
	}
	if n, _, ok, _ := r.PathChangesSince(first, "a.md", 10); !ok || n != 0 {
		t.Errorf("PathChangesSince(first, a.md) = %d, %v", n, ok)
	}
	if _, _, ok, err := r.PathChangesSince(first, "b.md", 1); err != nil || ok {
		t.Errorf("past the limit: ok %v, %v", ok, err)
	}
	if _, _, _, err := r.PathChangesSince("HEAD", "b.md", 10); err == nil {
		t.Error("PathChangesSince from a name that is not a hash: no error")
	}

	// Proven from the index once the entry is not racily clean.
	waitNextSecond()
	writeFile(t, dir, "c.md", "c\n")
	mustCommit(t, r, "fourth", "c.md")
	fi, err := os.Lstat(filepath.Join(dir, "a.md"))
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := r.MatchesHead("a.md", fi); err != nil || !ok {
		t.Errorf("MatchesHead of an untouched file = %v, %v", ok, err)
	}
	writeFile(t, dir, "a.md", "A\n")
	fi, _ = os.Lstat(filepath.Join(dir, "a.md"))
	if ok, err := r.MatchesHead("a.md", fi); err != nil || ok {
		t.Errorf("MatchesHead of a changed file = %v, %v", ok, err)
	}
	// Staged by git (the index's stat matches the file) but not committed:
	// the index's blob is not HEAD's.
	waitNextSecond()
	git(t, dir, "add", "a.md")
	if ok, err := r.MatchesHead("a.md", fi); err != nil || ok {
		t.Errorf("MatchesHead of a staged change = %v, %v", ok, err)
	}
	if _, err := r.MatchesHead("/abs", fi); !errors.Is(err, ErrInvalidPath) {
		t.Errorf("MatchesHead of a bad path: %v", err)
	}
}

// Every durability mode commits, and says whether its barrier covers the
// work tree; Root is the work tree.
func TestDurabilityModes(t *testing.T) {
	for _, d := range []Durability{FsyncOwn, SyncFS, Batch} {
		r, dir := newRepo(t)
		r.SetDurability(d)
		if d == FsyncOwn && r.CoversWorkTree() {
			t.Error("FsyncOwn covers the work tree")
		}
		if d == SyncFS && r.CoversWorkTree() != haveSyncfs {
			t.Errorf("SyncFS covers the work tree: %v", r.CoversWorkTree())
		}
		if r.Root() != dir {
			t.Errorf("Root = %s, want %s", r.Root(), dir)
		}
		writeFile(t, dir, "d/a.md", "a\n")
		mustCommit(t, r, "first", "d/a.md")
		f, err := os.Open(filepath.Join(dir, "d", "a.md"))
		if err != nil {
			t.Fatal(err)
		}
		if err := WriteOut(f); err != nil {
			t.Errorf("WriteOut: %v", err)
		}
		f.Close()
		checkConsistent(t, dir)
	}
}

// EnableSplitIndex keeps the config as it was and adds core.splitIndex, so
// the next commit splits the index; IndexEntries and SplitIndexSetting say
// so.
func TestEnableSplitIndex(t *testing.T) {
	r, dir := newRepo(t)
	if n, split, err := r.IndexEntries(); err != nil || n != 0 || split {
		t.Errorf("no index yet: %d, %v, %v", n, split, err)
	}
	if s := r.SplitIndexSetting(); s != -1 {
		t.Errorf("SplitIndexSetting unset = %d", s)
	}
	config, _ := os.ReadFile(filepath.Join(dir, ".git", "config"))
	if err := r.EnableSplitIndex(); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(filepath.Join(dir, ".git", "config"))
	if !strings.HasPrefix(string(after), string(config)) || r.SplitIndexSetting() != 1 {
		t.Errorf("config after EnableSplitIndex:\n%s", after)
	}
	if got := git(t, dir, "config", "core.splitIndex"); got != "true\n" {
		t.Errorf("git reads core.splitIndex = %q", got)
	}
	writeFile(t, dir, "a.md", "a\n")
	writeFile(t, dir, "b.md", "b\n")
	mustCommit(t, r, "first", "a.md", "b.md")
	if n, split, err := r.IndexEntries(); err != nil || n != 2 || !split {
		t.Errorf("after a commit: %d entries, split %v, %v", n, split, err)
	}
	checkConsistent(t, dir)
}
