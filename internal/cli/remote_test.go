package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/testenv"
)

// remoteOps is how many random operations each clone makes in
// TestRemoteClonesConverge (acceptance of the remotes issue: 200).
var remoteOps = flag.Int("remote.ops", testenv.Size(12, 25), "random operations per clone in TestRemoteClonesConverge (12; make test runs 25)")

// remoteSeed seeds TestRemoteClonesConverge's choices.
var remoteSeed = flag.Uint64("remote.seed", 7, "random seed of TestRemoteClonesConverge")

// clone is one machine's copy of the vault.
type clone struct {
	t    *testing.T
	bin  string
	dir  string
	name string
	env  []string
}

func (c *clone) sv(args ...string) string {
	c.t.Helper()
	out, err := c.try(args...)
	if err != nil {
		c.t.Fatalf("%s: sessionvault %s: %v\n%s", c.name, strings.Join(args, " "), err, out)
	}
	return out
}

func (c *clone) try(args ...string) (string, error) {
	for try := 0; ; try++ {
		cmd := exec.Command(c.bin, append([]string{"--vault", c.dir}, args...)...)
		cmd.Env = c.env
		out, err := cmd.CombinedOutput()
		// A binary a test just copied can be "busy" for an instant: a
		// process another test forked meanwhile holds the copy's write
		// descriptor until its own exec (ETXTBSY). Nothing ran: run again.
		if err != nil && errors.Is(err, syscall.ETXTBSY) && try < 20 {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		return string(out), err
	}
}

func (c *clone) git(args ...string) string {
	c.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", c.dir}, args...)...)
	cmd.Env = c.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		c.t.Fatalf("%s: git %s: %v\n%s", c.name, strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func gitEnv(home string) []string {
	return append(os.Environ(), "HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=Pat", "GIT_AUTHOR_EMAIL=pat@example.invalid",
		"GIT_COMMITTER_NAME=Pat", "GIT_COMMITTER_EMAIL=pat@example.invalid", "SESSIONVAULT_VAULT=")
}

// newRemoteVault makes a bare remote, a vault pushed to it (the primary
// clone) and n-1 more clones set up as other machines, all reaching the
// remote through file://.
func newRemoteVault(t *testing.T, n int) []*clone {
	return newRemoteVaultAt(t, n, func(bare string) string { return "file://" + bare })
}

// newRemoteVaultAt is newRemoteVault with the remote's URL made by url
// from the bare repository's path.
func newRemoteVaultAt(t *testing.T, n int, url func(bare string) string) []*clone {
	bin := robustBinary(t) // git runs it as the merge driver: a real program
	root := t.TempDir()
	env := append(gitEnv(root), pathWith(t, bin)) // found there by git
	bare := filepath.Join(root, "remote.git")
	if out, err := exec.Command("git", "init", "--quiet", "--bare", "--initial-branch=main", bare).CombinedOutput(); err != nil {
		t.Fatalf("git init --bare: %v\n%s", err, out)
	}
	if out, err := exec.Command("git", "-C", bare, "config", "http.receivepack", "true").CombinedOutput(); err != nil {
		t.Fatalf("git config: %v\n%s", err, out)
	}
	a := &clone{t: t, bin: bin, dir: filepath.Join(root, "a"), name: "a", env: env}
	a.sv("init", a.dir, "--project", "demo")
	a.git("remote", "add", "origin", url(bare))
	a.sv("start", "--objective", "shared work")
	a.sv("remote", "sync")
	clones := []*clone{a}
	for i := 1; i < n; i++ {
		name := string(rune('a' + i))
		c := &clone{t: t, bin: bin, dir: filepath.Join(root, name), name: name, env: env}
		if out, err := exec.Command("git", "clone", "--quiet", url(bare), c.dir).CombinedOutput(); err != nil {
			t.Fatalf("git clone: %v\n%s", err, out)
		}
		c.sv("remote", "setup", "--machine", "m"+name)
		clones = append(clones, c)
	}
	return clones
}

var entryIDLine = regexp.MustCompile(`\^([a-z]-\d+(?:-[a-z][a-z0-9]*)?)\s*$`)

// Three clones record updates, decisions and blockers in one session and a
// person edits a note on each, syncing in random order: afterwards every
// clone holds the same notes, every entry once, every person line once,
// `check` clean, `git fsck --strict` clean, no conflict markers in engine
// sections.
func TestRemoteClonesConverge(t *testing.T) {
	t.Parallel()
	converge(t, newRemoteVault(t, 3), *remoteOps, *remoteSeed)
}

// The same over a network transport: git's smart HTTP server (git
// http-backend behind net/http/cgi on loopback), two clones.
func TestRemoteOverSmartHTTP(t *testing.T) {
	t.Parallel()
	clones := newRemoteVaultAt(t, 2, httpRemote(t))
	if u := clones[1].git("remote", "get-url", "origin"); !strings.HasPrefix(u, "http://127.0.0.1:") {
		t.Fatalf("the clone's remote is %s, not the HTTP server", u)
	}
	converge(t, clones, 30, 11)
}

// httpRemote serves the bare repository over git's smart HTTP protocol (git
// http-backend behind net/http/cgi on loopback) and returns its URL.
func httpRemote(t *testing.T) func(bare string) string {
	exe, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatalf("git --exec-path: %v", err)
	}
	return func(bare string) string {
		srv := httptest.NewServer(&cgi.Handler{
			Path: filepath.Join(strings.TrimSpace(string(exe)), "git-http-backend"),
			Env:  []string{"GIT_PROJECT_ROOT=" + filepath.Dir(bare), "GIT_HTTP_EXPORT_ALL=1"},
		})
		t.Cleanup(srv.Close)
		return srv.URL + "/" + filepath.Base(bare)
	}
}

// converge runs ops random operations per clone (updates, decisions,
// blockers, a person's lines, sessions turning over, syncs) in random order
// from seed, syncs every clone twice, and checks the outcome.
func converge(t *testing.T, clones []*clone, ops int, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, uint64(ops)))
	var entries, personLines []string
	for i := 0; i < ops*len(clones); i++ {
		c := clones[rng.IntN(len(clones))]
		switch k := rng.IntN(20); {
		case k == 19:
			// The session turns over on this clone: another machine's
			// merge then ends its session there, or two starts clash.
			c.sv("end", "--summary", fmt.Sprintf("end %d on %s", i, c.name))
			c.sv("start", "--objective", fmt.Sprintf("objective %d on %s", i, c.name))
		case k < 8:
			msg := fmt.Sprintf("update %d from %s", i, c.name)
			c.sv("update", msg)
			entries = append(entries, msg)
		case k < 10:
			title := fmt.Sprintf("decision %d from %s", i, c.name)
			c.sv("decide", "--title", title, "--choice", "c", "--rationale", "r")
			entries = append(entries, title)
		case k < 12:
			text := fmt.Sprintf("blocker %d from %s", i, c.name)
			c.sv("block", text)
			entries = append(entries, text)
		case k < 16:
			line := fmt.Sprintf("person line %d on %s", i, c.name)
			p := filepath.Join(c.dir, "demo", "session-current-state.md")
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, append(b, line+"\n"...), 0o644); err != nil {
				t.Fatal(err)
			}
			personLines = append(personLines, line)
		default:
			c.sv("remote", "sync")
		}
	}
	// Converge: two passes in order (the last clone's push reaches the first
	// on the second pass).
	for pass := 0; pass < 2; pass++ {
		for _, c := range clones {
			c.sv("remote", "sync")
		}
	}
	want := map[string][]byte{}
	for i, c := range clones {
		files := strings.Split(c.git("ls-files", "demo"), "\n")
		for _, f := range files {
			b, err := os.ReadFile(filepath.Join(c.dir, f))
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				want[f] = b
			} else if !bytes.Equal(want[f], b) {
				t.Errorf("%s: %s differs from clone a's", c.name, f)
			}
		}
		if len(files) != len(want) {
			t.Errorf("%s holds %d project files, clone a %d", c.name, len(files), len(want))
		}
		if st := c.git("status", "--porcelain"); st != "" {
			t.Errorf("%s: git status not clean:\n%s", c.name, st)
		}
		c.git("fsck", "--strict")
		if out, err := c.try("check"); err != nil {
			t.Errorf("%s: check: %v\n%s", c.name, err, out)
		}
	}
	// Every session's notes: the current state, the records of ended and
	// abandoned sessions, and the update logs compaction moves older
	// updates to.
	state := string(want["demo/session-current-state.md"])
	for f, b := range want {
		if strings.HasPrefix(f, "demo/sessions/") {
			state += string(b)
		}
	}
	for _, e := range entries {
		if n := strings.Count(state, " "+e+" ^") + strings.Count(state, "**"+e+"**") + strings.Count(state, "|"+e+"]]"); n != 1 {
			t.Errorf("entry %q is in the current state %d times", e, n)
		}
	}
	for _, l := range personLines {
		if n := strings.Count(state, l+"\n"); n != 1 {
			t.Errorf("person line %q is there %d times", l, n)
		}
	}
	// Ids are unique within a session: its record or current state and its
	// update log.
	bySession := map[string]string{}
	for f, b := range want {
		if rest, ok := strings.CutPrefix(f, "demo/sessions/"); ok {
			id, _, _ := strings.Cut(strings.TrimSuffix(rest, ".md"), "/")
			bySession[id] += string(b)
		}
	}
	cur := want["demo/session-current-state.md"]
	if m := regexp.MustCompile(`(?m)^session: (\S+)$`).FindSubmatch(cur); m != nil {
		bySession[string(m[1])] += string(cur)
	}
	for session, text := range bySession {
		ids := map[string]int{}
		for _, l := range strings.Split(text, "\n") {
			if m := entryIDLine.FindStringSubmatch(l); m != nil {
				ids[m[1]]++
			}
			if strings.HasPrefix(l, "<<<<<<<") || strings.HasPrefix(l, ">>>>>>>") {
				t.Errorf("a conflict marker in session %s: %q", session, l)
			}
		}
		for id, n := range ids {
			if n > 1 {
				t.Errorf("session %s: id %s on %d lines", session, id, n)
			}
		}
	}
	t.Logf("%d clones, %d operations: %d entries and %d person lines checked in %d sessions' notes, %d project files alike",
		len(clones), ops*len(clones), len(entries), len(personLines), len(bySession), len(want))
	if t.Failed() {
		t.Logf("current state:\n%s", state)
	}
}

