package vault

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sessionvault/sessionvault/internal/errs"
)

// An operation whose function fails writes nothing: no note on disk, no
// commit, no journal.
func TestFailedOperationWritesNothing(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	before := head(t, v)
	boom := errors.New("boom")
	_, err := v.Transact(func(tx *Tx) (Change, error) {
		if err := tx.Write("a.md", []byte("a\n")); err != nil {
			return Change{}, err
		}
		return Change{}, errors.Join(tx.Write("p/b.md", []byte("b\n")), boom)
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the function's", err)
	}
	for _, rel := range []string{"a.md", "p/b.md"} {
		if _, err := os.Lstat(filepath.Join(v.Root, filepath.FromSlash(rel))); err == nil {
			t.Errorf("%s was written", rel)
		}
	}
	if head(t, v) != before || gitStatus(t, v) != "" {
		t.Errorf("HEAD or the work tree changed: %s", gitStatus(t, v))
	}
	if b, _ := v.readStateInPlace(journalName); len(b) != 0 {
		t.Errorf("a journal was left: %s", b)
	}
}

// A commit that fails after the notes were written takes the operation's
// change back out: the note holds what it held plus what a person saved
// into it meanwhile, a note the operation created is gone, HEAD and the
// index are as they were, and the operation's hooks do not run.
func TestFailedCommitTakesTheChangeBack(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	mustTransact(t, v, writeOp("n.md", "start\n"))
	before := head(t, v)
	// git refuses to commit a path outside the sparse checkout.
	gitT(t, v.Root, "update-index", "--skip-worktree", "n.md")
	index, _ := os.ReadFile(filepath.Join(v.Root, ".git", "index"))
	note := filepath.Join(v.Root, "n.md")
	v.afterSwap = func() {
		v.afterSwap = nil
		f, err := os.OpenFile(note, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Error(err)
			return
		}
		f.WriteString("person\n")
		f.Close()
	}
	hooks := 0
	_, err := v.Transact(func(tx *Tx) (Change, error) {
		cur, _ := tx.Read("n.md")
		if err := tx.Write("new.md", []byte("created\n")); err != nil {
			return Change{}, err
		}
		return Change{Operation: "append", Summary: "x",
				Committed: func(Result) error { hooks++; return nil },
				Finished:  func(Result) { hooks++ }},
			tx.Write("n.md", append(cur, "engine\n"...))
	})
	wantCode(t, err, errs.GitWriteFailed)
	if !strings.Contains(err.Error(), "nothing was changed") {
		t.Errorf("the error does not say nothing was changed: %v", err)
	}
	if got := readNote(t, v, "n.md"); got != "start\nperson\n" {
		t.Errorf("n.md = %q, want the person's line without the engine's", got)
	}
	if _, err := os.Lstat(filepath.Join(v.Root, "new.md")); err == nil {
		t.Error("the note the failed operation created is still there")
	}
	if head(t, v) != before {
		t.Error("HEAD moved")
	}
	if after, _ := os.ReadFile(filepath.Join(v.Root, ".git", "index")); !bytes.Equal(after, index) {
		t.Error("the index changed")
	}
	if hooks != 0 {
		t.Errorf("the operation's hooks ran %d times", hooks)
	}
	if b, _ := v.readStateInPlace(journalName); len(b) != 0 {
		t.Errorf("a journal was left: %s", b)
	}
	if _, err := os.Stat(filepath.Join(v.Root, ".git", "index.lock")); err == nil {
		t.Error("index.lock was left")
	}
}

// Edits made outside the engine are committed as the person's (a note
// removed by hand as a deletion), those the agent's tools made as the
// agent's naming the tool; with nothing changed no commit is made.
func TestCommitOutsideAndAgentEdits(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	mustTransact(t, v, writeOp("n.md", "1\n"))
	mustTransact(t, v, writeOp("gone.md", "1\n"))
	writeNote(t, v, "n.md", "2\n")
	writeNote(t, v, "m.md", "new\n")
	if err := os.Remove(filepath.Join(v.Root, "gone.md")); err != nil {
		t.Fatal(err)
	}
	c, err := v.CommitOutsideEdits([]string{"n.md", "m.md", "gone.md", "never.md"})
	if err != nil || c == "" {
		t.Fatalf("CommitOutsideEdits = %q, %v", c, err)
	}
	if got, want := gitT(t, v.Root, "log", "-1", "--format=%an|%s", c), v.Config.Person.Name+"|edit: gone.md, m.md, n.md changed outside sessionvault"; got != want {
		t.Errorf("commit %q, want %q", got, want)
	}
	if _, err := gitTry(v.Root, "cat-file", "-e", "HEAD:gone.md"); err == nil {
		t.Error("the removed note is still in HEAD")
	}
	if c, err := v.CommitOutsideEdits([]string{"n.md", "m.md"}); err != nil || c != "" {
		t.Errorf("nothing changed: %q, %v", c, err)
	}
	writeNote(t, v, "log.jsonl", "{}\n")
	c, err = v.CommitAgentEdits([]string{"log.jsonl"}, "Bash")
	if err != nil || c == "" {
		t.Fatalf("CommitAgentEdits = %q, %v", c, err)
	}
	if got, want := gitT(t, v.Root, "log", "-1", "--format=%an|%s|%(trailers:key=Tool,valueonly)", c), v.Config.Agent.Name+"|agent-edit: log.jsonl changed by the agent's Bash call|Bash"; got != want {
		t.Errorf("commit %q, want %q", got, want)
	}
	if st := gitStatus(t, v); st != "" {
		t.Errorf("git status:\n%s", st)
	}
	if _, err := v.CommitOutsideEdits([]string{"../x.md"}); errs.CodeOf(err) != errs.PathOutsideVault {
		t.Errorf("a path outside the vault: %v", err)
	}
}

// The engine writes only inside the vault: a folder that is a link out of
// it, or a file where a folder should be, fails the operation and nothing
// is written.
func TestWritesStayInsideTheVault(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(v.Root, "linked")); err != nil {
		t.Fatal(err)
	}
	writeNote(t, v, "file", "a file\n")
	for rel, code := range map[string]errs.Code{"linked/n.md": errs.PathOutsideVault, "file/n.md": errs.NoteNotAFile} {
		_, err := v.Transact(writeOp(rel, "x\n"))
		wantCode(t, err, code)
		if _, err := v.Transact(func(tx *Tx) (Change, error) { _, err := tx.Read(rel); return Change{}, err }); errs.CodeOf(err) != code {
			t.Errorf("reading %s: %v", rel, err)
		}
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("written outside the vault: %v", ents)
	}
}

