package vault

import (
	"bytes"
	"errors"
	"os"
	"sort"

	"github.com/sessionvault/sessionvault/internal/history"
)

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
	if rec, ok := w.v.bases().get(rel); ok && rec.ID.sameContent(r.id) {
		if same, err := w.repo.SameAtHead(rec.Commit, rel); err == nil && same {
			return true
		}
	}
	ok, err := w.repo.MatchesHead(rel, r.fi)
	return err == nil && ok
}

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