// A `git pull` by the git CLI (as Obsidian Git does) of two clones that both
// appended updates to one session merges without a conflict, both sides'
// updates there once.
func TestGitPullMergesByEntry(t *testing.T) {
	t.Parallel()
	clones := newRemoteVault(t, 2)
	a, b := clones[0], clones[1]
	for i := 0; i < 3; i++ {
		a.sv("update", fmt.Sprintf("from a %d", i))
		b.sv("update", fmt.Sprintf("from b %d", i))
	}
	a.git("push", "--quiet", "origin", "main")
	b.git("pull", "--no-rebase", "--no-edit", "--quiet", "origin", "main")
	state, err := os.ReadFile(filepath.Join(b.dir, "demo", "session-current-state.md"))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		for _, side := range []string{"a", "b"} {
			if n := strings.Count(string(state), fmt.Sprintf("from %s %d ^", side, i)); n != 1 {
				t.Errorf("update %q %d times after git pull", fmt.Sprintf("from %s %d", side, i), n)
			}
		}
	}
	if bytes.Contains(state, []byte("<<<<<<<")) {
		t.Errorf("conflict markers after git pull:\n%s", state)
	}
	b.sv("update", "after the pull")
	b.sv("remote", "sync")
	a.sv("remote", "sync")
	a.sv("update", "on a after the sync")
}