// What an operation's function sees: the notes as first read and as
// written so far, the paths it writes, which paths exist and what a folder
// holds (its own writes included), and the engine's last version of a note
// a person has edited since.
func TestTxViews(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	mustTransact(t, v, writeOp("n.md", "one\n"))
	mustTransact(t, v, writeOp("p/a.md", "engine's\n"))
	writeNote(t, v, "p/a.md", "person's\n")
	writeNote(t, v, "hand.md", "by hand\n")
	if _, err := v.CommitOutsideEdits([]string{"hand.md"}); err != nil {
		t.Fatal(err)
	}
	mustTransact(t, v, func(tx *Tx) (Change, error) {
		if tx.Vault() != v {
			t.Error("Vault() is not the vault")
		}
		if err := tx.Write("n.md", []byte("two\n")); err != nil {
			return Change{}, err
		}
		if err := tx.Write("p/new.md", []byte("new\n")); err != nil {
			return Change{}, err
		}
		if b, missing, err := tx.Original("n.md"); err != nil || missing || string(b) != "one\n" {
			t.Errorf("Original(n.md) = %q, %v, %v", b, missing, err)
		}
		if _, missing, err := tx.Original("none.md"); err != nil || !missing {
			t.Errorf("Original(none.md): missing %v, %v", missing, err)
		}
		if b, err := tx.Read("n.md"); err != nil || string(b) != "two\n" {
			t.Errorf("Read(n.md) = %q, %v", b, err)
		}
		if b, ok := tx.Written("n.md"); !ok || string(b) != "two\n" {
			t.Errorf("Written(n.md) = %q, %v", b, ok)
		}
		if _, ok := tx.Written("p/a.md"); ok {
			t.Error("Written(p/a.md) is true")
		}
		if got := tx.WrittenPaths(); !slices.Equal(got, []string{"n.md", "p/new.md"}) {
			t.Errorf("WrittenPaths = %q", got)
		}
		for rel, want := range map[string]bool{"p/new.md": true, "p/a.md": true, "n.md": true, "none.md": false, "../x.md": false} {
			if got := tx.Exists(rel); got != want {
				t.Errorf("Exists(%s) = %v", rel, got)
			}
		}
		if got, err := tx.List("p"); err != nil || !slices.Equal(got, []string{"a.md", "new.md"}) {
			t.Errorf("List(p) = %q, %v", got, err)
		}
		if got, err := tx.List("none"); err != nil || len(got) != 0 {
			t.Errorf("List(none) = %q, %v", got, err)
		}
		if _, err := tx.List("../p"); err == nil {
			t.Error("List outside the vault: no error")
		}
		if _, same, ok, err := tx.Base("n.md"); err != nil || !same || !ok {
			t.Errorf("Base(n.md): same %v, ok %v, %v; want the engine's own version", same, ok, err)
		}
		if b, same, ok, err := tx.Base("p/a.md"); err != nil || same || !ok || string(b) != "engine's\n" {
			t.Errorf("Base(p/a.md) = %q, same %v, ok %v, %v; want the engine's last version", b, same, ok, err)
		}
		if b, same, ok, err := tx.Base("hand.md"); err != nil || same || ok || string(b) != "by hand\n" {
			t.Errorf("Base(hand.md) = %q, same %v, ok %v, %v; want HEAD's version, no record", b, same, ok, err)
		}
		return Change{Operation: "views", Summary: "x"}, nil
	})
	if got := readNote(t, v, "p/new.md"); got != "new\n" {
		t.Errorf("p/new.md = %q", got)
	}
}

