package vault

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/history"
	"github.com/sessionvault/sessionvault/internal/note"
)

// Bounds of the write path (DESIGN §5, §6).
const (
	// maxRuns is how often an operation's function runs when a note it read
	// changes before the engine's write: each run applies the operation to
	// what is on disk then. After strictRuns, a run's change is merged
	// (Merge3) onto a note that changed again, so the last run always
	// writes.
	maxRuns    = 5
	strictRuns = 3
	// maxMerges is how many merge-and-write rounds follow a write that
	// found another writer's bytes beside it.
	maxMerges = 8
)

// Transact runs one operation as one commit (DESIGN §5, §6):
//
//  1. it takes the vault lock, and finishes an operation a crash
//     interrupted (the journal);
//  2. it runs fn on stable reads of the notes (a note another process is
//     writing is read once it is written);
//  3. it takes git's index lock, so no `git add` or `git commit -a` can
//     sweep the engine's writes into a commit of its own;
//  4. for each note fn changed it checks, under a read lease that keeps other
//     writers out, that the note is still the version fn read — if not, fn
//     runs again on the new version — and swaps the new content in
//     atomically (rename); the note it replaced is kept aside;
//  5. it checks that nothing landed in between: bytes another process wrote
//     into the replaced note after the check, a rename that replaced the
//     engine's note, a save into the new note. Their changes and the
//     engine's are merged line by line (Merge3) and written again, bounded;
//  6. it commits the edits made outside the engine to the touched notes as
//     the configured person, then the engine's bytes — from memory, not from
//     disk — as the agent: one compare-and-swap on the branch, rebuilt on a
//     HEAD another process moved.
//
// If fn fails nothing is written. If anything after fails, the notes are
// put back (the engine's change taken out again, others' edits kept) and
// the index and HEAD are as they were: an error means the operation did not
// happen. If fn's writes change nothing, no commit is made.
func (v *Vault) Transact(fn func(tx *Tx) (Change, error)) (Result, error) {
	res, _, err := v.TransactOnce("", fn)
	return res, err
}

