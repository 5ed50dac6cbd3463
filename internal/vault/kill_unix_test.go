//go:build unix

package vault

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
)

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
	v.TransactOnce("op-2", entryOp("n.md", "- engine 2 ^u-2"))
	t.Fatal("the operation was not killed")
}

// killAfterSwap runs TestHelperKilledAfterSwap in a child process on v: an
// operation whose note is in place is killed (SIGKILL) before its commit.
func killAfterSwap(t *testing.T, v *Vault) {
	t.Helper()
	child := exec.Command(os.Args[0], "-test.run=^TestHelperKilledAfterSwap$")
	child.Env = append(os.Environ(), killedAfterSwapEnv+"="+v.Root)
	out, err := child.CombinedOutput()
	if ws, ok := child.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the helper was not killed: %v\n%s", err, out)
	}
}

// vaultWithOneEntry returns a new vault whose note n.md (at note) holds
// "start" and one committed entry, ^u-1 (operation op-1).
func vaultWithOneEntry(t *testing.T) (v *Vault, note string) {
	t.Helper()
	v = newVault(t)
	note = filepath.Join(v.Root, "n.md")
	os.WriteFile(note, []byte("start\n"), 0o644)
	if _, _, err := v.TransactOnce("op-1", entryOp("n.md", "- engine 1 ^u-1")); err != nil {
		t.Fatal(err)
	}
	return v, note
}

// An operation killed after its note is in place, whose note a person then
// replaces (an atomic save from a buffer read before the operation), still
// takes effect once: the next operation merges the person's file with the
// engine's version and commits it — the entry is neither lost nor left
// uncommitted for a later save to bring back.
func TestKilledOperationSurvivesARenameOverItsNote(t *testing.T) {
	t.Parallel()
	v, note := vaultWithOneEntry(t)
	stale, _ := os.ReadFile(note) // the person's buffer

	killAfterSwap(t, v)
	if got, _ := os.ReadFile(note); !strings.Contains(string(got), "^u-2") {
		t.Fatalf("the killed operation's note is not in place: %q", got)
	}

	// The person saves their stale buffer plus a line: temp file + rename.
	tmp := filepath.Join(v.Root, ".n.md.tmp")
	os.WriteFile(tmp, append(stale, []byte("person\n")...), 0o644)
	if err := os.Rename(tmp, note); err != nil {
		t.Fatal(err)
	}

	if _, _, err := v.TransactOnce("op-3", entryOp("n.md", "- engine 3 ^u-3")); err != nil {
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

// A file someone renames over the note just as a round swaps its new
// version back out (a writer was waiting) stays in the note: the swap back
// takes theirs out instead of ours, and puts it back.
func TestSwapBackKeepsAFileRenamedOverTheNote(t *testing.T) {
	t.Parallel()
	for _, created := range []bool{false, true} {
		v := newVault(t)
		note := filepath.Join(v.Root, "n.md")
		n := &noteWrite{rel: "n.md", abs: note}
		if !created {
			os.WriteFile(note, []byte("old\n"), 0o644)
			h, err := holdFile(note, "n.md")
			if err != nil {
				t.Fatal(err)
			}
			defer h.close()
			n.old = h
		}
		p, err := v.tempPath("n.md")
		if err != nil {
			t.Fatal(err)
		}
		f, err := writeLeased(p, []byte("ours\n"))
		if err != nil {
			t.Fatal(err)
		}
		rt := roundTemp{n: n, path: p, f: f}
		r := &round{w: &writer{v: v}, notes: []*noteWrite{n}, temps: []roundTemp{rt}}
		if created {
			err = renameNoReplace(p, note)
		} else {
			err = exchange(p, note)
		}
		if err != nil {
			t.Fatal(err)
		}
		r.placed = []roundTemp{rt}
		v.beforeSwapBack = func() {
			v.beforeSwapBack = nil
			theirs := filepath.Join(v.Root, ".n.md.tmp")
			os.WriteFile(theirs, []byte("theirs\n"), 0o644)
			if err := os.Rename(theirs, note); err != nil {
				t.Error(err)
			}
		}
		r.undo()
		r.cleanup()
		if got, _ := os.ReadFile(note); string(got) != "theirs\n" {
			t.Errorf("created %v: the note holds %q after the swap back, want the file renamed over it", created, got)
		}
	}
}

// The commit that finishes a killed operation fsyncs the notes it commits
// (durability fsync): the killed process may have died before it did.
func TestRecoveredCommitFsyncsItsNotes(t *testing.T) {
	t.Parallel()
	v, note := vaultWithOneEntry(t)
	killAfterSwap(t, v)

	v.Config.Durability = "fsync"
	v.hist = nil
	var synced []string
	var mu sync.Mutex
	v.syncNote = func(f *os.File) error {
		mu.Lock()
		synced = append(synced, f.Name())
		mu.Unlock()
		return f.Sync()
	}
	if _, _, err := v.TransactOnce("op-3", entryOp("m.md", "- engine 3 ^u-3")); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(synced, note) {
		t.Fatalf("the recovery fsynced %v, not %s", synced, note)
	}
	if log := gitT(t, v.Root, "log", "-1", "--format=%B", "--", "n.md"); !strings.Contains(log, "Recovered: true") {
		t.Fatalf("n.md's last commit is not the recovered one:\n%s", log)
	}
}
