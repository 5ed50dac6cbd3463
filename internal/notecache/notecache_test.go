package notecache

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// reader is a load function over a real file that counts its reads.
type reader struct {
	mu    sync.Mutex
	reads int
}

// load returns the load function of the file at path: its content.
func (r *reader) load(path string) func() (string, error) {
	return func() (string, error) {
		r.mu.Lock()
		r.reads++
		r.mu.Unlock()
		b, err := os.ReadFile(path)
		return string(b), err
	}
}

func (r *reader) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reads
}

// write writes content to path in place (same inode when it exists).
func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// age sets path's modification time to an hour ago: a note nobody has
// touched for a while.
func age(t *testing.T, path string) time.Time {
	t.Helper()
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	return old
}

func get(t *testing.T, c *Cache[string], path string, r *reader) string {
	t.Helper()
	v, err := c.Get(path, r.load(path))
	if err != nil {
		t.Fatalf("Get %s: %v", path, err)
	}
	return v
}

// A file unchanged since it was read, and last modified long before, is
// read once: later calls get the value kept.
func TestUnchangedFileIsReadOnce(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.md")
	write(t, p, "status: pending\n")
	age(t, p)
	c, r := New[string](), &reader{}
	for i := 0; i < 3; i++ {
		if got := get(t, c, p, r); got != "status: pending\n" {
			t.Fatalf("call %d = %q", i, got)
		}
	}
	if r.count() != 1 {
		t.Fatalf("the file was read %d times, want once", r.count())
	}
}

// A file modified within RacyWindow of its reading is read again on every
// call (a same-size rewrite within the same timestamp tick would keep its
// stat identity), until it has been still for RacyWindow.
func TestRecentlyModifiedFileIsReadAgain(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.md")
	write(t, p, "x")
	c, r := New[string](), &reader{}
	get(t, c, p, r)
	get(t, c, p, r)
	if r.count() != 2 {
		t.Fatalf("a file just written was read %d times in two calls, want 2", r.count())
	}
	age(t, p)
	get(t, c, p, r) // the stat changed: read, and now trusted
	get(t, c, p, r)
	if r.count() != 3 {
		t.Fatalf("a settled file was read %d times in all, want 3", r.count())
	}
}

// Rewrites right after a read, to the same size and without a pause, are
// seen on the next call however fine the file system's timestamps are.
func TestSameSizeRewriteRightAfterAReadIsSeen(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.md")
	c, r := New[string](), &reader{}
	for i := 0; i < 50; i++ {
		a, b := fmt.Sprintf("status: pending %02d\n", i), fmt.Sprintf("status: blocked %02d\n", i)
		write(t, p, a)
		if got := get(t, c, p, r); got != a {
			t.Fatalf("round %d: got %q, want %q", i, got, a)
		}
		write(t, p, b)
		if got := get(t, c, p, r); got != b {
			t.Fatalf("round %d: after a same-size rewrite got %q, want %q", i, got, b)
		}
	}
}

// A file replaced by another of the same size and modification time (a
// tool that keeps modification times, as rsync -t or an unzip does, writing
// a new file and renaming it over) is seen: its inode changed.
func TestReplacementWithSameSizeAndTimeIsSeen(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.md")
	write(t, p, "status: pending\n")
	old := age(t, p)
	c, r := New[string](), &reader{}
	get(t, c, p, r)
	tmp := filepath.Join(dir, ".a.md.tmp")
	write(t, tmp, "status: blocked\n")
	if err := os.Chtimes(tmp, old, old); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
	if got := get(t, c, p, r); got != "status: blocked\n" {
		t.Fatalf("after the replacement got %q", got)
	}
}