// A note that does not pass its check yet (another process writing it in
// two steps) is read again until it does; a missing note is not waited
// for; a note the operation wrote itself is checked as written.
func TestReadNoteWaitsUntilValid(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	writeNote(t, v, "n.md", "half\n")
	notYet := errors.New("not yet")
	// valid fails the first check, as if the second half were on its way.
	validAfterOne := func() func([]byte) error {
		calls := 0
		return func([]byte) error {
			calls++
			if calls == 1 {
				return notYet
			}
			return nil
		}
	}
	if b, err := v.ReadNote("n.md", validAfterOne()); err != nil || string(b) != "half\n" {
		t.Errorf("Vault.ReadNote = %q, %v", b, err)
	}
	if _, err := v.ReadNote("none.md", validAfterOne()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing note: %v", err)
	}
	mustTransact(t, v, func(tx *Tx) (Change, error) {
		if b, err := tx.ReadNote("n.md", validAfterOne()); err != nil || string(b) != "half\n" {
			t.Errorf("Tx.ReadNote = %q, %v", b, err)
		}
		if err := tx.Write("w.md", []byte("mine\n")); err != nil {
			return Change{}, err
		}
		if _, err := tx.ReadNote("w.md", func([]byte) error { return notYet }); !errors.Is(err, notYet) {
			t.Errorf("a note written in the Tx: %v, want its check's error at once", err)
		}
		return Change{Operation: "read", Summary: "x"}, nil
	})
}

// Text for a note is valid UTF-8 without NUL bytes; the error names the
// field and the byte.
func TestCheckText(t *testing.T) {
	t.Parallel()
	if err := CheckText("--message", "fine ✓"); err != nil {
		t.Errorf("valid text refused: %v", err)
	}
	for text, at := range map[string]string{"ab\x00c": "byte 2", "ab\xffc": "byte 2", "ok \xe2\x82": "byte 3"} {
		err := CheckText("--message", text)
		if errs.CodeOf(err) != errs.UpdateValidationFailed || !strings.Contains(err.Error(), at) || !strings.Contains(err.Error(), "--message") {
			t.Errorf("CheckText(%q) = %v, want it to name --message and %s", text, err, at)
		}
	}
}