// Two machines starting a session on the same day make two session notes;
// the second start while the first machine's session is active and pushed
// is refused, naming that session.
func TestSecondMachineStart(t *testing.T) {
	t.Parallel()
	clones := newRemoteVault(t, 2)
	a, b := clones[0], clones[1]
	out, err := b.try("start", "--objective", "on b")
	if err == nil || !strings.Contains(out, "E1601") || !strings.Contains(out, "on machine") {
		t.Fatalf("start on b while a's session is active and pushed: %v\n%s", err, out)
	}
	a.sv("end", "--summary", "done on a")
	a.sv("start", "--objective", "a again")
	b.git("pull", "--quiet", "--no-rebase", "--no-edit", "origin", "main")
	_ = out
}

// Two machines that each start a session before they sync: after the syncs
// both clones hold one current state (the session started first, the same
// on both) and the other session recorded in sessions/, abandoned, with
// its updates; no session note overwritten, both in the history.
func TestConcurrentStartsKeepBothSessions(t *testing.T) {
	t.Parallel()
	clones := startedOnBoth(t)
	a, b := clones[0], clones[1]
	a.sv("update", "a did this")
	b.sv("update", "b did that")
	idA := sessionOf(t, a)
	idB := sessionOf(t, b)
	if idA == idB {
		t.Fatalf("both machines made session %s", idA)
	}
	a.sv("remote", "sync")
	out := b.sv("remote", "sync")
	a.sv("remote", "sync")
	for _, c := range clones {
		state := readFile(t, filepath.Join(c.dir, "demo", "session-current-state.md"))
		if got := sessionOf(t, c); got != idA {
			t.Errorf("%s: the current state holds %s, want %s (started first)", c.name, got, idA)
		}
		if strings.Contains(state, "<<<<<<<") || strings.Contains(state, "b did that") {
			t.Errorf("%s: the current state mixes the two sessions:\n%s", c.name, state)
		}
		rec := readFile(t, filepath.Join(c.dir, "demo", "sessions", idB+".md"))
		for _, want := range []string{"status: abandoned", "b did that", "on b"} {
			if !strings.Contains(rec, want) {
				t.Errorf("%s: the record of %s lacks %q:\n%s", c.name, idB, want, rec)
			}
		}
		if !strings.Contains(readFile(t, filepath.Join(c.dir, "demo", "session-history.md")), idB) {
			t.Errorf("%s: the history does not name %s", c.name, idB)
		}
		if o, err := c.try("check"); err != nil {
			t.Errorf("%s: check: %v\n%s", c.name, err, o)
		}
	}
	if !strings.Contains(out, "abandoned") {
		t.Errorf("remote sync on b does not say what became of %s:\n%s", idB, out)
	}
	if a.git("rev-parse", "HEAD") != b.git("rev-parse", "HEAD") {
		t.Errorf("the clones did not converge")
	}
}

