package vault

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
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

// Clearing a state file kept in place: one of a block at most is blanked
// in place (no file made, no block freed); a larger one has an empty file
// renamed over it instead of being truncated (which would free its blocks
// on the operation's path). Either then reads as absent, and the next write
// in place reads back.
func TestClearStateKeepsBlocksOffThePath(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	p := filepath.Join(v.Root, filepath.FromSlash(config.StateDir), "marker")
	for _, c := range []struct {
		name    string
		content string
		inPlace bool
	}{
		{"small", `{"at":"one"}`, true},
		{"a block", `{"at":"` + strings.Repeat("x", blankInPlaceMax-10) + `"}`, true},
		{"large", `{"at":"` + strings.Repeat("x", blankInPlaceMax) + `"}`, false},
	} {
		if err := v.writeStateInPlace("marker", []byte(c.content)); err != nil {
			t.Fatal(err)
		}
		before := inode(t, p)
		v.clearState("marker")
		if _, err := v.readStateInPlace("marker"); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s: after clearState: %v, want absent", c.name, err)
		}
		b, _ := os.ReadFile(p)
		if c.inPlace && (inode(t, p) != before || len(b) != len(c.content) || strings.TrimSpace(string(b)) != "") {
			t.Errorf("%s: not blanked in place: %d bytes %.20q, inode changed %v", c.name, len(b), b, inode(t, p) != before)
		}
		if !c.inPlace && (inode(t, p) == before || len(b) != 0) {
			t.Errorf("%s: clearState truncated the file in place", c.name)
		}
		v.Freer().Wait()
		if err := v.writeStateInPlace("marker", []byte(`{"at":"two"}`)); err != nil {
			t.Fatal(err)
		}
		if b, err := v.readStateInPlace("marker"); err != nil || string(b) != `{"at":"two"}` {
			t.Fatalf("%s: read back %q, %v", c.name, b, err)
		}
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
