package tasks

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/note"
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
	propLockProvisional = "lock_provisional" // true: taken offline, not yet on the remote
)

// ClaimOutcome is what became of a task's claim on the remote in a lock,
// an unlock or a sync: State is "claimed" (on the remote, until Expires),
// "provisional" (the remote could not be reached: recorded here, confirmed
// or refused by the next `remote sync`), "renewed", "confirmed",
// "refused" (another holder had it: Holder, Machine and Expires name
// that claim; the lock recorded here was removed), "released", or
// "left to expire" (released here while the remote could not be reached).
type ClaimOutcome struct {
	Task    string    `json:"task"`
	Remote  string    `json:"remote"`
	State   string    `json:"state"`
	Holder  string    `json:"holder,omitempty"`
	Machine string    `json:"machine,omitempty"`
	Expires time.Time `json:"expires,omitzero"`
}

// claimsRemote is the git remote task claims go through, or "" when locks
// stay in the notes: the vault's remote (the config's remote name, else
// origin) when the repository has it and the vault's format is at least
// ClaimsFormat.
func (s *Service) claimsRemote() string {
	if s.V.Config.Version < ClaimsFormat {
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

// claimFor takes task id's claim on remote for holder. A claim another
// holder has is errs.TaskLocked naming it; an unreachable remote gives a
// provisional outcome and no error.
func (s *Service) claimFor(remote, project, id, holder, machine string) (ClaimOutcome, error) {
	c, err := s.V.TakeClaim(remote, vault.Claim{Project: project, Task: id, Holder: holder, Machine: machine}, s.V.Config.ClaimLease.Duration, s.NowUTC())
	var held *vault.ClaimHeldError
	switch {
	case err == nil:
		return ClaimOutcome{Task: id, Remote: remote, State: "claimed", Holder: c.Holder, Machine: c.Machine, Expires: c.Expires}, nil
	case errors.As(err, &held):
		return ClaimOutcome{}, s.claimHeld(project, id, remote, held.Claim)
	case errs.Is(err, errs.NetworkUnavailable):
		return ClaimOutcome{Task: id, Remote: remote, State: "provisional", Holder: holder, Machine: machine}, nil
	}
	return ClaimOutcome{}, err
}

// claimHeld is the errs.TaskLocked of a claim another holder has on the
// remote.
func (s *Service) claimHeld(project, id, remote string, c vault.Claim) error {
	return errs.New(errs.TaskLocked, "task %s is claimed on %s by %s (machine %s) until %s; wait for the claim to end, or work on another task (`%s` lists the ready ones)",
		id, remote, c.Holder, c.Machine, note.FormatTime(c.Expires), s.Command(project, "task graph")).
		With("task", id).With("holder", c.Holder).With("machine", c.Machine).With("expires_at", note.FormatTime(c.Expires))
}

// lockHolder is who takes a lock outside a transaction: holder, else the
// project's active session, else this machine.
func (s *Service) lockHolder(project, holder string) (string, string, error) {
	m, err := s.V.Machine()
	if err != nil {
		return "", "", err
	}
	if holder != "" {
		return holder, m.Name, nil
	}
	if st, err := s.Current(project); err == nil && st.Active() {
		return st.Session, m.Name, nil
	}
	name := m.Name
	if name == "" {
		name = "vault"
	}
	return "machine:" + name, m.Name, nil
}

// ConfirmClaims settles this machine's locks with the remote, for `remote
// sync` (after its merge, before its push): a provisional lock is claimed
// on the remote (confirmed) or, when another holder has the claim, removed
// from its note (refused); a confirmed lock past half its lease is renewed.
// What changed is one commit. Without remote claims, or offline, nothing
// happens.
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
	type settled struct {
		project string
		out     ClaimOutcome
	}
	var done []settled
	for _, project := range projects {
		ts, err := s.tasksOf(project)
		if err != nil {
			return nil, err
		}
		for _, t := range ts {
			if t.Lock == nil || t.Lock.Expired(now) || t.Lock.Machine == "" || t.Lock.Machine != m.Name {
				continue
			}
			if !t.Lock.Provisional && t.Lock.ExpiresAt.Sub(now) > lease/2 {
				continue
			}
			c, err := s.V.TakeClaim(remote, vault.Claim{Project: project, Task: t.ID, Holder: t.Lock.Holder, Machine: m.Name}, lease, now)
			var held *vault.ClaimHeldError
			switch {
			case err == nil:
				state := "renewed"
				if t.Lock.Provisional {
					state = "confirmed"
				}
				done = append(done, settled{project, ClaimOutcome{Task: t.ID, Remote: remote, State: state, Holder: c.Holder, Machine: c.Machine, Expires: c.Expires}})
			case errors.As(err, &held):
				done = append(done, settled{project, ClaimOutcome{Task: t.ID, Remote: remote, State: "refused", Holder: held.Claim.Holder, Machine: held.Claim.Machine, Expires: held.Claim.Expires}})
			case errs.Is(err, errs.NetworkUnavailable):
				return nil, nil
			default:
				return nil, err
			}
		}
	}
	if len(done) == 0 {
		return nil, nil
	}
	var outs []ClaimOutcome
	var summary []string
	_, err = s.Transact(nil, func(tx *vault.Tx) (vault.Change, error) {
		outs, summary = outs[:0], summary[:0]
		for _, d := range done {
			doc, t, err := s.taskDoc(tx, d.project, d.out.Task, errs.TaskNotFound)
			if err != nil {
				if errs.Is(err, errs.TaskNotFound) {
					continue
				}
				return vault.Change{}, err
			}
			if t.Lock == nil || t.Lock.Machine != m.Name {
				continue // released here meanwhile
			}
			if d.out.State == "refused" {
				clearLock(doc)
			} else {
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
		return fmt.Sprintf("the provisional lock of %s was refused: %s (machine %s) had claimed it on %s until %s; the lock was removed here, work on another task", c.Task, c.Holder, c.Machine, c.Remote, note.FormatTime(c.Expires))
	case "released":
		return fmt.Sprintf("claim of %s on %s released", c.Task, c.Remote)
	case "left to expire":
		return fmt.Sprintf("%s cannot be reached: the claim of %s there ends with its lease", c.Remote, c.Task)
	}
	return c.Task + ": " + c.State
}
