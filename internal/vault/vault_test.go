package vault

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/sessionvault/sessionvault/internal/history"
)

func newVault(t *testing.T) *Vault {
	t.Helper()
	dir := t.TempDir()
	if _, err := history.Init(dir); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, ".sessionvault"), 0o755)
	v, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Update(func(tx *Tx) (Change, error) {
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
	v := newVault(t)
	note := filepath.Join(v.Root, "n.md")
	if _, err := v.Update(appendOp("n.md", "engine 1", nil)); err != nil {
		t.Fatal(err)
	}
	_, err := v.Update(appendOp("n.md", "engine 2", func(pass int) {
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
	v := newVault(t)
	note := filepath.Join(v.Root, "n.md")
	os.WriteFile(note, []byte("start\n"), 0o644)
	passes := 0
	_, err := v.Update(appendOp("n.md", "engine", func(pass int) {
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

// killedAfterSwapEnv names the vault the helper process writes to.
const killedAfterSwapEnv = "SESSIONVAULT_TEST_KILL_AFTER_SWAP"

// TestHelperKilledAfterSwap is not a test: run by
// TestKilledOperationSurvivesARenameOverItsNote in a child process, it puts
// an operation's note in place and is killed (SIGKILL) before the commit.
func TestHelperKilledAfterSwap(t *testing.T) {
	dir := os.Getenv(killedAfterSwapEnv)
	if dir == "" {
		return
	}
	v, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	v.afterSwap = func() { syscall.Kill(os.Getpid(), syscall.SIGKILL) }
	v.UpdateOnce("op-2", entryOp("n.md", "- engine 2 ^u-2"))
	t.Fatal("the operation was not killed")
}

func entryOp(rel, line string) func(tx *Tx) (Change, error) {
	return func(tx *Tx) (Change, error) {
		cur, _ := tx.Read(rel)
		return Change{Operation: "append", Summary: line}, tx.Write(rel, append(cur, []byte(line+"\n")...))
	}
}

// An operation killed after its note is in place, whose note a person then
// replaces (an atomic save from a buffer read before the operation), still
// takes effect once: the next operation merges the person's file with the
// engine's version and commits it — the entry is neither lost nor left
// uncommitted for a later save to bring back.
func TestKilledOperationSurvivesARenameOverItsNote(t *testing.T) {
	v := newVault(t)
	note := filepath.Join(v.Root, "n.md")
	os.WriteFile(note, []byte("start\n"), 0o644)
	if _, _, err := v.UpdateOnce("op-1", entryOp("n.md", "- engine 1 ^u-1")); err != nil {
		t.Fatal(err)
	}
	stale, _ := os.ReadFile(note) // the person's buffer

	child := exec.Command(os.Args[0], "-test.run=^TestHelperKilledAfterSwap$")
	child.Env = append(os.Environ(), killedAfterSwapEnv+"="+v.Root)
	out, err := child.CombinedOutput()
	if ws, ok := child.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the helper was not killed: %v\n%s", err, out)
	}
	if got, _ := os.ReadFile(note); !strings.Contains(string(got), "^u-2") {
		t.Fatalf("the killed operation's note is not in place: %q", got)
	}

	// The person saves their stale buffer plus a line: temp file + rename.
	tmp := filepath.Join(v.Root, ".n.md.tmp")
	os.WriteFile(tmp, append(stale, []byte("person\n")...), 0o644)
	if err := os.Rename(tmp, note); err != nil {
		t.Fatal(err)
	}

	if _, _, err := v.UpdateOnce("op-3", entryOp("n.md", "- engine 3 ^u-3")); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(note)
	for _, line := range []string{"- engine 1 ^u-1", "- engine 2 ^u-2", "person", "- engine 3 ^u-3"} {
		if strings.Count(string(got), line+"\n") != 1 {
			t.Errorf("%q is in the note %d times, want once:\n%s", line, strings.Count(string(got), line+"\n"), got)
		}
	}
	log, _ := exec.Command("git", "-C", v.Root, "log", "--format=%(trailers:key=Op-Id,valueonly)").Output()
	if n := strings.Count(string(log), "op-2\n"); n != 1 {
		t.Errorf("the killed operation has %d commits, want 1:\n%s", n, log)
	}
	if st, _ := exec.Command("git", "-C", v.Root, "status", "--porcelain").Output(); len(st) != 0 {
		t.Errorf("git status: %s", st)
	}
}
