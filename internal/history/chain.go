package history

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// worktreeFile is the final state of one committed path: what the index
// entry will say.
type worktreeFile struct {
	path    string
	present bool
	sd      statData
	mode    uint32
	blob    *rawObject
}

// commitChain builds and publishes one try of a chain while holding idxLock.
// It returns ErrConcurrentUpdate (nothing visible changed) when the branch
// moved after it was read. The steps, in order: the final state of every
// path (finalFiles), the index edits (editIndex), the trees and commits
// (buildCommits), the objects and the new index (writeObjectsAndIndex), the
// refs and reflogs under their locks (lockAndWriteRefs), one durability
// barrier, beforeVisible (when not nil), then visibility: the index first,
// then the ref (publish).
func (r *Repo) commitChain(idxLock *lockFile, chain []cleanSpec, beforeVisible func() error) (_ []plumbing.Hash, err error) {
	c := &chainCommit{r: r, idxLock: idxLock, chain: chain, idxPath: filepath.Join(r.gitdir, "index"), beforeVisible: beforeVisible}
	defer c.rollback()

	if c.head, err = r.settledHead(); err != nil {
		return nil, err
	}
	var parentTree plumbing.Hash
	if !c.head.hash.IsZero() {
		if parentTree, err = r.commitTreeHash(c.head.hash); err != nil {
			return nil, err
		}
	}
	if c.x, err = r.loadIndex(c.idxPath, parentTree, true); err != nil {
		return nil, err
	}
	c.finalFiles()
	if err := c.editIndex(); err != nil {
		return nil, err
	}
	if err := c.buildCommits(parentTree); err != nil {
		return nil, err
	}
	if len(c.commits) == 0 {
		if c.x.stamp.valid() {
			r.idx, r.idxStamp = c.x, c.x.stamp // unmodified: still the file's
		}
		return c.hashes, nil
	}
	if err := c.writeObjectsAndIndex(); err != nil {
		return nil, err
	}
	if r.beforeRefLock != nil {
		r.beforeRefLock()
	}
	if err := c.lockAndWriteRefs(); err != nil {
		return nil, err
	}
	if err := c.publish(); err != nil {
		return c.published(), err
	}

	if c.sharedPath != "" {
		r.removeOldSharedIndexes(c.newX.split.sharedID)
	}
	// Caches.
	r.cacheCommitTree(c.last(), c.tree)
	if st, _, err := lstatStamp(c.idxPath); err == nil && st.ino == c.idxLockStamp.ino && st.dev == c.idxLockStamp.dev && st.size == c.idxLockStamp.size {
		r.idx, r.idxStamp = c.newX, st
		r.spare = c.x.data // no longer referenced (nil when patched in place): the next rebuild's buffer
	}
	return c.hashes, nil
}

// chainCommit is one try of commitChain: what each step leaves for the next.
type chainCommit struct {
	r       *Repo
	idxLock *lockFile
	chain   []cleanSpec
	idxPath string
	// beforeVisible runs after the barrier, before the index and ref
	// renames (IndexLock.SetBeforeVisible).
	beforeVisible func() error
	head          headState
	x             *index

	files     []worktreeFile // the final state of every path, in path order
	finalFrom map[string]int // the spec that sets each path's final content

	ops    []idxOp
	skip   map[int]bool   // index positions replaced or removed
	deltas map[string]int // index entries added (+1) or removed (-1)

	objs    []*rawObject
	dirs    map[string]dirChange
	hashes  []plumbing.Hash // per spec; zero for a spec that changed nothing
	commits []madeCommit
	tree    plumbing.Hash // the last commit's tree

	objFiles, objDirs []string
	newX              *index // the index written (the merged view of a split index)
	newIndex          []byte // the .git/index file written
	sharedPath        string // a new shared index file written, if any
	idxLockStamp      fileStamp

	locks             []*lockFile
	reflogs           []*reflogAppend
	headLock, refLock *lockFile
	refDir            string
	refDone           bool // the ref moved: nothing is undone any more
}

// madeCommit is a commit of the chain, for its reflog line.
type madeCommit struct {
	hash      plumbing.Hash
	parent    plumbing.Hash
	subject   string
	committer Signature
}

