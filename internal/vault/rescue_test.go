package vault

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// keptAside writes a replaced copy of a note into .sessionvault/state/tmp,
// as the write path keeps one aside, and returns its file name.
func keptAside(t *testing.T, v *Vault, name, content string) string {
	t.Helper()
	dir, err := v.stateDir("tmp")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

// A save that landed in a replaced copy of a note after the operation that
// replaced it had ended is merged into the note by the next operation,
// against the version it replaced (recorded, or the parent of the commit
// that replaced it); a copy no one wrote into is removed; the copies are
// not kept once checked.
func TestLateSaveIntoAReplacedCopyIsMerged(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	mustTransact(t, v, writeOp("n.md", "# N\n\nline 1\n"))
	mustTransact(t, v, writeOp("m.md", "a\n"))
	replacedM := mustTransact(t, v, writeOp("m.md", "a\nb\n")).Commit

	late := keptAside(t, v, "n.md.late", "# N\n\nline 1\nperson's late line\n")
	byCommit := keptAside(t, v, "m.md.late", "a\nlate in m\n")
	untouched := keptAside(t, v, "n.md.untouched", "# N\n\nline 1\n")
	id, _, err := lstatID(filepath.Join(v.Root, ".sessionvault", "state", "tmp", untouched))
	if err != nil {
		t.Fatal(err)
	}
	if err := v.saveOrphans([]orphan{
		{Rel: "n.md", File: late, Ancestor: []byte("# N\n\nline 1\n")},
		{Rel: "m.md", File: byCommit, Commit: replacedM},
		{Rel: "n.md", File: untouched, ID: id},
	}); err != nil {
		t.Fatal(err)
	}

	mustTransact(t, v, writeOp("other.md", "x\n"))
	if got := readNote(t, v, "n.md"); got != "# N\n\nline 1\nperson's late line\n" {
		t.Errorf("n.md = %q, want the late save merged in", got)
	}
	if got := readNote(t, v, "m.md"); strings.Count(got, "late in m\n") != 1 || strings.Count(got, "b\n") != 1 {
		t.Errorf("m.md = %q, want the late line and the engine's both", got)
	}
	for _, f := range []string{late, byCommit, untouched} {
		if _, err := os.Stat(filepath.Join(v.Root, ".sessionvault", "state", "tmp", f)); err == nil {
			t.Errorf("%s is still kept", f)
		}
	}
	for _, rec := range v.loadOrphans() {
		if rec.File == late || rec.File == byCommit || rec.File == untouched {
			t.Errorf("the checked copy %s is still recorded", rec.File)
		}
	}
	// The next operation on the note commits the rescued line as the
	// person's.
	res := mustTransact(t, v, func(tx *Tx) (Change, error) {
		cur, err := tx.Read("n.md")
		return Change{Operation: "append", Summary: "x"}, errorsJoin(err, tx.Write("n.md", append(cur, "engine\n"...)))
	})
	if res.PersonCommit == "" {
		t.Error("the rescued line was not committed as the person's")
	}
	if b, _ := v.Committed("n.md"); string(b) != "# N\n\nline 1\nperson's late line\nengine\n" {
		t.Errorf("HEAD's n.md = %q", b)
	}
}

// A line the engine took from a replaced copy is guarded: a save that drops
// it soon after (an editor saving a buffer read before the line came in)
// gets it back, after the line it followed, and the note is otherwise the
// save's; a guard older than guardTime and seen once is forgotten.
func TestGuardedLineIsPutBack(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	mustTransact(t, v, writeOp("n.md", "# N\n\nline 1\nline 2\n"))
	now := time.Now()
	if err := saveStateList(v, guardsName, []guard{
		{Rel: "n.md", Line: "rescued\n", After: "line 1\n", At: now},
		{Rel: "n.md", Line: "old\n", At: now.Add(-time.Hour), Seen: true},
	}); err != nil {
		t.Fatal(err)
	}
	writeNote(t, v, "n.md", "# N\n\nline 1\nline 2\nsaved\n")
	mustTransact(t, v, writeOp("other.md", "x\n"))
	if got := readNote(t, v, "n.md"); got != "# N\n\nline 1\nrescued\nline 2\nsaved\n" {
		t.Errorf("n.md = %q, want the guarded line back after line 1", got)
	}
	gs := v.loadGuards()
	if len(gs) != 1 || gs[0].Line != "rescued\n" || !gs[0].Seen {
		t.Errorf("guards kept: %+v; want the recent one, seen", gs)
	}
}

// A line put back never makes a note unreadable: a guard whose line would
// break the note's front matter is not applied.
func TestGuardedLineKeepsTheNoteParsing(t *testing.T) {
	t.Parallel()
	if !parsesAsBefore([]byte("not a note"), []byte("whatever")) {
		t.Error("a note that did not parse before is not held to parsing")
	}
	good := []byte("---\ntype: note\n---\nbody\n")
	if parsesAsBefore(good, []byte("---\ntype: [note\n---\nbody\n")) {
		t.Error("a change that breaks the front matter was allowed")
	}
	if at := lineIndex([]byte("xline 1\nline 1\n"), "line 1\n"); at != 8 {
		t.Errorf("lineIndex found a line inside another at %d, want 8", at)
	}
	if at := lineIndex([]byte("a\nb\n"), "c\n"); at != -1 {
		t.Errorf("lineIndex of a missing line = %d", at)
	}
}

// errorsJoin returns the first non-nil error.
func errorsJoin(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