// State files: written (plain or durable) and read back under
// .sessionvault/state, never committed; a name that is not one file name is
// refused.
func TestStateFiles(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	if err := v.WriteState("heartbeat.json", []byte("1")); err != nil {
		t.Fatal(err)
	}
	if err := v.WriteStateDurable("ledger", []byte("2")); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"heartbeat.json": "1", "ledger": "2"} {
		if b, err := v.ReadState(name); err != nil || string(b) != want {
			t.Errorf("ReadState(%s) = %q, %v", name, b, err)
		}
	}
	p, err := v.StatePath("ledger")
	if err != nil || p != filepath.Join(v.Root, ".sessionvault", "state", "ledger") {
		t.Errorf("StatePath = %q, %v", p, err)
	}
	for _, bad := range []string{"../x", "a/b", ""} {
		if err := v.WriteState(bad, []byte("x")); err == nil {
			t.Errorf("WriteState(%q) accepted", bad)
		}
		if _, err := v.StatePath(bad); err == nil {
			t.Errorf("StatePath(%q) accepted", bad)
		}
	}
	if st := gitStatus(t, v); st != "" {
		t.Errorf("state files show in git status:\n%s", st)
	}
}

// The init a refusal names can be pasted as written, from any folder: the
// vault's absolute path quoted for the shell, and the --project init
// requires.
func TestNotAVaultNamesAWorkingInit(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "my vault")
	os.MkdirAll(dir, 0o755)
	_, err := Open(dir)
	want := "`sessionvault init '" + dir + "' --project "
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Open = %v, want a remedy starting %s", err, want)
	}
	rest := strings.SplitN(err.Error()[strings.Index(err.Error(), want)+len(want):], "`", 2)[0]
	if CheckName("project", rest) != nil {
		t.Fatalf("the remedy's project %q is not a project name", rest)
	}
}

// Open refuses a folder that is not a vault, a vault that is not a git
// repository, and settings it cannot read; Find finds the vault above a
// folder, or says there is none.
func TestOpenAndFind(t *testing.T) {
	t.Parallel()
	plain := t.TempDir()
	if _, err := Open(plain); errs.CodeOf(err) != errs.VaultNotFound {
		t.Errorf("a plain folder: %v", err)
	}
	if _, err := Find(plain); errs.CodeOf(err) != errs.VaultNotFound {
		t.Errorf("Find with no vault above: %v", err)
	}
	noGit := t.TempDir()
	os.MkdirAll(filepath.Join(noGit, ".sessionvault"), 0o755)
	if _, err := Open(noGit); errs.CodeOf(err) != errs.VaultNotFound || !strings.Contains(err.Error(), "git repository") {
		t.Errorf("no git repository: %v", err)
	}
	v := newVault(t)
	sub := filepath.Join(v.Root, "p", "q")
	os.MkdirAll(sub, 0o755)
	if dir, err := Find(sub); err != nil || dir != v.Root {
		t.Errorf("Find(%s) = %q, %v; want %s", sub, dir, err, v.Root)
	}
	writeNote(t, v, ".sessionvault/config.yaml", "durability: sometimes\n")
	if _, err := Open(v.Root); errs.CodeOf(err) != errs.ConfigInvalid {
		t.Errorf("bad settings: %v", err)
	}
	for name, ok := range map[string]bool{"demo": true, "s-1_x": true, "-x": false, "a/b": false, "": false} {
		if err := CheckName("project", name); (err == nil) != ok {
			t.Errorf("CheckName(%q) = %v", name, err)
		}
	}
}

// An operation with an id takes effect once: run again with the id, its
// function does not run and the first result comes back marked as a
// repeat, also for an operation that changed nothing; an id that is not one
// is refused before anything runs.
func TestTransactOnceRepeats(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	runs := 0
	op := func(tx *Tx) (Change, error) {
		runs++
		return Change{Operation: "write", Summary: "x", Trailers: map[string]string{"Entry": "u-1"}}, tx.Write("n.md", []byte("x\n"))
	}
	res, rec, err := v.TransactOnce("op-1", op)
	if err != nil || res.Commit == "" || rec.Repeat {
		t.Fatalf("first run: %+v, %+v, %v", res, rec, err)
	}
	again, rec2, err := v.TransactOnce("op-1", op)
	if err != nil || !rec2.Repeat || again.Commit != res.Commit || runs != 1 || rec2.Trailers["Entry"] != "u-1" {
		t.Errorf("repeat: %+v, %+v, %v (ran %d times)", again, rec2, err, runs)
	}
	if got := gitT(t, v.Root, "log", "-1", "--format=%(trailers:key=Op-Id,valueonly)"); got != "op-1" {
		t.Errorf("Op-Id trailer %q", got)
	}
	noop := func(tx *Tx) (Change, error) { runs++; return Change{Operation: "noop"}, nil }
	if _, rec, err := v.TransactOnce("op-2", noop); err != nil || rec.Repeat {
		t.Fatalf("no-op: %+v, %v", rec, err)
	}
	if _, rec, err := v.TransactOnce("op-2", noop); err != nil || !rec.Repeat || runs != 2 {
		t.Errorf("no-op repeated: %+v, %v (ran %d times)", rec, err, runs)
	}
	if _, _, err := v.TransactOnce("bad id!", op); errs.CodeOf(err) != errs.UpdateValidationFailed || runs != 2 {
		t.Errorf("a bad id: %v (ran %d times)", err, runs)
	}
}

