package vault

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessionvault/sessionvault/internal/config"
	"github.com/sessionvault/sessionvault/internal/errs"
)

// snapshot returns every file under root but .git, path → content: what
// a refused write must leave as it was (the state folder included).
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() && e.Name() == ".git" {
			return fs.SkipDir
		}
		if !e.IsDir() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			out[filepath.ToSlash(rel)] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameFiles fails the test unless the two snapshots hold the same files.
func sameFiles(t *testing.T, before, after map[string]string) {
	t.Helper()
	for p, b := range before {
		if a, ok := after[p]; !ok || a != b {
			t.Errorf("%s changed: %q → %q (present %v)", p, b, a, ok)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s was written", p)
		}
	}
}

// newerVault returns a vault whose config a person set to format 7 and
// committed, opened again (as a binary that writes format 2 at most finds
// it), with a pending edit of notes/n.md.
func newerVault(t *testing.T) *Vault {
	t.Helper()
	v := newVault(t)
	mustTransact(t, v, writeOp("notes/n.md", "one\n"))
	writeNote(t, v, ".sessionvault/config.yaml", "# upgraded by a newer sessionvault\nversion: 7\n")
	gitT(t, v.Root, "add", ".sessionvault/config.yaml")
	gitT(t, v.Root, "commit", "--quiet", "-m", "format 7")
	writeNote(t, v, "notes/n.md", "one\nby hand\n")
	v7, err := Open(v.Root)
	if err != nil {
		t.Fatal(err)
	}
	return v7
}

// A vault in a newer format than this binary writes: every write path
// (Transact, TransactOnce, the commit of edits made outside sessionvault,
// a remote sync) fails with E1696 naming the vault's format and the newest
// this binary writes, before anything runs: no file written (not even the
// lock or the state folder), HEAD and the index unchanged, a person's
// pending edit left pending. Reading works.
func TestNewerFormatIsReadNotWritten(t *testing.T) {
	t.Parallel()
	v := newerVault(t)
	if !v.NewerFormat() || v.Config.Version != 7 {
		t.Fatalf("opened with version %d; want 7", v.Config.Version)
	}
	before, headBefore, statusBefore := snapshot(t, v.Root), head(t, v), gitStatus(t, v)

	ran := false
	fn := func(tx *Tx) (Change, error) {
		ran = true
		return Change{Operation: "write", Summary: "x"}, tx.Write("notes/m.md", []byte("new\n"))
	}
	_, err := v.Transact(fn)
	wantCode(t, err, errs.VaultFormatNewer)
	if msg := err.Error(); !strings.Contains(msg, "this vault is in format 7; this sessionvault (version ") || !strings.Contains(msg, ") writes formats up to 2: install a newer sessionvault release") {
		t.Errorf("message %q; want the vault's format and the newest this binary writes", msg)
	}
	_, _, err = v.TransactOnce("op-1", fn)
	wantCode(t, err, errs.VaultFormatNewer)
	_, err = v.CommitOutsideEdits([]string{"notes/n.md"})
	wantCode(t, err, errs.VaultFormatNewer)
	_, err = v.SyncRemote(SyncOptions{})
	wantCode(t, err, errs.VaultFormatNewer)
	if ran {
		t.Error("the operation's function ran")
	}

	sameFiles(t, before, snapshot(t, v.Root))
	if h := head(t, v); h != headBefore {
		t.Errorf("HEAD moved: %s → %s", headBefore, h)
	}
	if st := gitStatus(t, v); st != statusBefore || !strings.Contains(st, "notes/n.md") {
		t.Errorf("git status %q; want %q (the pending edit still pending)", st, statusBefore)
	}

	if b, err := v.ReadFile("notes/n.md"); err != nil || string(b) != "one\nby hand\n" {
		t.Errorf("ReadFile = %q, %v", b, err)
	}
	if b, err := v.Committed("notes/n.md"); err != nil || string(b) != "one\n" {
		t.Errorf("Committed = %q, %v", b, err)
	}
	if log, err := v.Log(5); err != nil || len(log) != 3 {
		t.Errorf("Log: %d commits, %v; want 3", len(log), err)
	}

	// The same vault in format 2, this binary's: written as usual.
	writeNote(t, v, ".sessionvault/config.yaml", "version: 2\n")
	v2, err := Open(v.Root)
	if err != nil {
		t.Fatal(err)
	}
	if v2.NewerFormat() || v2.CheckWritable() != nil {
		t.Fatal("a format 2 vault is refused")
	}
	mustTransact(t, v2, writeOp("notes/m.md", "new\n"))
}

