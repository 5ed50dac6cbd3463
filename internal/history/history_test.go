package history

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestInitOpen(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(dir); !errors.Is(err, ErrNotRepository) {
		t.Fatalf("Open of a plain dir: %v", err)
	}
	created, err := Init(dir)
	if err != nil || !created {
		t.Fatalf("Init: %v %v", created, err)
	}
	created, err = Init(dir)
	if err != nil || created {
		t.Fatalf("second Init: %v %v", created, err)
	}
	if out := strings.TrimSpace(git(t, dir, "symbolic-ref", "HEAD")); out != "refs/heads/main" {
		t.Fatalf("HEAD -> %q", out)
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Head(); !errors.Is(err, ErrNoCommits) {
		t.Fatalf("Head on unborn branch: %v", err)
	}
	if log, err := r.Log(0); err != nil || len(log) != 0 {
		t.Fatalf("Log on unborn branch: %v %v", log, err)
	}
	if _, err := r.ReadFile("x.md"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ReadFile on unborn branch: %v", err)
	}
	checkFsck(t, dir)
	// A file named .git is not a repository.
	other := t.TempDir()
	writeFile(t, other, ".git", "gitdir: elsewhere\n")
	if _, err := Open(other); !errors.Is(err, ErrNotRepository) {
		t.Fatalf("Open with a .git file: %v", err)
	}
	if _, err := Init(other); !errors.Is(err, ErrNotRepository) {
		t.Fatalf("Init with a .git file: %v", err)
	}
}

func TestCommitLifecycle(t *testing.T) {
	r, dir := newRepo(t)

	// First commit in an empty repository.
	writeFile(t, dir, "a.md", "# A\n")
	h1 := mustCommit(t, r, "start: first note\n\nSession: 2026-11-22-session-01\nOperation: start\n", "a.md")
	checkConsistent(t, dir)
	if got := headHash(t, dir); got != h1 {
		t.Fatalf("HEAD %s, Commit returned %s", got, h1)
	}
	if h, err := r.Head(); err != nil || h != h1 {
		t.Fatalf("Head() = %s, %v", h, err)
	}
	if out := git(t, dir, "log", "-1", "--format=%an <%ae>|%cn|%s|%P"); out != "Agent Smith <agent@example.com>|Agent Smith|start: first note|\n" {
		t.Fatalf("git log: %q", out)
	}
	if out := git(t, dir, "reflog", "-1", "--format=%gs"); out != "commit (initial): start: first note\n" {
		t.Fatalf("git reflog: %q", out)
	}
	if out := git(t, dir, "log", "-g", "-1", "--format=%gs", "refs/heads/main"); out != "commit (initial): start: first note\n" {
		t.Fatalf("branch reflog: %q", out)
	}

	// Modify, add nested, multi-path.
	writeFile(t, dir, "a.md", "# A\n\nmore\n")
	writeFile(t, dir, "proj/sessions/2026-11-22-session-01.md", "session one\n")
	writeFile(t, dir, "proj/session-current-state.md", "state\n")
	writeFile(t, dir, "untracked.md", "not committed\n")
	h2 := mustCommit(t, r, "update: three files", "proj/sessions/2026-11-22-session-01.md", "a.md", "proj/session-current-state.md")
	os.Remove(filepath.Join(dir, "untracked.md"))
	checkConsistent(t, dir)
	if out := git(t, dir, "log", "-1", "--format=%P %s"); out != h1+" update: three files\n" {
		t.Fatalf("git log: %q", out)
	}
	if out := git(t, dir, "diff-tree", "--no-commit-id", "-r", "--name-status", "HEAD"); out != "M\ta.md\nA\tproj/session-current-state.md\nA\tproj/sessions/2026-11-22-session-01.md\n" {
		t.Fatalf("diff-tree: %q", out)
	}
	if out := git(t, dir, "reflog", "-1", "--format=%H %gs"); out != h2+" commit: update: three files\n" {
		t.Fatalf("git reflog: %q", out)
	}

	// Stat fields of the committed entries are byte-identical to git add's.
	before := git(t, dir, "ls-files", "-s", "--debug", "proj/session-current-state.md")
	git(t, dir, "rm", "-q", "--cached", "proj/session-current-state.md")
	git(t, dir, "add", "proj/session-current-state.md")
	if after := git(t, dir, "ls-files", "-s", "--debug", "proj/session-current-state.md"); after != before {
		t.Fatalf("entry differs from git add's:\nours:\n%s\ngit's:\n%s", before, after)
	}
	checkConsistent(t, dir)

	// Executable file and symlink.
	writeFile(t, dir, "bin/run.sh", "#!/bin/sh\necho hi\n")
	os.Chmod(filepath.Join(dir, "bin/run.sh"), 0o755)
	if err := os.Symlink("../a.md", filepath.Join(dir, "proj", "link.md")); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, r, "add: script and link", "bin/run.sh", "proj/link.md")
	checkConsistent(t, dir)
	if out := git(t, dir, "ls-tree", "-r", "HEAD", "bin/run.sh", "proj/link.md"); !strings.HasPrefix(out, "100755 blob") || !strings.Contains(out, "\n120000 blob") {
		t.Fatalf("modes: %q", out)
	}
	if b, err := r.ReadFile("proj/link.md"); err != nil || string(b) != "../a.md" {
		t.Fatalf("ReadFile(symlink) = %q, %v", b, err)
	}

	// Delete a file, and empty a folder by deleting its last file.
	os.Remove(filepath.Join(dir, "a.md"))
	os.RemoveAll(filepath.Join(dir, "bin"))
	mustCommit(t, r, "delete: a and the script", "a.md", "bin/run.sh")
	checkConsistent(t, dir)
	if out := git(t, dir, "ls-tree", "--name-only", "HEAD"); out != "proj\n" {
		t.Fatalf("root tree after deletes: %q", out)
	}
	// Delete the rest, leaving an empty tree.
	os.RemoveAll(filepath.Join(dir, "proj"))
	mustCommit(t, r, "delete: everything", "proj/link.md", "proj/session-current-state.md", "proj/sessions/2026-11-22-session-01.md")
	checkConsistent(t, dir)
	if out := git(t, dir, "rev-parse", "HEAD^{tree}"); strings.TrimSpace(out) != emptyTree.String() {
		t.Fatalf("tree %s, want the empty tree", out)
	}
	// And back.
	writeFile(t, dir, "z/y/x.md", "x\n")
	mustCommit(t, r, "add: x", "z/y/x.md")
	checkConsistent(t, dir)
	if n := strings.Count(git(t, dir, "reflog"), "\n"); n != 6 {
		t.Fatalf("reflog has %d entries, want 6", n)
	}
}

