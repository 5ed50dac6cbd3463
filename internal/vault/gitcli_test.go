package vault

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessionvault/sessionvault/internal/errs"
)

// gitT runs the git CLI in dir as someone working in the vault by hand
// would, and returns its trimmed output; a failure fails the test.
func gitT(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := gitTry(dir, args...)
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// gitTry is gitT that returns git's error (its output holds git's message).
func gitTry(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=Hand", "GIT_AUTHOR_EMAIL=hand@example.com",
		"GIT_COMMITTER_NAME=Hand", "GIT_COMMITTER_EMAIL=hand@example.com", "GIT_TERMINAL_PROMPT=0")
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// writeNote writes rel in v as an editor would (no engine involved).
func writeNote(t testing.TB, v *Vault, rel, content string) {
	t.Helper()
	p := filepath.Join(v.Root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// readNote returns rel's content on disk ("" when missing).
func readNote(t testing.TB, v *Vault, rel string) string {
	t.Helper()
	b, _ := os.ReadFile(filepath.Join(v.Root, filepath.FromSlash(rel)))
	return string(b)
}

// entryOp is an operation that appends line to rel.
func entryOp(rel, line string) func(tx *Tx) (Change, error) {
	return func(tx *Tx) (Change, error) {
		cur, _ := tx.Read(rel)
		return Change{Operation: "append", Summary: line}, tx.Write(rel, append(cur, []byte(line+"\n")...))
	}
}

// writeOp is an operation that writes content to rel.
func writeOp(rel, content string) func(tx *Tx) (Change, error) {
	return func(tx *Tx) (Change, error) {
		return Change{Operation: "write", Summary: rel}, tx.Write(rel, []byte(content))
	}
}

// mustTransact runs fn as one operation and fails the test on an error.
func mustTransact(t testing.TB, v *Vault, fn func(tx *Tx) (Change, error)) Result {
	t.Helper()
	res, err := v.Transact(fn)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// wantCode fails the test unless err carries code.
func wantCode(t testing.TB, err error, code errs.Code) {
	t.Helper()
	if err == nil || errs.CodeOf(err) != code {
		t.Fatalf("err = %v (code %v), want code %v", err, errs.CodeOf(err), code.Name)
	}
}

// gitStatus returns `git status --porcelain` of v.
func gitStatus(t testing.TB, v *Vault) string {
	t.Helper()
	return gitT(t, v.Root, "status", "--porcelain")
}