// A machine that records updates in a session another machine ended: after
// the sync the session's record holds them, and the current state is the
// ended one's (idle), not a mix.
func TestUpdatesAfterAnotherMachineEnded(t *testing.T) {
	t.Parallel()
	clones := newRemoteVault(t, 2)
	a, b := clones[0], clones[1]
	b.sv("remote", "sync")
	id := sessionOf(t, a)
	a.sv("update", "before the end")
	a.sv("end", "--summary", "done on a")
	b.sv("update", "late on b")
	a.sv("remote", "sync")
	b.sv("remote", "sync")
	a.sv("remote", "sync")
	for _, c := range clones {
		if got := sessionOf(t, c); got != "" {
			t.Errorf("%s: the current state holds session %q, want none (ended on a)", c.name, got)
		}
		rec := readFile(t, filepath.Join(c.dir, "demo", "sessions", id+".md"))
		if !strings.Contains(rec, "status: complete") || !strings.Contains(rec, "\ndone on a\n") {
			t.Errorf("%s: the record of %s is not the ended one:\n%s", c.name, id, rec)
		}
		if strings.Contains(rec, "^u-1\n\n- ") {
			t.Errorf("%s: a blank line splits the updates of %s:\n%s", c.name, id, rec)
		}
		for _, want := range []string{"before the end ^", "late on b ^"} {
			if n := strings.Count(rec, want); n != 1 {
				t.Errorf("%s: %q is in the record of %s %d times:\n%s", c.name, want, id, n, rec)
			}
		}
		if o, err := c.try("check"); err != nil {
			t.Errorf("%s: check: %v\n%s", c.name, err, o)
		}
	}
}

// startedOnBoth makes two clones in sync with no active session, then
// starts a session on each ("on a" first, then "on b") before either syncs.
func startedOnBoth(t *testing.T) []*clone {
	clones := newRemoteVault(t, 2)
	a, b := clones[0], clones[1]
	a.sv("end", "--summary", "first done")
	a.sv("remote", "sync")
	b.sv("remote", "sync")
	a.sv("start", "--objective", "on a")
	b.sv("start", "--objective", "on b")
	return clones
}

