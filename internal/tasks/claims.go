package tasks

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/note"
	"github.com/sessionvault/sessionvault/internal/session"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// Task claims on a vault with a git remote: `task lock` takes the task's
// claim on the remote first (vault.TakeClaim: one holder, git's push the
// arbiter), then records the lock in the task note as before. Offline, the
// lock is recorded as provisional (lock_provisional: true), and the next
// `remote sync` confirms it on the remote or refuses it (ConfirmClaims).

// ClaimsFormat is the vault format from which task locks are claims
// through the remote: a vault of an older format keeps its locks in the
// task notes only (every machine's binary must know remote claims before
// they can exclude).
const ClaimsFormat = 2

// Task note properties of a claim, beside locked_by, locked_at and
// lock_expires.
const (
	propLockMachine     = "lock_machine"     // the machine that took the lock
	propLockClone       = "lock_clone"       // its clone id (vault.Machine.Clone)
	propLockProvisional = "lock_provisional" // true: taken offline, not yet on the remote
)

// ClaimOutcome is what became of a task's claim on the remote in a lock,
// an unlock, a sync or a session's end. State is one of:
//
//	claimed         taken on the remote, until Expires
//	provisional     the remote could not be reached: recorded here, confirmed
//	                or refused by the next `remote sync`
//	renewed         its lease moved (Expires)
//	confirmed       a provisional lock, now claimed on the remote
//	refused         a provisional lock another holder had claimed first
//	                (Holder, Machine, Expires): the note now names that claim
//	expired         a provisional lock whose lease ended before it could be
//	                confirmed: removed
//	released        the claim on the remote is gone
//	left to expire  released here while the remote could not be reached: it
//	                ends with its lease
//	not yours       the claim on the remote is another holder's (Holder,
//	                Machine, Expires): left alone
//	none            there was no claim on the remote
//	error           the remote would not settle it (Error says why); the
//	                next sync tries again
type ClaimOutcome struct {
	Task    string    `json:"task"`
	Remote  string    `json:"remote"`
	State   string    `json:"state"`
	Holder  string    `json:"holder,omitempty"`
	Machine string    `json:"machine,omitempty"`
	Expires time.Time `json:"expires,omitzero"`
	Error   string    `json:"error,omitempty"`
}

// claimsRemote is the git remote task claims go through, or "" when locks
// stay in the notes: the vault's remote (the config's remote name, else
// origin) when the repository has it and the vault's format is at least
// ClaimsFormat.
func (s *Service) claimsRemote() string {
	if s.V.FormatVersion() < ClaimsFormat {
		return ""
	}
	name := s.V.Config.Remote.Name
	if name == "" {
		name = "origin"
	}
	cmd := exec.Command("git", "remote", "get-url", name)
	cmd.Dir = s.V.Root
	if err := cmd.Run(); err != nil {
		return ""
	}
	return name
}

// claimFor takes task id's claim on remote for holder on this clone m and
// says how (vault.TakeClaim). A claim another holder has is
// errs.TaskLocked naming it; an unreachable remote gives a provisional
// outcome and no error.
func (s *Service) claimFor(remote, project, id, holder string, m vault.Machine) (ClaimOutcome, string, error) {
	c, how, err := s.V.TakeClaim(remote, vault.Claim{Project: project, Task: id, Holder: holder, Machine: m.Name, Clone: m.Clone}, s.V.Config.ClaimLease.Duration, s.NowUTC())
	var held *vault.ClaimHeldError
	switch {
	case err == nil:
		return ClaimOutcome{Task: id, Remote: remote, State: "claimed", Holder: c.Holder, Machine: c.Machine, Expires: c.Expires}, how, nil
	case errors.As(err, &held):
		return ClaimOutcome{}, "", s.claimHeld(project, id, remote, held.Claim, false)
	case errs.Is(err, errs.NetworkUnavailable):
		return ClaimOutcome{Task: id, Remote: remote, State: "provisional", Holder: holder, Machine: m.Name}, "", nil
	}
	return ClaimOutcome{}, "", err
}

// claimHeld is the errs.TaskLocked of a claim another holder has on the
// remote; unlocking, it names --force.
func (s *Service) claimHeld(project, id, remote string, c vault.Claim, unlocking bool) error {
	what := "wait for the claim to end, or work on another task (`" + s.Command(project, "task graph") + "` lists the ready ones)"
	if unlocking {
		what = "its holder releases it, or `" + s.Command(project, "task unlock "+id+" --force") + "` releases it for them"
	}
	return errs.New(errs.TaskLocked, "task %s is claimed on %s by %s (machine %s) until %s; %s",
		id, remote, c.Holder, c.Machine, note.FormatTime(c.Expires), what).
		With("task", id).With("holder", c.Holder).With("machine", c.Machine).With("expires_at", note.FormatTime(c.Expires))
}