// A missing file, or one load fails on, is not cached: the error comes
// back, and once the file is there it is read.
func TestErrorsAreNotCached(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.md")
	c, r := New[string](), &reader{}
	if _, err := c.Get(p, r.load(p)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Get of a missing file: %v, want fs.ErrNotExist", err)
	}
	write(t, p, "x")
	age(t, p)
	broken := errors.New("does not parse")
	if _, err := c.Get(p, func() (string, error) { return "", broken }); !errors.Is(err, broken) {
		t.Fatalf("Get with a failing load: %v", err)
	}
	if got := get(t, c, p, r); got != "x" {
		t.Fatalf("after the failures got %q", got)
	}
	if c.Len() != 1 {
		t.Fatalf("Len = %d, want 1", c.Len())
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(p, r.load(p)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Get of a removed file: %v, want fs.ErrNotExist", err)
	}
	if c.Len() != 0 {
		t.Fatalf("Len after the file was removed = %d, want 0", c.Len())
	}
}

// Forget drops the files of a folder its listing no longer shows, and
// nothing of other folders: the cache holds the files still there.
func TestForgetKeepsTheListedFiles(t *testing.T) {
	root := t.TempDir()
	dir, other := filepath.Join(root, "tasks"), filepath.Join(root, "other")
	for _, d := range []string{dir, other, filepath.Join(dir, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	c, r := New[string](), &reader{}
	for _, p := range []string{filepath.Join(dir, "a.md"), filepath.Join(dir, "b.md"), filepath.Join(dir, "sub", "c.md"), filepath.Join(other, "a.md")} {
		write(t, p, "x")
		get(t, c, p, r)
	}
	c.Forget(dir, map[string]bool{"a.md": true})
	if c.Len() != 3 {
		t.Fatalf("Len after Forget = %d, want 3 (tasks/a.md, tasks/sub/c.md, other/a.md)", c.Len())
	}
	c.Forget(dir+string(filepath.Separator), nil)
	if c.Len() != 2 {
		t.Fatalf("Len after forgetting every file of the folder = %d, want 2", c.Len())
	}
}

// The generation changes whenever a Get returns no cached value (its file
// read, or failing) and whenever Forget drops a value, and only then: the
// same generation before and after reading a set of files means every value
// read is the one the cache held at it.
func TestGenerationChangesWithTheValues(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.md"), filepath.Join(dir, "b.md")
	write(t, a, "a")
	write(t, b, "b")
	age(t, a)
	age(t, b)
	c, r := New[string](), &reader{}
	gen := c.Gen()
	step := func(what string, changes bool, do func()) {
		t.Helper()
		do()
		if got := c.Gen(); (got != gen) != changes {
			t.Fatalf("%s: the generation went from %d to %d", what, gen, got)
		}
		gen = c.Gen()
	}
	step("a read", true, func() { get(t, c, a, r) })
	step("a from the cache", false, func() { get(t, c, a, r) })
	step("b read", true, func() { get(t, c, b, r) })
	step("a and b from the cache", false, func() { get(t, c, a, r); get(t, c, b, r) })
	step("a rewritten and read", true, func() { write(t, a, "A"); age(t, a); get(t, c, a, r) })
	step("a and b listed", false, func() { c.Forget(dir, map[string]bool{"a.md": true, "b.md": true}) })
	step("b removed from the listing", true, func() { c.Forget(dir, map[string]bool{"a.md": true}) })
	step("a from the cache", false, func() { get(t, c, a, r) })
	step("a rewritten, failing to load", true, func() {
		write(t, a, "!")
		age(t, a)
		_, _ = c.Get(a, func() (string, error) { return "", errors.New("broken") })
	})
	step("a missing", true, func() {
		if err := os.Remove(a); err != nil {
			t.Fatal(err)
		}
		_, _ = c.Get(a, r.load(a))
	})
}

// Calls from many goroutines on the same files all get the file's value.
func TestConcurrentGets(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for i := 0; i < 20; i++ {
		p := filepath.Join(dir, fmt.Sprintf("%02d.md", i))
		write(t, p, p)
		if i%2 == 0 {
			age(t, p)
		}
		paths = append(paths, p)
	}
	c, r := New[string](), &reader{}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := 0; round < 20; round++ {
				for _, p := range paths {
					v, err := c.Get(p, r.load(p))
					if err == nil && v != p {
						err = fmt.Errorf("%s: got %q", p, v)
					}
					if err != nil {
						errs <- err
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if c.Len() != len(paths) {
		t.Fatalf("Len = %d, want %d", c.Len(), len(paths))
	}
}
