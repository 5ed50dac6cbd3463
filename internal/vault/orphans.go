package vault

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/notemerge"
)

// orphan is a replaced note file kept aside in .sessionvault/state/tmp: a
// writer that had found the note just before the engine's swap writes into
// it a moment later. The next operation merges what landed there
// (rescueOrphans), or removes it when nothing did.
type orphan struct {
	Rel  string `json:"rel"`
	File string `json:"file"`
	// ID is the file's identity when it was recorded (zero: check its
	// content whatever it is).
	ID fileID `json:"id"`
	// Its content then: Commit's parent's version of Rel, or Ancestor.
	Commit   string `json:"commit,omitempty"`
	Ancestor []byte `json:"ancestor,omitempty"`
}

const orphansName = "orphans.json"

// loadStateList reads a JSON list kept by saveStateList; a missing, empty or
// unreadable one holds no records.
func loadStateList[T any](v *Vault, name string) []T {
	data, err := v.readStateInPlace(name)
	if err != nil {
		return nil
	}
	var recs []T
	if decodeState(data, &recs) != nil {
		return nil
	}
	return recs
}

// saveStateList keeps recs as a JSON list in the state file name (emptied
// when there are none).
func saveStateList[T any](v *Vault, name string, recs []T) error {
	if len(recs) == 0 {
		v.clearState(name)
		return nil
	}
	data, err := json.Marshal(recs)
	if err != nil {
		return err
	}
	return v.writeStateInPlace(name, data)
}

// keepUnmerged records n's replaced file that the merges ran out before
// (n.oldAt, which held n.keptAnc when it was replaced) as an orphan: the
// next operation merges what someone wrote into it (rescueOrphans). Every
// write that settles calls it once done, or that file's bytes would be left
// in .sessionvault/state/tmp, in no note.
func (w *writer) keepUnmerged(n *noteWrite) {
	if n.oldAt == "" {
		return
	}
	w.orphans = append(w.orphans, orphan{Rel: n.rel, File: filepath.Base(n.oldAt), Ancestor: n.keptAnc})
	n.oldAt = ""
}

func (v *Vault) loadOrphans() []orphan { return loadStateList[orphan](v, orphansName) }

func (v *Vault) saveOrphans(recs []orphan) error {
	return saveStateList(v, orphansName, recs)
}

// rescueOrphans checks the replaced files the last operation left: one no
// one wrote is removed; bytes someone wrote into one are merged into its
// note, which is written (the operation that follows commits them as the
// person's). Returns the records still to check after this operation.
func (w *writer) rescueOrphans() []orphan {
	v := w.v
	recs := v.loadOrphans()
	dir := filepath.Join(v.Root, ".sessionvault", "state", "tmp")
	for _, rec := range recs {
		p := filepath.Join(dir, filepath.Base(rec.File))
		id, isReg, err := lstatID(p)
		if err != nil || !isReg {
			continue
		}
		if rec.ID != (fileID{}) && id.sameContent(rec.ID) {
			v.removeLater(p)
			continue
		}
		abs, err := v.Abs(rec.Rel)
		if err != nil {
			continue
		}
		other, _, err := readStable(p, rec.Rel)
		if err != nil {
			w.orphans = append(w.orphans, rec)
			continue
		}
		ancestor := rec.Ancestor
		if rec.Commit != "" {
			if parent, err := w.repo.Parent(rec.Commit); err == nil {
				ancestor, _ = w.repo.ReadFileAt(parent, rec.Rel)
			}
		}
		live, lid, fi, err := readStableInfo(abs, rec.Rel)
		if err != nil {
			w.orphans = append(w.orphans, rec)
			continue
		}
		merged := w.mergeCopy(ancestor, other, live)
		w.guardLines(rec.Rel, ancestor, other)
		if !bytes.Equal(merged, live) {
			if err := w.writeForPerson(rec.Rel, abs, &readRec{data: live, id: lid, fi: fi}, merged); err != nil {
				w.orphans = append(w.orphans, rec)
				continue
			}
		}
		v.removeLater(p)
	}
	return w.orphans
}

// writeForPerson writes data over rel (live is what it replaces) through
// the write path, without a commit: text the engine puts back on a person's
// behalf (lines rescued from a replaced file, guarded lines a save dropped).
// What lands beside it is settled as for any write; replaced files still
// open are kept as orphan records for the next operation.
func (w *writer) writeForPerson(rel, abs string, live *readRec, data []byte) error {
	base := *live // (orig and base are separate records, as everywhere)
	n := &noteWrite{rel: rel, abs: abs, orig: live, first: live.data, base: &base, data: data}
	j := &journal{Change: Change{Operation: "external-edit"}, Order: []string{rel}, Files: map[string]string{}, Base: map[string]string{rel: sum(live.data)}, Old: map[string]string{}}
	if _, err := w.writeRound([]*noteWrite{n}, j, true); err != nil {
		return err
	}
	w.warn(w.settleAll([]*noteWrite{n}, j), "bytes written late into a replaced copy of "+rel+" were not checked")
	// Nothing to commit: what is on disk now is the person's.
	w.v.clearState(journalName)
	for _, p := range n.spent {
		w.v.removeLater(p)
	}
	for _, wt := range n.watch {
		w.orphans = append(w.orphans, orphan{Rel: n.rel, File: filepath.Base(wt.at), ID: wt.h.id, Ancestor: wt.ancestor})
		wt.h.close()
	}
	w.keepUnmerged(n)
	return nil
}

// cleanTmp removes what killed processes left in .sessionvault/state/tmp
// (new versions never put in place, replaced files a roll-forward has
// merged): files over a minute old that no orphan record names. The caller
// holds the vault lock, so no operation is using them.
func (v *Vault) cleanTmp(keep []orphan) {
	dir := filepath.Join(v.Root, ".sessionvault", "state", "tmp")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	kept := map[string]bool{}
	for _, o := range keep {
		kept[filepath.Base(o.File)] = true
	}
	for _, e := range ents {
		if kept[e.Name()] {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > time.Minute {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// mergeCopy merges into into what someone added to a replaced copy of a
// note (other, which held ancestor when it was replaced), except the body
// lines into already holds: a save made from that copy (an editor that read
// it just before the swap) may have brought them in another way, and a
// line is never added twice.
func (w *writer) mergeCopy(ancestor, other, into []byte) []byte {
	return notemerge.Merge3(ancestor, notYetIn(ancestor, other, into), into, into, w.protect)
}

// notYetIn returns other without the body lines it added to ancestor that
// into already holds, counted (a line other added twice and into holds once
// keeps one copy). Blank lines and the front matter stay as they are.
func notYetIn(ancestor, other, into []byte) []byte {
	count := func(text []byte) map[string]int {
		_, body := notemerge.SplitNote(text)
		m := map[string]int{}
		for _, l := range notemerge.SplitLines(body) {
			m[strings.TrimRight(l, "\r\n")]++
		}
		return m
	}
	had, have := count(ancestor), count(into)
	fm, body := notemerge.SplitNote(other)
	out := append([]byte(nil), fm...)
	seen := map[string]int{}
	for _, l := range notemerge.SplitLines(body) {
		k := strings.TrimRight(l, "\r\n")
		seen[k]++
		if strings.TrimSpace(k) != "" && seen[k] > had[k] && have[k] >= seen[k] {
			continue // added by other, and already in into
		}
		out = append(out, l...)
	}
	return out
}
