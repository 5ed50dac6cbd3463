package session

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/sessionvault/sessionvault/internal/vault"
)

// Reading sessions: the current one, an archived one, all of them.

// Status reads the project's current state (no lock, no commit), in full:
// the updates a compaction moved to the session's archive note are read
// back before the note's own. An active session whose last sign of life is
// too old is reported as crashed.
func (s *Service) Status(project string) (State, error) {
	return s.status(project, true)
}

// Current reads the project's current state as Status does, but only from
// the current-state note: of a compacted session it lists the updates the
// note still holds, and State.CompactedUpdates counts those in the archive.
// Its cost does not grow with the session's length: the outcome of an
// operation, the hooks and the resume prompt, which show the latest
// entries, read it.
func (s *Service) Current(project string) (State, error) {
	return s.status(project, false)
}

func (s *Service) status(project string, full bool) (State, error) {
	project, err := s.Project(project)
	if err != nil {
		return State{}, err
	}
	d, err := s.currentDoc(project)
	if err != nil {
		return State{}, err
	}
	st := d.ReadState(project)
	if full {
		if err := s.readCompacted(d, &st); err != nil {
			return State{}, err
		}
	} else {
		st.CompactedUpdates = d.IntProp(PropCompacted)
	}
	if s.crashed(project, &st) {
		st.Status = StatusCrashed
	}
	// Evidence as the engine recorded it: a tick made outside `evidence
	// record` shows as unverified.
	if sl, err := s.loadSeal(project); err == nil {
		if p, err := s.Protocol(project); err == nil {
			applySeal(&st, sl, p)
			if full && st.Active() {
				// As the gates see it now: re-checked, with what the
				// engine observed, and what to do about each unmet item.
				rep := s.Report(&st, p, d)
				st.Gate = &rep
				s.CheckCitations(&st)
			}
		}
	}
	return st, nil
}

// Archived reads one archived session of a project (sessions/<id>.md), in
// full: its summary and next steps, for the resume prompt of an idle project.
func (s *Service) Archived(project, id string) (State, error) {
	if err := vault.CheckName("session", id); err != nil {
		return State{}, err
	}
	rel := project + "/" + SessionsDir + "/" + id + ".md"
	data, err := s.V.ReadFile(rel)
	if err != nil {
		return State{}, err
	}
	d, err := s.ParseDoc(rel, data)
	if err != nil {
		return State{}, err
	}
	st := d.ReadState(project)
	return st, s.readCompacted(d, &st)
}

// Sessions returns the project's sessions: the active one (if any) and every
// archived record in sessions/, read in full.
func (s *Service) Sessions(project string) ([]State, error) {
	project, err := s.Project(project)
	if err != nil {
		return nil, err
	}
	var out []State
	if st, err := s.Status(project); err == nil && st.Active() {
		out = append(out, st)
	}
	dir := filepath.Join(s.V.Root, project, SessionsDir)
	ents, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") {
			continue
		}
		rel := project + "/" + SessionsDir + "/" + e.Name()
		data, err := s.V.ReadFile(rel)
		if err != nil {
			return nil, err
		}
		d, err := s.ParseDoc(rel, data)
		if err != nil {
			return nil, err
		}
		out = append(out, d.ReadState(project))
	}
	return out, nil
}
