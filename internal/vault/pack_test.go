package vault

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessionvault/sessionvault/internal/history/historytest"
)

// A vault with more loose objects than gc.auto lets stand is packed by
// git; under the limit, or with gc.auto 0, nothing is started. The vault
// goes on committing, and git finds it sound.
func TestLooseObjectsArePacked(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	for i, c := range historytest.ContentsIn17("note", 3) {
		mustTransact(t, v, writeOp(fmt.Sprintf("n%d.md", i), c))
	}
	if started, err := v.PackLooseObjects(true); started || err != nil {
		t.Fatalf("under git's default limit (6,700): started %v, %v", started, err)
	}
	gitT(t, v.Root, "config", "gc.autoDetach", "false") // git gc in the foreground: done when it returns
	gitT(t, v.Root, "config", "gc.auto", "0")
	if started, err := v.PackLooseObjects(true); started || err != nil {
		t.Fatalf("with gc.auto 0: started %v, %v", started, err)
	}
	gitT(t, v.Root, "config", "gc.auto", "256") // more than one object in objects/17
	before := gitT(t, v.Root, "count-objects", "-v")
	started, err := v.PackLooseObjects(true)
	if !started || err != nil {
		t.Fatalf("over the limit: started %v, %v", started, err)
	}
	after := gitT(t, v.Root, "count-objects", "-v")
	if !strings.HasPrefix(after, "count: 0\n") || !strings.Contains(after, "packs: 1") {
		t.Errorf("the loose objects are not packed:\nbefore\n%s\nafter\n%s", before, after)
	}
	if started, _ := v.PackLooseObjects(true); started {
		t.Error("packed again with no loose objects left")
	}
	if _, err := v.Transact(appendOp("n0.md", "after packing", nil)); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(v.Root, "n0.md")); !strings.HasSuffix(string(b), "after packing\n") {
		t.Errorf("n0.md = %q", b)
	}
	gitT(t, v.Root, "fsck", "--strict")
	if s := gitT(t, v.Root, "status", "--porcelain"); s != "" {
		t.Errorf("git status after packing:\n%s", s)
	}
}

// git run for the vault works on the vault even when the environment
// points git at another repository (sessionvault run from a git hook of
// the code repository): packing never touches that one.
func TestVaultGitIgnoresAnotherRepository(t *testing.T) {
	v := newVault(t)
	other := t.TempDir()
	gitT(t, other, "init", "-q")
	t.Setenv("GIT_DIR", filepath.Join(other, ".git"))
	t.Setenv("GIT_INDEX_FILE", filepath.Join(other, ".git", "index"))
	got, err := v.git("rev-parse", "--absolute-git-dir")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := filepath.EvalSymlinks(filepath.Join(v.Root, ".git"))
	if g, _ := filepath.EvalSymlinks(got); g != want {
		t.Errorf("git for the vault works in %s, not %s", got, want)
	}
}