func TestNothingToCommit(t *testing.T) {
	r, dir := newRepo(t)
	// Unborn branch, path absent everywhere.
	if _, err := r.Commit(CommitRequest{Paths: []string{"missing.md"}, Message: "m", Author: agent}); !errors.Is(err, ErrNothingToCommit) {
		t.Fatalf("commit of nothing on unborn branch: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "index")); err == nil {
		t.Fatal("index written by a no-op")
	}
	writeFile(t, dir, "a.md", "a\n")
	h := mustCommit(t, r, "first", "a.md")
	reflog := git(t, dir, "reflog")
	idx, _ := os.ReadFile(filepath.Join(dir, ".git", "index"))
	for _, paths := range [][]string{{"a.md"}, {"a.md", "never.md"}, {"never.md"}} {
		if _, err := r.Commit(CommitRequest{Paths: paths, Message: "again", Author: agent}); !errors.Is(err, ErrNothingToCommit) {
			t.Fatalf("no-op commit %v: %v", paths, err)
		}
	}
	if got := headHash(t, dir); got != h {
		t.Fatalf("HEAD moved to %s", got)
	}
	if git(t, dir, "reflog") != reflog {
		t.Fatal("reflog changed")
	}
	if idx2, _ := os.ReadFile(filepath.Join(dir, ".git", "index")); string(idx2) != string(idx) {
		t.Fatal("index changed by a no-op")
	}
	checkConsistent(t, dir)
}

func TestInvalidPaths(t *testing.T) {
	r, dir := newRepo(t)
	writeFile(t, dir, "a.md", "a\n")
	h := mustCommit(t, r, "first", "a.md")
	writeFile(t, dir, "a.md", "changed\n")
	os.MkdirAll(filepath.Join(dir, "folder", "sub"), 0o755)
	for _, p := range []string{"", "/etc/passwd", "../x.md", "a/../a.md", "a//b.md", "./a.md", "dir/", ".git/config", "sub/.git/x", ".GIT/HEAD", "a\x00b"} {
		_, err := r.Commit(CommitRequest{Paths: []string{"a.md", p}, Message: "m", Author: agent})
		if !errors.Is(err, ErrInvalidPath) {
			t.Errorf("path %q: err = %v, want ErrInvalidPath", p, err)
		}
	}
	if _, err := r.Changed([]string{"../x"}); !errors.Is(err, ErrInvalidPath) {
		t.Errorf("Changed(../x): %v", err)
	}
	if _, err := r.ReadFile("/a.md"); !errors.Is(err, ErrInvalidPath) {
		t.Errorf("ReadFile(/a.md): %v", err)
	}
	if got := headHash(t, dir); got != h {
		t.Fatal("HEAD moved")
	}
	if out := git(t, dir, "status", "--porcelain"); out != " M a.md\n" {
		t.Fatalf("status: %q", out)
	}
	// Bad signatures and messages.
	for _, req := range []CommitRequest{
		{Paths: []string{"a.md"}, Message: "m", Author: Signature{Name: "", Email: "x@y"}},
		{Paths: []string{"a.md"}, Message: "m", Author: Signature{Name: "A <b>", Email: "x@y"}},
		{Paths: []string{"a.md"}, Message: " \n\n ", Author: agent},
	} {
		if _, err := r.Commit(req); err == nil {
			t.Errorf("Commit(%+v) succeeded", req)
		}
	}
}

func TestDirectoryFileConflicts(t *testing.T) {
	r, dir := newRepo(t)
	writeFile(t, dir, "d/x.md", "x\n")
	writeFile(t, dir, "f", "f\n")
	mustCommit(t, r, "first", "d/x.md", "f")
	// d becomes a file: d/x.md still in the index (not requested).
	os.RemoveAll(filepath.Join(dir, "d"))
	writeFile(t, dir, "d", "now a file\n")
	if _, err := r.Commit(CommitRequest{Paths: []string{"d"}, Message: "m", Author: agent}); !errors.Is(err, ErrInvalidPath) {
		t.Fatalf("file over directory: %v", err)
	}
	// With the deletion of d/x.md in the same request it works.
	mustCommit(t, r, "d is a file", "d", "d/x.md")
	checkConsistent(t, dir)
	// f becomes a directory.
	os.Remove(filepath.Join(dir, "f"))
	writeFile(t, dir, "f/new.md", "n\n")
	if _, err := r.Commit(CommitRequest{Paths: []string{"f/new.md"}, Message: "m", Author: agent}); !errors.Is(err, ErrInvalidPath) {
		t.Fatalf("directory over file: %v", err)
	}
	mustCommit(t, r, "f is a dir", "f", "f/new.md")
	checkConsistent(t, dir)
}

func TestInteropWithGitCLI(t *testing.T) {
	r, dir := newRepo(t)
	writeFile(t, dir, "notes/a.md", "a\n")
	writeFile(t, dir, "notes/b.md", "b\n")
	mustCommit(t, r, "first", "notes/a.md", "notes/b.md")

	// The git CLI commits in between.
	writeFile(t, dir, "notes/x.md", "x from git\n")
	git(t, dir, "add", "notes/x.md")
	git(t, dir, "commit", "-q", "-m", "cli: add x")
	cliHead := headHash(t, dir)
	checkConsistent(t, dir)

	writeFile(t, dir, "notes/a.md", "a changed by us\n")
	h := mustCommit(t, r, "ours after cli", "notes/a.md")
	checkConsistent(t, dir)
	if out := git(t, dir, "rev-parse", "HEAD^"); strings.TrimSpace(out) != cliHead {
		t.Fatalf("parent %s, want the CLI's commit %s", out, cliHead)
	}
	if out := git(t, dir, "ls-tree", "-r", "--name-only", "HEAD"); out != "notes/a.md\nnotes/b.md\nnotes/x.md\n" {
		t.Fatalf("tree: %q", out)
	}

	// A path staged by git add and not in our request stays staged.
	writeFile(t, dir, "other/staged.md", "staged\n")
	writeFile(t, dir, "notes/b.md", "b staged\n")
	git(t, dir, "add", "other/staged.md", "notes/b.md")
	writeFile(t, dir, "notes/a.md", "a changed again\n")
	h2 := mustCommit(t, r, "ours with others staged", "notes/a.md")
	if out := git(t, dir, "diff-tree", "--no-commit-id", "-r", "--name-only", "HEAD"); out != "notes/a.md\n" {
		t.Fatalf("our commit touched %q", out)
	}
	if out := git(t, dir, "status", "--porcelain"); out != "M  notes/b.md\nA  other/staged.md\n" {
		t.Fatalf("status after our commit: %q", out)
	}
	if out := git(t, dir, "diff-files", "--name-only"); out != "" {
		t.Fatalf("diff-files: %q", out)
	}
	checkFsck(t, dir)
	git(t, dir, "commit", "-q", "-m", "cli: commit the staged ones")
	checkConsistent(t, dir)
	if out := git(t, dir, "log", "--format=%s", "-3"); out != "cli: commit the staged ones\nours with others staged\nours after cli\n" {
		t.Fatalf("log: %q", out)
	}
	_ = h
	_ = h2
	// git's own index extensions (TREE written by git commit) are handled.
	writeFile(t, dir, "notes/b.md", "b by us\n")
	mustCommit(t, r, "after cli wrote TREE", "notes/b.md")
	checkConsistent(t, dir)
	// git gc packs everything and removes loose refs; we keep working.
	git(t, dir, "gc", "-q", "--prune=now")
	writeFile(t, dir, "notes/c.md", "c\n")
	mustCommit(t, r, "after gc", "notes/c.md")
	checkConsistent(t, dir)
	if b, err := r.ReadFile("notes/x.md"); err != nil || string(b) != "x from git\n" {
		t.Fatalf("ReadFile after gc: %q %v", b, err)
	}
}

// TestRacyGit: a file changed in the second its entry was written, at the
// same size, is seen as changed after a later commit rewrote the index, in
// a whole index and in a split one: in the shared index when every commit
// writes a new one, or moved from the shared index into .git/index when the
// later commit keeps the shared index.
func TestRacyGit(t *testing.T) {
	t.Parallel()
	for name, config := range map[string][][2]string{
		"whole":        nil,
		"shared-every": {{"core.splitIndex", "true"}, {"splitIndex.maxPercentChange", "0"}},
		"split": {{"core.splitIndex", "true"}, {"splitIndex.maxPercentChange", "0"},
			{"splitIndex.maxPercentChange", "100"}}, // the last one set after x's commit
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testRacyGit(t, config)
		})
	}
}

