package vault

import (
	"bytes"
	"os"
	"path/filepath"

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
		w.takeBack(n)
	}
	w.warn(w.v.saveOrphans(w.orphans), "the replaced files to check were not recorded")
	w.v.clearState(journalName)
	return Result{}, "", err
}

// takeBack removes the engine's change from a note it wrote: what is there
// now, without the difference between what the engine read and wrote.
func (w *writer) takeBack(n *noteWrite) {
	for try := 0; try < maxMerges; try++ {
		cur, id, fi, err := readStableInfo(n.abs, n.rel)
		if err != nil {
			return
		}
		back := notemerge.Merge3(n.wrote, cur, n.orig.data, n.orig.data, w.protect)
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