// Every durability setting commits the operation, with the note on disk and
// the work tree clean.
func TestDurabilitySettings(t *testing.T) {
	t.Parallel()
	for _, d := range []string{"batch", "fsync", "syncfs"} {
		v := newVault(t)
		v.Config.Durability = d
		v.hist = nil // reopened with the setting
		res := mustTransact(t, v, writeOp("p/q/n.md", d+"\n"))
		if b, err := v.Committed("p/q/n.md"); err != nil || string(b) != d+"\n" || res.Commit != head(t, v) {
			t.Errorf("%s: HEAD holds %q, %v", d, b, err)
		}
		if st := gitStatus(t, v); st != "" {
			t.Errorf("%s: git status:\n%s", d, st)
		}
	}
}

// A git lock another process holds fails the operation with errs.GitLocked
// once the wait (history.DefaultLockTimeout) is over, telling the user to run
// the command again; the notes are as they were and the lock is left alone.
func TestGitLockHeldByAnother(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	mustTransact(t, v, writeOp("n.md", "start\n"))
	lock := filepath.Join(v.Root, ".git", "index.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := v.Transact(writeOp("n.md", "changed\n"))
	wantCode(t, err, errs.GitLocked)
	if !strings.Contains(err.Error(), "run the command again") {
		t.Errorf("the error does not say what to do: %v", err)
	}
	if got := readNote(t, v, "n.md"); got != "start\n" {
		t.Errorf("n.md = %q", got)
	}
	if _, err := os.Stat(lock); err != nil {
		t.Error("the other process's index.lock was removed")
	}
}

// A note still broken after the wait for a save in progress (a person broke
// its front matter) is remembered by its stat identity: the next reads —
// by this process or another, alone or in an operation — check it once and
// fail at once with the same error, instead of waiting again; once the note
// is written again (fixed), it is read as usual.
func TestBrokenNoteIsWaitedForOnce(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	writeNote(t, v, "n.md", "---\nstatus: 'unclosed\n---\n")
	broken := errors.New("front matter does not parse")
	calls := 0
	check := func(b []byte) error {
		calls++
		if strings.Contains(string(b), "'unclosed") {
			return broken
		}
		return nil
	}
	if _, err := v.ReadNote("n.md", check); !errors.Is(err, broken) {
		t.Fatalf("first read: %v, want the check's error", err)
	}
	if calls < 3 {
		t.Fatalf("the first read checked the note %d times; want it read again while a save could be in progress", calls)
	}
	for _, how := range []string{"vault", "another process's vault", "operation"} {
		calls = 0
		var err error
		switch how {
		case "vault":
			_, err = v.ReadNote("n.md", check)
		case "another process's vault":
			other, oerr := Open(v.Root)
			if oerr != nil {
				t.Fatal(oerr)
			}
			_, err = other.ReadNote("n.md", check)
		case "operation":
			_, _ = v.Transact(func(tx *Tx) (Change, error) {
				_, err = tx.ReadNote("n.md", check)
				return Change{}, err
			})
		}
		if !errors.Is(err, broken) || calls != 2 {
			t.Errorf("%s: read again unchanged: %v after %d checks; want the same error after reading it once (2 checks)", how, err, calls)
		}
	}
	writeNote(t, v, "n.md", "---\nstatus: 'closed'\n---\n")
	if b, err := v.ReadNote("n.md", check); err != nil || !strings.Contains(string(b), "'closed'") {
		t.Fatalf("the fixed note: %q, %v", b, err)
	}
}
