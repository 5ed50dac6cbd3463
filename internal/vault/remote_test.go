package vault

import (
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/errs"
)

// newRemoteVault returns a vault whose remote origin is an empty bare
// repository on disk, and that repository's path.
func newRemoteVault(t *testing.T) (*Vault, string) {
	t.Helper()
	v := newVault(t)
	bare := filepath.Join(t.TempDir(), "remote.git")
	gitT(t, v.Root, "init", "--quiet", "--bare", "-b", "main", bare)
	gitT(t, v.Root, "remote", "add", "origin", bare)
	return v, bare
}

// cloneVault clones the bare repository as a second machine's vault.
func cloneVault(t *testing.T, bare string) *Vault {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "clone")
	gitT(t, filepath.Dir(dir), "clone", "--quiet", bare, dir)
	if err := os.MkdirAll(filepath.Join(dir, ".sessionvault"), 0o755); err != nil {
		t.Fatal(err)
	}
	v, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// mustSync runs one sync with default options and fails the test on an
// error.
func mustSync(t *testing.T, v *Vault) SyncResult {
	t.Helper()
	res, err := v.SyncRemote(SyncOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// head returns v's HEAD.
func head(t *testing.T, v *Vault) string {
	t.Helper()
	h, err := v.Head()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// The first sync with an empty remote commits what was edited by hand as
// the person's commit and pushes the branch; the remote then holds HEAD and
// the vault is clean.
func TestSyncRemotePushesPendingEditsToAnEmptyRemote(t *testing.T) {
	t.Parallel()
	v, bare := newRemoteVault(t)
	writeNote(t, v, "notes/n.md", "by hand\n")
	res := mustSync(t, v)
	if res.Committed == "" || !res.Pushed || res.Tries != 1 || res.Merged != "" {
		t.Fatalf("result %+v: want a commit of the pending edit, pushed in one round", res)
	}
	if got := gitT(t, v.Root, "log", "-1", "--format=%an|%s", res.Committed); got != "vault editor|edit: notes/n.md changed outside sessionvault" {
		t.Errorf("the pending edit's commit is %q", got)
	}
	if got, want := gitT(t, bare, "rev-parse", "main"), head(t, v); got != want {
		t.Errorf("the remote's main is %s, HEAD is %s", got, want)
	}
	if st := gitStatus(t, v); st != "" {
		t.Errorf("git status after the sync:\n%s", st)
	}
	again := mustSync(t, v)
	if again.Committed != "" || again.Merged != "" || !again.Pushed {
		t.Errorf("a sync with nothing new did %+v", again)
	}
}

// Two machines that each made an operation: the second to sync merges the
// first one's note in (a merge commit, pushed), the first then fast-forwards
// to it; the merge is listed by MergesSince, and DiffNames names what it
// brought.
func TestSyncRemoteMergesTheOtherMachine(t *testing.T) {
	t.Parallel()
	a, bare := newRemoteVault(t)
	mustSync(t, a)
	b := cloneVault(t, bare)
	mustTransact(t, a, writeOp("a.md", "from a\n"))
	mustTransact(t, b, writeOp("b.md", "from b\n"))
	mustSync(t, a)
	aBefore, bBefore := head(t, a), head(t, b)

	res := mustSync(t, b)
	if res.Merged == "" || res.Merged == bBefore || !res.Pushed || !slices.Equal(res.Changed, []string{"a.md"}) {
		t.Fatalf("b's sync: %+v; want a merge bringing a.md, pushed", res)
	}
	if got := readNote(t, b, "a.md"); got != "from a\n" {
		t.Errorf("b's a.md = %q", got)
	}
	if got := gitT(t, bare, "rev-parse", "main"); got != res.Merged {
		t.Errorf("the remote's main is %s, want the merge %s", got, res.Merged)
	}

	ff := mustSync(t, a)
	if ff.Merged != res.Merged || !slices.Contains(ff.Changed, "b.md") {
		t.Fatalf("a's sync: %+v; want a fast-forward to %s bringing b.md", ff, res.Merged)
	}
	ms, h, err := a.MergesSince("")
	if err != nil || h != res.Merged {
		t.Fatalf("MergesSince: head %s, %v", h, err)
	}
	if len(ms) != 1 || ms[0] != (MergeCommit{Commit: res.Merged, Ours: bBefore, Theirs: aBefore}) {
		t.Errorf("merges %+v, want the one merge of %s into %s", ms, aBefore, bBefore)
	}
	if ms, _, err := a.MergesSince(res.Merged); err != nil || len(ms) != 0 {
		t.Errorf("merges since the last one: %+v, %v; want none", ms, err)
	}
	if ms, _, err := a.MergesSince(strings.Repeat("1", 40)); err != nil || len(ms) != 1 {
		t.Errorf("merges since a commit not in the history: %+v, %v; want all (one)", ms, err)
	}
	if names, err := a.DiffNames(aBefore, res.Merged); err != nil || !slices.Equal(names, []string{"b.md"}) {
		t.Errorf("DiffNames = %q, %v; want b.md", names, err)
	}
	if _, err := a.DiffNames(aBefore, "no-such-commit"); err == nil {
		t.Error("DiffNames with a commit that does not exist: no error")
	}
}

// Both machines changed the same line of a note and of another file: the
// sync commits the note with conflict markers for the person to resolve,
// keeps this machine's version of the other file, and pushes a clean merge.
func TestSyncRemoteConflictsKeepMarkersInNotesAndOursElsewhere(t *testing.T) {
	t.Parallel()
	a, bare := newRemoteVault(t)
	mustTransact(t, a, writeOp("n.md", "line\n"))
	writeNote(t, a, "data.txt", "base\n")
	if _, err := a.CommitOutsideEdits([]string{"data.txt"}); err != nil {
		t.Fatal(err)
	}
	mustSync(t, a)
	b := cloneVault(t, bare)
	mustTransact(t, a, writeOp("n.md", "line from a\n"))
	writeNote(t, a, "data.txt", "a\n")
	mustSync(t, a)
	mustTransact(t, b, writeOp("n.md", "line from b\n"))
	writeNote(t, b, "data.txt", "b\n")

	res := mustSync(t, b)
	if !slices.Equal(res.Conflicts, []string{"n.md"}) || !slices.Equal(res.Kept, []string{"data.txt"}) || !res.Pushed {
		t.Fatalf("result %+v: want n.md in conflict, data.txt kept, pushed", res)
	}
	note := readNote(t, b, "n.md")
	if !strings.Contains(note, "<<<<<<<") || !strings.Contains(note, "line from a") || !strings.Contains(note, "line from b") {
		t.Errorf("the note after the merge:\n%s", note)
	}
	if got := readNote(t, b, "data.txt"); got != "b\n" {
		t.Errorf("data.txt = %q, want this machine's", got)
	}
	if _, err := os.Stat(filepath.Join(b.Root, ".git", "MERGE_HEAD")); err == nil {
		t.Error("the merge was left in progress")
	}
	if st := gitStatus(t, b); st != "" {
		t.Errorf("git status:\n%s", st)
	}
	if parents := strings.Fields(gitT(t, b.Root, "log", "-1", "--format=%P")); len(parents) != 2 {
		t.Errorf("HEAD has parents %q, want a merge", parents)
	}
}

// A vault without the remote: the sync says how to add one and commits
// nothing.
func TestSyncRemoteWithoutTheRemote(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	before := head(t, v)
	writeNote(t, v, "p.md", "pending\n")
	_, err := v.SyncRemote(SyncOptions{})
	wantCode(t, err, errs.ConfigInvalid)
	if !strings.Contains(err.Error(), "remote add origin") {
		t.Errorf("the error does not say how to add the remote: %v", err)
	}
	if head(t, v) != before || gitStatus(t, v) != "?? p.md" {
		t.Errorf("the failed sync changed the history or the work tree: %s", gitStatus(t, v))
	}
}

// On a detached HEAD the sync refuses, naming the branch to switch to.
func TestSyncRemoteOnADetachedHead(t *testing.T) {
	t.Parallel()
	v, bare := newRemoteVault(t)
	gitT(t, v.Root, "checkout", "--quiet", "--detach")
	_, err := v.SyncRemote(SyncOptions{})
	wantCode(t, err, errs.RemoteSyncFailed)
	if !strings.Contains(err.Error(), "detached") || !strings.Contains(err.Error(), "switch main") {
		t.Errorf("error %v: want it to name the detached HEAD and `switch main`", err)
	}
	if out := gitT(t, bare, "for-each-ref"); out != "" {
		t.Errorf("the remote got refs: %s", out)
	}
}

// A push refused because another machine pushed meanwhile starts another
// round: the other machine's commit is merged and both end up on the
// remote. With one try allowed the sync fails instead, and the remote keeps
// only the other machine's commit.
func TestSyncRemoteRetriesARefusedPush(t *testing.T) {
	t.Parallel()
	for _, tries := range []int{0, 1} {
		a, bare := newRemoteVault(t)
		mustSync(t, a)
		b := cloneVault(t, bare)
		mustTransact(t, a, writeOp("a.md", "a\n"))
		calls := 0
		res, err := a.SyncRemote(SyncOptions{Tries: tries, AfterMerge: func(*SyncResult) error {
			calls++
			if calls == 1 {
				mustTransact(t, b, writeOp("b.md", "b\n"))
				_, err := b.SyncRemote(SyncOptions{})
				return err
			}
			return nil
		}})
		if tries == 1 {
			wantCode(t, err, errs.RemoteSyncFailed)
			if res.Pushed || res.Tries != 1 {
				t.Errorf("one try: %+v", res)
			}
			if _, err := gitTry(bare, "cat-file", "-e", "main:a.md"); err == nil {
				t.Error("one try: a.md reached the remote")
			}
			continue
		}
		if err != nil || !res.Pushed || res.Tries != 2 || calls != 2 {
			t.Fatalf("sync: %+v, %v (AfterMerge ran %d times); want two rounds, pushed", res, err, calls)
		}
		for _, f := range []string{"a.md", "b.md"} {
			if _, err := gitTry(bare, "cat-file", "-e", "main:"+f); err != nil {
				t.Errorf("the remote's main lacks %s", f)
			}
		}
	}
}

// An error from AfterMerge stops the sync before its push.
func TestSyncRemoteAfterMergeErrorStopsThePush(t *testing.T) {
	t.Parallel()
	v, bare := newRemoteVault(t)
	mustSync(t, v)
	pushed := gitT(t, bare, "rev-parse", "main")
	mustTransact(t, v, writeOp("n.md", "x\n"))
	stop := errors.New("stop here")
	if _, err := v.SyncRemote(SyncOptions{AfterMerge: func(*SyncResult) error { return stop }}); !errors.Is(err, stop) {
		t.Fatalf("err = %v, want AfterMerge's", err)
	}
	if got := gitT(t, bare, "rev-parse", "main"); got != pushed {
		t.Error("the remote moved although AfterMerge failed")
	}
}

// Side refs travel with the sync, forced, outside the branch's history (a
// later version replaces the earlier one on the other machine); tags under
// the namespace travel both ways.
func TestSyncRemoteCarriesSideRefsAndTags(t *testing.T) {
	t.Parallel()
	a, bare := newRemoteVault(t)
	mustSync(t, a)
	b := cloneVault(t, bare)
	const prefix = "refs/sessionvault/heartbeat/"
	ref := prefix + "a"
	if err := a.WriteSideRef(ref, map[string][]byte{"beat": []byte("1\n"), "who": []byte("a\n")}); err != nil {
		t.Fatal(err)
	}
	if err := a.WriteSideRef(ref, map[string][]byte{"x/y": []byte("no\n")}); err == nil {
		t.Error("a side-ref file name with a slash was accepted")
	}
	h := head(t, a)
	if err := a.CreateTag("checkpoint/one", h, "first checkpoint\n"); err != nil {
		t.Fatal(err)
	}
	opts := SyncOptions{SideRefs: prefix, Tags: "checkpoint/"}
	withPush := opts
	withPush.PushRefs = []string{ref, prefix + "not-written"}
	if _, err := a.SyncRemote(withPush); err != nil {
		t.Fatal(err)
	}
	if _, err := b.SyncRemote(opts); err != nil {
		t.Fatal(err)
	}
	refs, err := b.ReadSideRefs(prefix)
	if err != nil || len(refs) != 1 || string(refs["a"]["beat"]) != "1\n" || string(refs["a"]["who"]) != "a\n" {
		t.Fatalf("b's side refs: %q, %v", refs, err)
	}
	if _, err := gitTry(b.Root, "merge-base", "--is-ancestor", ref, "HEAD"); err == nil {
		t.Error("the side ref's commit is in the branch's history")
	}
	tags, err := b.Tags("checkpoint/")
	if err != nil || len(tags) != 1 || tags[0].Name != "checkpoint/one" || tags[0].Commit != h || strings.TrimSpace(tags[0].Message) != "first checkpoint" {
		t.Fatalf("b's tags: %+v, %v", tags, err)
	}

	// Written again in AfterMerge (after the round's fetch of the remote's
	// side refs, which replaces the local ones): the new files replace the
	// old ones on the other side.
	withPush.AfterMerge = func(*SyncResult) error {
		return a.WriteSideRef(ref, map[string][]byte{"beat": []byte("2\n")})
	}
	if _, err := a.SyncRemote(withPush); err != nil {
		t.Fatal(err)
	}
	if _, err := b.SyncRemote(opts); err != nil {
		t.Fatal(err)
	}
	if refs, _ := b.ReadSideRefs(prefix); len(refs["a"]) != 1 || string(refs["a"]["beat"]) != "2\n" {
		t.Errorf("b's side refs after a rewrite: %q", refs)
	}
}

// A sync killed in the middle of its merge left MERGE_HEAD: the next sync
// concludes that merge (the note with its conflict markers) before its own
// round, and pushes it.
func TestSyncRemoteFinishesAMergeAKilledSyncLeft(t *testing.T) {
	t.Parallel()
	a, bare := newRemoteVault(t)
	mustTransact(t, a, writeOp("n.md", "line\n"))
	mustSync(t, a)
	b := cloneVault(t, bare)
	mustTransact(t, a, writeOp("n.md", "line from a\n"))
	mustSync(t, a)
	mustTransact(t, b, writeOp("n.md", "line from b\n"))
	gitT(t, b.Root, "fetch", "--quiet", "origin", "main")
	if _, err := gitTry(b.Root, "merge", "FETCH_HEAD"); err == nil {
		t.Fatal("the merge did not stop on the conflict")
	}
	res := mustSync(t, b)
	if !slices.Equal(res.Conflicts, []string{"n.md"}) || !res.Pushed {
		t.Fatalf("result %+v: want the left merge concluded with n.md in conflict, pushed", res)
	}
	if _, err := os.Stat(filepath.Join(b.Root, ".git", "MERGE_HEAD")); err == nil {
		t.Error("the merge is still in progress")
	}
	if got := gitT(t, bare, "rev-parse", "main"); got != head(t, b) {
		t.Errorf("the remote's main %s is not b's HEAD", got)
	}
	if st := gitStatus(t, b); st != "" {
		t.Errorf("git status:\n%s", st)
	}
}

// What a sync killed with its git left behind is put right by the next
// command: the git locks made since the sync's marker are removed, locks
// older than the marker (another git's) and config.lock are not, a note
// git had emptied before writing it is put back from the index, and the
// marker is cleared.
func TestRecoverKilledSync(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	mustTransact(t, v, writeOp("n.md", "kept\n"))
	if err := v.RecoverKilledSync(); err != nil {
		t.Fatalf("no killed sync: %v", err)
	}
	at := time.Now().Add(-3 * time.Second)
	if err := v.writeStateInPlace(syncMarker, []byte(at.UTC().Format(time.RFC3339Nano)+"\n")); err != nil {
		t.Fatal(err)
	}
	gitDir := filepath.Join(v.Root, ".git")
	lock := func(rel string, mtime time.Time) string {
		p := filepath.Join(gitDir, filepath.FromSlash(rel))
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ours := []string{lock("index.lock", at.Add(time.Second)), lock("refs/heads/main.lock", at.Add(time.Second))}
	theirs := []string{lock("HEAD.lock", at.Add(-time.Minute)), lock("config.lock", at.Add(time.Second))}
	if err := os.Truncate(filepath.Join(v.Root, "n.md"), 0); err != nil {
		t.Fatal(err)
	}

	if err := v.RecoverKilledSync(); err != nil {
		t.Fatal(err)
	}
	for _, p := range ours {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("the killed sync's %s is still there", filepath.Base(p))
		}
	}
	for _, p := range theirs {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s, not the killed sync's, was removed", filepath.Base(p))
		}
	}
	if got := readNote(t, v, "n.md"); got != "kept\n" {
		t.Errorf("the emptied note holds %q, want it put back", got)
	}
	if b, _ := v.ReadState(syncMarker); len(b) != 0 {
		t.Errorf("the marker is still there: %q", b)
	}
}

// A marker that does not hold a time says nothing about which locks are
// whose: it is cleared and no lock is touched.
func TestRecoverKilledSyncUnreadableMarker(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	if err := v.writeStateInPlace(syncMarker, []byte("not a time\n")); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(v.Root, ".git", "index.lock")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := v.RecoverKilledSync(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Error("a lock was removed on an unreadable marker")
	}
	if b, _ := v.ReadState(syncMarker); len(b) != 0 {
		t.Errorf("the marker is still there: %q", b)
	}
}

// The token in SESSIONVAULT_GIT_TOKEN goes to an https remote only, as a
// basic-auth header; without the token nothing is added.
func TestAuthArgsOnlyForHTTPS(t *testing.T) {
	v, _ := newRemoteVault(t)
	gitT(t, v.Root, "remote", "add", "web", "https://git.example.invalid/vault.git")
	t.Setenv("SESSIONVAULT_GIT_TOKEN", "")
	if got := v.authArgs("web"); got != nil {
		t.Errorf("no token: %q", got)
	}
	t.Setenv("SESSIONVAULT_GIT_TOKEN", "s3cret")
	want := []string{"-c", "http.extraHeader=Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:s3cret"))}
	if got := v.authArgs("web"); !slices.Equal(got, want) {
		t.Errorf("https remote: %q, want %q", got, want)
	}
	if got := v.authArgs("origin"); got != nil {
		t.Errorf("a remote on disk got the token: %q", got)
	}
	if got := v.authArgs("missing"); got != nil {
		t.Errorf("a remote that does not exist got the token: %q", got)
	}
}

// ReadAt reads a file as a commit holds it: a file the commit lacks, or no
// commit, is os.ErrNotExist; a path outside the vault is refused.
func TestReadAt(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	first := mustTransact(t, v, writeOp("n.md", "one\n")).Commit
	mustTransact(t, v, writeOp("n.md", "two\n"))
	if b, err := v.ReadAt(first, "n.md"); err != nil || string(b) != "one\n" {
		t.Errorf("n.md at the first commit: %q, %v", b, err)
	}
	for _, c := range []string{first, ""} {
		if _, err := v.ReadAt(c, "other.md"); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("ReadAt(%q, other.md): %v, want os.ErrNotExist", c, err)
		}
	}
	if _, err := v.ReadAt(first, "../x.md"); errs.CodeOf(err) != errs.PathOutsideVault {
		t.Errorf("a path outside the vault: %v", err)
	}
}
