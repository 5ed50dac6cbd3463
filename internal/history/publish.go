package history

import (
	"fmt"
	"os"
	"path/filepath"
)

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
	switch formFor(y, r.config()) {
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

// hold holds path with the Repo's Holder, if it has one.
func (r *Repo) hold(path string) (done func()) {
	if r.freer == nil {
		return func() {}
	}
	return r.freer.Hold(path)
}

// publish makes the try durable with one barrier before anything becomes
// visible (and waits for the caller's beforeVisible), then visible: the
// index first, then the ref, as git commit does; then it flushes the
// renames.
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
	// The caller's wait runs with git's locks held; it overlapped the work
	// above, so it rarely waits here.
	if c.beforeVisible != nil {
		if err := c.beforeVisible(); err != nil {
			return err
		}
	}

	freed := c.r.hold(c.idxLock.target)
	err := c.idxLock.commit()
	freed()
	if err != nil {
		return err
	}
	if c.head.symbolic {
		freed = c.r.hold(c.refLock.target)
		err = c.refLock.commit()
		c.headLock.rollback()
	} else {
		freed = c.r.hold(c.headLock.target)
		err = c.headLock.commit()
	}
	freed()
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
