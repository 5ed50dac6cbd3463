//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package guard

import (
	"os"
	"path/filepath"
	"testing"
)

// A note replaced by another file of the same size and modification time
// (an editor's save by rename, a forged note with its timestamps put back)
// has another identity, so the cached facts of the old note are not used.
func TestReplacedNoteWithSameSizeAndTimeInvalidatesTheCache(t *testing.T) {
	f := newFixture(t)
	saveFacts(t, f)
	note := filepath.Join(f.root, "demo", "session-current-state.md")
	fi, err := os.Stat(note)
	if err != nil {
		t.Fatal(err)
	}
	old, _ := os.ReadFile(note)
	forged := []byte(string(old[:len(old)-1]) + "X") // same size
	tmp := note + ".tmp"
	if err := os.WriteFile(tmp, forged, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(tmp, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, note); err != nil {
		t.Fatal(err)
	}
	if fi2, _ := os.Stat(note); fi2.Size() != fi.Size() || !fi2.ModTime().Equal(fi.ModTime()) {
		t.Fatal("the forged note differs in size or time: the test proves nothing")
	}
	if _, ok := Load(f.root, "demo"); ok {
		t.Error("the cache of the replaced note was used")
	}
}
