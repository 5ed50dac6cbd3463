package vault

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// replacedCopy returns where the operation under way keeps the file its
// write of rel replaced (its journal names it).
func replacedCopy(t *testing.T, v *Vault, rel string) string {
	t.Helper()
	data, err := v.readStateInPlace(journalName)
	if err != nil {
		t.Fatal(err)
	}
	var j journal
	if err := decodeState(data, &j); err != nil || j.Old[rel] == "" {
		t.Fatalf("journal %s: %v", data, err)
	}
	return filepath.Join(v.Root, ".sessionvault", "state", "tmp", j.Old[rel])
}

// A save that lands in the note just after the engine swapped its new
// version in — into the replaced file, by an editor that had opened it
// before the swap — is merged back into the note and committed as the
// person's, before the engine's commit: neither line is lost.
func TestSaveIntoTheReplacedNoteIsMergedBack(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	mustTransact(t, v, writeOp("n.md", "# N\n\nstart\n"))
	v.afterSwap = func() {
		v.afterSwap = nil
		f, err := os.OpenFile(replacedCopy(t, v, "n.md"), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Error(err)
			return
		}
		f.WriteString("person's save\n")
		f.Close()
	}
	res := mustTransact(t, v, entryOp("n.md", "- engine ^u-1"))
	got := readNote(t, v, "n.md")
	for _, line := range []string{"start\n", "- engine ^u-1\n", "person's save\n"} {
		if strings.Count(got, line) != 1 {
			t.Errorf("%q is in the note %d times, want once:\n%s", line, strings.Count(got, line), got)
		}
	}
	if b, _ := v.Committed("n.md"); string(b) != got {
		t.Errorf("HEAD's n.md = %q, the note %q", b, got)
	}
	if res.PersonCommit == "" {
		t.Fatal("the person's save has no commit of its own")
	}
	if b, err := v.ReadAt(res.PersonCommit, "n.md"); err != nil || string(b) != "# N\n\nstart\nperson's save\n" {
		t.Errorf("the person's commit holds %q, %v; want their save without the engine's line", b, err)
	}
	if st := gitStatus(t, v); st != "" {
		t.Errorf("git status:\n%s", st)
	}
	if gs := v.loadGuards(); len(gs) != 1 || gs[0].Line != "person's save\n" {
		t.Errorf("guards %+v: want the merged line guarded", gs)
	}
}

// A save by rename over the note just after the swap (an editor's atomic
// save of a buffer read before the operation) keeps the person's text, and
// the engine's line is merged into it; the person's save is committed as
// theirs.
func TestRenameOverTheNoteAfterTheSwapIsMerged(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	mustTransact(t, v, writeOp("n.md", "# N\n\nstart\n"))
	stale := readNote(t, v, "n.md")
	v.afterSwap = func() {
		v.afterSwap = nil
		tmp := filepath.Join(v.Root, ".n.md.swp")
		os.WriteFile(tmp, []byte(stale+"person's line\n"), 0o644)
		if err := os.Rename(tmp, filepath.Join(v.Root, "n.md")); err != nil {
			t.Error(err)
		}
	}
	res := mustTransact(t, v, entryOp("n.md", "- engine ^u-1"))
	got := readNote(t, v, "n.md")
	for _, line := range []string{"start\n", "- engine ^u-1\n", "person's line\n"} {
		if strings.Count(got, line) != 1 {
			t.Errorf("%q is in the note %d times, want once:\n%s", line, strings.Count(got, line), got)
		}
	}
	if b, _ := v.Committed("n.md"); string(b) != got {
		t.Errorf("HEAD's n.md = %q, the note %q", b, got)
	}
	if res.PersonCommit == "" {
		t.Error("the person's save has no commit of its own")
	}
	if st := gitStatus(t, v); st != "" {
		t.Errorf("git status:\n%s", st)
	}
}

// The journal names contents by their SHA-256 and survives a round trip
// through JSON with its file identities.
func TestJournalAndBaseRecordsRoundTrip(t *testing.T) {
	t.Parallel()
	if got := sum([]byte("abc")); got != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Errorf("sum(abc) = %s", got)
	}
	id := fileID{dev: 1, ino: 2, size: 3, mtime: 4, ctime: 5}
	b, err := json.Marshal(map[string]baseRec{"n.md": {Commit: "c", ID: id}})
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]baseRec
	if err := json.Unmarshal(b, &back); err != nil || back["n.md"].ID != id {
		t.Errorf("round trip: %+v, %v", back, err)
	}
	var bad fileID
	if err := json.Unmarshal([]byte("[1,2,3]"), &bad); err == nil {
		t.Error("a file id of three numbers was accepted")
	}
}