// `remote sync` from a binary older than the remote's format: the remote's
// config (fetched) says format 7, so the sync stops with E1696 naming the
// remote and both formats before merging or pushing anything: the local
// branch, the notes and the remote's branch are as they were.
func TestSyncRemoteRefusesANewerRemote(t *testing.T) {
	t.Parallel()
	a, bare := newRemoteVault(t)
	mustSync(t, a)
	b := cloneVault(t, bare)
	writeNote(t, b, ".sessionvault/config.yaml", "version: 7\n")
	gitT(t, b.Root, "add", ".sessionvault/config.yaml")
	gitT(t, b.Root, "commit", "--quiet", "-m", "a newer sessionvault's migrate")
	gitT(t, b.Root, "push", "--quiet", "origin", "HEAD:main")

	mustTransact(t, a, writeOp("a.md", "from a\n"))
	aHead, remoteHead := head(t, a), gitT(t, bare, "rev-parse", "main")
	before := snapshot(t, a.Root)
	delete(before, ".sessionvault/state/sync-git") // the sync's marker, emptied when it ends

	res, err := a.SyncRemote(SyncOptions{})
	wantCode(t, err, errs.VaultFormatNewer)
	if msg := err.Error(); !strings.Contains(msg, "the vault on the remote origin is in format 7; this sessionvault (version ") || !strings.Contains(msg, "writes formats up to 2") {
		t.Errorf("message %q; want the remote's format and this binary's", msg)
	}
	if res.Pushed || res.Merged != "" {
		t.Errorf("result %+v; want nothing merged or pushed", res)
	}
	if h := head(t, a); h != aHead {
		t.Errorf("the local HEAD moved: %s → %s", aHead, h)
	}
	if h := gitT(t, bare, "rev-parse", "main"); h != remoteHead {
		t.Errorf("the remote's main moved: %s → %s", remoteHead, h)
	}
	after := snapshot(t, a.Root)
	delete(after, ".sessionvault/state/sync-git")
	sameFiles(t, before, after)
	if st := gitStatus(t, a); st != "" {
		t.Errorf("git status after the refused sync:\n%s", st)
	}
	if _, err := os.Stat(filepath.Join(a.Root, ".git", "MERGE_HEAD")); err == nil {
		t.Error("a merge was left in progress")
	}
}

// replaceConfig puts content in the vault's config file as git does when a
// pull or a checkout brings a new version of it: a new file renamed over
// the old one.
func replaceConfig(t *testing.T, v *Vault, content string) {
	t.Helper()
	p := filepath.Join(v.Root, filepath.FromSlash(config.File))
	tmp := p + ".new"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
}

