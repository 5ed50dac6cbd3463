package vault

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessionvault/sessionvault/internal/history"
)

func newVault(t testing.TB) *Vault {
	t.Helper()
	return newVaultIn(t, t.TempDir())
}

// newVaultIn makes a vault in the folder dir (made if missing): a git
// repository with .sessionvault/ and a first commit ignoring its state.
func newVaultIn(t testing.TB, dir string) *Vault {
	t.Helper()
	if _, err := history.Init(dir); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, ".sessionvault"), 0o755)
	v, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Transact(func(tx *Tx) (Change, error) {
		return Change{Operation: "init", Summary: "x"}, tx.Write(".gitignore", []byte(".sessionvault/state/\n"))
	}); err != nil {
		t.Fatal(err)
	}
	return v
}

func appendOp(rel, line string, during func(pass int)) func(tx *Tx) (Change, error) {
	pass := 0
	return func(tx *Tx) (Change, error) {
		pass++
		cur, _ := tx.Read(rel)
		if during != nil {
			during(pass)
		}
		return Change{Operation: "append", Summary: line}, tx.Write(rel, append(cur, []byte(line+"\n")...))
	}
}

// A person's save between the operation's read and its write is not lost:
// the operation runs again on the new content.
func TestEditDuringOperationIsKept(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	note := filepath.Join(v.Root, "n.md")
	if _, err := v.Transact(appendOp("n.md", "engine 1", nil)); err != nil {
		t.Fatal(err)
	}
	_, err := v.Transact(appendOp("n.md", "engine 2", func(pass int) {
		if pass == 1 {
			f, _ := os.OpenFile(note, os.O_APPEND|os.O_WRONLY, 0)
			f.WriteString("person\n")
			f.Close()
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(note)
	if string(got) != "engine 1\nperson\nengine 2\n" {
		t.Fatalf("note = %q", got)
	}
	out, _ := exec.Command("git", "-C", v.Root, "log", "--format=%an|%s").Output()
	if !strings.Contains(string(out), "vault editor|edit: n.md") {
		t.Errorf("the person's edit is not its own commit:\n%s", out)
	}
}

// A note that changes every time the operation reads it: after a few runs
// the operation's change is merged onto the last version, and both the
// person's last save and the engine's line are there, each committed by
// its author.
func TestEndlessEditsAreMerged(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	note := filepath.Join(v.Root, "n.md")
	os.WriteFile(note, []byte("start\n"), 0o644)
	passes := 0
	_, err := v.Transact(appendOp("n.md", "engine", func(pass int) {
		passes = pass
		os.WriteFile(note, []byte("start\n"+strings.Repeat("x", pass)+"\n"), 0o644)
	}))
	if err != nil {
		t.Fatal(err)
	}
	if passes != strictRuns+1 {
		t.Errorf("the operation ran %d times, want %d", passes, strictRuns+1)
	}
	got, _ := os.ReadFile(note)
	if want := "start\n" + strings.Repeat("x", passes) + "\nengine\n"; string(got) != want {
		t.Fatalf("note = %q, want %q", got, want)
	}
	out, _ := exec.Command("git", "-C", v.Root, "log", "-2", "--format=%an|%s").Output()
	if !strings.Contains(string(out), "append: engine") || !strings.Contains(string(out), "vault editor|edit: n.md") {
		t.Errorf("history:\n%s", out)
	}
	if st, _ := exec.Command("git", "-C", v.Root, "status", "--porcelain").Output(); len(st) != 0 {
		t.Errorf("git status: %s", st)
	}
}

func TestCheckPathRefusesEscapes(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"../x.md", "/etc/passwd", "a/../../b", ".git/config", "a//b", "", "a/.hidden/b"} {
		if CheckPath(p) == nil {
			t.Errorf("%q accepted", p)
		}
	}
	for _, p := range []string{"demo/session-current-state.md", "demo/sessions/2026-11-22-session-01.md", ".gitignore", ".sessionvault/config.yaml"} {
		if err := CheckPath(p); err != nil {
			t.Errorf("%q refused: %v", p, err)
		}
	}
}

// What fails after the commit (Change.Committed) does not undo the
// operation: the commit stands and the failure comes back as a warning
// naming the commit.
func TestCommittedFailureIsAWarning(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	res, err := v.Transact(func(tx *Tx) (Change, error) {
		ch := Change{Operation: "append", Summary: "x", Committed: func(Result) error { return os.ErrPermission }}
		return ch, tx.Write("n.md", []byte("engine\n"))
	})
	if err != nil {
		t.Fatal(err)
	}
	head, _ := exec.Command("git", "-C", v.Root, "rev-parse", "HEAD").Output()
	if res.Commit == "" || strings.TrimSpace(string(head)) != res.Commit {
		t.Fatalf("commit %q, HEAD %s", res.Commit, head)
	}
	if len(res.Warnings) != 1 || res.Warnings[0] != "committed "+res.Commit+": permission denied" {
		t.Errorf("warnings = %q", res.Warnings)
	}
}

// A state file rewritten shorter and killed before its truncation (the new
// content, then the old one's tail) still reads as the new content: a
// journal rewritten after its swaps must not read as absent, or the
// operation's retry runs it a second time.
func TestStateKilledBeforeTruncation(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	long := []orphan{{Rel: "a.md", File: "a.md.1.1"}, {Rel: "b.md", File: "b.md.1.2"}}
	if err := saveStateList(v, "test-list.json", long); err != nil {
		t.Fatal(err)
	}
	short, _ := json.Marshal([]orphan{{Rel: "c.md", File: "c.md.1.3"}})
	p, err := v.StatePath("test-list.json")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt(short, 0) // killed here: no truncation
	f.Close()
	got := loadStateList[orphan](v, "test-list.json")
	if len(got) != 1 || got[0].Rel != "c.md" {
		t.Fatalf("read back %+v, want the one record written last", got)
	}
}
