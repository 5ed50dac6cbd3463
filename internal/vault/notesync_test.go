package vault

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fsyncVault is a test vault whose commits fsync the notes themselves (the
// durability whose barrier does not cover the work tree).
func fsyncVault(t *testing.T) *Vault {
	v := newVault(t)
	v.Config.Durability = "fsync"
	v.hist = nil
	return v
}

// A note's fsync runs beside the commit's own work, and the commit waits
// for it: nothing is visible until the note is durable.
func TestCommitWaitsForTheNotesFsync(t *testing.T) {
	t.Parallel()
	v := fsyncVault(t)
	before := head(t, v)
	var headDuringSync string
	v.syncNote = func(f *os.File) error {
		time.Sleep(50 * time.Millisecond) // the commit's work is done by now
		headDuringSync, _ = gitTry(v.Root, "rev-parse", "HEAD")
		return f.Sync()
	}
	mustTransact(t, v, writeOp("n.md", "one\n"))
	if headDuringSync != before+"\n" && headDuringSync != before {
		t.Fatalf("HEAD moved to %s while the note was being fsynced", headDuringSync)
	}
	if head(t, v) == before || gitStatus(t, v) != "" {
		t.Fatalf("the operation did not commit cleanly: %s", gitStatus(t, v))
	}
}

// A note whose fsync fails fails its operation: no commit, the note as it
// was, the error naming the note.
func TestFailedNoteFsyncCommitsNothing(t *testing.T) {
	t.Parallel()
	v := fsyncVault(t)
	mustTransact(t, v, writeOp("n.md", "one\n"))
	before := head(t, v)
	eio := errors.New("input/output error")
	v.syncNote = func(*os.File) error { return eio }
	_, err := v.Transact(writeOp("n.md", "two\n"))
	if !errors.Is(err, eio) || !strings.Contains(err.Error(), "n.md") {
		t.Fatalf("err = %v, want the fsync's, naming n.md", err)
	}
	if b, _ := os.ReadFile(filepath.Join(v.Root, "n.md")); string(b) != "one\n" {
		t.Fatalf("n.md holds %q after the failed operation, want %q", b, "one\n")
	}
	if head(t, v) != before || gitStatus(t, v) != "" {
		t.Fatalf("HEAD or the work tree changed: %s", gitStatus(t, v))
	}
}
