package vault

import (
	"bytes"
	"errors"
	"path/filepath"
	"time"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/history"
	"github.com/sessionvault/sessionvault/internal/notemerge"
)

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
			p = notemerge.Merge3(n.first, n.wrote, n.orig.data, n.orig.data, w.protect)
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
	// The notes' fsyncs, still running, are waited for before the commit
	// is visible (and after it, when it makes none).
	if w.syncs != nil {
		w.il.SetBeforeVisible(w.syncs.Wait)
	}
	hashes, err := w.il.Commit(specs)
	w.il.SetBeforeVisible(nil)
	serr := w.endSyncs()
	if err != nil && (len(hashes) == 0 || hashes[len(hashes)-1] == "") {
		if serr != nil {
			return Result{}, serr
		}
		return Result{}, gitError(err, "committing the operation")
	}
	if serr != nil && (len(hashes) == 0 || hashes[len(hashes)-1] == "") {
		return Result{}, serr
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
			recs.set(n.rel, baseRec{Commit: res.Commit, ID: n.newID})
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
			v.removeLater(p)
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
		w.keepUnmerged(n)
	}
	w.warn(v.saveOrphans(w.orphans), "the replaced files to check were not recorded")
	w.warn(v.saveGuards(w.guards), "the guarded lines were not recorded")
	v.clearState(journalName)
}
