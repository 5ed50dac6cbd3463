//go:build unix

package vault

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runKilled runs the operation s describes in a child process that is
// killed at s.At (s.Dir is v's folder).
func runKilled(t *testing.T, v *Vault, s killSpec) {
	t.Helper()
	s.Dir = v.Root
	spec, _ := json.Marshal(s)
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), killChildEnv+"="+string(spec))
	out, err := child.CombinedOutput()
	if ws, ok := child.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the child was not killed: %v\n%s", err, out)
	}
}

// opCommits counts the commits of HEAD's history whose subject starts with
// prefix.
func opCommits(t *testing.T, v *Vault, prefix string) int {
	t.Helper()
	n := 0
	for _, s := range strings.Split(gitT(t, v.Root, "log", "--format=%s"), "\n") {
		if strings.HasPrefix(s, prefix) {
			n++
		}
	}
	return n
}

// An operation with an id killed right after its commit is finished by the
// next command without a second commit: a retry with its id answers with
// that commit, its line is in the note once, and the vault is clean.
func TestKilledAfterItsCommitIsNotCommittedTwice(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	mustTransact(t, v, writeOp("n.md", "start\n"))
	runKilled(t, v, killSpec{At: "commit", OpID: "op-k", Rel: "n.md", Line: "- engine ^u-1"})
	made := head(t, v)
	if got := gitT(t, v.Root, "log", "-1", "--format=%(trailers:key=Op-Id,valueonly)"); got != "op-k" {
		t.Fatalf("HEAD is not the killed operation's commit (Op-Id %q)", got)
	}
	if _, err := v.readStateInPlace(journalName); err != nil {
		t.Fatalf("the killed operation left no journal: %v", err)
	}
	ran := false
	res, rec, err := v.TransactOnce("op-k", func(tx *Tx) (Change, error) { ran = true; return Change{}, nil })
	if err != nil || !rec.Repeat || ran || res.Commit != made {
		t.Fatalf("retry: %+v, %+v, %v (ran %v); want a repeat answering %s", res, rec, err, ran, made)
	}
	if got := readNote(t, v, "n.md"); got != "start\n- engine ^u-1\n" {
		t.Errorf("n.md = %q", got)
	}
	if n := opCommits(t, v, "append:"); n != 1 {
		t.Errorf("%d commits of the operation, want 1", n)
	}
	if b, _ := v.readStateInPlace(journalName); len(b) != 0 {
		t.Errorf("the journal is still there: %s", b)
	}
	if next := mustTransact(t, v, entryOp("n.md", "- engine ^u-2")); next.PersonCommit != "" {
		t.Error("the next operation committed the recovered note as a person's edit")
	}
	if st := gitStatus(t, v); st != "" {
		t.Errorf("git status:\n%s", st)
	}
}

// Without an id, an operation killed right after its commit is recognised
// by HEAD holding every note as its journal wrote it: the next operation
// finishes it without a second commit.
func TestKilledAfterItsCommitWithoutAnID(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	mustTransact(t, v, writeOp("n.md", "start\n"))
	runKilled(t, v, killSpec{At: "commit", Rel: "n.md", Line: "- engine ^u-1"})
	mustTransact(t, v, writeOp("other.md", "x\n"))
	if n := opCommits(t, v, "append:"); n != 1 {
		t.Errorf("%d commits of the killed operation, want 1", n)
	}
	if got := readNote(t, v, "n.md"); got != "start\n- engine ^u-1\n" {
		t.Errorf("n.md = %q", got)
	}
	if b, _ := v.readStateInPlace(journalName); len(b) != 0 {
		t.Errorf("the journal is still there: %s", b)
	}
	if st := gitStatus(t, v); st != "" {
		t.Errorf("git status:\n%s", st)
	}
}

// An operation killed with its note in place but not committed is rolled
// forward by the next operation: committed once, marked Recovered, a retry
// of its id answered with that commit; the temporary files killed
// processes left over a minute ago are cleaned up, newer ones not.
func TestKilledBeforeItsCommitIsRolledForward(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	mustTransact(t, v, writeOp("n.md", "start\n"))
	old := keptAside(t, v, "stray.old", "x")
	fresh := keptAside(t, v, "stray.fresh", "x")
	tmp := filepath.Join(v.Root, ".sessionvault", "state", "tmp")
	past := time.Now().Add(-2 * time.Minute)
	if err := os.Chtimes(filepath.Join(tmp, old), past, past); err != nil {
		t.Fatal(err)
	}
	runKilled(t, v, killSpec{At: "swap", OpID: "op-s", Rel: "n.md", Line: "- engine ^u-1"})
	mustTransact(t, v, writeOp("other.md", "x\n"))
	recovered, err := v.FindCommit("Op-Id", "op-s")
	if err != nil || recovered == "" {
		t.Fatalf("no commit of the killed operation: %v", err)
	}
	if got := gitT(t, v.Root, "log", "-1", "--format=%(trailers:key=Recovered,valueonly)", recovered); got != "true" {
		t.Errorf("the recovered commit's Recovered trailer: %q", got)
	}
	res, rec, err := v.TransactOnce("op-s", func(tx *Tx) (Change, error) {
		t.Error("the recovered operation ran again")
		return Change{}, nil
	})
	if err != nil || !rec.Repeat || res.Commit != recovered {
		t.Fatalf("retry: %+v, %+v, %v; want a repeat answering %s", res, rec, err, recovered)
	}
	if n := opCommits(t, v, "append:"); n != 1 {
		t.Errorf("%d commits of the killed operation, want 1", n)
	}
	if got := readNote(t, v, "n.md"); got != "start\n- engine ^u-1\n" {
		t.Errorf("n.md = %q", got)
	}
	if _, err := os.Stat(filepath.Join(tmp, old)); err == nil {
		t.Error("a stray file over a minute old was kept")
	}
	if _, err := os.Stat(filepath.Join(tmp, fresh)); err != nil {
		t.Error("a recent stray file was removed")
	}
	for _, l := range []string{"index.lock", "HEAD.lock", "refs/heads/main.lock"} {
		if _, err := os.Stat(filepath.Join(v.Root, ".git", l)); err == nil {
			t.Errorf("%s was left", l)
		}
	}
	if st := gitStatus(t, v); st != "" {
		t.Errorf("git status:\n%s", st)
	}
}

// A sessionvault killed between taking git's index lock and recording it
// left an index.lock made after its commit marker: once it has outlasted
// the wait for another git process, the next operation takes it over, and
// removes the HEAD.lock that process left; the operation then commits.
func TestIndexLockOfAKilledProcessIsTakenOver(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	at := time.Now().Add(-3 * time.Second)
	if err := v.writeStateInPlace(commitMarker, []byte(at.UTC().Format(time.RFC3339Nano)+"\n")); err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{"index.lock", "HEAD.lock"} {
		p := filepath.Join(v.Root, ".git", l)
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, at.Add(time.Second), at.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	res := mustTransact(t, v, writeOp("n.md", "x\n"))
	if res.Commit == "" || res.Commit != head(t, v) {
		t.Fatalf("the operation did not commit: %+v", res)
	}
	for _, l := range []string{"index.lock", "HEAD.lock"} {
		if _, err := os.Stat(filepath.Join(v.Root, ".git", l)); err == nil {
			t.Errorf("%s was left", l)
		}
	}
	if b, _ := v.readStateInPlace(commitMarker); len(b) != 0 {
		t.Errorf("the commit marker is still there: %s", b)
	}
}