func testRacyGit(t *testing.T, config [][2]string) {
	var later [][2]string
	if len(config) == 3 {
		config, later = config[:2], config[2:]
	}
	r, dir := newRepo(t)
	for _, kv := range config {
		git(t, dir, "config", kv[0], kv[1])
	}
	writeFile(t, dir, "x.md", "content-0\n")
	writeFile(t, dir, "p.md", "p-0\n")
	mustCommit(t, r, "first", "x.md", "p.md")
	for attempt := 0; ; attempt++ {
		waitNextSecond()
		sec := time.Now().Unix()
		writeFile(t, dir, "x.md", "content-1\n")
		mustCommit(t, r, "x", "x.md")
		writeFile(t, dir, "x.md", "content-2\n") // same size, same second
		if time.Now().Unix() == sec {
			break
		}
		if attempt > 3 {
			t.Skip("could not commit and modify within one second")
		}
	}
	for _, kv := range later {
		git(t, dir, "config", kv[0], kv[1])
	}
	waitNextSecond()
	writeFile(t, dir, "p.md", "p-1\n")
	mustCommit(t, r, "p", "p.md")
	if out := git(t, dir, "status", "--porcelain"); out != " M x.md\n" {
		t.Fatalf("git status after racy change: %q, want \" M x.md\"", out)
	}
	if ch, err := r.Changed([]string{"x.md", "p.md"}); err != nil || len(ch) != 1 || ch[0] != "x.md" {
		t.Fatalf("Changed = %v, %v", ch, err)
	}
	mustCommit(t, r, "x again", "x.md")
	checkConsistent(t, dir)
	if b, _ := r.ReadFile("x.md"); string(b) != "content-2\n" {
		t.Fatalf("x.md at HEAD: %q", b)
	}

}