// TransactOnce is Transact with an operation id: when an operation with the same
// id already took effect in this vault, fn does not run and the first
// result is returned with repeat true (its Change's trailers included), so
// a command retried after an error or a lost reply never makes a duplicate.
// The id is recorded in the commit as the trailer "Op-Id". An empty id
// makes it Transact.
func (v *Vault) TransactOnce(opID string, fn func(tx *Tx) (Change, error)) (Result, OpRecord, error) {
	if opID != "" {
		if err := checkOpID(opID); err != nil {
			return Result{}, OpRecord{}, err
		}
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	l, err := v.lock()
	if err != nil {
		return Result{}, OpRecord{}, err
	}
	defer l.unlock()
	repo, err := v.repo()
	if err != nil {
		return Result{}, OpRecord{}, err
	}
	v.basesRec = nil
	w := &writer{v: v, repo: repo, opID: opID}
	defer w.releaseIndex()
	if err := v.clearKilledSync(); err != nil {
		return Result{}, OpRecord{}, err
	}
	if err := v.clearKilledCommit(repo, w); err != nil {
		return Result{}, OpRecord{}, err
	}
	if err := v.rollForward(repo, w); err != nil {
		return Result{}, OpRecord{}, err
	}
	if opID != "" {
		if rec, ok := v.findOp(opID); ok {
			rec.Repeat = true
			return rec.Result, rec, nil
		}
	}
	w.releaseIndex() // a killed process's lock, when there was nothing to roll forward
	if had := v.loadOrphans(); len(had) > 0 {
		w.rescueOrphans()
		w.warn(v.saveOrphans(w.orphans), "the replaced files to check were not recorded")
	}
	if w.guards = v.loadGuards(); len(w.guards) > 0 {
		w.applyGuards()
		w.warn(v.saveGuards(w.guards), "the guarded lines were not recorded")
	}
	if w.killed {
		v.cleanTmp(w.orphans)
	}
	backoff := time.Millisecond
	for run := 1; ; run++ {
		tx := &Tx{v: v, reads: map[string]*readRec{}, writes: map[string][]byte{}}
		ch, err := fn(tx)
		if err != nil {
			return Result{}, OpRecord{}, err
		}
		if opID != "" {
			if ch.Trailers == nil {
				ch.Trailers = map[string]string{}
			}
			ch.Trailers["Op-Id"] = opID
		}
		w.protect = ch.Protect
		// The first runs insist that the notes are still what fn read; then
		// fn's change is merged onto whatever is there (a writer saving
		// faster than fn runs).
		res, changed, err := w.apply(tx, ch, run > strictRuns)
		if err != nil || changed == "" {
			if err == nil {
				res.Warnings = append(res.Warnings, w.warnings...)
			}
			rec := OpRecord{Result: res, Session: ch.Session, Trailers: ch.Trailers}
			if err == nil && opID != "" && res.Commit == "" {
				err = v.recordOp(opID, rec) // no notes written: no journal to finish
			}
			return res, rec, err
		}
		if run == maxRuns {
			return Result{}, OpRecord{}, errs.New(errs.ConcurrentUpdate, "%s kept changing while the operation ran (%d tries); nothing was written, try again", changed, maxRuns).With("note", changed)
		}
		time.Sleep(backoff)
		backoff = min(2*backoff, 50*time.Millisecond)
	}
}

// writer carries one operation's write: the repository and git's index lock
// once taken.
type writer struct {
	v    *Vault
	repo *history.Repo
	il   *history.IndexLock
	opID string // recorded with the commit, before the journal goes
	// orphans are the replaced files the next operation checks, carried
	// over from the last one (rescueOrphans) and added to by this one.
	orphans []orphan
	guards  []guard // lines taken from replaced files, kept in their notes a while
	killed  bool    // a process killed while holding git's locks was found
	// protect says which lines a merge never lets another writer delete
	// (Change.Protect; nil: vault.IsEntryLine).
	protect func(line []byte) bool
	// warnings are what failed after the commit was made (Result.Warnings).
	warnings []string
}

// warn keeps err, which happened after the operation's commit (so the
// operation stands), for Result.Warnings: what failed, and what it costs.
func (w *writer) warn(err error, what string) {
	if err != nil {
		w.warnings = append(w.warnings, what+": "+err.Error())
	}
}

func (w *writer) lockIndex() error {
	if w.il != nil {
		return nil
	}
	at := time.Now().UTC().Format(time.RFC3339Nano)
	if err := w.v.writeStateInPlace(commitMarker, []byte(at+"\n")); err != nil {
		return osError(err, ".sessionvault/state/"+commitMarker, "writing")
	}
	il, err := w.repo.LockIndex()
	if err != nil {
		w.v.clearState(commitMarker)
		return gitError(err, "locking the git index")
	}
	w.il = il
	// Which index.lock is ours: the next operation takes over (or removes)
	// only that one if this process is killed, never a git process's.
	if err := w.v.writeStateInPlace(commitMarker, []byte(at+"\n"+strconv.FormatUint(il.Inode(), 10)+"\n")); err != nil {
		return osError(err, ".sessionvault/state/"+commitMarker, "writing")
	}
	return nil
}

func (w *writer) releaseIndex() {
	if w.il != nil {
		w.il.Release()
		w.il = nil
		w.v.clearState(commitMarker)
	}
}

// gitError gives a history error its code: errs.GitLocked for a git lock
// another process holds, errs.ConcurrentUpdate for a branch that kept moving,
// errs.DiskFull or errs.PermissionDenied for those OS errors, else
// errs.GitWriteFailed.
func gitError(err error, doing string) error {
	var e *errs.Error
	if errors.As(err, &e) {
		return err
	}
	code := errs.GitWriteFailed
	switch {
	case errors.Is(err, history.ErrLocked):
		code = errs.GitLocked
	case errors.Is(err, history.ErrConcurrentUpdate):
		code = errs.ConcurrentUpdate
	default:
		if c := osErrorCode(err); c != errs.InternalError {
			code = c
		}
	}
	msg := doing + ": " + err.Error()
	if code == errs.GitLocked {
		msg += "; nothing was changed — run the command again once that git process has finished"
	} else {
		msg += "; nothing was changed"
	}
	return &errs.Error{Code: code, Message: msg, Err: err}
}

// noteWrite is one note of an operation's write.
type noteWrite struct {
	rel, abs string
	orig     *readRec // what the operation's function read (its base, R)
	first    []byte   // what the operation made of it (W)
	base     *readRec // what the next round's write replaces
	data     []byte   // what the next (or last) round writes

	// Set by a write round.
	old     *heldFile   // the replaced file, held (nil for a new file)
	oldAt   string      // where the replaced file now is (.sessionvault/state/tmp)
	pending bool        // a writer was waiting on the replaced file's lease
	newID   fileID      // our file right after the rename
	newFI   os.FileInfo // its stat, for the index
	written bool
	wrote   []byte    // what the last round put in place: what the commit holds
	spent   []string  // replaced files already merged, removed when done
	watch   []watched // replaced files still open, checked after the commit
	keptAnc []byte    // oldAt's content when it was replaced, when kept past the last round
}

// watched is a replaced file no one had written when the write was
// checked: it stays open (and kept aside) until after the commit, when a
// late writer's bytes in it are merged into the note.
type watched struct {
	h        *heldFile
	at       string // where it is kept (.sessionvault/state/tmp)
	ancestor []byte // its content when it was replaced
}

// apply writes and commits one run of an operation. changed names a note
// that changed since fn read it (fn must run again; nothing was written);
// with adapt, fn's change is merged onto such a note instead.
func (w *writer) apply(tx *Tx, ch Change, adapt bool) (Result, string, error) {
	v := w.v
	var notes []*noteWrite
	for _, rel := range tx.order {
		r := tx.reads[rel]
		if equalRead(r, tx.writes[rel]) {
			continue
		}
		abs, err := v.Abs(rel)
		if err != nil {
			return Result{}, "", err
		}
		notes = append(notes, &noteWrite{rel: rel, abs: abs, orig: r, first: tx.writes[rel], base: r, data: tx.writes[rel]})
	}
	person, err := w.personEdits(tx)
	if err != nil {
		return Result{}, "", err
	}
	if len(notes) == 0 && len(person) == 0 {
		return Result{}, "", nil
	}
	for _, n := range notes {
		if err := v.checkParents(n.rel); err != nil {
			return Result{}, "", err
		}
	}
	if err := w.lockIndex(); err != nil {
		return Result{}, "", err
	}
	personSig := history.Signature{Name: v.Config.Person.Name, Email: v.Config.Person.Email}
	msg := personMessage(filePaths(person))
	if ch.ByAgent {
		personSig = history.Signature{Name: v.Config.Agent.Name, Email: v.Config.Agent.Email}
		msg = agentMessage(filePaths(person), ch.Operation)
	}
	if len(notes) == 0 {
		hashes, err := w.il.Commit([]history.CommitSpec{{Files: person, Message: msg, Author: personSig}})
		if err != nil {
			return Result{}, "", gitError(err, "committing edits made outside sessionvault")
		}
		w.releaseIndex()
		return Result{PersonCommit: hashes[0]}, "", nil
	}

	j := &journal{Change: ch, Order: make([]string, len(notes)), Files: map[string]string{}, Base: map[string]string{}, Old: map[string]string{}}
	if head, err := w.repo.Head(); err == nil {
		j.Head = head
	}
	for i, n := range notes {
		j.Order[i] = n.rel
		if n.orig.missing {
			j.Missing = append(j.Missing, n.rel)
		} else if !w.personUnchanged(n.rel, n.orig) {
			j.Base[n.rel] = sum(n.orig.data)
		}
	}
	changed, err := w.writeRound(notes, j, adapt)
	if err != nil {
		return w.fail(notes, j, err)
	}
	if changed != "" {
		v.clearState(journalName)
		return Result{}, changed, nil
	}
	if err := w.settleAll(notes, j); err != nil {
		return w.fail(notes, j, err)
	}

	res, err := w.commit(notes, person, ch, false)
	if err != nil {
		return w.fail(notes, j, err)
	}
	if ch.Committed != nil && res.Commit != "" {
		w.warn(ch.Committed(res), "committed "+res.Commit)
	}
	w.watchLate(notes, j)
	w.finish(notes, res, ch)
	if ch.Finished != nil && res.Commit != "" {
		ch.Finished(res)
	}
	return res, "", nil
}

func filePaths(fs []history.File) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Path
	}
	return out
}

