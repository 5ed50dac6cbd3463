package vault

import (
	"errors"
	"os"
	"sort"

	"github.com/sessionvault/sessionvault/internal/notemerge"
)

// checkBases checks, under a lease on each note that keeps writers out
// until the swap, that it is still the version its new content was made
// from. Not adapting, a changed note is returned as changed. Adapting, the
// new content is merged onto what is there: with mayUndo outside the lease
// (a merge can take milliseconds, and writers would queue on it) and the
// round asks to be retried; past it, under the lease, and the new version
// is written again (merged).
func (r *round) checkBases(mayUndo bool) (changed string, retry, merged bool, err error) {
	w := r.w
	adapted := false
	type pendingMerge struct {
		n   *noteWrite
		cur *readRec
	}
	var later []pendingMerge
	for _, n := range r.notes {
		n.old = nil
		if n.base.missing {
			if _, err := os.Lstat(n.abs); err == nil {
				if !r.adapt {
					return n.rel, false, false, nil
				}
				cur, id, fi, err := readStableInfo(n.abs, n.rel)
				if err != nil {
					return "", false, false, err
				}
				n.data = notemerge.Merge3(nil, cur, n.data, n.data, w.protect)
				n.base = &readRec{data: cur, id: id, fi: fi}
				adapted = true
			}
			continue
		}
		h, err := holdFile(n.abs, n.rel)
		if errors.Is(err, os.ErrNotExist) {
			if !r.adapt {
				return n.rel, false, false, nil
			}
			n.base = &readRec{missing: true}
			adapted = true
			continue
		}
		if err != nil {
			return "", false, false, err
		}
		r.held = append(r.held, h)
		if h.id != n.base.id {
			if !r.adapt {
				return n.rel, false, false, nil
			}
			cur, id, err := h.read()
			if err != nil {
				return "", false, false, osError(err, n.rel, "reading")
			}
			fi, err := h.f.Stat()
			if err != nil {
				return "", false, false, osError(err, n.rel, "reading")
			}
			if mayUndo {
				later = append(later, pendingMerge{n, &readRec{data: cur, id: id, fi: fi}})
				continue
			}
			// Out of patience: merge onto what is there now and write that,
			// still under the lease.
			merged = true
			n.data = notemerge.Merge3(n.base.data, cur, n.data, n.data, w.protect)
			n.base = &readRec{data: cur, id: id, fi: fi}
			if err := r.rewrite(n); err != nil {
				return "", false, false, err
			}
		}
		n.old = h
	}
	if len(later) > 0 {
		for _, h := range r.held {
			h.close()
		}
		r.held = nil
		for _, m := range later {
			m.n.data = notemerge.Merge3(m.n.base.data, m.cur.data, m.n.data, m.n.data, w.protect)
			m.n.base = m.cur
		}
		return "", true, false, nil
	}
	if adapted {
		return "", true, false, nil // a new note (or a note gone) to write afresh
	}
	return "", false, merged, nil
}

// rewrite writes n's new version again at its temporary path (its content
// was merged).
func (r *round) rewrite(n *noteWrite) error {
	for k := range r.temps {
		if r.temps[k].n != n {
			continue
		}
		r.temps[k].f.Close()
		os.Remove(r.temps[k].path)
		r.temps[k].f = nil
		f, leased, err := writeTemp(r.temps[k].path, n.data)
		if err != nil {
			return osError(err, n.rel, "writing")
		}
		if err := r.temps[k].setTemp(f, leased); err != nil {
			return osError(err, n.rel, "writing")
		}
	}
	return nil
}

// ours reports whether t's note is still our new version (no one renamed a
// file over it since the swap).
func (r *round) ours(t roundTemp) bool { return holds(t.n.abs, t.f) }

// holds reports whether path names the open file f (same inode).
func holds(path string, f *os.File) bool {
	id, _, err := lstatID(path)
	mine, ferr := statID(f)
	return err == nil && ferr == nil && id.ino == mine.ino && id.dev == mine.dev
}