func TestConcurrentUpdate(t *testing.T) {
	r, dir := newRepo(t)
	writeFile(t, dir, "a.md", "a\n")
	mustCommit(t, r, "first", "a.md")

	// The branch moves on every try (another process committing without
	// pause): after the retries the commit fails and nothing visible changed.
	idx, _ := os.ReadFile(filepath.Join(dir, ".git", "index"))
	branchLog, _ := os.ReadFile(filepath.Join(dir, ".git", "logs", "refs", "heads", "main"))
	headLog, _ := os.ReadFile(filepath.Join(dir, ".git", "logs", "HEAD"))
	tries := 0
	var other string
	r.beforeRefLock = func() {
		tries++
		other = strings.TrimSpace(git(t, dir, "commit-tree", "HEAD^{tree}", "-p", "HEAD", "-m", fmt.Sprintf("elsewhere %d", tries)))
		git(t, dir, "update-ref", "refs/heads/main", other)
	}
	writeFile(t, dir, "a.md", "a changed\n")
	_, err := r.Commit(CommitRequest{Paths: []string{"a.md"}, Message: "lost race", Author: agent})
	r.beforeRefLock = nil
	if !errors.Is(err, ErrConcurrentUpdate) {
		t.Fatalf("err = %v, want ErrConcurrentUpdate", err)
	}
	if tries != r.casRetries+1 {
		t.Errorf("tried %d times, want %d", tries, r.casRetries+1)
	}
	if got := headHash(t, dir); got != other {
		t.Fatalf("HEAD = %s, want %s", got, other)
	}
	if idx2, _ := os.ReadFile(filepath.Join(dir, ".git", "index")); string(idx2) != string(idx) {
		t.Fatal("index changed")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".git", "logs", "HEAD")); strings.Contains(string(b), "lost race") || !strings.HasPrefix(string(b), string(headLog)) {
		t.Fatalf("HEAD reflog:\n%s", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".git", "logs", "refs", "heads", "main")); strings.Contains(string(b), "lost race") || len(b) <= len(branchLog) {
		t.Fatalf("branch reflog:\n%s", b)
	}
	for _, l := range []string{"index.lock", "HEAD.lock", "refs/heads/main.lock"} {
		if _, err := os.Stat(filepath.Join(dir, ".git", l)); err == nil {
			t.Errorf("%s left behind", l)
		}
	}

	// The branch moves once, as a `git commit` does when it wrote the index
	// before we locked it and updates its ref just after our read: the
	// commit is rebuilt on the new HEAD.
	writeFile(t, dir, "b.md", "theirs\n")
	git(t, dir, "add", "b.md")
	theirTree := strings.TrimSpace(git(t, dir, "write-tree"))
	moved := ""
	r.beforeRefLock = func() {
		if moved == "" {
			moved = strings.TrimSpace(git(t, dir, "commit-tree", theirTree, "-p", "HEAD", "-m", "theirs"))
			git(t, dir, "update-ref", "refs/heads/main", moved)
		}
	}
	h := mustCommit(t, r, "rebuilt", "a.md")
	r.beforeRefLock = nil
	if out := strings.TrimSpace(git(t, dir, "rev-parse", h+"^")); out != moved {
		t.Fatalf("parent of %s is %s, want %s", h, out, moved)
	}
	if out := git(t, dir, "show", h+":b.md"); out != "theirs\n" {
		t.Fatalf("their file in the rebuilt commit: %q", out)
	}
	if out := git(t, dir, "show", h+":a.md"); out != "a changed\n" {
		t.Fatalf("our file in the rebuilt commit: %q", out)
	}
	if st := git(t, dir, "status", "--porcelain"); st != "" {
		t.Fatalf("git status after the rebuilt commit:\n%s", st)
	}
	checkConsistent(t, dir)
}

