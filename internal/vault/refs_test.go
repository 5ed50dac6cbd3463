package vault

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/history"
)

// entryWrite is an operation that writes content to rel with the trailer
// Entry: id.
func entryWrite(rel, content, id string) func(tx *Tx) (Change, error) {
	return func(tx *Tx) (Change, error) {
		return Change{Operation: "update", Summary: id, Session: "s-1", Trailers: map[string]string{"Entry": id}}, tx.Write(rel, []byte(content))
	}
}

// unbornVault is a vault whose branch has no commit yet.
func unbornVault(t *testing.T) *Vault {
	t.Helper()
	dir := t.TempDir()
	if _, err := history.Init(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, ".sessionvault"), 0o755); err != nil {
		t.Fatal(err)
	}
	v, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// A note's history: its versions oldest first with their subjects and
// trailers, counted at any commit; other notes' commits are not in it. A
// note never committed, or a branch with no commit, has none.
func TestPathLog(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	var commits []string
	for i, id := range []string{"u-1", "u-2", "u-3"} {
		commits = append(commits, mustTransact(t, v, entryWrite("n.md", strings.Repeat("x\n", i+1), id)).Commit)
		mustTransact(t, v, writeOp("other.md", id+"\n"))
	}
	log, err := v.PathLog("n.md")
	if err != nil || len(log) != 3 {
		t.Fatalf("PathLog = %+v, %v; want 3 versions", log, err)
	}
	for i, c := range log {
		id := []string{"u-1", "u-2", "u-3"}[i]
		if c.Hash != commits[i] || c.Subject != "update: "+id || c.Trailers["Entry"] != id || c.Trailers["Session"] != "s-1" || c.Time.IsZero() {
			t.Errorf("version %d: %+v", i+1, c)
		}
	}
	for commit, want := range map[string]int{"HEAD": 3, commits[0]: 1, commits[1]: 2} {
		if n, err := v.PathCommitCount(commit, "n.md"); err != nil || n != want {
			t.Errorf("PathCommitCount(%s) = %d, %v; want %d", commit, n, err, want)
		}
	}
	if _, err := v.PathCommitCount("no-such-commit", "n.md"); errs.CodeOf(err) != errs.GitWriteFailed {
		t.Errorf("PathCommitCount of a commit that does not exist: %v", err)
	}
	if log, err := v.PathLog("never.md"); err != nil || len(log) != 0 {
		t.Errorf("a note never committed: %+v, %v", log, err)
	}
	for _, bad := range []func() error{
		func() error { _, err := v.PathLog("../x.md"); return err },
		func() error { _, err := v.PathCommitCount("HEAD", "/etc/passwd"); return err },
	} {
		if err := bad(); errs.CodeOf(err) != errs.PathOutsideVault {
			t.Errorf("a path outside the vault: %v", err)
		}
	}
	u := unbornVault(t)
	if log, err := u.PathLog("n.md"); err != nil || log != nil {
		t.Errorf("an unborn branch: %+v, %v", log, err)
	}
	if c, err := u.FindCommit("Entry", "u-1"); err != nil || c != "" {
		t.Errorf("FindCommit on an unborn branch: %q, %v", c, err)
	}
}

// Annotated tags are listed oldest first under their prefix with the
// commit they name and their message; a lightweight tag or one under
// another prefix is not, and a tag name taken is an error.
func TestTags(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	first := head(t, v)
	second := mustTransact(t, v, writeOp("n.md", "x\n")).Commit
	if err := v.CreateTag("checkpoint/a", first, "the first\n\nwith a body\n"); err != nil {
		t.Fatal(err)
	}
	if err := v.CreateTag("checkpoint/b", second, "the second\n"); err != nil {
		t.Fatal(err)
	}
	if err := v.CreateTag("other/c", second, "elsewhere\n"); err != nil {
		t.Fatal(err)
	}
	gitT(t, v.Root, "tag", "checkpoint/light", second)
	if err := v.CreateTag("checkpoint/a", second, "again\n"); errs.CodeOf(err) != errs.GitWriteFailed {
		t.Errorf("a tag name taken: %v", err)
	}
	tags, err := v.Tags("checkpoint/")
	if err != nil || len(tags) != 2 {
		t.Fatalf("Tags = %+v, %v; want checkpoint/a and checkpoint/b", tags, err)
	}
	if tags[0].Name != "checkpoint/a" || tags[0].Commit != first || tags[0].Message != "the first\n\nwith a body\n" || tags[0].Time.IsZero() {
		t.Errorf("first tag %+v", tags[0])
	}
	if tags[1].Name != "checkpoint/b" || tags[1].Commit != second {
		t.Errorf("second tag %+v", tags[1])
	}
}

// MergeBase finds the common ancestor of two commits, and "" for commits
// with none.
func TestMergeBase(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	first := head(t, v)
	second := mustTransact(t, v, writeOp("n.md", "x\n")).Commit
	if b, err := v.MergeBase(first, second); err != nil || b != first {
		t.Errorf("MergeBase = %q, %v; want %s", b, err, first)
	}
	orphan := gitT(t, v.Root, "commit-tree", "-m", "unrelated", second+"^{tree}")
	if b, err := v.MergeBase(orphan, second); err != nil || b != "" {
		t.Errorf("commits with no common ancestor: %q, %v", b, err)
	}
}