// undo takes the placed new versions out again, best effort: it runs on a
// round that is failing or starting over, and a version it cannot take out
// is found by the settle of the next round or operation. A file someone
// renamed over the note between the check and the swap back came out in
// place of ours: it goes back in (left at the round's temporary path, it
// would be removed with it).
func (r *round) undo() {
	for k := len(r.placed) - 1; k >= 0; k-- {
		t := r.placed[k]
		for try := 0; try < swapBacks && r.ours(t); try++ {
			if r.w.v.beforeSwapBack != nil {
				r.w.v.beforeSwapBack()
			}
			if t.n.old == nil {
				_ = os.Rename(t.n.abs, t.path)
			} else {
				_ = exchange(t.path, t.n.abs)
			}
			if _, _, err := lstatID(t.path); err != nil || holds(t.path, t.f) {
				break // ours is out
			}
			// Theirs came out: back into the note, then ours is out again
			// if it came back with it.
			if t.n.old == nil {
				_ = renameNoReplace(t.path, t.n.abs)
			} else {
				_ = exchange(t.path, t.n.abs)
			}
		}
	}
	r.placed = nil
}

// place puts the new versions in place: new notes first (they fail if
// someone created the path: changed, or a retry when adapting), then the
// swaps (the replaced file stays at the temporary path). Each new version
// first gets a second name (a hard link, no copy): should someone rename a
// file over the note before the commit and the engine be killed, the
// roll-forward still has the engine's version to merge theirs with.
func (r *round) place() (changed string, retry bool, err error) {
	sort.SliceStable(r.temps, func(a, b int) bool { return r.temps[a].n.old == nil && r.temps[b].n.old != nil })
	for _, t := range r.temps {
		if os.Link(t.path, t.path+mineSuffix) == nil {
			t.n.spent = append(t.n.spent, t.path+mineSuffix)
		}
		var err error
		if t.n.old == nil {
			err = renameNoReplace(t.path, t.n.abs)
			if errors.Is(err, os.ErrExist) {
				r.undo()
				if r.adapt {
					return "", true, nil
				}
				return t.n.rel, false, nil
			}
		} else {
			if r.w.v.beforeSwap != nil {
				r.w.v.beforeSwap()
			}
			err = exchange(t.path, t.n.abs)
		}
		if err != nil {
			r.undo()
			return "", false, osError(err, t.n.rel, "writing")
		}
		r.placed = append(r.placed, t)
	}
	return "", false, nil
}

// writerWaiting reports whether the swaps should be undone for another
// writer: one waiting on a replaced note would write into it, not into the
// note — unless someone is also waiting on, or already saved over, our new
// version.
//
// A file someone renamed over the note between the check and the swap is
// not a reason: the swap took it out, and the settle merges it into the
// note (and guards its lines). Giving it back would lose it to the next
// save of whoever read the engine's version in the meantime — an editor
// that saves by rename reads the note before each save.
func (r *round) writerWaiting() bool {
	waitingOld, waitingNew := false, false
	for _, t := range r.temps {
		if t.n.old != nil && leaseBreakPending(t.n.old.f) {
			waitingOld = true
		}
		if leaseBreakPending(t.f) {
			waitingNew = true
		}
	}
	for _, t := range r.placed {
		if !r.ours(t) {
			waitingNew = true // someone already saved over the new version: keep the round
		}
	}
	return waitingOld && !waitingNew
}

// release takes the stat of each new version (no one could write it yet),
// lets the others in, and writes the journal saying the swaps happened: a
// crash from then on leaves the engine's version in the note, not in the
// temporary file.
func (r *round) release() error {
	for _, t := range r.temps {
		n := t.n
		id, err := statID(t.f)
		fi, ferr := t.f.Stat()
		if err == nil {
			err = ferr
		}
		if err != nil {
			r.undo()
			return osError(err, n.rel, "writing")
		}
		if !t.leased && !id.sameContent(t.id) {
			// Unleased, someone saved into the new version since its
			// rename: what is there is theirs, not the engine's. Its stat as
			// written stands for the engine's version, so the settle reads
			// the note and merges the engine's change into it.
			id, fi = t.id, t.fi
		}
		n.newID, n.newFI, n.written, n.wrote = id, fi, true, n.data
		if n.old != nil {
			n.oldAt, n.keptAnc = t.path, n.base.data
			n.pending = n.old.release()
		}
		unlease(t.f)
	}
	r.done = true
	for _, t := range r.temps {
		r.j.Swapped = append(r.j.Swapped, t.n.rel)
	}
	if err := r.w.v.writeJournal(r.j); err != nil {
		return err
	}
	if r.w.v.afterSwap != nil {
		r.w.v.afterSwap()
	}
	return nil
}

// mineSuffix names the second name of a new version while it is in place
// and not yet committed (see tryRound).
const mineSuffix = ".mine"
