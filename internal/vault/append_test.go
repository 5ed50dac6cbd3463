package vault

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/filelock"
)

// AppendNote creates the log and its folders, and each append sees the
// log's tail and size and adds its bytes after what is there; an append of
// nothing, or whose build fails, leaves the log as it was.
func TestAppendNote(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	rel := "p/log/history.jsonl"
	type seen struct {
		tail string
		size int64
	}
	var calls []seen
	appendLine := func(line string) func([]byte, int64) ([]byte, error) {
		return func(tail []byte, size int64) ([]byte, error) {
			calls = append(calls, seen{string(tail), size})
			return []byte(line), nil
		}
	}
	for _, line := range []string{"one\n", "two\n"} {
		if err := v.AppendNote(rel, 3, appendLine(line)); err != nil {
			t.Fatal(err)
		}
	}
	if want := []seen{{"", 0}, {"ne\n", 4}}; fmt.Sprint(calls) != fmt.Sprint(want) {
		t.Errorf("build saw %v, want %v", calls, want)
	}
	if got := readNote(t, v, rel); got != "one\ntwo\n" {
		t.Fatalf("log = %q", got)
	}
	if err := v.AppendNote(rel, 100, func([]byte, int64) ([]byte, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if err := v.AppendNote(rel, 100, func([]byte, int64) ([]byte, error) { return []byte("x"), boom }); !errors.Is(err, boom) {
		t.Errorf("build's error: %v", err)
	}
	if got := readNote(t, v, rel); got != "one\ntwo\n" {
		t.Errorf("log after appends of nothing = %q", got)
	}
}

// AppendNote refuses what is not the engine's own log file: a path outside
// the vault, a folder linked out of it, a link or a folder at the log's
// path.
func TestAppendNoteRefuses(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	none := func([]byte, int64) ([]byte, error) { return []byte("x\n"), nil }
	if err := v.AppendNote("../x.jsonl", 0, none); errs.CodeOf(err) != errs.PathOutsideVault {
		t.Errorf("a path outside the vault: %v", err)
	}
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(v.Root, "linked")); err != nil {
		t.Fatal(err)
	}
	if err := v.AppendNote("linked/x.jsonl", 0, none); errs.CodeOf(err) != errs.PathOutsideVault {
		t.Errorf("a folder linked outside the vault: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "x.jsonl")); err == nil {
		t.Error("a file was written outside the vault")
	}
	if err := os.Symlink(filepath.Join(v.Root, "target.jsonl"), filepath.Join(v.Root, "link.jsonl")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(v.Root, "dir.jsonl"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"link.jsonl", "dir.jsonl"} {
		if err := v.AppendNote(rel, 0, none); errs.CodeOf(err) != errs.NoteNotAFile {
			t.Errorf("%s: %v", rel, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(v.Root, "target.jsonl")); err == nil {
		t.Error("the link was followed")
	}
}

// An appender that keeps the log locked past the lock timeout makes the
// next append fail with errs.LockTimeout, writing nothing.
func TestAppendNoteWaitsForTheLock(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	v.Config.LockTimeout.Duration = 20 * time.Millisecond
	rel := "log.jsonl"
	writeNote(t, v, rel, "held\n")
	f, err := os.OpenFile(filepath.Join(v.Root, rel), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if held, err := filelock.TryLock(f); err != nil || !held {
		t.Fatalf("taking the log's lock: %v, %v", held, err)
	}
	err = v.AppendNote(rel, 0, func([]byte, int64) ([]byte, error) { return []byte("late\n"), nil })
	wantCode(t, err, errs.LockTimeout)
	filelock.Unlock(f)
	if got := readNote(t, v, rel); got != "held\n" {
		t.Errorf("log = %q", got)
	}
}
