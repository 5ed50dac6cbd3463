// Package servicetest makes what the tests of the capabilities built on
// the session service need: a session service over a fresh vault (project
// demo, made as `sessionvault init --project demo` makes it) under a clock
// the test moves, and checks of the vault as a user sees it — its commits,
// its files, a person's commits with git. Imported by tests only.
package servicetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/session"
	"github.com/sessionvault/sessionvault/internal/session/sessiontest"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// New returns a session service over a fresh vault in tb's temporary
// folder with project demo, under the clock *now (the system clock when
// now is nil).
func New(tb testing.TB, now *time.Time) *session.Service {
	tb.Helper()
	root := filepath.Join(tb.TempDir(), "vault")
	if err := sessiontest.MakeVault(root, "demo", func(v *vault.Vault, project string) error {
		_, err := Open(v, now).InitProject(project)
		return err
	}); err != nil {
		tb.Fatal(err)
	}
	return Reopen(tb, root, now)
}

// Open returns the session service over v under the clock *now (the
// system clock when now is nil).
func Open(v *vault.Vault, now *time.Time) *session.Service {
	s := session.New(v)
	if now != nil {
		s.Now = func() time.Time { return *now }
	}
	return s
}

// Reopen opens the vault at root again (its settings are read when it
// opens) and returns its session service under *now.
func Reopen(tb testing.TB, root string, now *time.Time) *session.Service {
	tb.Helper()
	v, err := vault.Open(root)
	if err != nil {
		tb.Fatal(err)
	}
	return Open(v, now)
}

// Git runs git in the vault at root and returns its output, trimmed.
func Git(t testing.TB, root string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", root}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// Subjects returns the Subjects of the vault's commits, newest first.
func Subjects(t testing.TB, root string) []string {
	t.Helper()
	return strings.Split(Git(t, root, "log", "--format=%s"), "\n")
}

// Snapshot is what a refused operation must leave as it was: HEAD and
// every file of the working tree.
type Snapshot struct {
	head  string
	files map[string]string
}

// Take records the vault at root as it is now.
func Take(t testing.TB, root string) Snapshot {
	t.Helper()
	st := Snapshot{head: Git(t, root, "rev-parse", "HEAD"), files: map[string]string{}}
	err := filepath.WalkDir(root, func(p string, e os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if e.IsDir() && (rel == ".git" || rel == filepath.Join(".sessionvault", "state")) {
			return filepath.SkipDir
		}
		if !e.IsDir() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			st.files[filepath.ToSlash(rel)] = string(data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// AssertUnchanged fails unless the vault is as before: no commit, no note
// written, added or removed.
func AssertUnchanged(t testing.TB, root string, before Snapshot, what string) {
	t.Helper()
	after := Take(t, root)
	if after.head != before.head {
		t.Errorf("%s: made a commit (%s)", what, Git(t, root, "log", "-1", "--format=%s"))
	}
	for p, data := range after.files {
		if old, ok := before.files[p]; !ok {
			t.Errorf("%s: wrote %s", what, p)
		} else if old != data {
			t.Errorf("%s: changed %s", what, p)
		}
	}
	for p := range before.files {
		if _, ok := after.files[p]; !ok {
			t.Errorf("%s: removed %s", what, p)
		}
	}
}

// AssertClean fails when the vault's working tree has changes git has not
// committed.
func AssertClean(t testing.TB, root string) {
	t.Helper()
	if st := Git(t, root, "status", "--porcelain"); st != "" {
		t.Errorf("the vault has uncommitted changes:\n%s", st)
	}
}

// WantCode fails unless err carries code.
func WantCode(t testing.TB, err error, code errs.Code, what string) {
	t.Helper()
	if !errs.Is(err, code) {
		t.Errorf("%s: err = %v (code %v), want %v", what, err, errs.CodeOf(err), code)
	}
}

// ReadNote reads a vault note.
func ReadNote(t testing.TB, root, rel string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// PersonCommits writes files into the vault as a person does, and commits
// them with git (not through the engine).
func PersonCommits(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for rel, data := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	Git(t, root, "add", "-A")
	Git(t, root, "-c", "user.name=Sam", "-c", "user.email=sam@example.invalid", "commit", "-qm", "a person's edit")
}

// WithTimeZone sets the vault's time_zone (a person's commit of its
// config) and returns its session service opened again (the settings are
// read when it opens), under *now.
func WithTimeZone(t testing.TB, root, zone string, now *time.Time) *session.Service {
	t.Helper()
	cfg := ReadNote(t, root, ".sessionvault/config.yaml")
	PersonCommits(t, root, map[string]string{".sessionvault/config.yaml": cfg + "\ntime_zone: " + zone + "\n"})
	return Reopen(t, root, now)
}
