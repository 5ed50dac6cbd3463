package reconcile

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/notemerge"
	"github.com/sessionvault/sessionvault/internal/session"
	"github.com/sessionvault/sessionvault/internal/session/servicetest"
	"github.com/sessionvault/sessionvault/internal/testenv"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// TestMain lets the test binary stand in for `sessionvault merge-driver`:
// git runs it (as .git/config names it, see machine.driver) with the
// arguments `merge-driver %O %A %B %P` and it merges the note as the real
// driver does, with NoteOwnership. Every other run runs the tests.
func TestMain(m *testing.M) {
	if len(os.Args) == 6 && os.Args[1] == "merge-driver" {
		os.Exit(mergeDriver(os.Args[2], os.Args[3], os.Args[4], os.Args[5]))
	}
	os.Exit(testenv.Run(m))
}

// mergeDriver is internal/cli's merge-driver command: the merge of base,
// ours and theirs written over ours; 1 when a person's section was left
// with conflict markers, 2 on an error.
func mergeDriver(base, ours, theirs, path string) int {
	var b [3][]byte
	for i, p := range []string{base, ours, theirs} {
		data, err := os.ReadFile(p)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		b[i] = data
	}
	merged, conflicted := notemerge.MergeNotes(filepath.ToSlash(path), b[0], b[1], b[2], NoteOwnership())
	if err := os.WriteFile(ours, merged, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if conflicted {
		return 1
	}
	return 0
}

// testService returns the reconcile service over a fresh vault with
// project demo, under the clock *now (the system clock when now is nil).
func testService(tb testing.TB, now *time.Time) *Service { return New(servicetest.New(tb, now)) }

// machine is one clone of a shared vault: its reconcile service, its own
// clock and its name.
type machine struct {
	*Service
	t    *testing.T
	name string
	now  time.Time
}

// clock is m's clock as session.Service.Now takes it.
func (m *machine) clock() time.Time { return m.now }

// tick moves m's clock on by d.
func (m *machine) tick(d time.Duration) { m.now = m.now.Add(d) }

// gitEnv is the environment the tests run the git CLI in: no person's or
// system's git configuration, a fixed identity.
func gitEnv() []string {
	return append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME=Pat", "GIT_AUTHOR_EMAIL=pat@example.invalid", "GIT_COMMITTER_NAME=Pat", "GIT_COMMITTER_EMAIL=pat@example.invalid")
}

// gitIn runs git in dir and returns its trimmed output, failing the test
// on an error.
func gitIn(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = gitEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return strings.TrimSpace(string(out))
}

// git runs git in m's vault.
func (m *machine) git(args ...string) string {
	m.t.Helper()
	return gitIn(m.t, m.V.Root, args...)
}

// driverBin is the program registered as the vault's merge driver: this
// test binary (TestMain).
func driverBin(t testing.TB) string {
	t.Helper()
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// twoMachines makes a vault with project demo on machine a (where it was
// created, the primary: plain ids) with .gitattributes sending notes to
// the merge driver, and a `git clone` of it on machine b (secondary, ids
// ending in -mb), each with the driver registered as `remote setup`
// registers it. Both clocks start at start.
func twoMachines(t *testing.T, start time.Time) (a, b *machine) {
	t.Helper()
	a = &machine{t: t, name: "a", now: start}
	a.Service = testService(t, nil)
	a.Now = a.clock
	if _, err := a.V.Transact(func(tx *vault.Tx) (vault.Change, error) {
		return vault.Change{Operation: "init", Summary: "merge driver"}, tx.Write(".gitattributes", []byte(vault.GitAttributes))
	}); err != nil {
		t.Fatal(err)
	}
	if err := a.V.SetupMergeDriver(driverBin(t)); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "b")
	gitIn(t, filepath.Dir(dir), "clone", "--quiet", a.V.Root, dir)
	v, err := vault.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.SetMachine(vault.NewSecondaryMachine("mb")); err != nil {
		t.Fatal(err)
	}
	if err := v.SetupMergeDriver(driverBin(t)); err != nil {
		t.Fatal(err)
	}
	b = &machine{t: t, name: "b", now: start}
	b.Service = New(session.New(v))
	b.Now = b.clock
	return a, b
}

// pull merges from's branch into m as `git pull` does (a merge commit by
// git with the merge driver; a fast-forward when m has nothing of its
// own), then signs m's merged current state as `remote sync` does, and
// returns whether git made a merge commit.
func (m *machine) pull(from *machine) bool {
	m.t.Helper()
	before := m.git("rev-parse", "HEAD")
	m.git("pull", "--quiet", "--no-rebase", "--no-edit", from.V.Root, "main")
	if m.git("diff", "--name-only", before, "HEAD", "--", "demo/"+session.CurrentStateNote) != "" {
		if _, _, err := m.Accept("demo"); err != nil {
			m.t.Fatalf("%s: accepting the merged state: %v", m.name, err)
		}
	}
	return len(strings.Fields(m.git("rev-list", "--parents", "-1", "HEAD"))) == 3
}

// reconcile runs Reconcile on m, failing the test on an error.
func (m *machine) reconcile() ReconcileReport {
	m.t.Helper()
	rep, err := m.Reconcile()
	if err != nil {
		m.t.Fatalf("%s: reconcile: %v", m.name, err)
	}
	return rep
}

// read returns the vault file rel of m ("" when there is none).
func (m *machine) read(rel string) string {
	m.t.Helper()
	b, err := os.ReadFile(filepath.Join(m.V.Root, filepath.FromSlash(rel)))
	if err != nil && !os.IsNotExist(err) {
		m.t.Fatal(err)
	}
	return string(b)
}

// state is m's current state of project demo.
func (m *machine) state() string { return m.read("demo/" + session.CurrentStateNote) }

// sessionID is the session m's current state holds ("" when idle).
func (m *machine) sessionID() string {
	m.t.Helper()
	st, err := m.Current("demo")
	if err != nil {
		m.t.Fatal(err)
	}
	return st.Session
}

// entryIDRe is a line's engine block id at its end (u-12, d-1-mb, k-3).
var entryIDRe = regexp.MustCompile(`\^([a-z]+-\d+(?:-[a-z][a-z0-9]*)?)\s*$`)

// assertClean checks what a person would check after a sync on m: `check`
// finds no problem, `git fsck --strict` passes, nothing is left uncommitted,
// no note of project demo holds a conflict marker, and within each session
// (its current state or record, and the notes in its sessions/<id>/
// folder) no entry id is on two lines.
func (m *machine) assertClean() {
	m.t.Helper()
	rep, err := m.Check(nil)
	if err != nil {
		m.t.Fatalf("%s: check: %v", m.name, err)
	}
	for _, p := range rep.Problems {
		m.t.Errorf("%s: check: %s:%d: %s", m.name, p.Note, p.Line, p.Why)
	}
	m.git("fsck", "--strict", "--no-progress")
	if st := m.git("status", "--porcelain"); st != "" {
		m.t.Errorf("%s: left uncommitted:\n%s", m.name, st)
	}
	bySession := map[string]string{}
	for _, f := range strings.Split(m.git("ls-files", "demo"), "\n") {
		text := m.read(f)
		if strings.Contains(text, "\n<<<<<<<") || strings.Contains(text, "\n>>>>>>>") {
			m.t.Errorf("%s: conflict markers in %s", m.name, f)
		}
		if rest, ok := strings.CutPrefix(f, "demo/"+session.SessionsDir+"/"); ok && strings.HasSuffix(f, ".md") {
			id, _, _ := strings.Cut(strings.TrimSuffix(rest, ".md"), "/")
			bySession[id] += text + "\n"
		}
	}
	if id := m.sessionID(); id != "" {
		bySession[id] += m.state()
	}
	for id, text := range bySession {
		seen := map[string]int{}
		for _, l := range strings.Split(text, "\n") {
			if mm := entryIDRe.FindStringSubmatch(l); mm != nil {
				seen[mm[1]]++
			}
		}
		for e, n := range seen {
			if n > 1 {
				m.t.Errorf("%s: session %s holds ^%s on %d lines", m.name, id, e, n)
			}
		}
	}
}
