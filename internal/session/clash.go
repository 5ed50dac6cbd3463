package session

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"

	"github.com/sessionvault/sessionvault/internal/guard"
)

// The session a machine works in, and the notice its agent gets when that
// is no longer the vault's current session: two machines started sessions
// before they synced and the merge kept the other one (this one is
// recorded abandoned), or another machine ended it. Without the notice the
// agent keeps working, and what it records lands in the other session.

// workingName is the per-machine state file naming the session this
// machine works in, per project: written by start and by reading the state
// (status, SessionStart: the agent then knows which session is current),
// removed by end.
func workingName(project string) string { return "working-" + project }

// setWorking records id as the session this machine works in for project
// ("" forgets it). Best effort: without it no notice is given.
func (s *Service) setWorking(project, id string) {
	if id == "" {
		if p, err := s.V.StatePath(workingName(project)); err == nil {
			_ = os.Remove(p)
		}
		return
	}
	if cur, err := s.V.ReadState(workingName(project)); err == nil && string(bytes.TrimSpace(cur)) == id {
		return
	}
	_ = s.V.WriteState(workingName(project), []byte(id+"\n"))
}

// AcknowledgeCurrent records that this machine's agent was handed the
// current state of project (status, session_status, the SessionStart
// prompt): from now on it works in the current session, and a notice about
// an earlier one is not given again.
func (s *Service) AcknowledgeCurrent(project string, st State) {
	if p, err := s.V.StatePath(workingName(project)); err == nil {
		if _, err := os.Stat(p); err != nil {
			return // no session started here: nothing to acknowledge
		}
	}
	if st.Active() {
		s.setWorking(project, st.Session)
	} else {
		s.setWorking(project, "")
	}
	s.recordClash(project, "")
}

// recordClash keeps notice in the project's guard.ClashFile ("" removes
// it), where every PreToolUse answer finds it. Best effort.
func (s *Service) recordClash(project, notice string) {
	p, err := s.V.StatePath(guard.ClashFile(project))
	if err != nil {
		return
	}
	if notice == "" {
		_ = os.Remove(p)
		return
	}
	if cur, err := os.ReadFile(p); err == nil && strings.TrimSpace(string(cur)) == notice {
		return
	}
	_ = s.V.WriteState(guard.ClashFile(project), []byte(notice+"\n"))
}

// ClashNotice is the notice for this machine's agent when the session it
// works in is no longer project's current one ("" when it still is, or no
// session was started here): the hooks' facts carry it (guard.Facts.Clash),
// and the CLI prints it after a command; it is kept where every PreToolUse
// answer finds it (guard.ClashFile). It costs a stat of one small
// per-machine file when no session was started here.
func (s *Service) ClashNotice(project string) string {
	project, err := s.Project(project)
	if err != nil {
		return ""
	}
	p, err := s.V.StatePath(workingName(project))
	if err != nil {
		return ""
	}
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	// The current session from the hooks' facts cache while it holds (the
	// engine refreshes it with every commit it seals), else the state as
	// verified (cached). Only the session is taken from the facts: the
	// rest of them depend on the code repository a command runs in.
	cur := ""
	if c, ok := guard.Load(s.V.Root, project); ok && c.Facts.Unreadable == "" {
		if c.Facts.Active {
			cur = c.Facts.Session
		}
	} else {
		st, err := s.VerifiedCached(project)
		if err != nil {
			return ""
		}
		if st.Active() {
			cur = st.Session
		}
	}
	notice := s.clashNotice(project, cur, nil)
	s.recordClash(project, notice)
	return notice
}

// clashNotice is the notice for an agent whose session, the one this
// machine works in, is no longer cur (the current session; "" when none),
// or "" when it still is. deps gets the per-machine file it read and the
// session's record, by stat identity (the hook's facts cache).
func (s *Service) clashNotice(project, cur string, deps map[string]string) string {
	p, err := s.V.StatePath(workingName(project))
	if err != nil {
		return ""
	}
	if deps != nil {
		deps[p] = statID(p)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	mine := strings.TrimSpace(string(data))
	if mine == "" || mine == cur {
		return ""
	}
	rec := filepath.Join(s.V.Root, filepath.FromSlash(project+"/"+SessionsDir+"/"+mine+".md"))
	if deps != nil {
		deps[rec] = statID(rec)
	}
	status := ""
	if d, err := os.ReadFile(rec); err == nil {
		status = frontStatus(d)
	}
	now := "no session is active now"
	if cur != "" {
		now = "the current session is " + cur + "; what you record now goes into it"
	}
	var what string
	switch status {
	case StatusAbandoned:
		what = "lost a clash: another machine's session was active when it started, and syncing kept that one (yours is recorded, status abandoned, in " + project + "/" + SessionsDir + "/" + mine + ".md)"
	case StatusComplete:
		what = "was ended on another machine"
	default:
		what = "is no longer the vault's current session"
	}
	return "sessionvault: the session you started on this machine, " + mine + ", " + what + "; " + now +
		". Read the current state with `" + s.Command(project, "status") + "` before going on (that also ends this notice)" +
		startHint(cur != "", s.Command(project, "start --objective \"...\""))
}

// startHint says how to go on in a session of one's own.
func startHint(active bool, start string) string {
	if active {
		return "; to work in a session of your own, wait for it to end, then run `" + start + "`."
	}
	return "; to go on in a session of your own, run `" + start + "`."
}

// frontStatus is the status property of a note's front matter, "" when
// none.
func frontStatus(data []byte) string {
	if !bytes.HasPrefix(data, []byte("---")) {
		return ""
	}
	end := bytes.Index(data[3:], []byte("\n---"))
	if end < 0 {
		return ""
	}
	for _, l := range strings.Split(string(data[3:3+end]), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "status:"); ok {
			return strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	return ""
}

// statID is guard.StatIdentity, "none" for a file that is not there.
func statID(p string) string {
	id, err := guard.StatIdentity(p)
	if err != nil {
		return "none"
	}
	return id
}
