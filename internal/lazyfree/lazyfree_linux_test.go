package lazyfree

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// heldDeleted counts this process's open files that were path before it
// was replaced or removed.
func heldDeleted(t *testing.T, path string) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if l, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && l == path+" (deleted)" {
			n++
		}
	}
	return n
}

// A file held while it is replaced keeps its blocks (it stays open) until
// the replacement is done; then the closer lets it go.
func TestHeldFileIsFreedAfterTheReplacement(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	if err := os.WriteFile(path, []byte(strings.Repeat("old ", 4096)), 0o644); err != nil {
		t.Fatal(err)
	}
	next := filepath.Join(dir, "next")
	if err := os.WriteFile(next, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	var f Freer
	done := f.Hold(path)
	if err := os.Rename(next, path); err != nil {
		t.Fatal(err)
	}
	if n := heldDeleted(t, path); n != 1 {
		t.Fatalf("%d replaced files held during the replacement, want 1", n)
	}
	done()
	f.Wait()
	if n := heldDeleted(t, path); n != 0 {
		t.Fatalf("%d replaced files still held after Wait, want 0", n)
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Fatalf("path holds %q, want the replacement", b)
	}
}

// Nothing is held for a missing file, a symbolic link, a FIFO or a nil
// Freer, and Hold does not block on a FIFO.
func TestHoldHoldsOnlyRegularFiles(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("x"), 0o644)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadDir("/proc/self/fd")
	var f Freer
	for _, p := range []string{filepath.Join(dir, "missing"), link, fifo} {
		done := f.Hold(p)
		if now, _ := os.ReadDir("/proc/self/fd"); len(now) != len(before) {
			t.Errorf("Hold(%s) holds a file", filepath.Base(p))
		}
		done()
	}
	var nilFreer *Freer
	nilFreer.Hold(target)()
	nilFreer.Wait()
	if now, _ := os.ReadDir("/proc/self/fd"); len(now) != len(before) {
		t.Error("a nil Freer holds a file")
	}
}

// Held counts the files held, not the paths asked for.
func TestHeldCountsHeldFiles(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	os.WriteFile(p, []byte("x"), 0o644)
	var f Freer
	f.Hold(p)()
	f.Hold(filepath.Join(dir, "missing"))()
	f.Wait()
	if n := f.Held(); n != 1 {
		t.Fatalf("Held = %d, want 1", n)
	}
}

// Files handed over from many goroutines while others Wait are all closed,
// and the closer stops once there are none.
func TestConcurrentHandoversAndWaits(t *testing.T) {
	dir := t.TempDir()
	var f Freer
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				p := filepath.Join(dir, fmt.Sprintf("f%d-%d", g, i))
				os.WriteFile(p, []byte("x"), 0o644)
				done := f.Hold(p)
				os.Remove(p)
				done()
			}
		}()
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				f.Wait()
			}
		}()
	}
	wg.Wait()
	f.Wait()
	if n := f.Held(); n != 400 {
		t.Fatalf("held %d files, want 400", n)
	}
	entries, _ := os.ReadDir("/proc/self/fd")
	for _, e := range entries {
		if l, _ := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); strings.HasPrefix(l, dir) {
			t.Fatalf("still open after Wait: %s", l)
		}
	}
	f.mu.Lock()
	running := f.running
	f.mu.Unlock()
	if running {
		t.Fatal("the closer still runs with nothing to close")
	}
}
