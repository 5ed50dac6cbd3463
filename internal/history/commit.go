package history

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

const filemodeDir = filemode.Dir

// CommitRequest says what Commit commits: files as they are on disk.
type CommitRequest struct {
	// Paths are slash-separated paths relative to the work tree. Each file's
	// current content on disk is committed (a regular file as mode 100644,
	// or 100755 when its owner-executable bit is set; a symlink as 120000
	// with its target as content); a path absent on disk, or a directory on
	// disk, means the file is gone: a deletion. Other file types (sockets,
	// devices) are an error.
	// Duplicates are ignored; order does not matter.
	Paths []string
	// Message is the full commit message; its first line is the subject.
	// Trailing spaces, leading and trailing blank lines and repeated blank
	// lines are removed and a final newline added, as `git commit -m` does.
	Message string
	// Author of the change.
	Author Signature
	// Committer; the zero value means the same as Author.
	Committer Signature
}

// File is one path of a CommitSpec, with its content taken from memory, not
// from the work tree.
type File struct {
	// Path is slash-separated, relative to the work tree.
	Path string
	// Content is the blob committed (ignored when Deleted).
	Content []byte
	// Deleted removes the path from the tree and the index.
	Deleted bool
	// Mode is the git mode: 0 means 0100644; 0100755 and 0120000 (a
	// symlink, whose Content is its target) are the others allowed.
	Mode uint32
	// Stat, when not nil, is the work-tree file's stat taken while its
	// content was known to be Content (e.g. fstat of a file the caller
	// wrote, before anyone else could write it); it becomes the index
	// entry's stat data. When nil, Commit reads the work-tree file: the
	// stat data is recorded only if the file holds Content, otherwise the
	// entry gets zeroed stat data, so git compares the content and sees the
	// difference.
	Stat os.FileInfo

	sd *statData // set by diskFile: the stat taken around the read
}

// CommitSpec is one commit of a chain made by IndexLock.Commit.
type CommitSpec struct {
	// Files are the paths this commit sets or deletes; the rest of the tree
	// is its parent's.
	Files []File
	// Message is cleaned as CommitRequest.Message.
	Message string
	// Author and Committer as in CommitRequest.
	Author, Committer Signature
	// AllowEmpty makes the commit even when its tree equals its parent's
	// (`git commit --allow-empty`): a record of an operation whose changes
	// another commit already holds.
	AllowEmpty bool
}

// Commit commits exactly req.Paths, like `git commit --only -- paths`: the
// new commit's tree is HEAD's tree with those paths set to their content on
// disk (or removed), and other entries of the index, staged or not, are left
// alone. It updates the index entries of the paths as `git add` would, the
// branch HEAD points to (or a detached HEAD) and both reflogs, all under
// git's lock files. The first commit of an unborn branch has no parent.
//
// It returns the new commit's hash (40 lowercase hex digits). Errors:
// ErrNothingToCommit when the resulting tree equals HEAD's (no commit is
// made, nothing is written), ErrInvalidPath for a bad path (nothing
// written), ErrLocked when another process holds index.lock, HEAD.lock or
// the branch's lock for longer than the lock timeout, ErrConcurrentUpdate
// when the branch kept moving (another process committing) through every
// retry, ErrUnsupportedIndex for an index format it cannot patch. On any
// error the index, refs and reflogs are as they were, with one exception:
// when the commit became visible but fsyncing the directories afterwards
// failed, Commit returns both the hash and the error.
func (r *Repo) Commit(req CommitRequest) (string, error) {
	paths, err := cleanPaths(req.Paths)
	if err != nil {
		return "", err
	}
	if len(paths) == 0 {
		return "", fmt.Errorf("%w: no paths given", ErrNothingToCommit)
	}
	l, err := r.LockIndex()
	if err != nil {
		return "", err
	}
	defer l.Release()
	files := make([]File, 0, len(paths))
	for _, p := range paths {
		f, err := r.diskFile(p)
		if err != nil {
			return "", err
		}
		files = append(files, f)
	}
	hashes, err := l.Commit([]CommitSpec{{Files: files, Message: req.Message, Author: req.Author, Committer: req.Committer}})
	if len(hashes) == 1 && hashes[0] != "" {
		return hashes[0], err
	}
	if err == nil {
		err = ErrNothingToCommit
	}
	return "", err
}