// personEdits returns, for every note the operation touched, the version it
// read when that differs from HEAD's: edits made outside the engine, to be
// committed first as the person's.
func (w *writer) personEdits(tx *Tx) ([]history.File, error) {
	rels := make([]string, 0, len(tx.reads))
	for rel := range tx.reads {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	var out []history.File
	for _, rel := range rels {
		r := tx.reads[rel]
		if w.personUnchanged(rel, r) {
			continue
		}
		head, err := w.repo.ReadFile(rel)
		switch {
		case err == nil && !r.missing && bytes.Equal(head, r.data):
			continue
		case err != nil && r.missing && errors.Is(err, os.ErrNotExist):
			continue
		case err != nil && !errors.Is(err, os.ErrNotExist):
			return nil, gitError(err, "reading "+rel+" at HEAD")
		}
		out = append(out, history.File{Path: rel, Content: r.data, Deleted: r.missing, Stat: r.fi})
	}
	return out, nil
}

// personUnchanged reports whether r, read from rel, is provably HEAD's
// version without comparing content: the engine's last write of rel that
// is still HEAD's, or an index entry whose stat data matches.
func (w *writer) personUnchanged(rel string, r *readRec) bool {
	if r.missing {
		return false
	}
	if rec, ok := w.v.bases()[rel]; ok && rec.ID.sameContent(r.id) {
		if same, err := w.repo.SameAtHead(rec.Commit, rel); err == nil && same {
			return true
		}
	}
	ok, err := w.repo.MatchesHead(rel, r.fi)
	return err == nil && ok
}

var tmpSeq atomic.Int64

// tempPath returns a new path in .sessionvault/state/tmp for rel.
func (v *Vault) tempPath(rel string) (string, error) {
	dir, err := v.stateDir("tmp")
	if err != nil {
		return "", osError(err, ".sessionvault/state/tmp", "creating")
	}
	name := strings.ReplaceAll(rel, "/", "_") + "." + strconv.Itoa(os.Getpid()) + "." + strconv.FormatInt(time.Now().UnixNano(), 36) + "." + strconv.FormatInt(tmpSeq.Add(1), 10)
	return filepath.Join(dir, name), nil
}

// writeRound writes notes[i].data over what is on disk, if what is on disk
// is still notes[i].base; otherwise it writes nothing and returns the
// changed note — or, with adapt, merges notes[i].data onto what is there
// (Merge3 against base) and writes that. On success every note's new
// version is in place (wrote), the replaced versions are kept aside
// (oldAt), and the journal names them.
//
// Each new version is written and made durable first; then, for as short a
// time as possible, each note is held under a read lease (no one else can
// open it for writing), checked, and swapped with its new version
// (RENAME_EXCHANGE). A writer that opened the note just before the swap is
// left waiting on the lease with the replaced file, where its bytes would
// be lost to the note: then the swap is undone, the writer let through onto
// the note itself, and the round starts again.
func (w *writer) writeRound(notes []*noteWrite, j *journal, adapt bool) (changed string, err error) {
	for attempt := 1; ; attempt++ {
		changed, retry, err := w.tryRound(notes, j, adapt, attempt < swapBacks)
		if err != nil || changed != "" || !retry {
			return changed, err
		}
		// A round undone was in place a moment: someone may have read the
		// engine's version and saved it back with their edit. From now on
		// what is there is merged with (not run again over: the engine's
		// entry would then be made twice).
		adapt = true
		time.Sleep(time.Duration(attempt) * 200 * time.Microsecond) // the writer goes first
	}
}

// swapBacks bounds how often a round undoes its swap for a writer that was
// waiting; past it the writer's bytes are taken from the replaced file
// (settle).
const swapBacks = 20

// tryRound is one attempt of writeRound; retry asks for another (a swap
// undone, or adapted content to write).
func (w *writer) tryRound(notes []*noteWrite, j *journal, adapt, mayUndo bool) (changed string, retry bool, err error) {
	r := &round{w: w, notes: notes, j: j, adapt: adapt}
	defer r.cleanup()
	// 1. The new versions, durable, each held by a lease until it is in
	// place and its stat is taken; then the journal.
	if err := r.writeNewVersions(); err != nil {
		return "", false, err
	}
	// 2. Each note is still the version the new content was made from, or
	// the new content is adapted to what is there now.
	changed, retry, merged, err := r.checkBases(mayUndo)
	if err != nil || changed != "" || retry {
		return changed, retry, err
	}
	// 3. The journal again, if step 2 merged anything into the new versions.
	if merged {
		if err := w.journalRound(j, r.files()); err != nil {
			return "", false, err
		}
	}
	// 4. In place.
	if changed, retry, err := r.place(); err != nil || changed != "" || retry {
		return changed, retry, err
	}
	// 5. A writer waiting on a replaced note goes first.
	if mayUndo && r.writerWaiting() {
		r.undo()
		for _, n := range notes {
			if n.old != nil {
				n.old.close()
				n.old = nil
			}
		}
		return "", true, nil
	}
	// 6. The stat of each new version, then the others are let in.
	if err := r.release(); err != nil {
		return "", false, err
	}
	// 7. Durable before the commit: each new version, and the folders whose
	// entries the swaps changed. A commit barrier that covers the work tree
	// (batch, syncfs) carries both: the new versions are only written out.
	covered := w.repo.CoversWorkTree()
	for _, t := range r.temps {
		var err error
		if covered {
			err = history.WriteOut(t.f)
		} else {
			err = t.f.Sync()
		}
		t.f.Close()
		if err != nil {
			return "", false, osError(err, t.n.rel, "writing")
		}
	}
	if !covered {
		if err := syncNoteDirs(r.temps); err != nil {
			return "", false, err
		}
	}
	return "", false, nil
}

// syncNoteDirs fsyncs each folder holding a note of temps, once,
// concurrently.
func syncNoteDirs(temps []roundTemp) error {
	seen := map[string]string{}
	for _, t := range temps {
		seen[filepath.Dir(t.n.abs)] = t.n.rel
	}
	errc := make(chan error, len(seen))
	for dir, rel := range seen {
		go func() {
			if err := syncDir(dir); err != nil {
				errc <- osError(err, rel, "writing the folder of")
				return
			}
			errc <- nil
		}()
	}
	var first error
	for range seen {
		if err := <-errc; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// round is one attempt of tryRound: the new versions written so far, the
// notes held under a lease, the versions placed.
type round struct {
	w     *writer
	notes []*noteWrite
	j     *journal
	adapt bool

	temps  []roundTemp
	held   []*heldFile
	placed []roundTemp
	done   bool // the swaps stand: nothing to clean up
}

// roundTemp is a note's new version in a round: the temporary path it is
// written at, and the file, read-only and leased.
type roundTemp struct {
	n    *noteWrite
	path string
	f    *os.File
}

// cleanup closes what a round that did not finish holds, and removes its
// new versions.
func (r *round) cleanup() {
	if r.done {
		return
	}
	for _, h := range r.held {
		h.close()
	}
	for _, t := range r.temps {
		if t.f != nil {
			t.f.Close()
		}
		os.Remove(t.path)
	}
}

func (r *round) files() []roundFile {
	out := make([]roundFile, len(r.temps))
	for i, t := range r.temps {
		out[i] = roundFile{n: t.n, path: t.path}
	}
	return out
}

// writeNewVersions writes each note's new version, durable, at a temporary
// path and holds it by a lease; then the journal (what a crash from here on
// must finish), before the notes' leases, so that those are held for as
// short a time as possible.
func (r *round) writeNewVersions() error {
	for _, n := range r.notes {
		if n.base.missing {
			if err := os.MkdirAll(filepath.Dir(n.abs), 0o755); err != nil {
				return osError(err, n.rel, "creating the folder of")
			}
		}
		p, err := r.w.v.tempPath(n.rel)
		if err != nil {
			return err
		}
		f, err := writeLeased(p, n.data)
		if err != nil {
			return osError(err, n.rel, "writing")
		}
		r.temps = append(r.temps, roundTemp{n: n, path: p, f: f})
	}
	return r.w.journalRound(r.j, r.files())
}

// writeLeased writes data as a new file at p and opens it under a lease;
// on failure nothing is left at p.
func writeLeased(p string, data []byte) (*os.File, error) {
	if err := writeNew(p, data); err != nil {
		os.Remove(p)
		return nil, err
	}
	f, err := openNoFollow(p)
	if err != nil {
		os.Remove(p)
		return nil, err
	}
	tryLease(f)
	return f, nil
}

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
				n.data = Merge3(nil, cur, n.data, n.data, w.protect)
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
			n.data = Merge3(n.base.data, cur, n.data, n.data, w.protect)
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
			m.n.data = Merge3(m.n.base.data, m.cur.data, m.n.data, m.n.data, w.protect)
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
		f, err := writeLeased(r.temps[k].path, n.data)
		if err != nil {
			return osError(err, n.rel, "writing")
		}
		r.temps[k].f = f
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
// note; one who renamed a file over the note after the check must get it
// back at once, or their editor may read the note without their save —
// unless someone is also waiting on, or already saved over, our new
// version.
func (r *round) writerWaiting() bool {
	waitingOld, waitingNew := false, false
	for _, t := range r.temps {
		if t.n.old != nil && leaseBreakPending(t.n.old.f) {
			waitingOld = true
		}
		if t.n.old != nil {
			if id, _, err := lstatID(t.path); err == nil && (id.ino != t.n.old.id.ino || id.dev != t.n.old.id.dev) {
				waitingOld = true
			}
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
		n.newID, n.newFI, n.written, n.wrote = id, fi, true, n.data
		if n.old != nil {
			n.oldAt = t.path
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

// roundFile is a note's new version in a round: the note and the temporary
// path it is written to (where the replaced file will be kept).
type roundFile struct {
	n    *noteWrite
	path string
}

// journalRound records in the journal what a round writes and where it
// keeps the files it replaces.
func (w *writer) journalRound(j *journal, files []roundFile) error {
	in := map[string]bool{}
	for _, f := range files {
		in[f.n.rel] = true
	}
	var keep []string
	for _, rel := range j.Swapped {
		if !in[rel] {
			keep = append(keep, rel)
		}
	}
	j.Swapped = keep
	for _, f := range files {
		j.Files[f.n.rel] = sum(f.n.data)
		j.Old[f.n.rel] = filepath.Base(f.path)
	}
	return w.v.writeJournal(j)
}

// writeNew creates path with data. It is made durable once in place (see
// tryRound), so a round that must start again costs no fsync.
func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

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
			merged = Merge3(ancestor, live, n.wrote, n.wrote, w.protect) // the engine's change in what is there now
		}
		if !bytes.Equal(other, ancestor) {
			merged = Merge3(ancestor, other, merged, merged, w.protect) // and what landed in the replaced file
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
				// Out of rounds: kept for the next operation to merge.
				n.keptAnc = ancestor
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

// commit makes the operation's commits: the edits made outside the engine
// to the touched notes (as the person: for a note the engine wrote, the
// version it wrote without the engine's change), then the engine's bytes as
// the agent.
func (w *writer) commit(notes []*noteWrite, person []history.File, ch Change, recovered bool) (Result, error) {
	v := w.v
	byPath := map[string]int{}
	for i, f := range person {
		byPath[f.Path] = i
	}
	files := map[string][]byte{}
	var paths []string
	var agent []history.File
	for _, n := range notes {
		files[n.rel] = n.wrote
		paths = append(paths, n.rel)
		agent = append(agent, history.File{Path: n.rel, Content: n.wrote, Stat: n.newFI})
		// The person's version: what the engine last wrote, without its
		// change (Merge3 of the first write against the last).
		p := n.orig.data
		if !bytes.Equal(n.wrote, n.first) {
			p = Merge3(n.first, n.wrote, n.orig.data, n.orig.data, w.protect)
		}
		if n.orig.missing {
			continue // a note the engine created: nothing of the person's before it
		}
		if i, ok := byPath[n.rel]; ok {
			person[i].Content, person[i].Deleted, person[i].Stat = p, false, nil
		} else if !bytes.Equal(p, n.orig.data) {
			person = append(person, history.File{Path: n.rel, Content: p})
		}
	}
	if recovered {
		if ch.Trailers == nil {
			ch.Trailers = map[string]string{}
		}
		ch.Trailers["Recovered"] = "true"
	}
	now := time.Now()
	specs := []history.CommitSpec{
		{Files: person, Message: personMessage(filePaths(person)), Author: history.Signature{Name: v.Config.Person.Name, Email: v.Config.Person.Email, When: now}},
		{Files: agent, Message: commitMessage(ch, files, paths), Author: history.Signature{Name: v.Config.Agent.Name, Email: v.Config.Agent.Email, When: now},
			// A recovered operation with an id gets its commit even when
			// another git process already committed its notes: the id's
			// retry answers with it.
			AllowEmpty: recovered && w.opID != ""},
	}
	if len(person) == 0 {
		specs = specs[1:]
	}
	if err := w.lockIndex(); err != nil {
		return Result{}, err
	}
	hashes, err := w.il.Commit(specs)
	if err != nil && (len(hashes) == 0 || hashes[len(hashes)-1] == "") {
		return Result{}, gitError(err, "committing the operation")
	}
	// With a hash, the commit is visible even if a last directory fsync
	// failed: the operation took effect, and says so.
	w.releaseIndex()
	res := Result{Commit: hashes[len(hashes)-1], Paths: paths}
	if len(hashes) == 2 {
		res.PersonCommit = hashes[0]
	}
	return res, nil
}

// finish records the engine's versions (the bases of the next operation's
// merges) and the operation's id, then drops the replaced files kept aside
// and the journal.
func (w *writer) finish(notes []*noteWrite, res Result, ch Change) {
	v := w.v
	if res.Commit != "" {
		recs := v.bases()
		for _, n := range notes {
			recs[n.rel] = baseRec{Commit: res.Commit, ID: n.newID}
		}
		w.warn(v.saveBases(recs), "the notes' committed versions were not recorded (the next operation compares with HEAD)")
	}
	if w.opID != "" {
		w.warn(v.recordOp(w.opID, OpRecord{Result: res, Session: ch.Session, Trailers: ch.Trailers}), "the operation id "+w.opID+" was not recorded (a retry with it would run the operation again)")
	}
	for _, n := range notes {
		if n.old != nil {
			n.old.close()
		}
		for _, p := range n.spent {
			os.Remove(p)
		}
		for _, wt := range n.watch {
			// Still watched by the next operation (rescueOrphans): a
			// writer may yet be on its way into it.
			rec := orphan{Rel: n.rel, File: filepath.Base(wt.at), ID: wt.h.id}
			if bytes.Equal(wt.ancestor, n.orig.data) && res.Commit != "" {
				rec.Commit = res.Commit // its content is that commit's parent's
			} else {
				rec.Ancestor = wt.ancestor
			}
			w.orphans = append(w.orphans, rec)
			wt.h.close()
		}
		n.watch = nil
		if n.oldAt != "" { // merges ran out: kept for the next operation
			w.orphans = append(w.orphans, orphan{Rel: n.rel, File: filepath.Base(n.oldAt), Ancestor: n.keptAnc})
			n.oldAt = ""
		}
	}
	w.warn(v.saveOrphans(w.orphans), "the replaced files to check were not recorded")
	w.warn(v.saveGuards(w.guards), "the guarded lines were not recorded")
	v.clearState(journalName)
}

// watchLate looks, once more after the commit, at the replaced files that
// no one had written when they were replaced: a writer that found the note
// just before the swap writes into the replaced file a moment later. Such
// bytes are merged into the note and written (the next operation commits
// them as the person's).
func (w *writer) watchLate(notes []*noteWrite, j *journal) {
	for _, n := range notes {
		for _, wt := range n.watch {
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
				base: &readRec{data: live, id: id, fi: fi}, data: Merge3(wt.ancestor, other, live, live, w.protect)}
			if _, err := w.writeRound([]*noteWrite{m}, j, true); err == nil {
				w.warn(w.settleAll([]*noteWrite{m}, j), "bytes written late into a replaced copy of "+n.rel+" were not checked")
				n.spent = append(n.spent, m.spent...)
				if m.oldAt != "" {
					n.spent = append(n.spent, m.oldAt)
				}
				n.watch = append(n.watch, m.watch...)
				if m.old != nil {
					m.old.close()
				}
			}
		}
	}
}

// fail takes the operation's change back out of the notes it wrote (others'
// edits stay), releases the locks and returns err.
func (w *writer) fail(notes []*noteWrite, j *journal, err error) (Result, string, error) {
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
		back := Merge3(n.wrote, cur, n.orig.data, n.orig.data, w.protect)
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

// settle retries f with a growing pause until it succeeds or settleWait has
// passed, and returns its last result.
func (v *Vault) settle(f func() ([]byte, error)) ([]byte, error) {
	deadline := time.Now().Add(settleWait)
	pause := 2 * time.Millisecond
	for {
		time.Sleep(pause)
		data, err := f()
		if err == nil || time.Now().After(deadline) {
			return data, err
		}
		pause = min(2*pause, 100*time.Millisecond)
	}
}

// checkParents refuses a path whose folders lead outside the vault through a
// symbolic link (a project's decisions/ linked to elsewhere): the engine
// writes only inside the vault. Errors carry errs.PathOutsideVault.
func (v *Vault) checkParents(rel string) error {
	dir := v.Root
	segs := strings.Split(rel, "/")
	for _, seg := range segs[:len(segs)-1] {
		dir = filepath.Join(dir, seg)
		fi, err := os.Lstat(dir)
		if err != nil {
			return nil // created as a real folder when written
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			if !fi.IsDir() {
				return errs.New(errs.NoteNotAFile, "%s: %s is a file where a folder should be", rel, strings.TrimPrefix(dir, v.Root+string(filepath.Separator))).With("note", rel)
			}
			continue
		}
		real, err := filepath.EvalSymlinks(dir)
		root, rerr := filepath.EvalSymlinks(v.Root)
		if err != nil || rerr != nil || (real != root && !strings.HasPrefix(real, root+string(filepath.Separator))) {
			return errs.New(errs.PathOutsideVault, "%s: the folder %s is a symbolic link leading outside the vault (to %s); sessionvault writes only inside the vault — replace the link by a folder", rel, strings.TrimPrefix(dir, v.Root+string(filepath.Separator)), real).With("note", rel)
		}
	}
	return nil
}

// ---- the journal ----

// journal is the intent record of an operation between its first note
// write and its commit (.sessionvault/state/journal.json): enough to finish
// it after a crash, merging what others wrote meanwhile.
//
// It names contents by their SHA-256, not by copies: the engine's new
// version of a note is in its temporary file until the swap and in the note
// after it, and the version it replaces the other way round. A small
// journal keeps each attempt of a write cheap on a long note.
type journal struct {
	Change  Change            `json:"change"`
	Order   []string          `json:"order"`
	Files   map[string]string `json:"files"`             // SHA-256 of what the engine writes
	Base    map[string]string `json:"base,omitempty"`    // SHA-256 of what it replaces, where that is not Head's version
	Head    string            `json:"head,omitempty"`    // the commit holding what it replaces otherwise
	Missing []string          `json:"missing,omitempty"` // notes it creates
	Old     map[string]string `json:"old,omitempty"`     // each note's temporary file (in state/tmp)
	Swapped []string          `json:"swapped,omitempty"` // notes whose new version is in place
}

// sum is the journal's name for content: SHA-256, hex.
func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

const journalName = "journal.json"

func (v *Vault) writeJournal(j *journal) error {
	data, err := json.Marshal(j)
	if err != nil {
		return err
	}
	if err := v.writeStateInPlace(journalName, data); err != nil {
		return osError(err, ".sessionvault/state/"+journalName, "recording the operation's journal in")
	}
	return nil
}

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
	res, err := w.commit(toCommit, nil, j.Change, true)
	if err != nil {
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
		recs[rel] = baseRec{Commit: hash}
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
			mine = Merge3(base, cur, base, base, nil)
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
	merged := Merge3(orig.data, cur, mine, mine, w.protect)
	if curRec.missing {
		merged = mine
	}
	if swapped && other != nil && !bytes.Equal(other, orig.data) && !bytes.Equal(other, mine) {
		// Written into the replaced file after the swap.
		merged = Merge3(orig.data, other, merged, merged, w.protect)
		w.guardLines(rel, orig.data, other)
	}
	n = &noteWrite{rel: rel, abs: abs, orig: orig, first: mine, base: curRec, data: merged}
	if !curRec.missing && bytes.Equal(cur, merged) {
		n.written, n.newID, n.newFI, n.wrote = true, id, fi, cur
	}
	return n, overwritten, spent, nil
}

// mineSuffix names the second name of a new version while it is in place
// and not yet committed (see tryRound).
const mineSuffix = ".mine"

// mineOK reports whether path holds content whose sum is want.
func mineOK(path, want string) bool {
	b, err := os.ReadFile(path)
	return err == nil && sum(b) == want
}

// lastVersion returns what the engine last wrote to rel and committed (its
// base record), else HEAD's version, else nil.
// recorded is true when the version came from the base record.
func (v *Vault) lastVersion(repo *history.Repo, rel string) (data []byte, recorded bool) {
	if rec, ok := v.bases()[rel]; ok {
		if b, err := repo.ReadFileAt(rec.Commit, rel); err == nil {
			return b, true
		}
	}
	b, _ := repo.ReadFile(rel)
	return b, false
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

// ---- commits outside an operation ----

// CommitOutsideEdits commits, as the configured person, any of paths whose
// content differs from HEAD (used by `init` on an existing vault, `accept`
// and the daemon's watcher). It returns the commit, or "" when nothing
// differed.
func (v *Vault) CommitOutsideEdits(paths []string) (string, error) {
	res, err := v.Transact(func(tx *Tx) (Change, error) {
		for _, p := range paths {
			if _, err := tx.Read(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				return Change{}, err
			}
		}
		return Change{Operation: "external-edit"}, nil
	})
	return res.PersonCommit, err
}

// CommitAgentEdits commits, as the agent, any of paths whose content
// differs from HEAD: edits an agent's tool call (named by tool, e.g. "Bash")
// made to notes outside sessionvault, seen by the PostToolUse hook. It
// returns the commit, or "" when nothing differed.
func (v *Vault) CommitAgentEdits(paths []string, tool string) (string, error) {
	res, err := v.Transact(func(tx *Tx) (Change, error) {
		for _, p := range paths {
			if _, err := tx.Read(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				return Change{}, err
			}
		}
		return Change{Operation: tool, ByAgent: true}, nil
	})
	return res.PersonCommit, err
}

// ---- killed commits ----

// commitMarker is the state file that says the engine holds git's locks:
// written before it takes index.lock and removed after it releases it, so
// that the next operation can tell locks left by a killed process from locks
// another git process holds.
const commitMarker = "committing"

// clearKilledCommit handles a commit marker left by a process killed while
// holding git's locks. The caller holds the vault lock, so that process is
// gone: the index.lock it left becomes w's (the roll-forward commits with
// it; otherwise w releases it), the other git lock files it may have left
// (made after its marker) are removed, and locks of other git processes are
// left alone.
func (v *Vault) clearKilledCommit(repo *history.Repo, w *writer) error {
	data, err := v.readStateInPlace(commitMarker)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	w.killed = true
	if err != nil {
		return osError(err, ".sessionvault/state/"+commitMarker, "reading")
	}
	fields := strings.Fields(string(data))
	var at time.Time
	var ino uint64
	if len(fields) > 0 {
		at, _ = time.Parse(time.RFC3339Nano, fields[0])
	}
	if len(fields) > 1 {
		ino, _ = strconv.ParseUint(fields[1], 10, 64)
	}
	// The killed process's index.lock — the one whose inode it recorded —
	// is taken over, not removed: a `git add -A` waiting for it must not
	// sweep the killed operation's notes into its own commit before the
	// roll-forward commits them. An index.lock that is not that one is a
	// git process's, and is left alone (the operation then waits for it).
	if ino == 0 && !at.IsZero() {
		// Killed between taking the index lock and recording it: an
		// index.lock made after the marker that outlasts the wait for
		// another git process is the killed process's.
		ino = v.survivingIndexLock(at)
	}
	if il := repo.AdoptIndexLock(ino); il != nil {
		w.il = il
	}
	if ino != 0 && !at.IsZero() {
		// It held the index lock, so it may have died between its index
		// and its ref update: HEAD.lock and the branch's lock made since its
		// marker are its — once they are a second old, as no git process
		// keeps a ref lock that long (git itself waits 100 ms for one).
		v.waitRefLocksAge(at, time.Second)
		if _, err := repo.RemoveStaleLocks(at.Add(-time.Second), time.Now().Add(-time.Second), false); err != nil {
			return gitError(err, "removing git locks left by a killed sessionvault")
		}
	}
	if w.il == nil {
		v.clearState(commitMarker)
	}
	return nil
}

// waitRefLocksAge waits (at most age) until HEAD.lock and the branch's lock,
// when made after at, are age old.
func (v *Vault) waitRefLocksAge(at time.Time, age time.Duration) {
	var paths []string
	paths = append(paths, filepath.Join(v.Root, ".git", "HEAD.lock"))
	if head, err := os.ReadFile(filepath.Join(v.Root, ".git", "HEAD")); err == nil {
		if ref, ok := strings.CutPrefix(strings.TrimSpace(string(head)), "ref: "); ok {
			paths = append(paths, filepath.Join(v.Root, ".git", filepath.FromSlash(ref)+".lock"))
		}
	}
	var youngest time.Time
	for _, p := range paths {
		if fi, err := os.Lstat(p); err == nil && fi.ModTime().After(at.Add(-time.Second)) && fi.ModTime().After(youngest) {
			youngest = fi.ModTime()
		}
	}
	if wait := time.Until(youngest.Add(age)); !youngest.IsZero() && wait > 0 {
		time.Sleep(min(wait, age))
	}
}

// survivingIndexLock returns the inode of .git/index.lock when it was made
// after at and is still there, the same file, after the git lock timeout;
// else 0.
func (v *Vault) survivingIndexLock(at time.Time) uint64 {
	p := filepath.Join(v.Root, ".git", "index.lock")
	first, _, err := lstatID(p)
	if err != nil || time.Unix(0, first.mtime).Before(at.Add(-time.Second)) {
		return 0
	}
	deadline := time.Now().Add(history.DefaultLockTimeout)
	for time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		if id, _, err := lstatID(p); err != nil || id.ino != first.ino {
			return 0 // another git process's, now gone
		}
	}
	return first.ino
}

// ---- replaced files checked by the next operation ----

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
			os.Remove(p)
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
		merged := Merge3(ancestor, other, live, live, w.protect)
		w.guardLines(rec.Rel, ancestor, other)
		if !bytes.Equal(merged, live) {
			if err := w.writeForPerson(rec.Rel, abs, &readRec{data: live, id: lid, fi: fi}, merged); err != nil {
				w.orphans = append(w.orphans, rec)
				continue
			}
		}
		os.Remove(p)
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
		os.Remove(p)
	}
	for _, wt := range n.watch {
		w.orphans = append(w.orphans, orphan{Rel: n.rel, File: filepath.Base(wt.at), ID: wt.h.id, Ancestor: wt.ancestor})
		wt.h.close()
	}
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

// ---- lines taken from replaced files ----

// guardTime is how long a line the engine took from a replaced file is put
// back into its note when a save drops it — counted from the end of the
// operation that took it, and at least until the next operation has
// checked: the writer of that line may have read the note before the
// engine wrote the line into it, and save what it read (plus its next line)
// a moment later.
const guardTime = 10 * time.Second

// guard is one such line: its text, the line before it where it was found,
// and when.
type guard struct {
	Rel   string    `json:"rel"`
	Line  string    `json:"line"`
	After string    `json:"after,omitempty"`
	At    time.Time `json:"at"`   // when the operation that took it ended
	Seen  bool      `json:"seen"` // checked by a later operation
}

const guardsName = "guards.json"

// guardLines records the lines other added to ancestor's body (the bytes
// someone wrote into a replaced file), which the engine merged into rel.
// Front matter lines are not guarded: a property's other value is a second
// definition of it, not a line to put back (Merge3 merges properties).
func (w *writer) guardLines(rel string, ancestor, other []byte) {
	_, ancestor = splitNote(ancestor)
	_, other = splitNote(other)
	have := map[string]bool{}
	for _, l := range splitLines(ancestor) {
		have[l] = true
	}
	prev := ""
	now := time.Now()
	for _, l := range splitLines(other) {
		if !have[l] && strings.TrimSpace(l) != "" {
			w.guards = append(w.guards, guard{Rel: rel, Line: l, After: prev, At: now})
		}
		prev = l
	}
}

func (v *Vault) loadGuards() []guard { return loadStateList[guard](v, guardsName) }

func (v *Vault) saveGuards(gs []guard) error {
	for i := range gs {
		if !gs[i].Seen {
			gs[i].At = time.Now() // the clock starts when the operation ends
		}
	}
	return saveStateList(v, guardsName, gs)
}

// applyGuards puts back into their notes the guarded lines a save dropped
// (after the line that preceded them, or at the end), and forgets guards
// older than guardTime.
func (w *writer) applyGuards() {
	v := w.v
	byRel := map[string][]guard{}
	var keep []guard
	for _, g := range w.guards {
		if g.Seen && time.Since(g.At) > guardTime {
			continue // checked at least once, and long enough
		}
		byRel[g.Rel] = append(byRel[g.Rel], g)
		g.Seen = true
		keep = append(keep, g)
	}
	w.guards = keep
	for rel, gs := range byRel {
		abs, err := v.Abs(rel)
		if err != nil {
			continue
		}
		live, id, fi, err := readStableInfo(abs, rel)
		if err != nil {
			continue
		}
		out := live
		for _, g := range gs {
			if hasLine(out, g.Line) {
				continue
			}
			at := len(out)
			if g.After != "" {
				if i := lineIndex(out, g.After); i >= 0 {
					at = i + len(g.After)
				}
			}
			line := g.Line
			if !strings.HasSuffix(line, "\n") {
				line += "\n"
			}
			if at > 0 && out[at-1] != '\n' {
				line = "\n" + line
			}
			out = append(append(append([]byte(nil), out[:at]...), line...), out[at:]...)
		}
		if bytes.Equal(out, live) || !parsesAsBefore(live, out) {
			continue
		}
		if err := w.writeForPerson(rel, abs, &readRec{data: live, id: id, fi: fi}, out); err != nil {
			continue
		}
		w.warn(v.saveOrphans(w.orphans), "the replaced files to check were not recorded")
	}
}

// parsesAsBefore reports whether after parses as a note when before does:
// lines put back never make a note unreadable.
func parsesAsBefore(before, after []byte) bool {
	if _, err := note.Parse("guard", before); err != nil {
		return true
	}
	_, err := note.Parse("guard", after)
	return err == nil
}

// lineIndex returns the offset of line (with its ending) as a whole line in
// text, or -1.
func lineIndex(text []byte, line string) int {
	for off := 0; ; {
		i := bytes.Index(text[off:], []byte(line))
		if i < 0 {
			return -1
		}
		if at := off + i; at == 0 || text[at-1] == '\n' {
			return at
		}
		off += i + 1
	}
}

// ---- base records ----

// baseRec is what the engine last wrote to a note: the commit holding it and
// the identity of the file it wrote.
type baseRec struct {
	Commit string `json:"commit"`
	ID     fileID `json:"id"`
}

const basesName = "bases.json"

// bases returns the base records (.sessionvault/state/bases.json), read once
// per operation.
func (v *Vault) bases() map[string]baseRec {
	if v.basesRec != nil {
		return v.basesRec
	}
	v.basesRec = map[string]baseRec{}
	if data, err := v.readStateInPlace(basesName); err == nil && decodeState(data, &v.basesRec) != nil {
		v.basesRec = map[string]baseRec{} // unreadable: every note compared with HEAD
	}
	return v.basesRec
}

func (v *Vault) saveBases(recs map[string]baseRec) error {
	v.basesRec = recs
	data, err := json.Marshal(recs)
	if err != nil {
		return err
	}
	return v.writeStateInPlace(basesName, data)
}

// MarshalJSON writes a fileID as an array of numbers.
func (id fileID) MarshalJSON() ([]byte, error) {
	return json.Marshal([]int64{int64(id.dev), int64(id.ino), id.size, id.mtime, id.ctime})
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (id *fileID) UnmarshalJSON(b []byte) error {
	var a []int64
	if err := json.Unmarshal(b, &a); err != nil {
		return err
	}
	if len(a) != 5 {
		return fmt.Errorf("file id: %d numbers, want 5", len(a))
	}
	*id = fileID{dev: uint64(a[0]), ino: uint64(a[1]), size: a[2], mtime: a[3], ctime: a[4]}
	return nil
}
