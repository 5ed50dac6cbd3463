package history

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// emptyTree is the id of the tree with no entries, which git treats as
// always present.
var emptyTree = plumbing.NewHash("4b825dc642cb6eb9a060e54bf8d69288fbee4904")

// maxCachedTreeEntries bounds the decoded-tree cache (about 100 bytes each).
const maxCachedTreeEntries = 1 << 18

// storage returns a go-git object storage for the repository. It is reused
// only while .git/objects/pack is unchanged: git gc and repack add and delete
// packs there, which would leave a long-lived storage reading packs that are
// gone or missing ones that are new.
func (r *Repo) storage() *filesystem.Storage {
	stamp, _, err := lstatStamp(filepath.Join(r.gitdir, "objects", "pack"))
	if err != nil {
		stamp = fileStamp{}
	}
	if r.st != nil && stamp == r.stStamp && stamp.valid() {
		return r.st
	}
	r.st = filesystem.NewStorageWithOptions(
		osfs.New(r.gitdir, osfs.WithBoundOS()),
		cache.NewObjectLRU(8*cache.MiByte),
		filesystem.Options{},
	)
	r.stStamp = stamp
	return r.st
}

// object reads an object, retrying once with a fresh storage (a pack may
// have been replaced between the staleness check and the read).
func (r *Repo) object(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	o, err := r.storage().EncodedObject(t, h)
	if err != nil {
		r.st = nil
		o, err = r.storage().EncodedObject(t, h)
	}
	if err != nil {
		return nil, fmt.Errorf("history: read %s %s: %w", t, h, err)
	}
	return o, nil
}

func (r *Repo) readBlob(h plumbing.Hash) ([]byte, error) {
	o, err := r.object(plumbing.BlobObject, h)
	if err != nil {
		return nil, err
	}
	rd, err := o.Reader()
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(rd)
	if cerr := rd.Close(); err == nil {
		err = cerr // a zlib stream that ends wrong
	}
	return data, err
}

// tree returns the entries of tree h, from the cache when possible. The
// returned slice is shared: callers must not modify it.
func (r *Repo) tree(h plumbing.Hash) ([]object.TreeEntry, error) {
	if h.IsZero() || h == emptyTree {
		return nil, nil
	}
	if e, ok := r.trees[h]; ok {
		return e, nil
	}
	o, err := r.object(plumbing.TreeObject, h)
	if err != nil {
		return nil, err
	}
	var t object.Tree
	if err := t.Decode(o); err != nil {
		return nil, fmt.Errorf("history: decode tree %s: %w", h, err)
	}
	r.cacheTree(h, t.Entries)
	return t.Entries, nil
}

func (r *Repo) cacheTree(h plumbing.Hash, entries []object.TreeEntry) {
	if r.trees == nil || r.treeCount+len(entries) > maxCachedTreeEntries {
		r.trees = make(map[plumbing.Hash][]object.TreeEntry)
		r.treeCount = 0
	}
	r.trees[h] = entries
	r.treeCount += len(entries)
}

// commitTreeHash returns the root tree of commit h.
func (r *Repo) commitTreeHash(h plumbing.Hash) (plumbing.Hash, error) {
	if t, ok := r.commitTree[h]; ok {
		return t, nil
	}
	c, err := r.commit(h)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	r.cacheCommitTree(h, c.TreeHash)
	return c.TreeHash, nil
}

func (r *Repo) cacheCommitTree(c, t plumbing.Hash) {
	if r.commitTree == nil || len(r.commitTree) > 4096 {
		r.commitTree = make(map[plumbing.Hash]plumbing.Hash)
	}
	r.commitTree[c] = t
}

func (r *Repo) commit(h plumbing.Hash) (*object.Commit, error) {
	o, err := r.object(plumbing.CommitObject, h)
	if err != nil {
		return nil, err
	}
	var c object.Commit
	if err := c.Decode(o); err != nil {
		return nil, fmt.Errorf("history: decode commit %s: %w", h, err)
	}
	return &c, nil
}

// lookup finds path in the tree root: its entry, or ok=false when absent.
func (r *Repo) lookup(root plumbing.Hash, path string) (e object.TreeEntry, ok bool, err error) {
	cur := root
	for {
		seg, rest, more := cut(path, '/')
		entries, err := r.tree(cur)
		if err != nil {
			return e, false, err
		}
		i, found := findEntry(entries, seg)
		if !found {
			return e, false, nil
		}
		e = entries[i]
		if !more {
			return e, true, nil
		}
		if e.Mode != filemodeDir {
			return e, false, nil
		}
		cur, path = e.Hash, rest
	}
}

func cut(s string, sep byte) (before, after string, found bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == sep {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}