// ListAt lists a folder's files at a commit (not its subfolders' files);
// a folder the commit lacks has none; a path outside the vault is refused.
func TestListAt(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	for _, rel := range []string{"p/a.md", "p/b.md", "p/sub/c.md", "q/d.md"} {
		mustTransact(t, v, writeOp(rel, rel+"\n"))
	}
	if got, err := v.ListAt("HEAD", "p"); err != nil || !slices.Equal(got, []string{"p/a.md", "p/b.md", "p/sub"}) {
		t.Errorf("ListAt(p) = %q, %v", got, err)
	}
	if got, err := v.ListAt("HEAD", "none"); err != nil || got != nil {
		t.Errorf("a folder not there: %q, %v", got, err)
	}
	if _, err := v.ListAt("HEAD", "../p"); errs.CodeOf(err) != errs.PathOutsideVault {
		t.Errorf("a path outside the vault: %v", err)
	}
}

// FindCommit finds the newest commit carrying a trailer, and "" when none
// does.
func TestFindCommit(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	mustTransact(t, v, entryWrite("n.md", "1\n", "u-1"))
	c2 := mustTransact(t, v, entryWrite("n.md", "2\n", "u-2")).Commit
	mustTransact(t, v, entryWrite("m.md", "1\n", "u-1"))
	last := head(t, v)
	for value, want := range map[string]string{"u-2": c2, "u-1": last, "u-9": ""} {
		if got, err := v.FindCommit("Entry", value); err != nil || got != want {
			t.Errorf("FindCommit(Entry, %s) = %q, %v; want %q", value, got, err, want)
		}
	}
}

// Uncommitted lists what git status shows — modified, added (untracked
// included) and deleted files — under a folder or everywhere; ignored
// files are not listed.
func TestUncommitted(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	mustTransact(t, v, writeOp("p/mod.md", "1\n"))
	mustTransact(t, v, writeOp("p/del.md", "1\n"))
	mustTransact(t, v, writeOp("q/mod.md", "1\n"))
	writeNote(t, v, "p/mod.md", "2\n")
	writeNote(t, v, "q/mod.md", "2\n")
	writeNote(t, v, "p/new.md", "new\n")
	writeNote(t, v, ".sessionvault/state/ignored", "x")
	if err := os.Remove(filepath.Join(v.Root, "p", "del.md")); err != nil {
		t.Fatal(err)
	}
	got, err := v.Uncommitted("p")
	want := []PendingFile{{"deleted", "p/del.md"}, {"modified", "p/mod.md"}, {"added", "p/new.md"}}
	slices.SortFunc(got, func(a, b PendingFile) int { return strings.Compare(a.Path, b.Path) })
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("Uncommitted(p) = %+v, %v; want %+v", got, err, want)
	}
	if all, err := v.Uncommitted(""); err != nil || len(all) != 4 {
		t.Errorf("Uncommitted(\"\") = %+v, %v; want 4 files", all, err)
	}
	if _, err := v.Uncommitted("../p"); errs.CodeOf(err) != errs.PathOutsideVault {
		t.Errorf("a folder outside the vault: %v", err)
	}
	if ch, err := v.ChangedSinceHead([]string{"p/mod.md", "p/del.md", "p/new.md", "q/other.md"}); err != nil || !slices.Equal(ch, []string{"p/mod.md", "p/del.md", "p/new.md"}) {
		t.Errorf("ChangedSinceHead = %q, %v", ch, err)
	}
}

// The read-only views of the history: HEAD, a file as HEAD holds it, the
// log newest first, and how many commits changed a note since a commit.
func TestHistoryViews(t *testing.T) {
	t.Parallel()
	u := unbornVault(t)
	if h, err := u.Head(); h != "" || !errors.Is(err, history.ErrNoCommits) {
		t.Errorf("an unborn branch's HEAD: %q, %v; want \"\" and history.ErrNoCommits", h, err)
	}
	if log, err := u.Log(10); err != nil || log != nil {
		t.Errorf("an unborn branch's log: %+v, %v", log, err)
	}

	v := newVault(t)
	since := head(t, v)
	mustTransact(t, v, writeOp("n.md", "1\n"))
	mustTransact(t, v, writeOp("m.md", "1\n"))
	last := mustTransact(t, v, writeOp("n.md", "2\n")).Commit
	if b, err := v.Committed("n.md"); err != nil || string(b) != "2\n" {
		t.Errorf("Committed(n.md) = %q, %v", b, err)
	}
	if _, err := v.Committed("none.md"); err == nil {
		t.Error("Committed of a file HEAD lacks: no error")
	}
	log, err := v.Log(2)
	if err != nil || len(log) != 2 || log[0].Hash != last {
		t.Errorf("Log(2) = %+v, %v", log, err)
	}
	n, h, ok, err := v.PathChangesSince(since, "n.md", 10)
	if err != nil || !ok || n != 2 || h != last {
		t.Errorf("PathChangesSince = %d, %s, %v, %v; want 2 at %s", n, h, ok, err, last)
	}
	if _, _, ok, err := v.PathChangesSince(since, "n.md", 1); err != nil || ok {
		t.Errorf("PathChangesSince past its limit: ok %v, %v", ok, err)
	}
}