// A save renamed over the note between the check and the swap is merged
// into the note, not given back by undoing the swap: the engine's version
// was in the note a moment, and the person's next save, made from it,
// would drop the file given back.
func TestRenameBeforeTheSwapSurvivesASaveMadeFromTheEngineVersion(t *testing.T) {
	v := newVault(t)
	mustTransact(t, v, writeOp("n.md", "# N\n\nstart\n"))
	note := filepath.Join(v.Root, "n.md")
	save := func(text string) {
		tmp := filepath.Join(v.Root, ".n.md.swp")
		if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
			t.Error(err)
		}
		if err := os.Rename(tmp, note); err != nil {
			t.Error(err)
		}
	}
	var seen string // what the person's editor read while the engine's version was in place
	saves := 0
	v.beforeSwap = func() {
		saves++
		switch saves {
		case 1: // the first save: lands between the check and the swap
			cur, _ := os.ReadFile(note)
			save(string(cur) + "person's line 1\n")
		case 2: // the next save, made from what the editor read
			v.beforeSwap = nil
			save(seen + "person's line 2\n")
		}
	}
	afterPlace = func(*Vault) {
		if seen == "" {
			b, _ := os.ReadFile(note)
			seen = string(b)
		}
	}
	t.Cleanup(func() { afterPlace = nil })
	mustTransact(t, v, entryOp("n.md", "- engine ^u-1"))
	afterPlace = nil
	mustTransact(t, v, entryOp("n.md", "- engine ^u-2"))
	got := readNote(t, v, "n.md")
	for _, line := range []string{"start\n", "- engine ^u-1\n", "- engine ^u-2\n", "person's line 1\n", "person's line 2\n"} {
		if strings.Count(got, line) != 1 {
			t.Errorf("%q is in the note %d times, want once:\n%s", line, strings.Count(got, line), got)
		}
	}
	if st := gitStatus(t, v); st != "" {
		t.Errorf("git status:\n%s", st)
	}
}

// Saves renamed over the note before every swap outlast an operation's
// merges: the replaced file its last merge leaves is kept and recorded, and
// a later operation merges it — also when the write that ran out was the
// one that merged an earlier operation's kept file (rescueOrphans).
func TestSavesBeforeEverySwapAreAllKept(t *testing.T) {
	v := newVault(t)
	mustTransact(t, v, writeOp("n.md", "# N\n\nstart\n"))
	note := filepath.Join(v.Root, "n.md")
	var lines []string
	v.beforeSwap = func() {
		line := "person's line " + strconv.Itoa(len(lines)+1) + "\n"
		cur, _ := os.ReadFile(note)
		tmp := filepath.Join(v.Root, ".n.md.swp")
		if err := os.WriteFile(tmp, append(cur, line...), 0o644); err != nil {
			t.Error(err)
		}
		if err := os.Rename(tmp, note); err != nil {
			t.Error(err)
		}
		lines = append(lines, line)
	}
	mustTransact(t, v, entryOp("n.md", "- engine ^u-1"))
	mustTransact(t, v, entryOp("n.md", "- engine ^u-2")) // merges the kept file, and runs out again
	v.beforeSwap = nil
	mustTransact(t, v, entryOp("n.md", "- engine ^u-3"))
	if len(lines) <= 2*maxMerges {
		t.Fatalf("%d saves: the merges did not run out", len(lines))
	}
	got := readNote(t, v, "n.md")
	for _, line := range append(lines, "- engine ^u-1\n", "- engine ^u-2\n", "- engine ^u-3\n") {
		if n := strings.Count(got, line); n != 1 {
			t.Errorf("%q is in the note %d times, want once", line, n)
		}
	}
	if t.Failed() {
		t.Logf("the note:\n%s", got)
	}
}

// Lines someone added to a replaced copy of a note, which the note already
// holds elsewhere (their editor read the copy before the swap and saved
// them again), are merged once, not twice; the lines only the copy has
// still come in.
func TestAReplacedCopysLinesAreNotAddedTwice(t *testing.T) {
	w := &writer{}
	ancestor := "# N\n\n## Updates\n- e1 ^u-1\n\n## Notes\np1\nX\n"
	copyOf := ancestor + "p2\np3\np5\n"
	note := "# N\n\n## Updates\n- e1 ^u-1\n- e2 ^u-2\n\n## Notes\np1\np2\np3\nX\np4\n"
	got := string(w.mergeCopy([]byte(ancestor), []byte(copyOf), []byte(note)))
	for _, line := range []string{"- e1 ^u-1\n", "- e2 ^u-2\n", "p1\n", "p2\n", "p3\n", "p4\n", "p5\n", "X\n"} {
		if n := strings.Count(got, line); n != 1 {
			t.Errorf("%q is in the merge %d times, want once:\n%s", line, n, got)
		}
	}
}