func TestLockHeld(t *testing.T) {
	t.Parallel()
	r, dir := newRepo(t)
	writeFile(t, dir, "a.md", "a\n")
	h := mustCommit(t, r, "first", "a.md")
	writeFile(t, dir, "a.md", "b\n")
	idx, _ := os.ReadFile(filepath.Join(dir, ".git", "index"))

	for _, lock := range []string{"index.lock", "refs/heads/main.lock"} {
		lockPath := filepath.Join(dir, ".git", filepath.FromSlash(lock))
		if err := os.WriteFile(lockPath, []byte("someone else's"), 0o644); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, err := r.Commit(CommitRequest{Paths: []string{"a.md"}, Message: "m", Author: agent})
		if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), lockPath) {
			t.Fatalf("%s held: err = %v", lock, err)
		}
		if d := time.Since(start); d < DefaultLockTimeout || d > DefaultLockTimeout+time.Second {
			t.Errorf("%s held: gave up after %v", lock, d)
		}
		if b, err := os.ReadFile(lockPath); err != nil || string(b) != "someone else's" {
			t.Fatalf("the foreign %s was touched: %q %v", lock, b, err)
		}
		if got := headHash(t, dir); got != h {
			t.Fatal("HEAD moved")
		}
		if idx2, _ := os.ReadFile(filepath.Join(dir, ".git", "index")); string(idx2) != string(idx) {
			t.Fatal("index changed")
		}
		os.Remove(lockPath)
		for _, l := range []string{"index.lock", "HEAD.lock", "refs/heads/main.lock"} {
			if _, err := os.Stat(filepath.Join(dir, ".git", l)); err == nil {
				t.Errorf("%s left behind", l)
			}
		}
	}
	// Released during the wait: the commit goes through.
	lockPath := filepath.Join(dir, ".git", "index.lock")
	os.WriteFile(lockPath, nil, 0o644)
	go func() { time.Sleep(200 * time.Millisecond); os.Remove(lockPath) }()
	mustCommit(t, r, "after the lock", "a.md")
	checkConsistent(t, dir)
}

func TestPackedRefsOnly(t *testing.T) {
	r, dir := newRepo(t)
	writeFile(t, dir, "a.md", "a\n")
	mustCommit(t, r, "first", "a.md")
	git(t, dir, "pack-refs", "--all")
	if _, err := os.Stat(filepath.Join(dir, ".git", "refs", "heads", "main")); err == nil {
		t.Fatal("pack-refs left the loose ref")
	}
	writeFile(t, dir, "a.md", "b\n")
	h := mustCommit(t, r, "second", "a.md")
	checkConsistent(t, dir)
	if out := git(t, dir, "show-ref", "refs/heads/main"); out != h+" refs/heads/main\n" {
		t.Fatalf("show-ref: %q", out)
	}
	// CAS against the packed value.
	git(t, dir, "pack-refs", "--all")
	other := strings.TrimSpace(git(t, dir, "commit-tree", "HEAD^{tree}", "-p", "HEAD", "-m", "x"))
	r.beforeRefLock = func() { git(t, dir, "update-ref", "refs/heads/main", other) }
	writeFile(t, dir, "a.md", "c\n")
	h, err := r.Commit(CommitRequest{Paths: []string{"a.md"}, Message: "m", Author: agent})
	r.beforeRefLock = nil
	if err != nil {
		t.Fatalf("CAS on a packed ref: %v", err)
	}
	if out := strings.TrimSpace(git(t, dir, "rev-parse", h+"^")); out != other {
		t.Fatalf("parent after a moved packed ref: %s, want %s", out, other)
	}
}

func TestDetachedHead(t *testing.T) {
	r, dir := newRepo(t)
	writeFile(t, dir, "a.md", "a\n")
	h1 := mustCommit(t, r, "first", "a.md")
	git(t, dir, "checkout", "-q", "--detach")
	writeFile(t, dir, "a.md", "b\n")
	h2 := mustCommit(t, r, "detached", "a.md")
	checkConsistent(t, dir)
	if got := strings.TrimSpace(git(t, dir, "rev-parse", "main")); got != h1 {
		t.Fatalf("main moved to %s", got)
	}
	if got := headHash(t, dir); got != h2 {
		t.Fatalf("HEAD %s, want %s", got, h2)
	}
}

