package vault

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"

	"github.com/sessionvault/sessionvault/internal/history"
	"github.com/sessionvault/sessionvault/internal/notemerge"

	"golang.org/x/sync/errgroup"
)

// rollForward finishes an operation that a crash interrupted between its
// journal and its commit: its change is merged into each note as it is now
// (with anything written into the replaced file after the swap), written,
// and committed under its own message with "Recovered: true".
func (v *Vault) rollForward(repo *history.Repo, outer *writer) error {
	data, err := v.readStateInPlace(journalName)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return osError(err, ".sessionvault/state/"+journalName, "reading")
	}
	var j journal
	if err := decodeState(data, &j); err != nil || len(j.Order) == 0 {
		v.clearState(journalName)
		return nil
	}
	w := &writer{v: v, repo: repo, opID: j.Change.Trailers["Op-Id"], orphans: v.loadOrphans(), il: outer.il}
	outer.il = nil // now w's
	defer w.releaseIndex()
	defer func() { outer.warnings = append(outer.warnings, w.warnings...) }()
	var spent []string // the replaced files and second names, once read
	defer func() {
		for _, p := range spent {
			os.Remove(p)
		}
	}()
	notes, unknown, spent, ok, err := w.recoveredNotes(&j)
	if err != nil || !ok {
		return err
	}
	committed := w.committedBefore(&j)
	if entry := j.Change.Trailers["Entry"]; unknown && entry != "" && committed == "" {
		// Written over before it was committed: unless its entry is still
		// in a note, it did not take effect.
		found := false
		for _, n := range notes {
			found = found || bytes.Contains(n.data, []byte("^"+entry+"\n")) || bytes.HasSuffix(n.data, []byte("^"+entry))
		}
		if !found {
			notes = nil
		}
	}
	if len(notes) == 0 {
		// Nothing of it is in the notes: it did not happen (a retry of its
		// id runs it afresh). Notes it created, untouched since, go too.
		for _, rel := range j.Missing {
			if abs, err := v.Abs(rel); err == nil {
				if b, err := os.ReadFile(abs); err == nil && sum(b) == j.Files[rel] {
					os.Remove(abs)
				}
			}
		}
		v.clearState(journalName)
		return nil
	}
	var todo []*noteWrite
	for _, n := range notes {
		if !n.written {
			todo = append(todo, n)
		}
	}
	if len(todo) > 0 {
		if err := w.lockIndex(); err != nil {
			return err
		}
		if _, err := w.writeRound(todo, &j, true); err != nil {
			return err
		}
		if err := w.settleAll(todo, &j); err != nil {
			return err
		}
	}
	if committed != "" {
		w.finishCommitted(notes, &j, committed)
		return nil
	}
	// Notes another git process committed meanwhile (a `git add -A` once the
	// crash released the index) are not the recovered commit's: its
	// State-Checksum covers what it changes.
	var toCommit []*noteWrite
	for _, n := range notes {
		if head, err := repo.ReadFile(n.rel); err != nil || !bytes.Equal(head, n.wrote) {
			toCommit = append(toCommit, n)
		}
	}
	// The killed process may have died before its notes were fsynced: the
	// recovered commit waits for theirs, as any commit does.
	if !repo.CoversWorkTree() {
		w.syncs = new(errgroup.Group)
		for _, n := range toCommit {
			syncNotePath(w.syncs, n.abs, n.rel, v.syncNote)
		}
	}
	res, err := w.commit(toCommit, nil, j.Change, true)
	if err != nil {
		_ = w.endSyncs() // ended by the commit unless it failed first
		return err
	}
	w.watchLate(notes, &j)
	w.finish(notes, res, j.Change)
	return nil
}

// finishCommitted finishes a recovered operation whose crash came after its
// commit (hash), without a second one: what was merged is on disk for the
// next operation. That commit is the engine's last version of its notes (the
// entries the next operations restore from); what is on disk may differ, so
// no file identity goes with it.
func (w *writer) finishCommitted(notes []*noteWrite, j *journal, hash string) {
	v := w.v
	w.finish(notes, Result{}, j.Change)
	recs := v.bases()
	for _, rel := range j.Order {
		recs.set(rel, baseRec{Commit: hash})
	}
	w.warn(v.saveBases(recs), "the notes' committed versions were not recorded (the next operation compares with HEAD)")
	if w.opID != "" {
		res := Result{Commit: hash, Paths: j.Order}
		w.warn(v.recordOp(w.opID, OpRecord{Result: res, Session: j.Change.Session, Trailers: j.Change.Trailers}), "the operation id "+w.opID+" was not recorded (a retry with it would run the operation again)")
	}
}

