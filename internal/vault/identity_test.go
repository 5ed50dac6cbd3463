package vault

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A file renamed over a note the engine holds is told from the held one by
// its identity (device and inode, or volume and file index), on every
// system: an editor's save can have the same size and modification time,
// and the write path must still know the note is no longer the file it
// checked (a swap back, the settle after a swap, a killed process's git
// lock). Without Linux's fstat the identity was left out, and every file
// was the held one.
func TestIdentityTellsAFileRenamedOverTheNote(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	note := filepath.Join(dir, "n.md")
	if err := os.WriteFile(note, []byte("same\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := holdFile(note, "n.md")
	if err != nil {
		t.Fatal(err)
	}
	defer h.close()
	if !holds(note, h.f) {
		t.Fatal("the held note is not the file at its path")
	}
	if h.id.ino == 0 && h.id.dev == 0 {
		t.Error("the held note has no identity")
	}
	// Theirs: the same bytes, the same modification time.
	theirs := filepath.Join(dir, ".n.md.tmp")
	if err := os.WriteFile(theirs, []byte("same\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mt := time.Unix(0, h.id.mtime)
	if err := os.Chtimes(theirs, mt, mt); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(theirs, note); err != nil {
		t.Fatal(err)
	}
	if holds(note, h.f) {
		t.Error("a file renamed over the note is taken for the held one")
	}
	id, isReg, err := lstatID(note)
	if err != nil || !isReg {
		t.Fatalf("lstat: %v %v", isReg, err)
	}
	if id == h.id || id.sameContent(h.id) {
		t.Errorf("the renamed file has the held file's identity: %+v", id)
	}
	// A second name of the held file is the held file.
	if err := os.Link(note, filepath.Join(dir, "other")); err != nil {
		t.Fatal(err)
	}
	if holds(filepath.Join(dir, "other"), h.f) {
		t.Error("a second name of the renamed file is taken for the held one")
	}
}

// exchange leaves the new version at the note's path and the replaced one
// at the temporary path, with their identities, whichever way the system
// swaps (renameat2, renamex_np, or link and rename); renameNoReplace
// refuses a path that exists.
func TestExchangeAndRenameNoReplace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tmp, note := filepath.Join(dir, "tmp"), filepath.Join(dir, "n.md")
	os.WriteFile(tmp, []byte("new\n"), 0o644)
	os.WriteFile(note, []byte("old\n"), 0o644)
	oldID, _, _ := lstatID(note)
	newID, _, _ := lstatID(tmp)
	if err := exchange(tmp, note); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(note); string(b) != "new\n" {
		t.Errorf("the note holds %q", b)
	}
	if b, _ := os.ReadFile(tmp); string(b) != "old\n" {
		t.Errorf("the temporary path holds %q", b)
	}
	if id, _, _ := lstatID(note); id.ino != newID.ino || id.dev != newID.dev {
		t.Error("the note is not the new version's file")
	}
	if id, _, _ := lstatID(tmp); id.ino != oldID.ino || id.dev != oldID.dev {
		t.Error("the temporary path is not the replaced file")
	}
	other := filepath.Join(dir, "other")
	os.WriteFile(other, []byte("other\n"), 0o644)
	if err := renameNoReplace(other, note); !errors.Is(err, os.ErrExist) {
		t.Errorf("renaming over an existing note: %v", err)
	}
	if b, _ := os.ReadFile(note); string(b) != "new\n" {
		t.Errorf("a refused rename changed the note: %q", b)
	}
	if err := renameNoReplace(other, filepath.Join(dir, "fresh.md")); err != nil {
		t.Errorf("renaming to a free path: %v", err)
	}
}