// lockHolder is who takes a lock outside a transaction: holder, else the
// project's active session, else this machine m.
func (s *Service) lockHolder(project, holder string, m vault.Machine) string {
	if holder != "" {
		return holder
	}
	if st, err := s.Current(project); err == nil && st.Active() {
		return st.Session
	}
	name := m.Name
	if name == "" {
		name = "vault"
	}
	return "machine:" + name
}

// setLockClone records the clone m holding a lock in its note.
func setLockClone(d *session.Doc, m vault.Machine) {
	d.Set(propLockMachine, m.Name)
	d.Set(propLockClone, m.Clone)
}

// claimSettled is a claim ConfirmClaims or ReleaseSessionClaims settled,
// waiting to be written to its task note.
type claimSettled struct {
	project string
	out     ClaimOutcome
	claim   vault.Claim // for "refused": the claim that stands
}

// ConfirmClaims settles this clone's locks with the remote, for `remote
// sync` (after its merge, before its push) and heartbeats: a provisional
// lock is claimed on the remote (confirmed) or, when another holder has
// the claim, replaced in its note by that claim (refused); one whose lease
// ended meanwhile is removed (expired); a confirmed lock past half its
// lease is renewed — only while its holder is alive: the project's active
// session (a lock of an ended or crashed session, or of the machine, ends
// with its lease). What changed is one commit. A task the remote would not
// settle is an "error" outcome, tried again next time; offline, what was
// settled before the network went is kept. Without remote claims, nothing.
func (s *Service) ConfirmClaims() ([]ClaimOutcome, error) {
	remote := s.claimsRemote()
	if remote == "" {
		return nil, nil
	}
	m, err := s.V.Machine()
	if err != nil {
		return nil, err
	}
	projects, err := s.Projects()
	if err != nil {
		return nil, err
	}
	now := s.NowUTC()
	lease := s.V.Config.ClaimLease.Duration
	var done []claimSettled
	var errored []ClaimOutcome
scan:
	for _, project := range projects {
		ts, err := s.tasksOf(project)
		if err != nil {
			return nil, err
		}
		alive := ""
		if st, err := s.Current(project); err == nil && (st.Status == session.StatusActive || st.Status == session.StatusRecovered) {
			alive = st.Session
		}
		for _, t := range ts {
			l := t.Lock
			if l == nil || l.Clone == "" || l.Clone != m.Clone {
				continue
			}
			if l.Expired(now) {
				if l.Provisional {
					done = append(done, claimSettled{project: project, out: ClaimOutcome{Task: t.ID, Remote: remote, State: "expired", Holder: l.Holder, Machine: l.Machine, Expires: l.ExpiresAt}})
				}
				continue
			}
			if !l.Provisional && (l.Holder != alive || l.ExpiresAt.Sub(now) > lease/2) {
				continue
			}
			c, _, err := s.V.TakeClaim(remote, vault.Claim{Project: project, Task: t.ID, Holder: l.Holder, Machine: m.Name, Clone: m.Clone}, lease, now)
			var held *vault.ClaimHeldError
			switch {
			case err == nil:
				state := "renewed"
				if l.Provisional {
					state = "confirmed"
				}
				done = append(done, claimSettled{project: project, out: ClaimOutcome{Task: t.ID, Remote: remote, State: state, Holder: c.Holder, Machine: c.Machine, Expires: c.Expires}})
			case errors.As(err, &held):
				h := held.Claim
				done = append(done, claimSettled{project: project, claim: h, out: ClaimOutcome{Task: t.ID, Remote: remote, State: "refused", Holder: h.Holder, Machine: h.Machine, Expires: h.Expires}})
			case errs.Is(err, errs.NetworkUnavailable):
				break scan // what was settled so far is written
			default:
				errored = append(errored, ClaimOutcome{Task: t.ID, Remote: remote, State: "error", Holder: l.Holder, Machine: l.Machine, Error: err.Error()})
			}
		}
	}
	outs, err := s.writeSettled(done, m)
	return append(outs, errored...), err
}