// A vault kept open, as `sessionvault mcp` and `serve` keep theirs, sees
// its format change when the config file changes behind its back (another
// machine's `migrate` brought by `git pull`): its writes are refused with
// E1696 from then on, without opening it again, and written again once the
// format is one this binary writes. A config that cannot be read for a
// moment (missing while git replaces it, conflict markers) leaves the
// format last read.
func TestFormatChangeSeenWhileOpen(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	writeNote(t, v, config.File, "version: 2\n")
	gitT(t, v.Root, "add", config.File)
	gitT(t, v.Root, "commit", "--quiet", "-m", "format 2")
	v, err := Open(v.Root)
	if err != nil {
		t.Fatal(err)
	}
	mustTransact(t, v, writeOp("notes/a.md", "a\n"))

	replaceConfig(t, v, "# upgraded by a newer sessionvault\nversion: 7\n")
	_, err = v.Transact(writeOp("notes/b.md", "b\n"))
	wantCode(t, err, errs.VaultFormatNewer)
	if msg := err.Error(); !strings.Contains(msg, "this vault is in format 7;") {
		t.Errorf("message %q; want the format the config says now", msg)
	}
	if got := v.FormatVersion(); got != 7 || v.Config.Version != 7 || !v.NewerFormat() {
		t.Errorf("FormatVersion %d, Config.Version %d, NewerFormat %v; want 7, 7, true", got, v.Config.Version, v.NewerFormat())
	}
	if readNote(t, v, "notes/b.md") != "" {
		t.Error("the refused operation wrote its note")
	}

	// Unreadable for a moment: the format last read holds.
	p := filepath.Join(v.Root, filepath.FromSlash(config.File))
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	_, err = v.Transact(writeOp("notes/b.md", "b\n"))
	wantCode(t, err, errs.VaultFormatNewer)
	replaceConfig(t, v, "<<<<<<< ours\nversion: 2\n=======\nversion: 7\n>>>>>>> theirs\n")
	_, err = v.Transact(writeOp("notes/b.md", "b\n"))
	wantCode(t, err, errs.VaultFormatNewer)

	// Back to format 2 (a revert of the migrate): written again.
	replaceConfig(t, v, "version: 2\n")
	mustTransact(t, v, writeOp("notes/b.md", "b\n"))
	if got := v.FormatVersion(); got != 2 || v.NewerFormat() {
		t.Errorf("FormatVersion %d after the revert; want 2", got)
	}

	// Rewritten in place (same file, another size): seen too.
	if err := os.WriteFile(p, []byte("# edited\nversion: 7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = v.TransactOnce("op-after-edit", writeOp("notes/c.md", "c\n"))
	wantCode(t, err, errs.VaultFormatNewer)
}

// The merge driver's format check reads the sides git leaves to read while
// a merge runs: HEAD, MERGE_HEAD when written, and each commit a
// GITHEAD_<commit> variable names. A side in a newer format is E1696
// naming it; a side without a config, a variable that names no commit, or
// a folder that is no repository pass.
func TestCheckMergeFormat(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	writeNote(t, v, config.File, "version: 2\n")
	gitT(t, v.Root, "add", config.File)
	gitT(t, v.Root, "commit", "--quiet", "-m", "format 2")
	ours := gitT(t, v.Root, "rev-parse", "HEAD")
	writeNote(t, v, config.File, "version: 7\n")
	gitT(t, v.Root, "commit", "--quiet", "-am", "format 7")
	theirs := gitT(t, v.Root, "rev-parse", "HEAD")
	gitT(t, v.Root, "reset", "--quiet", "--hard", ours)

	if err := CheckMergeFormat(v.Root, nil); err != nil {
		t.Errorf("no side merged in: %v", err)
	}
	if err := CheckMergeFormat(v.Root, []string{"GITHEAD_" + ours + "=feature", "GITHEAD_nothex=x", "GITHEAD_" + strings.Repeat("0", 40) + "=gone"}); err != nil {
		t.Errorf("sides in format 2 or without a config: %v", err)
	}
	err := CheckMergeFormat(v.Root, []string{"PATH=/bin", "GITHEAD_" + theirs + "=origin/main"})
	wantCode(t, err, errs.VaultFormatNewer)
	if msg := err.Error(); !strings.Contains(msg, "the vault merged in (origin/main) is in format 7; ") {
		t.Errorf("message %q; want the side and its format", msg)
	}
	err = CheckMergeFormat(v.Root, []string{"GITHEAD_" + theirs + "=" + theirs})
	if err == nil || !strings.Contains(err.Error(), "the vault merged in ("+theirs[:12]+") is in format 7") {
		t.Errorf("a side named by its hash: %v", err)
	}
	if err := os.WriteFile(filepath.Join(v.Root, ".git", "MERGE_HEAD"), []byte(theirs+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = CheckMergeFormat(v.Root, nil)
	if err == nil || !strings.Contains(err.Error(), "the vault merged in (MERGE_HEAD) is in format 7") {
		t.Errorf("MERGE_HEAD in format 7: %v", err)
	}
	if err := CheckMergeFormat(t.TempDir(), []string{"GITHEAD_" + theirs + "=x"}); err != nil {
		t.Errorf("outside a repository: %v", err)
	}
}
