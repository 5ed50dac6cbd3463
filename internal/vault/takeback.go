package vault

import (
	"bytes"
	"os"

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
			wt.h.close()
			os.Remove(wt.at)
		}
		n.watch = nil
		for _, p := range n.spent {
			os.Remove(p)
		}
		n.spent = nil
		if !n.written {
			continue
		}
		w.takeBack(n)
	}
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
		if m.oldAt != "" {
			if m.old != nil {
				m.old.close()
			}
			os.Remove(m.oldAt)
		}
		if err != nil || changed == "" {
			return
		}
	}
}
