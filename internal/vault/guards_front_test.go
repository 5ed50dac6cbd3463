package vault

import (
	"os"
	"path/filepath"
	"testing"
)

// Lines a save into a replaced file added are guarded (put back should a
// later save drop them), but only the body's: a stale buffer's old value of
// a property is not put back beside the current one (a second definition
// leaves the note unreadable to every operation after).
func TestGuardedLinesSkipFrontMatter(t *testing.T) {
	v := newVault(t)
	note := filepath.Join(v.Root, "n.md")
	ancestor := "---\nversion: 4\n---\n# N\n\nold line\n"
	stale := "---\nversion: 3\n---\n# N\n\nold line\nperson line\n"
	live := "---\nversion: 5\n---\n# N\n\nold line\n"
	if err := os.WriteFile(note, []byte(live), 0o644); err != nil {
		t.Fatal(err)
	}
	repo, err := v.repo()
	if err != nil {
		t.Fatal(err)
	}
	w := &writer{v: v, repo: repo}
	w.guardLines("n.md", []byte(ancestor), []byte(stale))
	w.applyGuards()
	got, _ := os.ReadFile(note)
	want := "---\nversion: 5\n---\n# N\n\nold line\nperson line\n"
	if string(got) != want {
		t.Fatalf("after the guards:\n%s\nwant:\n%s", got, want)
	}
}
