// Package notecache keeps values parsed from files, each with the stat
// identity of the file it was read from (guard.StatIdentity: size,
// modification time and, where the platform has them, inode and change
// time), so that a long-lived process — the MCP server — reads and parses
// again only the files that changed since its previous call. A plain CLI
// process has no use for it: it reads each note once.
//
// A cached value is returned only while its file keeps the stat identity it
// had before it was read, and only when that reading was not racy: a file
// modified less than RacyWindow before it was read may be rewritten again
// within the same timestamp tick, to the same size and in place, without
// its stat identity changing (git's "racy clean" rule), so such a value is
// read again on every call until the file has been still for RacyWindow. A
// change by a person in Obsidian, by git (checkout, pull) or by another
// process is therefore seen on the next call. The cache holds one entry per
// file read and not since forgotten (Forget drops the files a listing no
// longer shows), so its size follows the files it is used for.
//
// Its generation (Gen) tells a caller whether what it derived from the
// values is still current: it changes whenever a Get returns no cached value
// (its file read, or unreadable) and whenever Forget drops a value. When it
// is the same before and after a caller's Gets of every file of a set, each
// of those Gets returned the value the cache held at that generation, so
// what the caller computed from them holds for every later set of Gets of
// the same files made at the same generation.
package notecache

import (
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sessionvault/sessionvault/internal/guard"
)

// RacyWindow is how long before its reading a file must have been last
// modified for the value read to be trusted while its stat identity holds.
// It covers the coarsest timestamp granularity of the file systems a vault
// lives on (FAT's 2 s) and a small skew between the clock of the file
// system (a network share's) and this process's.
const RacyWindow = 2 * time.Second

// Cache holds the values parsed from files, by absolute path. It is safe
// for concurrent use. The zero value is not usable; make one with New.
type Cache[T any] struct {
	mu      sync.Mutex
	entries map[string]entry[T]
	// gen is the generation: it counts the Gets that read their file and
	// the values Forget dropped. It changes under mu, with the entries.
	gen atomic.Uint64
}

// entry is one file's cached value: the stat identity the file had before
// the value was read, and whether that reading can be trusted while the
// identity holds (the file was last modified at least RacyWindow before).
type entry[T any] struct {
	id      string
	trusted bool
	value   T
}

// New returns an empty cache.
func New[T any]() *Cache[T] { return &Cache[T]{entries: map[string]entry[T]{}} }

// Get returns the value of the file at abs (an absolute path): the cached
// one when the file still has the stat identity it had when that value was
// read and the reading was not racy; otherwise load's, which is cached with
// the identity taken just before load ran. load reads and parses the file;
// its error is returned as it is and nothing is cached then (a missing
// file, one that does not parse). A file whose stat fails is not cached
// either: load runs and reports what is wrong.
func (c *Cache[T]) Get(abs string, load func() (T, error)) (T, error) {
	start := time.Now()
	id, err := guard.StatIdentity(abs)
	if err != nil {
		c.forget(abs)
		return load()
	}
	c.mu.Lock()
	e, ok := c.entries[abs]
	c.mu.Unlock()
	if ok && e.trusted && e.id == id {
		return e.value, nil
	}
	v, err := load()
	if err != nil {
		c.forget(abs)
		return v, err
	}
	mtime, ok := modTime(id)
	c.mu.Lock()
	c.entries[abs] = entry[T]{id: id, trusted: ok && mtime.Before(start.Add(-RacyWindow)), value: v}
	c.gen.Add(1) // under mu: whoever sees the new value sees the new generation
	c.mu.Unlock()
	return v, nil
}

// Forget drops the entries of the files directly in the folder dir (an
// absolute path) whose base name is not in listed: the files a listing of
// dir no longer shows. A nil listed drops every file of dir.
func (c *Cache[T]) Forget(dir string, listed map[string]bool) {
	dir = filepath.Clean(dir)
	prefix := dir
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for abs := range c.entries {
		// abs is directly in dir: dir, a separator, and a base name.
		if base, ok := strings.CutPrefix(abs, prefix); ok && base != "" && filepath.Base(abs) == base && !listed[base] {
			delete(c.entries, abs)
			c.gen.Add(1)
		}
	}
}

// Gen returns the cache's generation (see the package comment): it changes
// whenever a Get returns no cached value, and whenever Forget drops a value.
func (c *Cache[T]) Gen() uint64 { return c.gen.Load() }

// Len returns the number of files the cache holds a value of.
func (c *Cache[T]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// forget drops abs's entry, and moves the generation on (a Get that
// returns no cached value changes it, whether or not abs had an entry).
func (c *Cache[T]) forget(abs string) {
	c.mu.Lock()
	delete(c.entries, abs)
	c.gen.Add(1)
	c.mu.Unlock()
}

// modTime returns the modification time a stat identity holds (its second
// field, in nanoseconds since the epoch: see guard.StatIdentity), and
// whether it could be read; an identity it cannot be read from is never
// trusted.
func modTime(id string) (time.Time, bool) {
	f := strings.Fields(id)
	if len(f) < 2 {
		return time.Time{}, false
	}
	ns, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(0, ns), true
}