// diskFile reads a work-tree path as Commit commits it: a regular file or a
// symlink's target, or a deletion when the path is absent or a directory.
func (r *Repo) diskFile(p string) (File, error) {
	full := filepath.Join(r.root, filepath.FromSlash(p))
	sd, err := lstat(full)
	switch {
	case err == nil && sd.mode&sIFMT == sIFDIR:
		return File{Path: p, Deleted: true}, nil
	case err == nil:
		mode := gitMode(sd.mode)
		if mode == 0 {
			return File{}, fmt.Errorf("%w: %s is not a regular file or symlink", ErrInvalidPath, p)
		}
		_, content, err := hashWorktreeFile(full, sd)
		if err != nil {
			return File{}, fmt.Errorf("history: read %s: %w", p, err)
		}
		f := File{Path: p, Content: content, Mode: mode}
		if after, err := lstat(full); err == nil && after == sd {
			f.sd = &after // unchanged while it was read: the stat is the content's
		}
		return f, nil
	case isNotExist(err):
		return File{Path: p, Deleted: true}, nil
	default:
		return File{}, fmt.Errorf("history: %w", err)
	}
}

// IndexLock is git's index lock (.git/index.lock) held by this process: while
// it is held no other git process writes the index, so no `git add` or `git
// commit -a` can stage what the holder writes to the work tree before the
// holder commits it. Take it with Repo.LockIndex, finish with Commit, and
// always call Release (a no-op after a successful Commit).
type IndexLock struct {
	r    *Repo
	lock *lockFile
}

// LockIndex takes .git/index.lock, waiting while another process holds it
// for up to the lock timeout. Past it the error wraps ErrLocked and names
// the lock file and how long it has existed.
func (r *Repo) LockIndex() (*IndexLock, error) {
	lock, err := acquireLock(filepath.Join(r.gitdir, "index"), r.lockTimeout)
	if err != nil {
		return nil, err
	}
	return &IndexLock{r: r, lock: lock}, nil
}

// Inode returns the inode number of the index.lock this IndexLock holds
// (0 when unknown), so that a caller can tell it later from one another
// process made (see AdoptIndexLock).
func (l *IndexLock) Inode() uint64 {
	if l == nil || l.lock.done {
		return 0
	}
	st, _, err := lstatStamp(l.lock.path)
	if err != nil {
		return 0
	}
	return st.ino
}

// AdoptIndexLock takes over the index.lock a killed process of the caller's
// left behind, instead of removing it and racing other git processes for a
// new one. ino is that lock's inode (IndexLock.Inode) as the killed process
// recorded it; the lock is adopted only when the file there now is that
// file. The caller must know that process is gone (sessionvault knows it by
// holding the vault lock and finding its commit marker). It returns nil when
// there is no such lock.
func (r *Repo) AdoptIndexLock(ino uint64) *IndexLock {
	path := filepath.Join(r.gitdir, "index.lock")
	st, _, err := lstatStamp(path)
	if err != nil || ino == 0 || st.ino != ino {
		return nil
	}
	return &IndexLock{r: r, lock: &lockFile{target: filepath.Join(r.gitdir, "index"), path: path}}
}

// Release removes the index lock unless Commit already renamed it over the
// index. It is safe to call more than once.
func (l *IndexLock) Release() {
	if l != nil {
		l.lock.rollback()
	}
}

