package vault

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/sessionvault/sessionvault/internal/config"
)

// inode returns the inode number of the file at p.
func inode(t *testing.T, p string) uint64 {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

// Clearing a state file kept in place renames an empty file over it
// instead of truncating it (which would free its blocks on the
// operation's path): it then reads as absent, and the next write in place
// reads back.
func TestClearStateReplacesTheFile(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	p := filepath.Join(v.Root, filepath.FromSlash(config.StateDir), "marker")
	if err := v.writeStateInPlace("marker", []byte(`{"at":"one"}`)); err != nil {
		t.Fatal(err)
	}
	before := inode(t, p)
	v.clearState("marker")
	if _, err := v.readStateInPlace("marker"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("after clearState: %v, want absent", err)
	}
	if inode(t, p) == before {
		t.Fatal("clearState truncated the file in place")
	}
	v.Freer().Wait()
	if err := v.writeStateInPlace("marker", []byte(`{"at":"two"}`)); err != nil {
		t.Fatal(err)
	}
	if b, err := v.readStateInPlace("marker"); err != nil || string(b) != `{"at":"two"}` {
		t.Fatalf("read back %q, %v", b, err)
	}
	v.clearState("missing") // nothing there: nothing made
	if _, err := os.Lstat(filepath.Join(filepath.Dir(p), "missing")); err == nil {
		t.Fatal("clearState made a file that was not there")
	}
}

// An operation holds what it replaces with the vault's Freer: the state
// files it rewrites, and the git index and ref (history's own test,
// TestCommitHoldsTheFilesItReplaces, checks those: the state files alone
// reach this bound).
func TestOperationHoldsWhatItReplaces(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	before := v.Freer().Held()
	mustTransact(t, v, writeOp("n.md", "one\n"))
	if n := v.Freer().Held() - before; n < 3 {
		t.Fatalf("the operation held %d files, want at least 3 (index, ref, a state file)", n)
	}
	v.Freer().Wait()
}
