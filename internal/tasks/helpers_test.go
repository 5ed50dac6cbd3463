package tasks

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/errs"
)

// fixedClock is the time the tests' vaults start at; a test moves its own
// copy forward.
var fixedClock = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// gitOut runs git in the vault s and returns its trimmed output; an error
// fails the test.
func gitOut(tb testing.TB, s *Service, args ...string) string {
	tb.Helper()
	full := append([]string{"-C", s.V.Root, "-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false"}, args...)
	cmd := exec.Command("git", full...)
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// head is the vault's HEAD commit.
func head(tb testing.TB, s *Service) string {
	tb.Helper()
	return gitOut(tb, s, "rev-parse", "HEAD")
}

// commitCount is the number of commits reachable from HEAD.
func commitCount(tb testing.TB, s *Service) int {
	tb.Helper()
	n, err := strconv.Atoi(gitOut(tb, s, "rev-list", "--count", "HEAD"))
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// readNote reads a note of the vault from disk.
func readNote(tb testing.TB, s *Service, rel string) string {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(s.V.Root, filepath.FromSlash(rel)))
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// writeNote writes a note of the vault as a person would, outside the
// engine.
func writeNote(tb testing.TB, s *Service, rel, content string) {
	tb.Helper()
	if err := os.WriteFile(filepath.Join(s.V.Root, filepath.FromSlash(rel)), []byte(content), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// editNote replaces old with new in a note on disk (once), failing when the
// note does not hold old.
func editNote(tb testing.TB, s *Service, rel, old, new string) {
	tb.Helper()
	before := readNote(tb, s, rel)
	if !strings.Contains(before, old) {
		tb.Fatalf("%s does not hold %q:\n%s", rel, old, before)
	}
	writeNote(tb, s, rel, strings.Replace(before, old, new, 1))
}

// hasCode reports whether err, or an error it wraps, carries code.
func hasCode(err error, code errs.Code) bool {
	for err != nil {
		var e *errs.Error
		if !errors.As(err, &e) {
			return false
		}
		if e.Code == code {
			return true
		}
		err = e.Err
	}
	return false
}

// wantCode fails the test unless err carries code (itself or wrapped).
func wantCode(tb testing.TB, err error, code errs.Code) {
	tb.Helper()
	if err == nil {
		tb.Fatalf("no error, want %s", code.Name)
	}
	if !hasCode(err, code) {
		tb.Fatalf("error %v (code %s), want %s", err, errs.CodeOf(err).Name, code.Name)
	}
}

// vaultSnapshot is the vault's HEAD, tags and working tree status.
type vaultSnapshot struct{ head, tags, status string }

func snapshot(tb testing.TB, s *Service) vaultSnapshot {
	tb.Helper()
	return vaultSnapshot{head(tb, s), gitOut(tb, s, "tag", "-l"), gitOut(tb, s, "status", "--porcelain")}
}

// unchanged fails the test when the vault's history, tags or working tree
// moved since before.
func unchanged(tb testing.TB, s *Service, before vaultSnapshot) {
	tb.Helper()
	if after := snapshot(tb, s); after != before {
		tb.Fatalf("the vault changed:\nbefore %+v\nafter  %+v", before, after)
	}
}

// newTask makes a task and returns its id; an error fails the test.
func newTask(tb testing.TB, s *Service, o NewTaskOptions) string {
	tb.Helper()
	if o.Project == "" {
		o.Project = "demo"
	}
	out, err := s.TaskNew(o)
	if err != nil {
		tb.Fatalf("task new %q: %v", o.Name, err)
	}
	return out.Task.ID
}

// lastMessage is HEAD's full commit message.
func lastMessage(tb testing.TB, s *Service) string {
	tb.Helper()
	return gitOut(tb, s, "log", "-1", "--format=%B")
}

// gitWith runs git in the vault s with extra environment and standard
// input, and returns its trimmed output; an error fails the test.
func gitWith(tb testing.TB, s *Service, env []string, stdin string, args ...string) string {
	tb.Helper()
	full := append([]string{"-C", s.V.Root, "-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false"}, args...)
	cmd := exec.Command("git", full...)
	cmd.Env = append(append(os.Environ(), "GIT_TERMINAL_PROMPT=0"), env...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// commitOn makes, without touching the working tree or the index, a
// commit on parent that sets rel to content, and returns it.
func commitOn(tb testing.TB, s *Service, parent, rel, content, msg string) string {
	tb.Helper()
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(tb.TempDir(), "index")}
	blob := gitWith(tb, s, nil, content, "hash-object", "-w", "--stdin")
	gitWith(tb, s, env, "", "read-tree", parent)
	gitWith(tb, s, env, "", "update-index", "--add", "--cacheinfo", "100644,"+blob+","+rel)
	tree := gitWith(tb, s, env, "", "write-tree")
	return gitWith(tb, s, nil, "", "commit-tree", tree, "-p", parent, "-m", msg)
}
