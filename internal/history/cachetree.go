package history

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// The TREE (cache-tree) extension records, for directories of the index,
// the tree id their entries hash to, so git need not rebuild every tree on
// `git commit` or walk every tree on `git status`. Each node is: the
// directory's name and a NUL, the number of index entries below it in ASCII
// (-1 when invalid), a space, the number of child nodes in ASCII, a newline,
// and when valid the 20-byte tree id; then the child nodes, in pre-order.
type ctNode struct {
	name     string
	count    int // -1: invalid
	hash     plumbing.Hash
	children []*ctNode
}

func parseCacheTree(b []byte) (*ctNode, error) {
	n, rest, err := parseCTNode(b)
	if err != nil {
		return nil, err
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("history: TREE extension has %d trailing bytes", len(rest))
	}
	return n, nil
}

func parseCTNode(b []byte) (*ctNode, []byte, error) {
	bad := func(what string) (*ctNode, []byte, error) {
		return nil, nil, fmt.Errorf("history: TREE extension: bad %s", what)
	}
	z := bytes.IndexByte(b, 0)
	if z < 0 {
		return bad("name")
	}
	n := &ctNode{name: string(b[:z])}
	b = b[z+1:]
	sp := bytes.IndexByte(b, ' ')
	nl := bytes.IndexByte(b, '\n')
	if sp < 0 || nl < sp {
		return bad("counts")
	}
	count, err1 := strconv.Atoi(string(b[:sp]))
	subs, err2 := strconv.Atoi(string(b[sp+1 : nl]))
	if err1 != nil || err2 != nil || subs < 0 || subs > len(b) {
		return bad("counts")
	}
	n.count = count
	b = b[nl+1:]
	if count >= 0 {
		if len(b) < 20 {
			return bad("tree id")
		}
		copy(n.hash[:], b[:20])
		b = b[20:]
	} else {
		n.count = -1
	}
	for i := 0; i < subs; i++ {
		c, rest, err := parseCTNode(b)
		if err != nil {
			return nil, nil, err
		}
		n.children = append(n.children, c)
		b = rest
	}
	return n, b, nil
}

func (n *ctNode) appendTo(b []byte) []byte {
	b = append(b, n.name...)
	b = append(b, 0)
	b = strconv.AppendInt(b, int64(n.count), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(len(n.children)), 10)
	b = append(b, '\n')
	if n.count >= 0 {
		b = append(b, n.hash[:]...)
	}
	for _, c := range n.children {
		b = c.appendTo(b)
	}
	return b
}

func (n *ctNode) child(name string) *ctNode {
	for _, c := range n.children {
		if c.name == name {
			return c
		}
	}
	return nil
}

// dirChange is what a commit did to one directory: its tree in HEAD before
// and after (zero: absent before; emptyTree: absent after).
type dirChange struct {
	old, new plumbing.Hash
}

// updateCacheTree brings the cache-tree in line with a commit that changed
// the directories in dirs (keyed by path, "" for the root) and added
// (delta +1) or removed (delta -1) index entries at the paths in deltas. A
// directory's node stays valid only if it was valid and equal to the old
// HEAD tree (so the index matched HEAD there), no child directory appeared
// or disappeared, and its touched children stay valid; its id becomes the new
// HEAD tree and its count moves by the entries added or removed below it.
// Every other touched node is invalidated, as git does for a changed path.
func updateCacheTree(root *ctNode, dirs map[string]dirChange, deltas map[string]int) {
	var walk func(n *ctNode, dir string) bool
	walk = func(n *ctNode, dir string) bool {
		ch, touched := dirs[dir]
		if !touched {
			return n.count >= 0
		}
		ok := n.count >= 0 && n.hash == ch.old && !ch.old.IsZero() && ch.new != emptyTree
		prefix := dir
		if prefix != "" {
			prefix += "/"
		}
		// Touched child directories.
		for sub, sc := range dirs {
			if !strings.HasPrefix(sub, prefix) || sub == dir || strings.Contains(sub[len(prefix):], "/") {
				continue
			}
			if sc.old.IsZero() || sc.new == emptyTree {
				ok = false // a directory appears or disappears: counts change
			}
			c := n.child(sub[len(prefix):])
			if c == nil {
				ok = false
				continue
			}
			if !walk(c, sub) {
				ok = false
			}
		}
		if ok {
			n.hash = ch.new
			for p, d := range deltas {
				if dir == "" || strings.HasPrefix(p, prefix) {
					n.count += d
				}
			}
			return true
		}
		n.count = -1
		n.hash = plumbing.ZeroHash
		return false
	}
	walk(root, "")
}

// cacheTreeExt returns the index's TREE extension updated for this commit
// (framed, ready to append), or nil to drop it. Other extensions are always
// dropped: git rebuilds what it needs.
func cacheTreeExt(x *index, dirs map[string]dirChange, deltas map[string]int) []byte {
	if x.treeExt == nil {
		return nil
	}
	ct, err := parseCacheTree(x.treeExt)
	if err != nil || ct.name != "" {
		return nil // git rebuilds it
	}
	updateCacheTree(ct, dirs, deltas)
	ext := append([]byte("TREE"), 0, 0, 0, 0)
	ext = ct.appendTo(ext)
	be.PutUint32(ext[4:], uint32(len(ext)-8))
	return ext
}
