package session

import (
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/guard"
	"github.com/sessionvault/sessionvault/internal/note"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// Liveness: heartbeats, a session taken for crashed when they stop, and
// recovering it.

// Heartbeat records a sign of life of the active session in
// .sessionvault/state (no commit: that folder is per machine and never
// committed).
func (s *Service) Heartbeat(project string) (State, error) {
	project, err := s.Project(project)
	if err != nil {
		return State{}, err
	}
	st, err := s.Current(project)
	if err != nil {
		return st, err
	}
	if !st.Active() {
		return st, errs.New(errs.NoActiveSession, "no active session in project %s", project)
	}
	if err := s.writeHeartbeat(project, st.Session); err != nil {
		return st, err
	}
	return s.Current(project)
}

// HookHeartbeat records a heartbeat of the project's active session for the hooks:
// it reads the state through the signed cache (VerifiedCached), so a long
// session is not re-read on every tool call. It does nothing when no session
// is active or the state does not verify.
func (s *Service) HookHeartbeat(project string) error {
	st, err := s.VerifiedCached(project)
	if err != nil || !st.Active() {
		return nil // no session, or a state that does not verify (PreToolUse says why)
	}
	return s.writeHeartbeat(project, st.Session)
}

// writeHeartbeat records the heartbeat; a vault in a newer format than this
// binary writes gets none (errs.VaultFormatNewer).
func (s *Service) writeHeartbeat(project, session string) error {
	if err := s.V.CheckWritable(); err != nil {
		return err
	}
	if _, err := s.V.StatePath(guard.HeartbeatFile(project)); err != nil { // the state folder, checked
		return err
	}
	return guard.WriteHeartbeat(s.V.Root, project, guard.Heartbeat(s.NowUTC(), session))
}

// LastBeat returns the time of the last heartbeat of session, if any.
func (s *Service) LastBeat(project, session string) *time.Time {
	data, err := s.V.ReadState(guard.HeartbeatFile(project))
	if err != nil {
		return nil
	}
	ts, id, _ := strings.Cut(strings.TrimSpace(string(data)), " ")
	if id != session {
		return nil
	}
	t, err := time.Parse(time.RFC3339, ts)
	if err != nil {
		return nil
	}
	return &t
}

// crashed fills st.LastSign and reports whether an active session's last
// sign of life (heartbeat, update, start) is older than the heartbeat
// timeout.
func (s *Service) crashed(project string, st *State) bool {
	if st.Status != StatusActive && st.Status != StatusRecovered && st.Status != StatusCrashed {
		return false
	}
	var last *time.Time
	for _, t := range []*time.Time{st.Started, st.Updated, s.LastBeat(project, st.Session)} {
		if t != nil && (last == nil || t.After(*last)) {
			last = t
		}
	}
	st.LastSign = last
	if st.Status == StatusCrashed {
		return true
	}
	return last != nil && s.NowUTC().Sub(*last) > s.V.Config.HeartbeatTimeout.Duration
}

// Recover resumes a crashed session: crashed -> recovered -> active. session,
// if given, must name the current session. Without force, a session that is
// alive gives errs.SessionNotCrashed.
func (s *Service) Recover(project, session string, force bool) (Outcome, error) {
	if err := CheckFields("project", project, "session", session); err != nil {
		return Outcome{}, err
	}
	project, err := s.Project(project)
	if err != nil {
		return Outcome{}, err
	}
	var out Outcome
	out.Result, err = s.Transact(&out, func(tx *vault.Tx) (vault.Change, error) {
		d, st, err := s.ActiveDoc(tx, project, true)
		if err != nil {
			return vault.Change{}, err
		}
		if session != "" && session != st.Session {
			return vault.Change{}, errs.New(errs.SessionNotFound, "session %s is not the current session of project %s (that is %s)", session, project, st.Session).With("session", session)
		}
		if !s.crashed(project, &st) && !force {
			return vault.Change{}, errs.New(errs.SessionNotCrashed, "session %s is alive (last sign of life %s, timeout %s); nothing to recover", st.Session, note.FormatTime(*st.LastSign), s.V.Config.HeartbeatTimeout.Duration).With("session", st.Session)
		}
		now := s.NowUTC()
		last := "unknown"
		if st.LastSign != nil {
			last = note.FormatTime(*st.LastSign)
		}
		u := Update{ID: d.nextUpdateID() + s.IdSuffix(), Time: now, Type: "note", Message: "Recovered after a crash; last sign of life " + last + "."}
		d.AppendLine(SecUpdates, FormatUpdate(u))
		d.Set("status", StatusActive)
		d.Set("recovered", now)
		BumpVersion(d, st, now)
		b, err := d.Bytes()
		if err != nil {
			return vault.Change{}, err
		}
		out.ID = st.Session
		return vault.Change{Operation: "recover", Session: st.Session, Summary: "resumed after last sign of life " + last}, tx.Write(d.Path, b)
	})
	if err != nil {
		return Outcome{}, err
	}
	if !out.Repeat {
		_ = s.writeHeartbeat(project, out.ID) // the commit's updated time is the sign of life; the heartbeat repeats it
	}
	out.State, err = s.Current(project)
	return out, err
}

// MarkCrashed records, as one commit, that the project's active session has
// shown no sign of life for the heartbeat timeout (status crashed). It
// returns the session marked, or "" when there was nothing to mark.
func (s *Service) MarkCrashed(project string) (string, error) {
	st, err := s.Current(project)
	if err != nil || st.Status != StatusCrashed {
		return "", err
	}
	var marked string
	_, err = s.Transact(nil, func(tx *vault.Tx) (vault.Change, error) {
		cur, _, _ := Paths(project)
		d, err := s.ReadDoc(tx, cur)
		if err != nil {
			return vault.Change{}, err
		}
		st := d.ReadState(project)
		if !s.crashed(project, &st) || d.Prop("status") == StatusCrashed {
			return vault.Change{Operation: "crash"}, nil
		}
		// updated stays the last sign of life: the marking is not one (its
		// time is the commit's), and `start` and `recover` name that time.
		d.Set("status", StatusCrashed)
		d.Set("version", st.Version+1)
		b, err := d.Bytes()
		if err != nil {
			return vault.Change{}, err
		}
		marked = st.Session
		return vault.Change{Operation: "crash", Session: st.Session, Summary: "no sign of life since " + note.FormatTime(*st.LastSign)}, tx.Write(cur, b)
	})
	return marked, err
}
