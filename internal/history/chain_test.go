package history

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/lazyfree"
)

var person = Signature{Name: "Pat Person", Email: "pat@example.com"}

// The engine commits what it wrote from memory, not what is on disk when it
// commits: a person saving the note in between is not swept into the
// engine's commit, and git sees their save as a change.
func TestCommitFromMemoryWhileTheFileChanges(t *testing.T) {
	r, dir := newRepo(t)
	writeFile(t, dir, "n.md", "one\n")
	mustCommit(t, r, "first", "n.md")

	l, err := r.LockIndex()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	writeFile(t, dir, "n.md", "one\nengine\n")
	writeFile(t, dir, "n.md", "one\nengine\nperson typed this\n") // lands before the commit
	hashes, err := l.Commit([]CommitSpec{{Files: []File{{Path: "n.md", Content: []byte("one\nengine\n")}}, Message: "update: engine", Author: agent}})
	if err != nil {
		t.Fatal(err)
	}
	if got := git(t, dir, "show", hashes[0]+":n.md"); got != "one\nengine\n" {
		t.Fatalf("committed %q, want the engine's bytes", got)
	}
	if st := git(t, dir, "status", "--porcelain"); st != " M n.md\n" {
		t.Fatalf("git status = %q, want the person's save as a change", st)
	}
	if out := git(t, dir, "diff"); !strings.Contains(out, "+person typed this") {
		t.Fatalf("git diff:\n%s", out)
	}
	checkFsck(t, dir)
	if _, err := os.Stat(filepath.Join(dir, ".git", "index.lock")); err == nil {
		t.Fatal("index.lock left behind")
	}
}

// A chain: the person's edit and the engine's change on top, one ref update,
// one reflog line each; a spec that changes nothing makes no commit.
func TestCommitChain(t *testing.T) {
	r, dir := newRepo(t)
	writeFile(t, dir, "n.md", "one\n")
	base := mustCommit(t, r, "first", "n.md")
	writeFile(t, dir, "n.md", "one\nperson\nengine\n")

	l, err := r.LockIndex()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	hashes, err := l.Commit([]CommitSpec{
		{Files: []File{{Path: "other.md", Content: nil, Deleted: true}}, Message: "nothing", Author: person},
		{Files: []File{{Path: "n.md", Content: []byte("one\nperson\n")}}, Message: "edit: by hand", Author: person},
		{Files: []File{{Path: "n.md", Content: []byte("one\nperson\nengine\n")}}, Message: "update: engine", Author: agent},
	})
	if err != nil {
		t.Fatal(err)
	}
	if hashes[0] != "" || hashes[1] == "" || hashes[2] == "" {
		t.Fatalf("hashes = %q", hashes)
	}
	if p := strings.TrimSpace(git(t, dir, "rev-parse", hashes[2]+"^")); p != hashes[1] {
		t.Fatalf("parent of the engine's commit = %s, want the person's %s", p, hashes[1])
	}
	if p := strings.TrimSpace(git(t, dir, "rev-parse", hashes[1]+"^")); p != base {
		t.Fatalf("parent of the person's commit = %s", p)
	}
	if a := git(t, dir, "log", "-1", "--format=%an", hashes[1]); a != "Pat Person\n" {
		t.Fatalf("person commit author %q", a)
	}
	log := git(t, dir, "reflog", "--format=%gs", "main")
	if !strings.HasPrefix(log, "commit: update: engine\ncommit: edit: by hand\ncommit (initial): first\n") {
		t.Fatalf("reflog:\n%s", log)
	}
	checkConsistent(t, dir)

	// Nothing to commit: all "" and nothing written.
	idx, _ := os.ReadFile(filepath.Join(dir, ".git", "index"))
	l2, err := r.LockIndex()
	if err != nil {
		t.Fatal(err)
	}
	hashes, err = l2.Commit([]CommitSpec{{Files: []File{{Path: "n.md", Content: []byte("one\nperson\nengine\n")}}, Message: "same", Author: agent}})
	l2.Release()
	if err != nil || hashes[0] != "" {
		t.Fatalf("no-op chain: %q %v", hashes, err)
	}
	if idx2, _ := os.ReadFile(filepath.Join(dir, ".git", "index")); string(idx2) != string(idx) {
		t.Fatal("a no-op chain rewrote the index")
	}
	checkConsistent(t, dir)
}

// The index lock held by someone else: LockIndex waits, then names the lock
// and how long it has been there.
func TestLockIndexNamesTheLockAndItsAge(t *testing.T) {
	r, dir := newRepo(t)
	r.lockTimeout = 300 * time.Millisecond
	lock := filepath.Join(dir, ".git", "index.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-90 * time.Second)
	os.Chtimes(lock, old, old)
	_, err := r.LockIndex()
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), lock) || !strings.Contains(err.Error(), "(for 1m30") {
		t.Fatalf("err = %v", err)
	}
}

// A caller's step before visibility (SetBeforeVisible) runs once the
// commit's objects are written and before HEAD or the index moves; its
// error aborts the commit with nothing visible changed.
func TestBeforeVisibleRunsBeforePublication(t *testing.T) {
	r, dir := newRepo(t)
	writeFile(t, dir, "n.md", "one\n")
	base := mustCommit(t, r, "first", "n.md")
	index, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "n.md", "one\ntwo\n")
	spec := []CommitSpec{{Files: []File{{Path: "n.md", Content: []byte("one\ntwo\n")}}, Message: "update: two", Author: agent}}

	refused := errors.New("the caller's files are not durable")
	l, err := r.LockIndex()
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	l.SetBeforeVisible(func() error {
		calls++
		if got := headHash(t, dir); got != base {
			t.Errorf("HEAD is %s before visibility, want %s", got, base)
		}
		return refused
	})
	if _, err := l.Commit(spec); !errors.Is(err, refused) {
		t.Fatalf("Commit = %v, want the caller's error", err)
	}
	l.Release()
	if calls != 1 {
		t.Fatalf("called %d times, want 1", calls)
	}
	if got := headHash(t, dir); got != base {
		t.Fatalf("HEAD moved to %s after a refused commit", got)
	}
	if now, _ := os.ReadFile(filepath.Join(dir, ".git", "index")); string(now) != string(index) {
		t.Fatal("the index changed after a refused commit")
	}
	checkFsck(t, dir)

	l, err = r.LockIndex()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	l.SetBeforeVisible(func() error { calls++; return nil })
	hashes, err := l.Commit(spec)
	if err != nil {
		t.Fatal(err)
	}
	if calls != 2 || headHash(t, dir) != hashes[0] {
		t.Fatalf("calls %d, HEAD %s, want 2 and %s", calls, headHash(t, dir), hashes[0])
	}
	checkConsistent(t, dir)
}

// With a Freer, a commit holds the index and the branch's ref it replaces
// (their blocks are freed beside it), and lets them go.
func TestCommitHoldsTheFilesItReplaces(t *testing.T) {
	r, dir := newRepo(t)
	writeFile(t, dir, "n.md", "one\n")
	mustCommit(t, r, "first", "n.md")
	var f lazyfree.Freer
	r.SetFreer(&f)
	writeFile(t, dir, "n.md", "one\ntwo\n")
	mustCommit(t, r, "second", "n.md")
	f.Wait()
	if want := int64(2); f.Active() && f.Held() != want {
		t.Fatalf("held %d files, want %d (the index and refs/heads/main)", f.Held(), want)
	}
	checkConsistent(t, dir)
}