// recoveredNotes rebuilds, for each note of the journal, what the
// interrupted operation is to write now: the engine's version merged with
// the note as it is and with anything written into the replaced file after
// the swap. unknown says a note's version was written over before the
// commit; spent are the files to remove once done; ok false means the
// journal names a path outside the vault (it was cleared: nothing to do).
func (w *writer) recoveredNotes(j *journal) (notes []*noteWrite, unknown bool, spent []string, ok bool, err error) {
	missing := map[string]bool{}
	for _, p := range j.Missing {
		missing[p] = true
	}
	swappedNote := map[string]bool{}
	for _, rel := range j.Swapped {
		swappedNote[rel] = true
	}
	for _, rel := range j.Order {
		abs, err := w.v.Abs(rel)
		if err != nil {
			w.v.clearState(journalName)
			return nil, false, spent, false, nil
		}
		n, overwritten, used, err := w.recoveredNote(j, rel, abs, missing[rel], swappedNote[rel])
		spent = append(spent, used...)
		if err != nil {
			return nil, false, spent, false, err
		}
		unknown = unknown || overwritten
		if n != nil {
			notes = append(notes, n)
		}
	}
	return notes, unknown, spent, true, nil
}

// recoveredNote is recoveredNotes for one note rel (at abs): nil when its
// new version was never put in place and is gone.
func (w *writer) recoveredNote(j *journal, rel, abs string, wasMissing, swappedNote bool) (n *noteWrite, overwritten bool, spent []string, err error) {
	v, repo := w.v, w.repo
	cur, id, fi, err := readStableInfo(abs, rel)
	curRec := &readRec{data: cur, id: id, fi: fi}
	if errors.Is(err, os.ErrNotExist) {
		curRec = &readRec{missing: true}
	} else if err != nil {
		return nil, false, nil, err
	}
	var tmp []byte
	tmpPath := ""
	if name := j.Old[rel]; name != "" {
		tmpPath = filepath.Join(v.Root, ".sessionvault", "state", "tmp", filepath.Base(name))
		tmp, _ = os.ReadFile(tmpPath)
		spent = append(spent, tmpPath)
	}
	// The engine's version: in the note (swapped), or still in the
	// temporary file (not yet); else, swapped and written over since, the
	// note as it is holds it.
	var mine, other []byte
	swapped := true
	switch want := j.Files[rel]; {
	case !curRec.missing && sum(cur) == want:
		mine, other = cur, tmp
	case tmpPath != "" && tmp != nil && sum(tmp) == want:
		mine, swapped = tmp, false
	case tmpPath != "" && mineOK(tmpPath+mineSuffix, want):
		// Replaced by someone's rename after the swap: their file is merged
		// with the engine's version, kept under its second name.
		mine, _ = os.ReadFile(tmpPath + mineSuffix)
		other = tmp
		spent = append(spent, tmpPath+mineSuffix)
	case swappedNote || tmp != nil:
		// (Before its swap the temporary file holds exactly the engine's
		// version; holding anything else, it holds the file the swap
		// replaced.) In place, and written over since (a save of a stale
		// buffer may have dropped entries): the note as it is, with the
		// entries of the engine's last version put back.
		mine, other = cur, tmp
		if base, _ := v.lastVersion(repo, rel); base != nil {
			mine = notemerge.Merge3(base, cur, base, base, nil)
		}
		overwritten = true
	default:
		return nil, false, spent, nil // never put in place, and its new version is gone
	}
	// What it replaced: Base names it (in the temporary file after the swap,
	// in the note before); else Head's version.
	orig := &readRec{missing: wasMissing}
	switch b := j.Base[rel]; {
	case orig.missing:
	case b != "" && swapped && tmp != nil && sum(tmp) == b:
		orig.data = tmp
	case b != "" && !swapped && !curRec.missing && sum(cur) == b:
		orig.data = cur
	default:
		hb, err := repo.ReadFileAt(j.Head, rel)
		if err != nil {
			orig.missing = true
		}
		orig.data = hb
	}
	merged := notemerge.Merge3(orig.data, cur, mine, mine, w.protect)
	if curRec.missing {
		merged = mine
	}
	if swapped && other != nil && !bytes.Equal(other, orig.data) && !bytes.Equal(other, mine) {
		// Written into the replaced file after the swap.
		merged = w.mergeCopy(orig.data, other, merged)
		w.guardLines(rel, orig.data, other)
	}
	n = &noteWrite{rel: rel, abs: abs, orig: orig, first: mine, base: curRec, data: merged}
	if !curRec.missing && bytes.Equal(cur, merged) {
		n.written, n.newID, n.newFI, n.wrote = true, id, fi, cur
	}
	return n, overwritten, spent, nil
}

// mineOK reports whether path holds content whose sum is want.
func mineOK(path, want string) bool {
	b, err := os.ReadFile(path)
	return err == nil && sum(b) == want
}

// committedBefore returns the commit an interrupted operation already made:
// the commit carrying its Op-Id among the last 200, or HEAD when HEAD holds
// every note as the journal wrote it. "" when it made none.
func (w *writer) committedBefore(j *journal) string {
	if w.opID != "" {
		if log, err := w.repo.Log(200); err == nil {
			for _, c := range log {
				if c.Trailers["Op-Id"] == w.opID {
					return c.Hash
				}
			}
		}
		return ""
	}
	for _, rel := range j.Order {
		head, err := w.repo.ReadFile(rel)
		if err != nil || sum(head) != j.Files[rel] {
			return ""
		}
	}
	h, err := w.repo.Head()
	if err != nil {
		return ""
	}
	return h
}
