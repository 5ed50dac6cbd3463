//go:build !linux || portable

package vault

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/errs"
)

// Without a lease on the engine's new version, a save in place can land in
// it in the instant between the swap and the stat the round takes of it (an
// editor saving a stale buffer opens the note just after the swap). That
// save must count as another writer's, not as the engine's version: the
// engine's entry is merged back into the note, and the engine's record of
// its last write does not take the stale save for its own (else the next
// operation would find "its" version and restore nothing).
func TestPortableSaveIntoTheNewVersionBeforeItsStat(t *testing.T) {
	v := newVault(t)
	mustTransact(t, v, writeOp("n.md", "# N\n\nstart\n"))
	stale := readNote(t, v, "n.md")
	note := filepath.Join(v.Root, "n.md")
	afterPlace = func(pv *Vault) {
		if pv != v {
			return
		}
		afterPlace = nil
		if err := os.WriteFile(note, []byte(stale+"- person's line, saved from a stale buffer\n"), 0o644); err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(func() { afterPlace = nil })
	mustTransact(t, v, entryOp("n.md", "- engine ^u-1"))
	got := readNote(t, v, "n.md")
	for _, line := range []string{"start\n", "- engine ^u-1\n", "- person's line, saved from a stale buffer\n"} {
		if strings.Count(got, line) != 1 {
			t.Errorf("%q is in the note %d times, want once:\n%s", line, strings.Count(got, line), got)
		}
	}
	// The next operation keeps the entry too.
	mustTransact(t, v, entryOp("n.md", "- engine ^u-2"))
	got = readNote(t, v, "n.md")
	for _, line := range []string{"- engine ^u-1\n", "- engine ^u-2\n"} {
		if strings.Count(got, line) != 1 {
			t.Errorf("after the next operation, %q is in the note %d times, want once:\n%s", line, strings.Count(got, line), got)
		}
	}
	if b, _ := v.Committed("n.md"); string(b) != got {
		t.Errorf("HEAD's n.md = %q, the note %q", b, got)
	}
}

// Without a lease, a note that another program keeps saving (truncate, then
// write) without ever pausing is not read at the deadline as it happens to
// be — possibly empty or half a save, which a merge onto it would make the
// note — but fails the read with errs.ConcurrentUpdate: nothing is written.
func TestPortableReadOfANoteNeverAtRestFails(t *testing.T) {
	dir := t.TempDir()
	note := filepath.Join(dir, "n.md")
	full := []byte(strings.Repeat("- a line of the note\n", 2000))
	if err := os.WriteFile(note, full, 0o644); err != nil {
		t.Fatal(err)
	}
	// The writer records the longest pause between two of its writes: one
	// of 20 ms or more (the machine too loaded to run it) lets a read settle
	// on what is there, as it should; the test is then inconclusive.
	stop := make(chan struct{})
	done := make(chan time.Duration)
	go func() {
		var gap time.Duration
		last := time.Now()
		wrote := func() {
			now := time.Now()
			gap = max(gap, now.Sub(last))
			last = now
		}
		for {
			select {
			case <-stop:
				done <- gap
				return
			default:
			}
			f, err := os.OpenFile(note, os.O_WRONLY|os.O_TRUNC, 0)
			if err != nil {
				continue
			}
			wrote()
			f.Write(full[:len(full)/2])
			wrote()
			time.Sleep(time.Millisecond)
			f.Write(full[len(full)/2:])
			wrote()
			f.Close()
			time.Sleep(time.Millisecond)
		}
	}()
	time.Sleep(5 * time.Millisecond)
	data, _, err := readStable(note, "n.md")
	close(stop)
	gap := <-done
	switch {
	case errs.CodeOf(err) == errs.ConcurrentUpdate:
	case err == nil && string(data) == string(full):
	case gap >= 20*time.Millisecond:
		t.Skipf("the writer paused %s (a loaded machine): read %d of %d bytes, err %v", gap, len(data), len(full), err)
	default:
		t.Fatalf("read %d of %d bytes, err %v; want the whole note or errs.ConcurrentUpdate (the writer never paused over %s)", len(data), len(full), err, gap)
	}
}

// A note whose modification time is in the future (a clock ahead, on a
// shared folder) and that no one writes is read once it stays unchanged, not
// refused as being written.
func TestPortableReadOfANoteFromTheFuture(t *testing.T) {
	note := filepath.Join(t.TempDir(), "n.md")
	if err := os.WriteFile(note, []byte("text\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	future := time.Now().Add(time.Hour)
	if err := os.Chtimes(note, future, future); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	data, _, err := readStable(note, "n.md")
	if err != nil || string(data) != "text\n" {
		t.Fatalf("read %q, %v", data, err)
	}
	if d := time.Since(start); d > settleWait/2 {
		t.Errorf("the read took %s", d)
	}
}
