package history

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/go-git/go-git/v5/plumbing"
)

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
		// The view this reload replaces is referenced no more: its buffer
		// (or the last commit's spare) takes the new one, so that reading
		// the index after another process's commit allocates nothing.
		buf := r.spare
		if buf == nil && r.idx != nil {
			buf = r.idx.data
		}
		r.spare, r.idx = nil, nil
		var data []byte
		if x := int(stamp.size); cap(buf) >= x && x >= 1<<16 {
			data, buf = buf[:x], nil // a large file (a whole index, mostly): read into buf
		} else {
			data = make([]byte, stamp.size)
		}
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
			if x, err = mergeSplit(x, shared, id, buf); err != nil {
				return nil, err
			}
		}
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
