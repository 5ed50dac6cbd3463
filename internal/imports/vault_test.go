package imports

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/session"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// gitOut runs git in the vault and returns its output, trimmed.
func gitOut(t testing.TB, root string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", root}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// subjects returns the subjects of the vault's commits, newest first.
func subjects(t testing.TB, root string) []string {
	t.Helper()
	return strings.Split(gitOut(t, root, "log", "--format=%s"), "\n")
}

// vaultState is what a refused operation must leave as it was: HEAD and
// every file of the working tree.
type vaultState struct {
	head  string
	files map[string]string
}

func snapshotVault(t testing.TB, root string) vaultState {
	t.Helper()
	st := vaultState{head: gitOut(t, root, "rev-parse", "HEAD"), files: map[string]string{}}
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

// assertUnchanged fails unless the vault is as before: no commit, no note
// written, added or removed.
func assertUnchanged(t testing.TB, root string, before vaultState, what string) {
	t.Helper()
	after := snapshotVault(t, root)
	if after.head != before.head {
		t.Errorf("%s: made a commit (%s)", what, gitOut(t, root, "log", "-1", "--format=%s"))
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

// assertClean fails when the vault's working tree has changes git has not
// committed.
func assertClean(t testing.TB, root string) {
	t.Helper()
	if st := gitOut(t, root, "status", "--porcelain"); st != "" {
		t.Errorf("the vault has uncommitted changes:\n%s", st)
	}
}

// wantCode fails unless err carries code.
func wantCode(t testing.TB, err error, code errs.Code, what string) {
	t.Helper()
	if !errs.Is(err, code) {
		t.Errorf("%s: err = %v (code %v), want %v", what, err, errs.CodeOf(err), code)
	}
}

// readNote reads a vault note.
func readNote(t testing.TB, s *Service, rel string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(s.V.Root, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// personCommits writes files into the vault as a person does, and commits
// them with git (not through the engine).
func personCommits(t testing.TB, s *Service, files map[string]string) {
	t.Helper()
	for rel, data := range files {
		p := filepath.Join(s.V.Root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitOut(t, s.V.Root, "add", "-A")
	gitOut(t, s.V.Root, "-c", "user.name=Sam", "-c", "user.email=sam@example.invalid", "commit", "-qm", "a person's edit")
}

// withTimeZone sets the vault's time_zone and returns a service over the
// vault opened again (the settings are read when it opens), under *now.
func withTimeZone(t testing.TB, s *Service, zone string, now *time.Time) *Service {
	t.Helper()
	cfg := readNote(t, s, ".sessionvault/config.yaml")
	personCommits(t, s, map[string]string{".sessionvault/config.yaml": cfg + "\ntime_zone: " + zone + "\n"})
	v, err := vault.Open(s.V.Root)
	if err != nil {
		t.Fatal(err)
	}
	ns := session.New(v)
	ns.Now = func() time.Time { return *now }
	return New(ns)
}
