//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package notecache

import (
	"os"
	"path/filepath"
	"testing"
)

// A file rewritten in place to the same size, its modification time then
// set back to what it was (touch -r, a tool that keeps times), is seen:
// its change time moved. (Where stat has no change time, as on Windows,
// size and modification time alone identify a version: see
// guard.StatIdentity.)
func TestInPlaceRewriteWithTimeSetBackIsSeen(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.md")
	write(t, p, "status: pending\n")
	old := age(t, p)
	c, r := New[string](), &reader{}
	get(t, c, p, r)
	get(t, c, p, r)
	if r.count() != 1 {
		t.Fatalf("read %d times before the rewrite, want once", r.count())
	}
	write(t, p, "status: blocked\n")
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	if got := get(t, c, p, r); got != "status: blocked\n" {
		t.Fatalf("after the rewrite got %q", got)
	}
}