func (c *chainCommit) last() plumbing.Hash { return c.commits[len(c.commits)-1].hash }

// published returns the hashes once the ref moved (an error after that,
// flushing the renames, does not take the commits back), else nil.
func (c *chainCommit) published() []plumbing.Hash {
	if c.refDone {
		return c.hashes
	}
	return nil
}

// rollback undoes what a failed try left: its reflog lines (unless the ref
// moved) and its locks.
func (c *chainCommit) rollback() {
	if !c.refDone {
		for _, ra := range c.reflogs {
			ra.undo()
		}
	}
	for _, l := range c.locks {
		l.rollback()
	}
}

// finalFiles computes the final state of every path the chain touches, in
// path (= index) order.
func (c *chainCommit) finalFiles() {
	final := make(map[string]File)
	c.finalFrom = make(map[string]int)
	for i, s := range c.chain {
		for _, f := range s.files {
			final[f.Path], c.finalFrom[f.Path] = f, i
		}
	}
	c.files = make([]worktreeFile, 0, len(final))
	for _, f := range final {
		wf := worktreeFile{path: f.Path, present: !f.Deleted, mode: f.Mode}
		if wf.present {
			wf.blob = newBlob(f.Content)
			wf.sd = c.r.indexStat(f)
		}
		c.files = append(c.files, wf)
	}
	sort.Slice(c.files, func(i, j int) bool { return c.files[i].path < c.files[j].path })
}

// editIndex plans the index edits, in path order, and refuses what git
// would: a path with unresolved conflicts or outside the sparse checkout,
// and a file that is a directory on the other side.
func (c *chainCommit) editIndex() error {
	x := c.x
	c.skip = make(map[int]bool)
	c.deltas = make(map[string]int)
	for _, wf := range c.files {
		pos, cnt := x.search(wf.path)
		for k := 0; k < cnt; k++ {
			if x.stage(pos+k) != 0 {
				return fmt.Errorf("%w: %s has unresolved merge conflicts", ErrInvalidPath, wf.path)
			}
			if x.skipWorktree(pos + k) {
				return fmt.Errorf("%w: %s is outside the sparse checkout (skip-worktree)", ErrInvalidPath, wf.path)
			}
		}
		if cnt > 0 {
			c.skip[pos] = true
		}
		switch {
		case wf.present:
			c.ops = append(c.ops, idxOp{pos: pos, del: cnt, entry: makeEntry(wf.path, wf.sd, wf.mode, wf.blob.hash)})
			if cnt == 0 {
				c.deltas[wf.path] = 1
			}
		case cnt > 0:
			c.ops = append(c.ops, idxOp{pos: pos, del: cnt})
			c.deltas[wf.path] = -1
		}
	}
	for _, wf := range c.files {
		if !wf.present {
			continue
		}
		if x.hasPrefix(wf.path+"/", c.skip) {
			return fmt.Errorf("%w: %s is a file on disk but a directory in the index", ErrInvalidPath, wf.path)
		}
		for i := strings.LastIndexByte(wf.path, '/'); i > 0; i = strings.LastIndexByte(wf.path[:i], '/') {
			if pos, cnt := x.search(wf.path[:i]); cnt > 0 && !c.skip[pos] {
				return fmt.Errorf("%w: %s is a file in the index but a directory on disk", ErrInvalidPath, wf.path[:i])
			}
		}
	}
	return nil
}

