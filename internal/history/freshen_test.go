package history

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A commit that reuses an object already stored loose (a note back to an
// earlier content) freshens that object's file, as git does, so that a
// `git gc` or `git prune` running beside it does not remove the object as
// unreachable and old while the new commit comes to need it.
func TestReusedLooseObjectIsFreshened(t *testing.T) {
	t.Parallel()
	r, dir := newRepo(t)
	writeFile(t, dir, "notes/a.md", "first\n")
	mustCommit(t, r, "first", "notes/a.md")
	blob := strings.TrimSpace(git(t, dir, "rev-parse", "HEAD:notes/a.md"))
	obj := filepath.Join(dir, ".git", "objects", blob[:2], blob[2:])
	old := time.Now().Add(-30 * 24 * time.Hour)
	if err := os.Chtimes(obj, old, old); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "notes/a.md", "second\n")
	mustCommit(t, r, "second", "notes/a.md")
	writeFile(t, dir, "notes/a.md", "first\n") // the first blob again
	mustCommit(t, r, "first again", "notes/a.md")
	fi, err := os.Stat(obj)
	if err != nil {
		t.Fatal(err)
	}
	if age := time.Since(fi.ModTime()); age > time.Hour {
		t.Errorf("the reused object %s is %v old: not freshened", blob, age.Round(time.Hour))
	}
	checkConsistent(t, dir)
}

// gc.auto is read as git reads an integer setting, and maintenance.auto
// false turns the estimate off as it turns off git's own.
func TestLooseObjectLimitFromConfig(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		settings []string
		want     int
	}{
		{nil, 6700},
		{[]string{"gc.auto", "300"}, 300},
		{[]string{"gc.auto", "1k"}, 1024},
		{[]string{"gc.auto", "0x10"}, 16},
		{[]string{"gc.auto", "0"}, 0},
		{[]string{"gc.auto", "-1"}, -1},
		{[]string{"gc.auto", "lots"}, 6700},
		{[]string{"maintenance.auto", "false"}, 0},
		{[]string{"maintenance.auto", "true"}, 6700},
	} {
		r, dir := newRepo(t)
		if c.settings != nil {
			git(t, dir, append([]string{"config"}, c.settings...)...)
		}
		r.mu.Lock()
		got := r.config().gcAuto
		r.mu.Unlock()
		if got != c.want {
			t.Errorf("%v: gc.auto read as %d, want %d", c.settings, got, c.want)
		}
	}
}