// An operation that fails after its swap (its settle could not read the
// note) keeps the file a save renamed over the note before the swap, with
// what the note held then: the next operation merges the person's line
// once, and nothing else of that file comes back (the person's edit of a
// line it holds stands).
func TestAFailedOperationKeepsARenamedSave(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	mustTransact(t, v, writeOp("n.md", "# N\n\nstart\nold line\n"))
	mustTransact(t, v, writeOp("n.md", "# N\n\nstart\n")) // "old line" is in no version the next operations merge against
	note := filepath.Join(v.Root, "n.md")
	saveBeforeTheSwap(t, v, "n.md", "person's line\n")
	v.afterSwap = func() { // the note is a folder a moment: the settle cannot read it
		v.afterSwap = nil
		if err := os.Rename(note, note+".away"); err != nil {
			t.Error(err)
		}
		if err := os.Mkdir(note, 0o755); err != nil {
			t.Error(err)
		}
	}
	if _, err := v.Transact(entryOp("n.md", "- engine ^u-1")); err == nil {
		t.Fatal("the operation succeeded with a folder where its note was")
	}
	if err := os.Remove(note); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(note+".away", note); err != nil {
		t.Fatal(err)
	}
	cur, _ := os.ReadFile(note) // the person edits a line the kept file holds as it was
	if err := os.WriteFile(note, bytes.Replace(cur, []byte("start\n"), []byte("start edited\n"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	mustTransact(t, v, entryOp("n.md", "- engine ^u-2"))
	got := readNote(t, v, "n.md")
	for line, want := range map[string]int{"start\n": 0, "start edited\n": 1, "person's line\n": 1, "- engine ^u-2\n": 1, "old line\n": 0} {
		if n := strings.Count(got, line); n != want {
			t.Errorf("%q is in the note %d times, want %d:\n%s", line, n, want, got)
		}
	}
}

// A failed operation takes back only its own change: a save renamed over
// the note just before the swap, which the settle merged into the engine's
// version, stays in the note (the take-back used to merge against that
// last version and remove the person's line with the engine's).
func TestAFailedOperationKeepsASaveMergedIntoIt(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	mustTransact(t, v, writeOp("n.md", "# N\n\nstart\n"))
	gitT(t, v.Root, "update-index", "--skip-worktree", "n.md") // git refuses the commit
	saveBeforeTheSwap(t, v, "n.md", "person's line\n")
	if _, err := v.Transact(entryOp("n.md", "- engine ^u-1")); err == nil {
		t.Fatal("the operation succeeded though git refuses the path")
	}
	if got := readNote(t, v, "n.md"); got != "# N\n\nstart\nperson's line\n" {
		t.Errorf("after the failed operation the note is %q, want the person's line without the engine's", got)
	}
	gitT(t, v.Root, "update-index", "--no-skip-worktree", "n.md")
	mustTransact(t, v, entryOp("n.md", "- engine ^u-2"))
	got := readNote(t, v, "n.md")
	for line, want := range map[string]int{"person's line\n": 1, "- engine ^u-1\n": 0, "- engine ^u-2\n": 1} {
		if n := strings.Count(got, line); n != want {
			t.Errorf("%q is in the note %d times, want %d:\n%s", line, n, want, got)
		}
	}
	if st := gitStatus(t, v); st != "" {
		t.Errorf("git status:\n%s", st)
	}
}

// saveBeforeTheSwap makes the next swap of v find, just before it, a save
// of rel renamed over the note (as editors save) that adds line.
func saveBeforeTheSwap(t *testing.T, v *Vault, rel, line string) {
	t.Helper()
	note := filepath.Join(v.Root, filepath.FromSlash(rel))
	v.beforeSwap = func() {
		v.beforeSwap = nil
		cur, _ := os.ReadFile(note)
		tmp := filepath.Join(filepath.Dir(note), "."+filepath.Base(note)+".swp")
		os.WriteFile(tmp, append(cur, line...), 0o644)
		if err := os.Rename(tmp, note); err != nil {
			t.Error(err)
		}
	}
}