// sessionOf is the session c's current state holds ("" when idle).
func sessionOf(t *testing.T, c *clone) string {
	t.Helper()
	for _, l := range strings.Split(readFile(t, filepath.Join(c.dir, "demo", "session-current-state.md")), "\n") {
		if v, ok := strings.CutPrefix(l, "session: "); ok {
			return strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	return ""
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Heartbeats travel with remote sync (a ref beside the branch, no commit on
// it): a session whose machine beats is not taken for crashed on another
// machine, whose `start` is refused; once the beats stop for the
// heartbeat timeout, the other machine may start.
func TestHeartbeatsTravel(t *testing.T) {
	t.Parallel()
	clones := newRemoteVault(t, 2)
	a, b := clones[0], clones[1]
	b.sv("remote", "sync")
	t0 := time.Now().UTC()
	at := func(c *clone, d time.Duration) *clone {
		cc := *c
		cc.env = append(append([]string(nil), c.env...), "SESSIONVAULT_NOW="+t0.Add(d).Format(time.RFC3339))
		return &cc
	}
	commits := a.git("rev-list", "--count", "HEAD")
	at(a, 20*time.Minute).sv("heartbeat")
	a.sv("remote", "sync")
	if got := a.git("rev-list", "--count", "HEAD"); got != commits {
		t.Errorf("a heartbeat made commits on the branch: %s, then %s", commits, got)
	}
	b.sv("remote", "sync")
	// 35 minutes after the start, 15 after a's last beat: alive.
	out, err := at(b, 35*time.Minute).try("start", "--objective", "on b")
	if err == nil || !strings.Contains(out, "E1601") {
		t.Fatalf("start on b while a's session beats: %v\n%s", err, out)
	}
	// 55 minutes after the start, 35 after the last beat: crashed.
	if out, err := at(b, 55*time.Minute).try("status"); err != nil || !strings.Contains(out, "crashed") {
		t.Errorf("status on b 35 minutes after a's last beat: %v\n%s", err, out)
	}
}

// doctor on a fresh clone says the merge driver is not set up, and how to
// set it up; after that command, the check holds.
func TestDoctorNamesTheMergeDriver(t *testing.T) {
	t.Parallel()
	clones := newRemoteVault(t, 1)
	a := clones[0]
	dir := filepath.Join(filepath.Dir(a.dir), "fresh")
	if out, err := exec.Command("git", "clone", "--quiet", a.git("remote", "get-url", "origin"), dir).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	c := &clone{t: t, bin: a.bin, dir: dir, name: "fresh", env: a.env}
	check := func() (ok bool, fix string) {
		out, _ := c.try("doctor", "--json", "--repo", dir)
		var rep struct {
			Data struct {
				Checks []doctorCheck `json:"checks"`
			} `json:"data"`
		}
		if err := json.NewDecoder(strings.NewReader(out)).Decode(&rep); err != nil {
			t.Fatalf("doctor --json: %v\n%s", err, out)
		}
		for _, ch := range rep.Data.Checks {
			if ch.Check == "merge driver" {
				return ch.OK, ch.Fix
			}
		}
		t.Fatalf("doctor has no merge driver check:\n%s", out)
		return false, ""
	}
	ok, fix := check()
	if ok || !strings.HasSuffix(fix, "remote setup") {
		t.Fatalf("doctor on a fresh clone: ok %v, fix %q", ok, fix)
	}
	args := strings.Fields(fix)[1:] // as pasted: sessionvault --vault DIR remote setup
	cmd := exec.Command(c.bin, args...)
	cmd.Env = c.env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", fix, err, out)
	}
	if ok, _ := check(); !ok {
		t.Errorf("doctor after %q still finds no merge driver", fix)
	}
}

// Two sessions started on two machines merged by a `git pull` by hand (as
// Obsidian Git does): the driver keeps one session in the current state
// without markers, and the next `remote sync` records the other.
func TestGitPullOfConcurrentStarts(t *testing.T) {
	t.Parallel()
	clones := startedOnBoth(t)
	a, b := clones[0], clones[1]
	b.sv("update", "b did that")
	idB := sessionOf(t, b)
	a.sv("remote", "sync")
	b.git("pull", "--no-rebase", "--no-edit", "--quiet", "origin", "main")
	state := readFile(t, filepath.Join(b.dir, "demo", "session-current-state.md"))
	if strings.Contains(state, "<<<<<<<") || strings.Contains(state, "b did that") || sessionOf(t, b) == idB {
		t.Fatalf("after git pull the current state is not a's session alone:\n%s", state)
	}
	out := b.sv("remote", "sync")
	if !strings.Contains(out, idB) {
		t.Errorf("remote sync after the pull does not name %s:\n%s", idB, out)
	}
	rec := readFile(t, filepath.Join(b.dir, "demo", "sessions", idB+".md"))
	if !strings.Contains(rec, "status: abandoned") || !strings.Contains(rec, "b did that ^") {
		t.Errorf("the record of %s:\n%s", idB, rec)
	}
}

// A task and its checkpoint made on one clone travel with `remote sync`: the
// other clone lists the checkpoint (its tag came too) and rolls back to it;
// a task one clone locked (a claim on the remote) is refused to the other
// before any sync, and after it both agree on the holder.
func TestCheckpointsAndLocksTravel(t *testing.T) {
	t.Parallel()
	clones := newRemoteVault(t, 2)
	a, b := clones[0], clones[1]
	a.sv("task", "new", "Parser", "--key-file", "parser.go")
	a.sv("task", "update", "parser", "--phase", "design")
	cp := strings.TrimSpace(a.sv("checkpoint", "create", "designed", "--task", "parser"))
	a.sv("task", "update", "parser", "--phase", "implementation")
	a.sv("remote", "sync")
	b.sv("remote", "sync")
	if out := b.sv("checkpoint", "list"); !strings.Contains(out, cp) {
		t.Fatalf("b does not list a's checkpoint %s:\n%s", cp, out)
	}
	b.sv("rollback", "--checkpoint", cp, "--task", "parser")
	if note := b.read("demo/tasks/parser.md"); !strings.Contains(note, "phase: design\n") {
		t.Fatalf("b's rollback to a's checkpoint:\n%s", note)
	}
	b.sv("remote", "sync")
	a.sv("remote", "sync")

	t0 := time.Now().UTC().Add(-time.Minute)
	at := func(c *clone, d time.Duration) *clone {
		cc := *c
		cc.env = append(append([]string(nil), c.env...), "SESSIONVAULT_NOW="+t0.Add(d).Format(time.RFC3339))
		return &cc
	}
	at(b, 0).sv("task", "lock", "parser", "--holder", "session-on-b")
	// The lock is a claim on the remote: a, before any sync, is refused.
	if out, err := at(a, 10*time.Second).try("task", "lock", "parser", "--holder", "session-on-a"); err == nil || !strings.Contains(out, "E1613 TASK_LOCKED") || !strings.Contains(out, "claimed on origin by session-on-b (machine mb)") {
		t.Fatalf("a's lock of the task b claimed: %v\n%s", err, out)
	}
	a.sv("remote", "sync")
	b.sv("remote", "sync")
	a.sv("remote", "sync")
	for _, c := range []*clone{a, b} {
		if note := c.read("demo/tasks/parser.md"); !strings.Contains(note, "locked_by: session-on-b\n") {
			t.Errorf("%s after the sync:\n%s", c.name, note)
		}
	}
	// a learns it does not hold the lock.
	if out, err := at(a, 20*time.Second).try("task", "update", "parser", "--phase", "x"); err == nil || !strings.Contains(out, "E1613 TASK_LOCKED") || !strings.Contains(out, "session-on-b") {
		t.Errorf("a's save of b's locked task: %v\n%s", err, out)
	}
}

// read returns a vault file of the clone.
func (c *clone) read(rel string) string {
	c.t.Helper()
	b, err := os.ReadFile(filepath.Join(c.dir, filepath.FromSlash(rel)))
	if err != nil {
		c.t.Fatal(err)
	}
	return string(b)
}