func TestChanged(t *testing.T) {
	t.Parallel()
	r, dir := newRepo(t)
	writeFile(t, dir, "a.md", "a\n")
	writeFile(t, dir, "b.md", "b\n")
	writeFile(t, dir, "d/c.md", "c\n")
	if ch, err := r.Changed([]string{"a.md", "none.md"}); err != nil || len(ch) != 1 || ch[0] != "a.md" {
		t.Fatalf("Changed on unborn branch = %v, %v", ch, err)
	}
	mustCommit(t, r, "first", "a.md", "b.md", "d/c.md")
	all := []string{"d/c.md", "a.md", "b.md", "none.md", "new.md", "d"}

	// Right after the commit the entries are racily clean: content is hashed.
	if ch, err := r.Changed(all[:5]); err != nil || len(ch) != 0 {
		t.Fatalf("Changed right after commit = %v, %v", ch, err)
	}
	if ch, err := r.Changed(all); err != nil || len(ch) != 0 {
		t.Fatalf("Changed with a directory = %v, %v", ch, err)
	}
	waitNextSecond()
	writeFile(t, dir, "b.md", "B\n")     // same size, hand edit
	writeFile(t, dir, "new.md", "new\n") // untracked
	os.Remove(filepath.Join(dir, "a.md"))
	ch, err := r.Changed(all[:5])
	if err != nil || strings.Join(ch, ",") != "a.md,b.md,new.md" {
		t.Fatalf("Changed = %v, %v", ch, err)
	}
	// Touching without changing content is not a change.
	now := time.Now()
	os.Chtimes(filepath.Join(dir, "d/c.md"), now, now)
	writeFile(t, dir, "b.md", "b\n")
	if ch, err := r.Changed([]string{"d/c.md", "b.md"}); err != nil || len(ch) != 0 {
		t.Fatalf("Changed after touch = %v, %v", ch, err)
	}
	// Changed writes nothing.
	if _, err := os.Stat(filepath.Join(dir, ".git", "index.lock")); err == nil {
		t.Fatal("index.lock left")
	}
	// Mode change.
	os.Chmod(filepath.Join(dir, "d/c.md"), 0o755)
	if ch, _ := r.Changed([]string{"d/c.md"}); len(ch) != 1 {
		t.Fatalf("exec bit change not reported: %v", ch)
	}
	// A change that the index's (non-racy) stat data would hide is still
	// found when the stat data differs.
	os.Chmod(filepath.Join(dir, "d/c.md"), 0o644)
	waitNextSecond()
	mustCommit(t, r, "second", "a.md", "new.md")
	waitNextSecond()
	writeFile(t, dir, "d/c.md", "C\n")
	if ch, _ := r.Changed([]string{"d/c.md", "new.md"}); strings.Join(ch, ",") != "d/c.md" {
		t.Fatalf("Changed = %v", ch)
	}
}