// ReleaseSessionClaims releases the claims this clone holds for session
// in project (its locks, in the notes and on the remote), for the end of
// the session: what it claimed is free for others at once. Best effort on
// the remote (offline, a claim ends with its lease); the notes are one
// commit.
func (s *Service) ReleaseSessionClaims(project, sessionID string) ([]ClaimOutcome, error) {
	remote := s.claimsRemote()
	if remote == "" || sessionID == "" {
		return nil, nil
	}
	project, err := s.Project(project)
	if err != nil {
		return nil, err
	}
	m, err := s.V.Machine()
	if err != nil {
		return nil, err
	}
	ts, err := s.tasksOf(project)
	if err != nil {
		return nil, err
	}
	var done []claimSettled
	for _, t := range ts {
		l := t.Lock
		if l == nil || l.Holder != sessionID || l.Clone != m.Clone {
			continue
		}
		out := ClaimOutcome{Task: t.ID, Remote: remote, State: "released"}
		if !l.Provisional {
			ok, err := s.V.ReleaseClaim(remote, project, t.ID, sessionID, m.Clone, false)
			switch {
			case errs.Is(err, errs.NetworkUnavailable):
				out.State = "left to expire"
			case err != nil:
				out.State, out.Error = "error", err.Error()
			case !ok:
				out.State = "none"
			}
		}
		done = append(done, claimSettled{project: project, out: out})
	}
	return s.writeSettled(done, m)
}

// writeSettled writes what settled claims mean for their task notes, in
// one commit, and returns the outcomes written.
func (s *Service) writeSettled(done []claimSettled, m vault.Machine) ([]ClaimOutcome, error) {
	if len(done) == 0 {
		return nil, nil
	}
	var outs []ClaimOutcome
	_, err := s.Transact(nil, func(tx *vault.Tx) (vault.Change, error) {
		outs = outs[:0]
		var summary []string
		for _, d := range done {
			doc, t, err := s.taskDoc(tx, d.project, d.out.Task, errs.TaskNotFound)
			if errs.Is(err, errs.TaskNotFound) {
				continue
			}
			if err != nil {
				return vault.Change{}, err
			}
			if t.Lock == nil || t.Lock.Clone != m.Clone {
				continue // released here, or another's, meanwhile
			}
			switch d.out.State {
			case "refused":
				// The note names the claim that stands, so that every clone
				// agrees with the remote.
				doc.Set("locked_by", d.claim.Holder)
				doc.Set("locked_at", d.claim.Taken)
				doc.Set("lock_expires", d.claim.Expires)
				doc.Set(propLockMachine, d.claim.Machine)
				doc.Set(propLockClone, d.claim.Clone)
				doc.Unset(propLockProvisional)
			case "expired", "released", "left to expire", "none":
				clearLock(doc)
			default:
				doc.Set("lock_expires", d.out.Expires)
				doc.Unset(propLockProvisional)
			}
			if _, err := s.writeTaskDoc(tx, doc, d.project); err != nil {
				return vault.Change{}, err
			}
			outs = append(outs, d.out)
			summary = append(summary, d.out.Task+" "+d.out.State)
		}
		return vault.Change{Operation: "task-claims", Summary: strings.Join(summary, ", "), Trailers: map[string]string{"Change-Type": "sync"}}, nil
	})
	return outs, err
}

// ClaimText is a line saying what became of a claim, for the CLI.
func ClaimText(c ClaimOutcome) string {
	switch c.State {
	case "claimed", "renewed", "confirmed":
		return fmt.Sprintf("claim of %s on %s %s until %s", c.Task, c.Remote, c.State, note.FormatTime(c.Expires))
	case "provisional":
		return fmt.Sprintf("%s cannot be reached: the lock of %s is recorded here as provisional; the next `sessionvault remote sync` claims it on the remote, or removes it if another machine claimed it first", c.Remote, c.Task)
	case "refused":
		return fmt.Sprintf("the provisional lock of %s was refused: %s (machine %s) had claimed it on %s until %s; the note now names that claim: work on another task", c.Task, c.Holder, c.Machine, c.Remote, note.FormatTime(c.Expires))
	case "expired":
		return fmt.Sprintf("the provisional lock of %s ended (%s) before %s could be reached: removed; lock it again to claim it", c.Task, note.FormatTime(c.Expires), c.Remote)
	case "released":
		return fmt.Sprintf("claim of %s on %s released", c.Task, c.Remote)
	case "left to expire":
		return fmt.Sprintf("%s cannot be reached: the claim of %s there ends with its lease", c.Remote, c.Task)
	case "not yours":
		return fmt.Sprintf("the claim of %s on %s is %s's (machine %s, until %s): left alone", c.Task, c.Remote, c.Holder, c.Machine, note.FormatTime(c.Expires))
	case "none":
		return fmt.Sprintf("%s held no claim of %s", c.Remote, c.Task)
	case "error":
		return fmt.Sprintf("the claim of %s was not settled with %s: %s; the next sync tries again", c.Task, c.Remote, c.Error)
	}
	return c.Task + ": " + c.State
}
