package history

import (
	"errors"
	"fmt"
	"io"
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

// CommitRequest says what Commit commits.
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
// when the branch moved after Commit read it, ErrUnsupportedIndex for an
// index format it cannot patch. On any error the index, refs and reflogs are
// as they were, with one exception: when the commit became visible but
// fsyncing the directories afterwards failed, Commit returns both the hash
// and the error.
func (r *Repo) Commit(req CommitRequest) (string, error) {
	paths, err := cleanPaths(req.Paths)
	if err != nil {
		return "", err
	}
	if len(paths) == 0 {
		return "", fmt.Errorf("%w: no paths given", ErrNothingToCommit)
	}
	msg, err := cleanMessage(req.Message)
	if err != nil {
		return "", err
	}
	author, committer, err := signatures(req.Author, req.Committer)
	if err != nil {
		return "", err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	h, err := r.commit1(paths, msg, author, committer)
	if err != nil {
		if !h.IsZero() {
			return h.String(), err // visible, but a final directory fsync failed
		}
		return "", err
	}
	return h.String(), nil
}

// worktreeFile is the state on disk of one committed path.
type worktreeFile struct {
	path    string
	present bool
	sd      statData
	mode    uint32
	blob    *rawObject
}

func (r *Repo) commit1(paths []string, msg string, author, committer Signature) (_ plumbing.Hash, err error) {
	idxPath := filepath.Join(r.gitdir, "index")
	idxLock, err := acquireLock(idxPath, r.lockTimeout)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	locks := []*lockFile{idxLock}
	var reflogs []*reflogAppend
	refDone := false
	defer func() {
		if !refDone {
			for _, ra := range reflogs {
				ra.undo()
			}
		}
		for _, l := range locks {
			l.rollback()
		}
	}()

	head, err := r.settledHead()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	var parentTree plumbing.Hash
	if !head.hash.IsZero() {
		if parentTree, err = r.commitTreeHash(head.hash); err != nil {
			return plumbing.ZeroHash, err
		}
	}
	x, err := r.loadIndex(idxPath, parentTree, true)
	if err != nil {
		return plumbing.ZeroHash, err
	}

	// The files on disk.
	files := make([]worktreeFile, len(paths))
	for k, p := range paths {
		wf := worktreeFile{path: p}
		full := filepath.Join(r.root, filepath.FromSlash(p))
		sd, err := lstat(full)
		switch {
		case err == nil && sd.mode&sIFMT == sIFDIR:
			// A directory where the file was: the file is gone.
		case err == nil:
			if wf.mode = gitMode(sd.mode); wf.mode == 0 {
				return plumbing.ZeroHash, fmt.Errorf("%w: %s is not a regular file or symlink", ErrInvalidPath, p)
			}
			_, content, err := hashWorktreeFile(full, sd)
			if err != nil {
				return plumbing.ZeroHash, fmt.Errorf("history: read %s: %w", p, err)
			}
			wf.present, wf.sd, wf.blob = true, sd, newBlob(content)
		case isNotExist(err):
		default:
			return plumbing.ZeroHash, fmt.Errorf("history: %w", err)
		}
		files[k] = wf
	}

	// Index edits, in path (= index) order.
	skip := make(map[int]bool)
	deltas := make(map[string]int) // index entries added (+1) or removed (-1)
	var ops []idxOp
	for _, wf := range files {
		pos, cnt := x.search(wf.path)
		for k := 0; k < cnt; k++ {
			if x.stage(pos+k) != 0 {
				return plumbing.ZeroHash, fmt.Errorf("%w: %s has unresolved merge conflicts", ErrInvalidPath, wf.path)
			}
			if x.skipWorktree(pos + k) {
				return plumbing.ZeroHash, fmt.Errorf("%w: %s is outside the sparse checkout (skip-worktree)", ErrInvalidPath, wf.path)
			}
		}
		if cnt > 0 {
			skip[pos] = true
		}
		switch {
		case wf.present:
			ops = append(ops, idxOp{pos: pos, del: cnt, entry: makeEntry(wf.path, wf.sd, wf.mode, wf.blob.hash)})
			if cnt == 0 {
				deltas[wf.path] = 1
			}
		case cnt > 0:
			ops = append(ops, idxOp{pos: pos, del: cnt})
			deltas[wf.path] = -1
		}
	}
	for _, wf := range files {
		if !wf.present {
			continue
		}
		if x.hasPrefix(wf.path+"/", skip) {
			return plumbing.ZeroHash, fmt.Errorf("%w: %s is a file on disk but a directory in the index", ErrInvalidPath, wf.path)
		}
		for i := strings.LastIndexByte(wf.path, '/'); i > 0; i = strings.LastIndexByte(wf.path[:i], '/') {
			if pos, cnt := x.search(wf.path[:i]); cnt > 0 && !skip[pos] {
				return plumbing.ZeroHash, fmt.Errorf("%w: %s is a file in the index but a directory on disk", ErrInvalidPath, wf.path[:i])
			}
		}
	}

	// Trees and commit.
	changes := make([]treeChange, len(files))
	for k, wf := range files {
		changes[k] = treeChange{path: wf.path, del: !wf.present}
		if wf.present {
			changes[k].mode = filemode.FileMode(wf.mode)
			changes[k].hash = wf.blob.hash
		}
	}
	var objs []*rawObject
	dirs := make(map[string]dirChange)
	newRoot, err := r.editTree(parentTree, changes, "", &objs, dirs)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if newRoot == parentTree || (parentTree.IsZero() && newRoot == emptyTree) {
		if x.stamp.valid() {
			r.idxBytes, r.idxStamp = x.data, x.stamp // unmodified: still the file's bytes
		}
		return plumbing.ZeroHash, ErrNothingToCommit
	}
	if newRoot == emptyTree {
		objs = append(objs, &rawObject{typ: plumbing.TreeObject})
	}
	c := object.Commit{
		Author:    object.Signature{Name: author.Name, Email: author.Email, When: author.When},
		Committer: object.Signature{Name: committer.Name, Email: committer.Email, When: committer.When},
		Message:   msg,
		TreeHash:  newRoot,
	}
	if !head.hash.IsZero() {
		c.ParentHashes = []plumbing.Hash{head.hash}
	}
	co := &rawObject{}
	if err := c.Encode(co); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("history: encode commit: %w", err)
	}
	commitHash := co.seal()

	// Objects: invisible until a ref points at them.
	for _, wf := range files {
		if wf.present {
			objs = append(objs, wf.blob)
		}
	}
	objs = append(objs, co)
	// The objects are written on one goroutine while this one builds and
	// writes the new index (two independent ~1 ms jobs).
	var objFiles, objDirs []string
	objErr := make(chan error, 1)
	go func() {
		var err error
		objFiles, objDirs, err = r.writeObjects(objs)
		objErr <- err
	}()

	// The new index, into index.lock.
	x.smudgeRacy(r.root, skip)
	newIndex := x.rebuild(ops, cacheTreeExt(x, dirs, deltas), r.spare)
	r.spare = nil
	idxErr := idxLock.write(newIndex)
	if err := <-objErr; err != nil {
		return plumbing.ZeroHash, err
	}
	if idxErr != nil {
		return plumbing.ZeroHash, idxErr
	}
	idxLockStamp, _, _ := lstatStamp(idxLock.path)

	if r.beforeRefLock != nil {
		r.beforeRefLock()
	}

	// HEAD.lock and the branch's lock, compare-and-swap, reflogs.
	headLock, err := acquireLock(filepath.Join(r.gitdir, "HEAD"), r.lockTimeout)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	locks = append(locks, headLock)
	now, err := r.readHead()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if now != head {
		return plumbing.ZeroHash, fmt.Errorf("%w: %s moved from %s to %s", ErrConcurrentUpdate, now.refDisplay(), head.hash, now.hash)
	}
	value := []byte(commitHash.String() + "\n")
	reflogMsg := "commit: "
	if head.hash.IsZero() {
		reflogMsg = "commit (initial): "
	}
	subject, _, _ := strings.Cut(msg, "\n")
	line := reflogEntry(head.hash, commitHash, committer, reflogMsg+subject)
	var refLock *lockFile
	var refDir string
	if head.symbolic {
		refPath := filepath.Join(r.gitdir, filepath.FromSlash(head.ref))
		refDir = filepath.Dir(refPath)
		if err := os.MkdirAll(refDir, 0o755); err != nil {
			return plumbing.ZeroHash, fmt.Errorf("history: create %s: %w", refDir, err)
		}
		if refLock, err = acquireLock(refPath, r.lockTimeout); err != nil {
			return plumbing.ZeroHash, err
		}
		locks = append(locks, refLock)
		cur, err := r.readRef(head.ref)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if cur != head.hash {
			return plumbing.ZeroHash, fmt.Errorf("%w: %s moved from %s to %s", ErrConcurrentUpdate, head.ref, head.hash, cur)
		}
		if err := refLock.write(value); err != nil {
			return plumbing.ZeroHash, err
		}
		ra, err := appendReflog(filepath.Join(r.gitdir, "logs", filepath.FromSlash(head.ref)), line)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		reflogs = append(reflogs, ra)
	} else if err := headLock.write(value); err != nil {
		return plumbing.ZeroHash, err
	}
	ra, err := appendReflog(filepath.Join(r.gitdir, "logs", "HEAD"), line)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	reflogs = append(reflogs, ra)

	// One durability barrier before anything becomes visible.
	durable := append(objFiles, idxLock.path)
	if refLock != nil {
		durable = append(durable, refLock.path)
	} else {
		durable = append(durable, headLock.path)
	}
	for _, ra := range reflogs {
		durable = append(durable, ra.path)
		if ra.created {
			objDirs = append(objDirs, filepath.Dir(ra.path))
		}
	}
	if err := r.barrier(durable, objDirs); err != nil {
		return plumbing.ZeroHash, err
	}

	// Visible: the index first, then the ref, as git commit does.
	if err := idxLock.commit(); err != nil {
		return plumbing.ZeroHash, err
	}
	if head.symbolic {
		err = refLock.commit()
		headLock.rollback()
	} else {
		err = headLock.commit()
	}
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("history: the index was updated but %s was not: %w", head.ref, err)
	}
	refDone = true
	renamed := []string{r.gitdir}
	if refDir != "" && refDir != r.gitdir {
		renamed = append(renamed, refDir)
	}
	if err := fsyncAll(nil, renamed); err != nil {
		return commitHash, err
	}

	// Caches.
	r.cacheCommitTree(commitHash, newRoot)
	if st, _, err := lstatStamp(idxPath); err == nil && st.ino == idxLockStamp.ino && st.dev == idxLockStamp.dev && st.size == idxLockStamp.size {
		r.idxBytes, r.idxStamp = newIndex, st
		r.spare = x.data // no longer referenced: the next rebuild's buffer
	}
	return commitHash, nil
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
			return head, fmt.Errorf("%w: %s exists (waited %v); another git process is updating the branch, or crashed and left it behind (remove it only if no git process is running)", ErrLocked, busy, r.lockTimeout)
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

// loadIndex reads .git/index, or reuses the cached bytes while the file's
// stamp is unchanged. When forWrite the bytes are handed over (the caller
// modifies them) and the cache is emptied; otherwise bytes read are cached.
// With no index file, the index is built from tree root (zero stat data, as
// `git read-tree` leaves it), or empty.
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
	var data []byte
	if r.idxBytes != nil && stamp == r.idxStamp {
		data = r.idxBytes
		if forWrite {
			r.idxBytes = nil
		}
	} else {
		data = make([]byte, stamp.size)
		if _, err := io.ReadFull(f, data); err != nil {
			return nil, fmt.Errorf("history: read index: %w", err)
		}
		if forWrite {
			r.idxBytes = nil
		} else {
			r.idxBytes, r.idxStamp = data, stamp
		}
	}
	x, err := parseIndex(data)
	if err != nil {
		return nil, err
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
	x, err := parseIndex(x.rebuild(ops, nil, nil))
	if err != nil {
		return nil, err
	}
	x.mtimeSec = -1
	return x, nil
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