func TestLogAndReadFile(t *testing.T) {
	r, dir := newRepo(t)
	writeFile(t, dir, "p/a.md", "a\n")
	writeFile(t, dir, "p/b.md", "b\n")
	h1 := mustCommit(t, r, "start: session 01\n\nStarted the session.\n\nSession: 2026-11-22-session-01\nOperation: start\nState-Checksum: sha256:abc\n", "p/a.md", "p/b.md")
	writeFile(t, dir, "p/b.md", "b2\n")
	writeFile(t, dir, "q/c.md", "c\n")
	when := time.Date(2026, 11, 22, 14, 30, 0, 0, time.FixedZone("", 3600))
	h2, err := r.Commit(CommitRequest{
		Paths: []string{"p/b.md", "q/c.md"}, Message: "update: two\n\nno trailers here",
		Author:    Signature{Name: "Agent", Email: "agent@x", When: when},
		Committer: Signature{Name: "Person", Email: "person@x", When: when.Add(time.Minute)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if out := git(t, dir, "log", "-1", "--format=%an %ad|%cn %cd", "--date=iso"); out != "Agent 2026-11-22 14:30:00 +0100|Person 2026-11-22 14:31:00 +0100\n" {
		t.Fatalf("git log dates: %q", out)
	}
	log, err := r.Log(0)
	if err != nil || len(log) != 2 {
		t.Fatalf("Log = %v, %v", log, err)
	}
	if log[0].Hash != h2 || log[1].Hash != h1 {
		t.Fatalf("hashes %s %s", log[0].Hash, log[1].Hash)
	}
	if log[0].Subject != "update: two" || log[0].Body != "no trailers here" || log[0].Trailers != nil || log[0].Paths != nil {
		t.Fatalf("log[0] = %+v", log[0])
	}
	if log[0].Author.Name != "Agent" || !log[0].Author.When.Equal(when) || log[0].Committer.Name != "Person" {
		t.Fatalf("signatures %+v %+v", log[0].Author, log[0].Committer)
	}
	l1 := log[1]
	if l1.Subject != "start: session 01" || l1.Trailers["Session"] != "2026-11-22-session-01" ||
		l1.Trailers["Operation"] != "start" || l1.Trailers["State-Checksum"] != "sha256:abc" || len(l1.Trailers) != 3 {
		t.Fatalf("log[1] = %+v", l1)
	}
	if !strings.HasPrefix(l1.Body, "Started the session.\n\nSession:") {
		t.Fatalf("body %q", l1.Body)
	}
	if log, _ := r.Log(1); len(log) != 1 || log[0].Hash != h2 {
		t.Fatalf("Log(1) = %v", log)
	}
	wp, err := r.LogWithPaths(0)
	if err != nil || strings.Join(wp[0].Paths, ",") != "p/b.md,q/c.md" || strings.Join(wp[1].Paths, ",") != "p/a.md,p/b.md" {
		t.Fatalf("LogWithPaths = %+v, %v", wp, err)
	}
	if b, err := r.ReadFile("p/b.md"); err != nil || string(b) != "b2\n" {
		t.Fatalf("ReadFile = %q, %v", b, err)
	}
	if _, err := r.ReadFile("p/none.md"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ReadFile(missing) = %v", err)
	}
	if _, err := r.ReadFile("p/a.md/x"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ReadFile(under a file) = %v", err)
	}
	if _, err := r.ReadFile("p"); !errors.Is(err, ErrInvalidPath) {
		t.Fatalf("ReadFile(dir) = %v", err)
	}
}

func TestParseTrailers(t *testing.T) {
	for body, want := range map[string]string{
		"":                          "",
		"Session: x":                "Session=x",
		"text\n\nA: 1\nB-c: two":    "A=1,B-c=two",
		"text\n\nA: 1\nnot one":     "",
		"A: 1\n\ntext":              "",
		"x\n\nA: long\n  continued": "A=long continued",
		"x\n\nNot a key: v":         "",
	} {
		tr := parseTrailers(body)
		var parts []string
		for _, k := range []string{"A", "B-c", "Session"} {
			if v, ok := tr[k]; ok {
				parts = append(parts, k+"="+v)
			}
		}
		if got := strings.Join(parts, ","); got != want || (want == "" && tr != nil) {
			t.Errorf("parseTrailers(%q) = %v, want %s", body, tr, want)
		}
	}
}

func TestUnsupportedIndex(t *testing.T) {
	for _, args := range [][]string{
		{"update-index", "--index-version", "4"},
	} {
		r, dir := newRepo(t)
		writeFile(t, dir, "a.md", "a\n")
		mustCommit(t, r, "first", "a.md")
		git(t, dir, args...)
		writeFile(t, dir, "a.md", "b\n")
		if _, err := r.Commit(CommitRequest{Paths: []string{"a.md"}, Message: "m", Author: agent}); !errors.Is(err, ErrUnsupportedIndex) {
			t.Errorf("after %v: err = %v", args, err)
		}
		if _, err := os.Stat(filepath.Join(dir, ".git", "index.lock")); err == nil {
			t.Error("index.lock left")
		}
	}
	// Version 3 (extended flags) is patched.
	r, dir := newRepo(t)
	writeFile(t, dir, "a.md", "a\n")
	writeFile(t, dir, "b.md", "b\n")
	mustCommit(t, r, "first", "a.md", "b.md")
	writeFile(t, dir, "i.md", "intent\n")
	git(t, dir, "add", "-N", "i.md") // intent-to-add: extended flag, version 3
	writeFile(t, dir, "a.md", "A\n")
	mustCommit(t, r, "v3", "a.md")
	if out := git(t, dir, "status", "--porcelain"); out != " A i.md\n" {
		t.Fatalf("status: %q", out)
	}
	checkFsck(t, dir)
	mustCommit(t, r, "commit the intent", "i.md")
	checkConsistent(t, dir)
}

func TestMissingIndexWithHead(t *testing.T) {
	r, dir := newRepo(t)
	writeFile(t, dir, "a.md", "a\n")
	writeFile(t, dir, "d/b.md", "b\n")
	mustCommit(t, r, "first", "a.md", "d/b.md")
	os.Remove(filepath.Join(dir, ".git", "index"))
	writeFile(t, dir, "a.md", "A\n")
	mustCommit(t, r, "second", "a.md")
	if out := git(t, dir, "status", "--porcelain"); out != "" {
		t.Fatalf("status: %q", out)
	}
	checkFsck(t, dir)
	if out := git(t, dir, "ls-files"); out != "a.md\nd/b.md\n" {
		t.Fatalf("ls-files: %q", out)
	}
}

func TestLongPathAndManyEntries(t *testing.T) {
	r, dir := newRepo(t)
	long := strings.Repeat("x", 120) + "/" + strings.Repeat("y", 200) + "/" + strings.Repeat("z", 200) + ".md"
	writeFile(t, dir, long, "long\n")
	var paths []string
	for i := 0; i < 300; i++ {
		p := filepath.ToSlash(filepath.Join("n", strings.Repeat("k", i%7), "f"+strings.Repeat("z", i%13)+".md"))
		if i%7 == 0 {
			p = "n/f" + strings.Repeat("z", i%13) + "-" + string(rune('a'+i%26)) + ".md"
		}
		writeFile(t, dir, p, p)
		paths = append(paths, p)
	}
	mustCommit(t, r, "many", append(paths, long)...)
	checkConsistent(t, dir)
	writeFile(t, dir, long, "longer\n")
	mustCommit(t, r, "long again", long)
	checkConsistent(t, dir)
}

func TestCacheTreeKept(t *testing.T) {
	r, dir := newRepo(t)
	for _, p := range []string{"a/1.md", "a/2.md", "b/c/3.md", "b/4.md", "top.md"} {
		writeFile(t, dir, p, p+"\n")
	}
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "cli") // writes a fully valid TREE
	countValid := func() (valid, all int) {
		var walk func(n *ctNode)
		walk = func(n *ctNode) {
			all++
			if n.count >= 0 {
				valid++
			}
			for _, c := range n.children {
				walk(c)
			}
		}
		if ct := readCacheTree(t, filepath.Join(dir, ".git", "index")); ct != nil {
			walk(ct)
		}
		return
	}
	if v, a := countValid(); v != 4 || a != 4 {
		t.Fatalf("after git commit: %d of %d nodes valid", v, a)
	}
	steps := []struct {
		name  string
		do    func()
		paths []string
		valid int
	}{
		{"modify nested", func() { writeFile(t, dir, "b/c/3.md", "changed\n") }, []string{"b/c/3.md"}, 4},
		{"add in existing dir", func() { writeFile(t, dir, "a/5.md", "new\n") }, []string{"a/5.md"}, 4},
		{"delete in existing dir", func() { os.Remove(filepath.Join(dir, "a/1.md")) }, []string{"a/1.md"}, 4},
		{"new directory", func() { writeFile(t, dir, "d/e/6.md", "new\n") }, []string{"d/e/6.md"}, 3},
	}
	for _, s := range steps {
		s.do()
		mustCommit(t, r, s.name, s.paths...)
		checkConsistent(t, dir)
		if v, _ := countValid(); v != s.valid {
			t.Errorf("%s: %d valid nodes, want %d", s.name, v, s.valid)
		}
	}
	// git's own commit after ours uses and repairs the cache-tree.
	writeFile(t, dir, "b/4.md", "by git\n")
	git(t, dir, "commit", "-q", "-am", "cli again")
	checkConsistent(t, dir)
	if out := git(t, dir, "diff-tree", "--no-commit-id", "-r", "--name-only", "HEAD"); out != "b/4.md\n" {
		t.Fatalf("git's commit changed %q", out)
	}
	// A staged change plus write-tree makes a valid node that differs from
	// HEAD: our commit in that directory must invalidate it, not patch it.
	writeFile(t, dir, "a/2.md", "staged\n")
	git(t, dir, "add", "a/2.md")
	git(t, dir, "write-tree")
	writeFile(t, dir, "a/5.md", "ours\n")
	mustCommit(t, r, "ours beside staged", "a/5.md")
	checkCacheTree(t, dir)
	if out := git(t, dir, "status", "--porcelain"); out != "M  a/2.md\n" {
		t.Fatalf("status: %q", out)
	}
	git(t, dir, "commit", "-q", "-m", "cli commits the staged one")
	checkConsistent(t, dir)
	if out := git(t, dir, "show", "--format=", "--name-only", "HEAD"); out != "a/2.md\n" {
		t.Fatalf("git's commit: %q", out)
	}
}

func TestSkipWorktreeRefused(t *testing.T) {
	r, dir := newRepo(t)
	writeFile(t, dir, "a.md", "a\n")
	mustCommit(t, r, "first", "a.md")
	git(t, dir, "update-index", "--skip-worktree", "a.md")
	os.Remove(filepath.Join(dir, "a.md"))
	if _, err := r.Commit(CommitRequest{Paths: []string{"a.md"}, Message: "m", Author: agent}); !errors.Is(err, ErrInvalidPath) {
		t.Fatalf("skip-worktree path: %v", err)
	}
}

// Several Repos (as several processes would) and several goroutines on one
// Repo commit at once: index.lock serializes them, nothing is lost.
func TestConcurrentWriters(t *testing.T) {
	_, dir := newRepo(t)
	const writers, each = 4, 8
	errs := make(chan error, writers*each)
	var wg sync.WaitGroup
	shared, _ := Open(dir)
	for w := 0; w < writers; w++ {
		r := shared
		if w%2 == 0 {
			r, _ = Open(dir)
		}
		wg.Add(1)
		go func(w int, r *Repo) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				p := fmt.Sprintf("w%d/n%d.md", w, i)
				if err := os.MkdirAll(filepath.Join(dir, fmt.Sprintf("w%d", w)), 0o755); err != nil {
					errs <- err
					return
				}
				if err := os.WriteFile(filepath.Join(dir, p), []byte(p), 0o644); err != nil {
					errs <- err
					return
				}
				if _, err := r.Commit(CommitRequest{Paths: []string{p}, Message: "add " + p, Author: agent}); err != nil {
					errs <- fmt.Errorf("%s: %w", p, err)
				}
			}
		}(w, r)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	checkConsistent(t, dir)
	if n := strings.Count(git(t, dir, "log", "--format=%s"), "\n"); n != writers*each {
		t.Fatalf("%d commits, want %d", n, writers*each)
	}
	if n := strings.Count(git(t, dir, "ls-files"), "\n"); n != writers*each {
		t.Fatalf("%d files, want %d", n, writers*each)
	}
}

func TestFsyncBarrier(t *testing.T) {
	r, dir := newRepo(t)
	r.syncfs = false // the non-Linux barrier: concurrent fsyncs
	writeFile(t, dir, "a/b.md", "b\n")
	mustCommit(t, r, "first", "a/b.md")
	writeFile(t, dir, "a/b.md", "c\n")
	writeFile(t, dir, "x/y/z.md", "z\n")
	mustCommit(t, r, "second", "a/b.md", "x/y/z.md")
	checkConsistent(t, dir)
}