// Commit makes specs a chain of commits on top of HEAD (each the parent of
// the next), updates the index entries of every path they name to the last
// content given for it, moves the branch HEAD points to (or a detached
// HEAD) from its old value to the last commit with a compare-and-swap, and
// appends one reflog line per commit. A spec whose tree equals its parent's
// makes no commit; its hash in the result is "". When none makes a commit
// the result is all "" with a nil error, and nothing is written (the lock
// stays held until Release).
//
// When another process moves the branch between reading HEAD and the
// compare-and-swap (a `git commit` that released index.lock before
// updating its ref), the chain is rebuilt on the new HEAD and tried again,
// with a short growing backoff, up to 10 times; then the error wraps
// ErrConcurrentUpdate. Other errors are those of Repo.Commit. On any error
// nothing visible changed (except as Repo.Commit says for a failed final
// directory fsync).
func (l *IndexLock) Commit(specs []CommitSpec) ([]string, error) {
	r := l.r
	if l.lock.done {
		return nil, errors.New("history: the index lock was already released")
	}
	chain := make([]cleanSpec, len(specs))
	for i, s := range specs {
		c, err := cleanCommitSpec(s)
		if err != nil {
			return nil, err
		}
		chain[i] = c
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	backoff := time.Millisecond
	for attempt := 0; ; attempt++ {
		hashes, err := r.commitChain(l.lock, chain)
		if !errors.Is(err, ErrConcurrentUpdate) || attempt >= r.casRetries {
			out := make([]string, len(hashes))
			for i, h := range hashes {
				if !h.IsZero() {
					out[i] = h.String()
				}
			}
			return out, err
		}
		time.Sleep(backoff + time.Duration(rand.Int64N(int64(backoff))))
		backoff = min(2*backoff, 50*time.Millisecond)
	}
}

// cleanSpec is a validated CommitSpec: files sorted by path, one per path.
type cleanSpec struct {
	files      []File
	msg        string
	author     Signature
	committer  Signature
	allowEmpty bool
}

func cleanCommitSpec(s CommitSpec) (cleanSpec, error) {
	msg, err := cleanMessage(s.Message)
	if err != nil {
		return cleanSpec{}, err
	}
	author, committer, err := signatures(s.Author, s.Committer)
	if err != nil {
		return cleanSpec{}, err
	}
	byPath := make(map[string]File, len(s.Files))
	for _, f := range s.Files {
		if err := validatePath(f.Path); err != nil {
			return cleanSpec{}, err
		}
		switch f.Mode {
		case 0:
			f.Mode = 0o100644
		case 0o100644, 0o100755, 0o120000:
		default:
			return cleanSpec{}, fmt.Errorf("%w: %s: mode %o is not a file mode git stores", ErrInvalidPath, f.Path, f.Mode)
		}
		byPath[f.Path] = f
	}
	files := make([]File, 0, len(byPath))
	for _, f := range byPath {
		files = append(files, f)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return cleanSpec{files: files, msg: msg, author: author, committer: committer, allowEmpty: s.AllowEmpty}, nil
}

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
// barrier, then visibility: the index first, then the ref (publish).
func (r *Repo) commitChain(idxLock *lockFile, chain []cleanSpec) (_ []plumbing.Hash, err error) {
	c := &chainCommit{r: r, idxLock: idxLock, chain: chain, idxPath: filepath.Join(r.gitdir, "index")}
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
	head    headState
	x       *index

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

// writeObjectsAndIndex writes the objects (invisible until a ref points at
// them) on one goroutine while this one builds and writes the new index
// into index.lock: two independent ~1 ms jobs.
func (c *chainCommit) writeObjectsAndIndex() error {
	for _, wf := range c.files {
		if wf.present {
			c.objs = append(c.objs, wf.blob)
		}
	}
	objErr := make(chan error, 1)
	go func() {
		var err error
		c.objFiles, c.objDirs, err = c.r.writeObjects(c.objs)
		objErr <- err
	}()
	idxErr := c.buildIndex()
	if idxErr == nil {
		idxErr = c.idxLock.rewrite(c.newIndex)
	}
	if err := <-objErr; err != nil {
		return err
	}
	if idxErr != nil {
		return idxErr
	}
	c.idxLockStamp, _, _ = lstatStamp(c.idxLock.path)
	return nil
}

// buildIndex makes the new index (newX) and its .git/index file
// (newIndex) in the form formFor chooses, writing a new shared index file
// when that is the form.
func (c *chainCommit) buildIndex() error {
	r := c.r
	c.x.smudgeRacy(r.root, c.skip, &r.verified)
	ext := cacheTreeExt(c.x, c.dirs, c.deltas)
	y := c.x.apply(c.ops, r.spare)
	r.spare = nil
	c.newX = y
	switch formFor(y, r.splitSetting()) {
	case formWhole:
		c.newIndex = y.file(ext)
		return nil
	case formSplit:
		c.newIndex = y.splitFile(ext)
		r.freshenSharedIndex(y.split.sharedID)
	case formNewShared:
		shared, id, main := y.newShared(ext)
		path, err := r.writeSharedIndex(shared, id)
		if err != nil {
			return err
		}
		c.sharedPath, c.newIndex = path, main
		r.shared, r.sharedID = y.split.shared, id
	}
	if len(ext) > 8 {
		y.treeExt = ext[8:]
	}
	return nil
}

// lockAndWriteRefs takes HEAD.lock and the branch's lock, checks that
// neither moved since HEAD was read (compare-and-swap), writes the new
// value into the lock and appends the reflog lines.
func (c *chainCommit) lockAndWriteRefs() error {
	r, head := c.r, c.head
	headLock, err := acquireLock(filepath.Join(r.gitdir, "HEAD"), r.lockTimeout)
	if err != nil {
		return err
	}
	c.headLock = headLock
	c.locks = append(c.locks, headLock)
	now, err := r.readHead()
	if err != nil {
		return err
	}
	if now != head {
		return fmt.Errorf("%w: %s moved from %s to %s", ErrConcurrentUpdate, now.refDisplay(), head.hash, now.hash)
	}
	value := []byte(c.last().String() + "\n")
	var lines []byte
	for _, m := range c.commits {
		reflogMsg := "commit: "
		if m.parent.IsZero() {
			reflogMsg = "commit (initial): "
		}
		lines = append(lines, reflogEntry(m.parent, m.hash, m.committer, reflogMsg+m.subject)...)
	}
	if head.symbolic {
		refPath := filepath.Join(r.gitdir, filepath.FromSlash(head.ref))
		c.refDir = filepath.Dir(refPath)
		if err := os.MkdirAll(c.refDir, 0o755); err != nil {
			return fmt.Errorf("history: create %s: %w", c.refDir, err)
		}
		if c.refLock, err = acquireLock(refPath, r.lockTimeout); err != nil {
			return err
		}
		c.locks = append(c.locks, c.refLock)
		cur, err := r.readRef(head.ref)
		if err != nil {
			return err
		}
		if cur != head.hash {
			return fmt.Errorf("%w: %s moved from %s to %s", ErrConcurrentUpdate, head.ref, head.hash, cur)
		}
		if err := c.refLock.write(value); err != nil {
			return err
		}
		ra, err := appendReflog(filepath.Join(r.gitdir, "logs", filepath.FromSlash(head.ref)), lines)
		if err != nil {
			return err
		}
		c.reflogs = append(c.reflogs, ra)
	} else if err := headLock.write(value); err != nil {
		return err
	}
	ra, err := appendReflog(filepath.Join(r.gitdir, "logs", "HEAD"), lines)
	if err != nil {
		return err
	}
	c.reflogs = append(c.reflogs, ra)
	return nil
}

// publish makes the try durable with one barrier before anything becomes
// visible, then visible: the index first, then the ref, as git commit does;
// then it flushes the renames.
func (c *chainCommit) publish() error {
	durable := append(c.objFiles, c.idxLock.path)
	objDirs := c.objDirs
	if c.sharedPath != "" {
		durable = append(durable, c.sharedPath)
		objDirs = append(objDirs, c.r.gitdir) // its rename
	}
	if c.refLock != nil {
		durable = append(durable, c.refLock.path)
	} else {
		durable = append(durable, c.headLock.path)
	}
	for _, ra := range c.reflogs {
		durable = append(durable, ra.path)
		if ra.created {
			objDirs = append(objDirs, filepath.Dir(ra.path))
		}
	}
	if err := c.r.barrier(durable, objDirs); err != nil {
		return err
	}

	if err := c.idxLock.commit(); err != nil {
		return err
	}
	var err error
	if c.head.symbolic {
		err = c.refLock.commit()
		c.headLock.rollback()
	} else {
		err = c.headLock.commit()
	}
	if err != nil {
		return fmt.Errorf("history: the index was updated but %s was not: %w", c.head.ref, err)
	}
	c.refDone = true
	renamed := []string{c.r.gitdir}
	if c.refDir != "" && c.refDir != c.r.gitdir {
		renamed = append(renamed, c.refDir)
	}
	return c.r.afterRename(renamed)
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

// writeObjects writes objs as loose objects and returns what must be
// fsynced to make them durable: the new files, their directories, and
// objects/ when a fan-out directory was created.
func (r *Repo) writeObjects(objs []*rawObject) (files, dirs []string, err error) {
	seen := make(map[string]bool)
	for _, o := range objs {
		p, created, err := r.writeLoose(o)
		if err != nil {
			return nil, nil, err
		}
		if p == "" {
			continue
		}
		files = append(files, p)
		if d := filepath.Dir(p); !seen[d] {
			seen[d] = true
			dirs = append(dirs, d)
		}
		if created && !seen["objects"] {
			seen["objects"] = true
			dirs = append(dirs, filepath.Join(r.gitdir, "objects"))
		}
	}
	return files, dirs, nil
}

// loadIndex reads .git/index (the merged view of a split index: see
// mergeSplit), or reuses the index cached while the file's stamp is
// unchanged. When forWrite the index is handed over (the caller modifies
// it) and the cache is emptied; otherwise an index read is cached. With no
// index file, the index is built from tree root (zero stat data, as `git
// read-tree` leaves it), or empty.
func (r *Repo) loadIndex(idxPath string, root plumbing.Hash, forWrite bool) (*index, error) {
	f, err := os.Open(idxPath)
	if errors.Is(err, os.ErrNotExist) {
		return r.indexFromTree(root)
	}
	if err != nil {
		return nil, fmt.Errorf("history: open index: %w", err)
	}
	defer f.Close()
	stamp, mtimeSec, err := fstatStamp(f)
	if err != nil {
		return nil, err
	}
	var x *index
	if r.idx != nil && stamp == r.idxStamp {
		x = r.idx
		if forWrite {
			r.idx = nil
		}
	} else {
		data := make([]byte, stamp.size)
		if _, err := io.ReadFull(f, data); err != nil {
			return nil, fmt.Errorf("history: read index: %w", err)
		}
		if x, err = parseIndex(data); err != nil {
			return nil, err
		}
		if x.link != nil {
			if len(x.link) < 20 {
				return nil, corrupt("link extension truncated")
			}
			id := plumbing.Hash(x.link[:20])
			shared, err := r.sharedIndex(id)
			if err != nil {
				return nil, err
			}
			if x, err = mergeSplit(x, shared, id); err != nil {
				return nil, err
			}
		}
		r.idx = nil
		if !forWrite {
			r.idx, r.idxStamp = x, stamp
		}
	}
	x.stamp, x.mtimeSec = stamp, mtimeSec
	return x, nil
}

// indexFromTree builds an index holding every file of tree root.
func (r *Repo) indexFromTree(root plumbing.Hash) (*index, error) {
	x := emptyIndex()
	if root.IsZero() {
		return x, nil
	}
	var entries [][]byte
	var walk func(h plumbing.Hash, prefix string) error
	walk = func(h plumbing.Hash, prefix string) error {
		es, err := r.tree(h)
		if err != nil {
			return err
		}
		for _, e := range es {
			if e.Mode == filemodeDir {
				if err := walk(e.Hash, prefix+e.Name+"/"); err != nil {
					return err
				}
				continue
			}
			entries = append(entries, makeEntry(prefix+e.Name, statData{}, uint32(e.Mode), e.Hash))
		}
		return nil
	}
	if err := walk(root, ""); err != nil {
		return nil, err
	}
	ops := make([]idxOp, len(entries))
	for i, e := range entries {
		ops[i] = idxOp{entry: e}
	}
	return x.apply(ops, nil), nil
}

func signatures(author, committer Signature) (Signature, Signature, error) {
	if author.When.IsZero() {
		author.When = time.Now()
	}
	if committer == (Signature{}) {
		committer = author
	} else if committer.When.IsZero() {
		committer.When = author.When
	}
	for _, s := range []*Signature{&author, &committer} {
		s.Name = strings.TrimSpace(s.Name)
		s.Email = strings.TrimSpace(s.Email)
		if s.Name == "" {
			return author, committer, errors.New("history: empty signature name")
		}
		if strings.ContainsAny(s.Name+s.Email, "<>\n\r\x00") {
			return author, committer, fmt.Errorf("history: signature %q <%s> contains '<', '>', NUL or a newline", s.Name, s.Email)
		}
		s.When = s.When.Truncate(time.Second)
	}
	return author, committer, nil
}

// cleanMessage does `git commit -m`'s whitespace cleanup.
func cleanMessage(msg string) (string, error) {
	lines := strings.Split(strings.ReplaceAll(msg, "\r\n", "\n"), "\n")
	var b strings.Builder
	blank := false
	for _, l := range lines {
		l = strings.TrimRight(l, " \t\r")
		if l == "" {
			blank = b.Len() > 0
			continue
		}
		if blank {
			b.WriteByte('\n')
			blank = false
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if b.Len() == 0 {
		return "", errors.New("history: empty commit message")
	}
	return b.String(), nil
}

// treeChange sets (or with del removes) a blob at a path relative to the
// tree being edited.
type treeChange struct {
	path string
	del  bool
	mode filemode.FileMode
	hash plumbing.Hash
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
