package history

import (
	"fmt"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

const filemodeDir = filemode.Dir

// treeChange sets (or with del removes) a blob at a path relative to the
// tree being edited.
type treeChange struct {
	path string
	del  bool
	mode filemode.FileMode
	hash plumbing.Hash
}

// editTree applies changes (sorted by path) to tree h and returns the new
// tree's id; emptyTree when it has no entries. New trees are appended to
// objs (the empty tree is not). dirs records every directory visited (by
// path without a trailing slash, "" for the root): its old and new id.
func (r *Repo) editTree(h plumbing.Hash, changes []treeChange, prefix string, objs *[]*rawObject, dirs map[string]dirChange) (nh plumbing.Hash, err error) {
	defer func() {
		if err == nil {
			dirs[strings.TrimSuffix(prefix, "/")] = dirChange{old: h, new: nh}
		}
	}()
	old, err := r.tree(h)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	entries := make([]object.TreeEntry, len(old), len(old)+len(changes))
	copy(entries, old)
	remove := func(i int) { entries = append(entries[:i], entries[i+1:]...) }
	// Leaf deletions first, then subdirectories, then leaf additions, so a
	// file may replace a directory emptied by the same request and the
	// reverse.
	var sets []treeChange
	type group struct {
		seg  string
		subs []treeChange
	}
	var groups []group
	for _, c := range changes {
		seg, rest, more := cut(c.path, '/')
		switch {
		case more:
			c.path = rest
			if len(groups) > 0 && groups[len(groups)-1].seg == seg {
				groups[len(groups)-1].subs = append(groups[len(groups)-1].subs, c)
			} else {
				groups = append(groups, group{seg, []treeChange{c}})
			}
		case c.del:
			if f, ok := findFile(entries, seg); ok {
				remove(f)
			}
		default:
			sets = append(sets, c)
		}
	}
	for _, g := range groups {
		if f, ok := findFile(entries, g.seg); ok {
			if allDeletes(g.subs) {
				continue
			}
			return plumbing.ZeroHash, fmt.Errorf("%w: %s%s is a directory on disk but a file in HEAD", ErrInvalidPath, prefix, entries[f].Name)
		}
		d, ok := findDir(entries, g.seg)
		var subHash plumbing.Hash
		if ok {
			subHash = entries[d].Hash
		}
		nh, err := r.editTree(subHash, g.subs, prefix+g.seg+"/", objs, dirs)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		switch {
		case nh == emptyTree && ok:
			remove(d)
		case nh == emptyTree:
		case ok:
			entries[d].Hash = nh
		default:
			entries = insertEntry(entries, object.TreeEntry{Name: g.seg, Mode: filemode.Dir, Hash: nh})
		}
	}
	for _, c := range sets {
		if _, ok := findDir(entries, c.path); ok {
			return plumbing.ZeroHash, fmt.Errorf("%w: %s%s is a file on disk but a directory in HEAD", ErrInvalidPath, prefix, c.path)
		}
		e := object.TreeEntry{Name: c.path, Mode: c.mode, Hash: c.hash}
		if f, ok := findFile(entries, c.path); ok {
			entries[f] = e
		} else {
			entries = insertEntry(entries, e)
		}
	}
	if len(entries) == 0 {
		return emptyTree, nil
	}
	o := &rawObject{}
	if err := (&object.Tree{Entries: entries}).Encode(o); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("history: encode tree %s: %w", prefix, err)
	}
	nh = o.seal()
	if nh != h {
		*objs = append(*objs, o)
		r.cacheTree(nh, entries)
	}
	return nh, nil
}

// insertEntry inserts e into sorted entries at its place in git order.
func insertEntry(es []object.TreeEntry, e object.TreeEntry) []object.TreeEntry {
	key := sortName(&e)
	i := sort.Search(len(es), func(i int) bool { return sortName(&es[i]) >= key })
	es = append(es, object.TreeEntry{})
	copy(es[i+1:], es[i:])
	es[i] = e
	return es
}

func allDeletes(cs []treeChange) bool {
	for _, c := range cs {
		if !c.del {
			return false
		}
	}
	return true
}

// sortName is git's tree order key: a directory sorts as name + "/".
func sortName(e *object.TreeEntry) string {
	if e.Mode == filemode.Dir {
		return e.Name + "/"
	}
	return e.Name
}

// findFile finds the non-directory entry called name in sorted entries.
func findFile(es []object.TreeEntry, name string) (int, bool) {
	i := sort.Search(len(es), func(i int) bool { return sortName(&es[i]) >= name })
	if i < len(es) && es[i].Name == name && es[i].Mode != filemode.Dir {
		return i, true
	}
	return 0, false
}

// findDir finds the directory entry called name in sorted entries.
func findDir(es []object.TreeEntry, name string) (int, bool) {
	key := name + "/"
	i := sort.Search(len(es), func(i int) bool { return sortName(&es[i]) >= key })
	if i < len(es) && es[i].Name == name && es[i].Mode == filemode.Dir {
		return i, true
	}
	return 0, false
}

// findEntry finds the entry called name, file or directory.
func findEntry(es []object.TreeEntry, name string) (int, bool) {
	if i, ok := findFile(es, name); ok {
		return i, true
	}
	return findDir(es, name)
}
