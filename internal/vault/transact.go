package vault

import (
	"time"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/history"

	"golang.org/x/sync/errgroup"
)

// Bounds of the write path: how often an operation reruns or merges before
// its commit.
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

// Transact runs one operation as one commit:
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
//
// A vault in a format newer than this binary writes (CheckWritable: the
// config file as it is now, read again when it changed since the vault was
// opened) is refused before anything else, with errs.VaultFormatNewer: fn
// does not run and nothing is written, not even the lock file (unless the
// format changed while the operation waited for the lock: it is checked
// again once the lock is taken).
func (v *Vault) Transact(fn func(tx *Tx) (Change, error)) (Result, error) {
	res, _, err := v.TransactOnce("", fn)
	return res, err
}

// TransactOnce is Transact with an operation id: when an operation with the same
// id already took effect in this vault, fn does not run and the first
// result is returned with repeat true (its Change's trailers included), so
// a command retried after an error or a lost reply never makes a duplicate.
// The id is recorded in the commit as the trailer "Op-Id". An empty id
// makes it Transact. A vault in a newer format is refused as by Transact.
func (v *Vault) TransactOnce(opID string, fn func(tx *Tx) (Change, error)) (Result, OpRecord, error) {
	if err := v.CheckWritable(); err != nil {
		return Result{}, OpRecord{}, err
	}
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
	// Again under the lock: a newer binary's migrate that held it
	// meanwhile changed the format (a stat when nothing changed).
	if err := v.CheckWritable(); err != nil {
		return Result{}, OpRecord{}, err
	}
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
	// (Change.Protect; nil: notemerge.IsEntryLine).
	protect func(line []byte) bool
	// warnings are what failed after the commit was made (Result.Warnings).
	warnings []string
	// syncs, while an operation's notes are written and not yet committed,
	// are their fsyncs (file and folder, durability fsync) in flight; the
	// commit waits for them after its own barrier, before it is visible, so
	// they overlap its work (nil: a round fsyncs before it returns).
	syncs *errgroup.Group
}

// warn keeps err, which happened after the operation's commit (so the
// operation stands), for Result.Warnings: what failed, and what it costs.
func (w *writer) warn(err error, what string) {
	if err != nil {
		w.warnings = append(w.warnings, what+": "+err.Error())
	}
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
	// The rounds' note fsyncs run until the commit waits for them.
	w.syncs = new(errgroup.Group)
	defer func() { _ = w.endSyncs() }() // ended by the commit, or here on a failure already returned
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
