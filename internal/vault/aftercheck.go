package vault

import (
	"bytes"
	"errors"
	"os"

	"github.com/sessionvault/sessionvault/internal/notemerge"
)

// settleAll merges what landed beside the write and writes again until a
// round finds nothing new (bounded by maxMerges; past it the replaced files
// that still hold someone's bytes are kept in .sessionvault/state/tmp).
func (w *writer) settleAll(notes []*noteWrite, j *journal) error {
	for round := 1; ; round++ {
		again, err := w.settle(notes, round == maxMerges)
		if err != nil || len(again) == 0 || round == maxMerges {
			return err
		}
		if _, err := w.writeRound(again, j, true); err != nil {
			return err
		}
	}
}

// settle looks at what landed beside a write round and returns the notes
// to write again, with their merged content: bytes written into the
// replaced file after the check (a save that was waiting on the lease), a
// file someone renamed over the path just before the swap, and a new
// version that lacks the engine's change. A save into the new version that
// keeps the engine's change needs nothing: it is on disk, and the next
// operation commits it as the person's.
func (w *writer) settle(notes []*noteWrite, last bool) ([]*noteWrite, error) {
	var again []*noteWrite
	for _, n := range notes {
		if !n.written {
			continue
		}
		ancestor := n.base.data // R: what our write replaced
		other := ancestor       // O: the replaced file as it is now
		if n.old != nil {
			id, isReg, err := lstatID(n.oldAt)
			switch {
			case err != nil || !isReg:
				// gone: nothing to read
			case id.ino != n.old.id.ino || id.dev != n.old.id.dev:
				// Someone renamed their file over the path between our
				// check and the swap: the swap kept it here.
				if b, _, err := readStable(n.oldAt, n.rel); err == nil {
					other = b
				}
			default:
				cur, err := statID(n.old.f)
				if n.pending || err != nil || !cur.sameContent(n.old.id) {
					b, err := n.old.settleOld(n.pending, n.old.id)
					if err != nil {
						return nil, osError(err, n.rel, "reading")
					}
					other = b
				} else {
					// Untouched so far; a writer that found the note just
					// before the swap may still be on its way: watched
					// until the commit is made (watchLate).
					n.watch = append(n.watch, watched{h: n.old, at: n.oldAt, ancestor: ancestor})
					n.old, n.oldAt = nil, ""
				}
			}
			if n.old != nil {
				n.old.close()
				n.old = nil
			}
		}
		live := n.wrote // L
		liveRec := &readRec{data: n.wrote, id: n.newID, fi: n.newFI}
		if id, isReg, err := lstatID(n.abs); err != nil || !isReg || id != n.newID {
			b, lid, fi, err := readStableInfo(n.abs, n.rel)
			switch {
			case errors.Is(err, os.ErrNotExist):
				liveRec = &readRec{missing: true}
				live = nil
			case err != nil:
				return nil, err
			default:
				live = b
				liveRec = &readRec{data: b, id: lid, fi: fi}
			}
		}
		merged := live
		if !bytes.Equal(live, n.wrote) {
			merged = notemerge.Merge3(ancestor, live, n.wrote, n.wrote, w.protect) // the engine's change in what is there now
		}
		if !bytes.Equal(other, ancestor) {
			merged = w.mergeCopy(ancestor, other, merged) // and what landed in the replaced file
			w.guardLines(n.rel, ancestor, other)
		}
		if n.oldAt != "" {
			switch {
			case bytes.Equal(other, ancestor):
				os.Remove(n.oldAt)
				n.oldAt = ""
			case !last:
				// Merged into the next round's content; removed once the
				// operation is done (until then the journal may name it).
				n.spent = append(n.spent, n.oldAt)
				n.oldAt = ""
			default:
				// Out of rounds: kept for the next operation to merge
				// (keepUnmerged), against ancestor (keptAnc).
			}
		}
		if bytes.Equal(merged, live) && !liveRec.missing {
			continue
		}
		n.base, n.data = liveRec, merged
		again = append(again, n)
	}
	return again, nil
}

// watchLate looks, once more after the commit, at the replaced files that
// no one had written when they were replaced: a writer that found the note
// just before the swap writes into the replaced file a moment later. Such
// bytes are merged into the note and written (the next operation commits
// them as the person's).
func (w *writer) watchLate(notes []*noteWrite, j *journal) {
	for _, n := range notes {
		for i := range n.watch {
			wt := n.watch[i]
			cur, err := statID(wt.h.f)
			if err != nil || cur.sameContent(wt.h.id) {
				continue
			}
			other, err := wt.h.settleOld(false, wt.h.id)
			if err != nil || bytes.Equal(other, wt.ancestor) {
				continue
			}
			live, id, fi, err := readStableInfo(n.abs, n.rel)
			if err != nil {
				continue
			}
			m := &noteWrite{rel: n.rel, abs: n.abs, orig: n.orig, first: n.first,
				base: &readRec{data: live, id: id, fi: fi}, data: w.mergeCopy(wt.ancestor, other, live)}
			if _, err := w.writeRound([]*noteWrite{m}, j, true); err == nil {
				w.warn(w.settleAll([]*noteWrite{m}, j), "bytes written late into a replaced copy of "+n.rel+" were not checked")
				n.spent = append(n.spent, m.spent...)
				w.keepUnmerged(m)
				n.watch = append(n.watch, m.watch...)
				if m.old != nil {
					m.old.close()
				}
				// What it held when read is in the note now: its next
				// check (rescueOrphans) merges only what lands after.
				n.watch[i].ancestor, n.watch[i].h.id = other, cur
			}
		}
	}
}
