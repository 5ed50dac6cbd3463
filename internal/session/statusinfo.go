package session

import (
	"errors"

	"github.com/sessionvault/sessionvault/internal/errs"
)

// StateCheck says whether a project's current state verifies as the engine
// last wrote it (Verified), in the words a person acts on: what is wrong and
// the command that settles it. `status` shows it beside the rest of the
// state it could read.
type StateCheck struct {
	// Verified is true when the note agrees with the engine's signature.
	Verified bool `json:"verified"`
	// ChangedOutside is true when the state was changed outside
	// sessionvault, or has no signature this machine can check
	// (ErrTampered, errs.StateChangedOutside): the hooks deny every
	// non-read-only tool until a person accepts it.
	ChangedOutside bool `json:"changed_outside,omitempty"`
	// Problem is why the state does not verify ("" when it does).
	Problem string `json:"problem,omitempty"`
	// Fix is what a person does about it ("" when it verifies).
	Fix string `json:"fix,omitempty"`
}

// CheckState verifies project's current state (Verified) and says, when it
// does not verify, why and what a person does: review the change and run
// `sessionvault accept` for a state changed outside sessionvault, or put
// the note back as committed when it cannot be read (any other problem,
// such as a protocol that cannot be read, says its own remedy). It never
// fails: a state it cannot check is reported as not verified.
func (s *Service) CheckState(project string) StateCheck {
	if _, err := s.Verified(project); err != nil {
		if errors.Is(err, ErrTampered) {
			return StateCheck{ChangedOutside: true, Problem: err.Error(),
				Fix: "a person reviews the change (`" + s.ReviewCommand(project) + "`) and runs `" + s.Command(project, "accept") + "`"}
		}
		c := StateCheck{Problem: err.Error()}
		if errs.Is(err, errs.StateParseError) {
			c.Fix = "restore the note (`" + s.GitCommand("checkout -- "+project+"/"+CurrentStateNote) + "`), then a person runs `" + s.Command(project, "accept") + "`"
		}
		return c
	}
	return StateCheck{Verified: true}
}
