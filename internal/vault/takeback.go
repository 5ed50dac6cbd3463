package vault

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/notemerge"
)

// fail takes the operation's change back out of the notes it wrote (others'
// edits stay), releases the locks and returns err.
func (w *writer) fail(notes []*noteWrite, j *journal, err error) (Result, string, error) {
	_ = w.endSyncs() // the rounds' fsyncs end before the notes are taken back (err is the failure)
	w.watchLate(notes, j)
	for _, n := range notes {
		if n.old != nil {
			n.old.close()
			n.old = nil
		}
		// The file the last round replaced, kept aside untouched: where no
		// new file can be written, taking the change back swaps it in.
		var kept string
		if len(n.watch) > 0 {
			kept = n.watch[len(n.watch)-1].at
		}
		for _, wt := range n.watch {
			// A writer may yet be on its way into it: checked by the next
			// operation, as after a commit.
			w.orphans = append(w.orphans, orphan{Rel: n.rel, File: filepath.Base(wt.at), ID: wt.h.id, Ancestor: wt.ancestor})
			wt.h.close()
		}
		n.watch = nil
		for _, p := range n.spent {
			os.Remove(p)
		}
		n.spent = nil
		w.keepUnmerged(n)
		if !n.written {
			continue
		}
		w.takeBack(n, kept)
	}
	w.warn(w.v.saveOrphans(w.orphans), "the replaced files to check were not recorded")
	w.v.clearState(journalName)
	return Result{}, "", err
}

// takeBack removes the engine's change from a note it wrote: what is there
// now, without the difference between what the operation read and first
// made of it (what later rounds merged in is someone else's). kept
// is where the file the engine's version replaced waits ("" for none): on
// a full disk, where the take-back's own write fails, restoreKept swaps it
// back in when nothing changed since.
func (w *writer) takeBack(n *noteWrite, kept string) {
	for try := 0; try < maxMerges; try++ {
		cur, id, fi, err := readStableInfo(n.abs, n.rel)
		if err != nil {
			return
		}
		// Against the engine's first version, not the last it wrote: a
		// save merged into the last (a settle round) is the person's, and
		// stays — as the commit's person version counts it.
		back := notemerge.Merge3(n.first, cur, n.orig.data, n.orig.data, w.protect)
		if n.orig.missing && bytes.Equal(cur, n.wrote) {
			if h, err := holdFile(n.abs, n.rel); err == nil {
				if h.id == id {
					os.Remove(n.abs)
				}
				h.close()
			}
			return
		}
		if bytes.Equal(back, cur) {
			return
		}
		m := &noteWrite{rel: n.rel, abs: n.abs, orig: n.orig, base: &readRec{data: cur, id: id, fi: fi}, data: back}
		changed, err := w.writeRound([]*noteWrite{m}, &journal{Files: map[string]string{}, Old: map[string]string{}}, true)
		w.v.clearState(journalName)
		if err != nil && errs.Is(err, errs.DiskFull) && kept != "" && bytes.Equal(cur, n.wrote) && w.restoreKept(n, kept, back) {
			return
		}
		if m.old != nil {
			m.old.close()
			m.old = nil
		}
		// What the take-back replaced: a save renamed over the note just
		// before its swap is merged by the next operation (rescueOrphans).
		w.keepUnmerged(m)
		if err != nil || changed == "" {
			return
		}
	}
}

// restoreKept swaps the file kept at kept (the one the engine's version
// replaced) back into the note, where the take-back could not write a new
// file for want of space: swapping two existing files needs no free block.
// Only while nothing changed since the engine's write: the note is still
// the engine's version, held under a read lease (no one can open it for
// writing meanwhile; where leases are not available it does nothing), and
// the kept file holds back. Should a file someone renamed over the note
// come out instead, or a writer come to wait on the lease meanwhile, the
// swap is undone. It reports whether the note is back. The engine's
// version is then removed, unless a writer that had found it holds it open
// (the lease cannot be taken again): then it waits as an orphan, and the
// next operation merges what they wrote.
func (w *writer) restoreKept(n *noteWrite, kept string, back []byte) bool {
	h, err := holdFile(n.abs, n.rel)
	if err != nil {
		return false
	}
	defer h.close()
	if !h.leased || !h.id.sameContent(n.newID) {
		return false
	}
	if b, _, err := readStable(kept, n.rel); err != nil || !bytes.Equal(b, back) {
		return false
	}
	if err := exchange(kept, n.abs); err != nil {
		return false
	}
	if !holds(kept, h.f) || leaseBreakPending(h.f) {
		_ = exchange(kept, n.abs) // as it was: theirs, or ours for the writer
		return false
	}
	w.warn(syncDir(filepath.Dir(n.abs)), "the folder of "+n.rel+" was not made durable after taking the change back")
	name := filepath.Base(kept)
	w.orphans = slices.DeleteFunc(w.orphans, func(o orphan) bool { return o.File == name })
	h.release() // a writer that was on its way in gets the engine's version now
	if ok, _ := tryLease(h.f); ok {
		os.Remove(kept) // no one has it open for writing
		return true
	}
	id, err := statID(h.f)
	if err != nil {
		id = fileID{} // its content is checked, whatever it is
	}
	w.orphans = append(w.orphans, orphan{Rel: n.rel, File: name, ID: id, Ancestor: n.wrote})
	return true
}