// buildCommits makes the trees and commits, one per spec that changes its
// parent's tree (or allows an empty commit), on top of HEAD (whose tree is
// parentTree).
func (c *chainCommit) buildCommits(parentTree plumbing.Hash) error {
	c.dirs = make(map[string]dirChange)
	c.hashes = make([]plumbing.Hash, len(c.chain))
	parent, tree := c.head.hash, parentTree
	for i, s := range c.chain {
		changes := make([]treeChange, len(s.files))
		for k, f := range s.files {
			changes[k] = treeChange{path: f.Path, del: f.Deleted}
			if !f.Deleted {
				changes[k].mode = filemode.FileMode(f.Mode)
				if c.finalFrom[f.Path] == i {
					changes[k].hash = blobFor(c.files, f.Path).hash // written with the index entries' blobs
				} else {
					b := newBlob(f.Content)
					changes[k].hash = b.hash
					c.objs = append(c.objs, b)
				}
			}
		}
		specDirs := make(map[string]dirChange)
		newRoot, err := c.r.editTree(tree, changes, "", &c.objs, specDirs)
		if err != nil {
			return err
		}
		if (newRoot == tree || (tree.IsZero() && newRoot == emptyTree)) && !s.allowEmpty {
			continue
		}
		for p, d := range specDirs {
			if prev, ok := c.dirs[p]; ok {
				d.old = prev.old
			}
			c.dirs[p] = d
		}
		if newRoot == emptyTree {
			c.objs = append(c.objs, &rawObject{typ: plumbing.TreeObject})
		}
		co := object.Commit{
			Author:    object.Signature{Name: s.author.Name, Email: s.author.Email, When: s.author.When},
			Committer: object.Signature{Name: s.committer.Name, Email: s.committer.Email, When: s.committer.When},
			Message:   s.msg,
			TreeHash:  newRoot,
		}
		if !parent.IsZero() {
			co.ParentHashes = []plumbing.Hash{parent}
		}
		raw := &rawObject{}
		if err := co.Encode(raw); err != nil {
			return fmt.Errorf("history: encode commit: %w", err)
		}
		h := raw.seal()
		c.objs = append(c.objs, raw)
		subject, _, _ := strings.Cut(s.msg, "\n")
		c.commits = append(c.commits, madeCommit{hash: h, parent: parent, subject: subject, committer: s.committer})
		c.hashes[i] = h
		parent, tree = h, newRoot
	}
	c.tree = tree
	return nil
}

// blobFor returns the final blob of path among files (sorted by path; the
// path is present).
func blobFor(files []worktreeFile, path string) *rawObject {
	i := sort.Search(len(files), func(i int) bool { return files[i].path >= path })
	return files[i].blob
}

// indexStat returns the stat data to record for f's index entry: f.Stat
// when given, else the work-tree file's lstat when the file holds exactly
// f.Content, else zeroed stat data (git then compares the content).
func (r *Repo) indexStat(f File) statData {
	if f.sd != nil {
		return *f.sd
	}
	if f.Stat != nil {
		if sd, ok := statFromInfo(f.Stat); ok {
			return sd
		}
		return statData{}
	}
	full := filepath.Join(r.root, filepath.FromSlash(f.Path))
	sd, err := lstat(full)
	if err != nil || gitMode(sd.mode) != f.Mode || sd.fullSize != int64(len(f.Content)) {
		return statData{}
	}
	var content []byte
	if sd.mode&sIFMT == sIFLNK {
		t, err := os.Readlink(full)
		if err != nil {
			return statData{}
		}
		content = []byte(t)
	} else if content, err = os.ReadFile(full); err != nil {
		return statData{}
	}
	if after, err := lstat(full); err != nil || after != sd || !bytes.Equal(content, f.Content) {
		return statData{}
	}
	return sd
}

// settledHead reads HEAD once no other process is between renaming the
// index and renaming the ref (git commit, and Commit, rename index.lock
// before the ref lock): while HEAD.lock or the branch's lock exists, the
// ref may be about to move, and a parent read now would fail the
// compare-and-swap. It waits for up to the lock timeout, then fails with
// ErrLocked naming the lock file.
func (r *Repo) settledHead() (headState, error) {
	deadline := time.Now().Add(r.lockTimeout)
	backoff := 100 * time.Microsecond
	for {
		head, err := r.readHead()
		if err != nil {
			return head, err
		}
		busy := ""
		for _, l := range []string{"HEAD.lock", filepath.FromSlash(head.ref) + ".lock"} {
			if _, err := os.Lstat(filepath.Join(r.gitdir, l)); err == nil {
				busy = filepath.Join(r.gitdir, l)
			}
		}
		if busy == "" {
			return head, nil
		}
		if !time.Now().Before(deadline) {
			return head, fmt.Errorf("%w: %s exists%s (waited %v); another git process is updating the branch, or crashed and left it behind (remove it only if no git process is running)", ErrLocked, busy, lockAge(busy), r.lockTimeout)
		}
		time.Sleep(backoff)
		backoff = min(2*backoff, 20*time.Millisecond)
	}
}
