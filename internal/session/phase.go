package session

import (
	"fmt"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/note"
	"github.com/sessionvault/sessionvault/internal/protocol"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// Session phases (limited to the gates the protocol defines): a session
// starts in INIT; the start gate (every start MUST done) leads to WORKING;
// the end gate (every end MUST done) leads to COMPLETE, after which the
// session is ended. VIOLATION marks a session whose advance failed a
// blocking gate, until the gate passes.
const (
	PhaseInit      = "INIT"
	PhaseWorking   = "WORKING"
	PhaseComplete  = "COMPLETE"
	PhaseViolation = "VIOLATION"
	PhaseBlocked   = "BLOCKED"
)

// AdvancePhase moves the active session through its next gate: INIT (or
// VIOLATION) to WORKING through the start gate, WORKING to COMPLETE through
// the end gate. When the gate does not pass, the advance stops with an error
// naming the missing evidence, and the unmet MUSTs are appended to
// session-violations-log.md in the same commit (the phase becomes
// VIOLATION).
func (s *Service) AdvancePhase(project string) (Outcome, error) {
	var gateErr error
	out, err := s.OnActive(project, func(tx *vault.Tx, d *Doc, st State, now time.Time) (vault.Change, string, error) {
		proto, err := s.Protocol(st.Project)
		if err != nil {
			return vault.Change{}, "", err
		}
		gate, to := protocol.Start, PhaseWorking
		full := d.ReadState(st.Project)
		for _, b := range full.OpenBlockers() {
			if b.Severity == "critical" {
				d.Set("phase", PhaseBlocked)
				gateErr = errs.New(errs.GateNotPassed, "session %s is blocked by critical blocker %s (%s); resolve it first (`sessionvault resolve %s`)", st.Session, b.ID, b.Text, b.ID).With("blocker", b.ID)
				return vault.Change{Operation: "phase", Summary: currentPhase(d) + " → " + PhaseBlocked + " (" + b.ID + ")"}, PhaseBlocked, nil
			}
		}
		from := currentPhase(d)
		switch from {
		case PhaseInit, PhaseViolation, PhaseBlocked:
		case PhaseWorking:
			gate, to = protocol.End, PhaseComplete
		default:
			return vault.Change{}, "", errs.New(errs.UpdateValidationFailed, "session %s is in phase %s: nothing to advance; end it with `sessionvault end`", st.Session, from)
		}
		missing := s.Gate(st, proto, gate)
		if len(missing) == 0 {
			d.Set("phase", to)
			return vault.Change{Operation: "phase", Summary: from + " → " + to}, to, nil
		}
		if err := s.logViolations(tx, st, string(gate), missing, now); err != nil {
			return vault.Change{}, "", err
		}
		d.Set("phase", PhaseViolation)
		var b strings.Builder
		for _, m := range missing {
			fmt.Fprintf(&b, "\n  %s %s: %s", m.ID, m.Step, m.Do)
		}
		gateErr = (&errs.Error{Code: errs.GateNotPassed, Message: fmt.Sprintf("the %s gate of session %s does not pass: %d MUST item(s) lack evidence (logged in %s):%s", gate, st.Session, len(missing), ViolationsNote, b.String())}).With("missing", missing)
		return vault.Change{Operation: "violation", Summary: fmt.Sprintf("%d unmet MUST(s) at the %s gate", len(missing), gate)}, PhaseViolation, nil
	})
	if err != nil {
		return out, err
	}
	return out, gateErr
}

// logViolations appends unmet MUSTs to session-violations-log.md under the
// session's heading, as rows of a table (timestamp, phase, requirement,
// severity, recovery).
func (s *Service) logViolations(tx *vault.Tx, st State, phase string, missing []Missing, now time.Time) error {
	rel := st.Project + "/" + ViolationsNote
	d, err := s.ReadDoc(tx, rel)
	if err != nil {
		return err
	}
	var rows []string
	for _, m := range missing {
		rows = append(rows, "| "+note.FormatTime(now)+" | "+strings.ToUpper(phase)+" | MUST "+cell(m.Step)+" ("+m.ID+") | CRITICAL | "+cell(m.Do)+" |")
	}
	heading := "### " + SessionLink(st.Project, st.Session)
	var sec *int
	for i, x := range d.MD.Sections {
		// The heading of this session, also as written before links were
		// written from the vault root ([[sessions/<id>]]).
		if x.Level == 3 && strings.HasPrefix(x.Title, "[[") && inProject(st.Project, Unlink(x.Title)) == st.Project+"/"+SessionsDir+"/"+st.Session {
			sec = &i
		}
	}
	nl := d.Newline()
	if sec != nil {
		x := d.MD.Sections[*sec]
		if _, last, ok := d.contentBounds(x); ok {
			d.Edit(last, last, strings.Join(rows, nl)+nl)
		}
	} else {
		block := []string{heading, "", "| Timestamp | Phase | Requirement | Severity | Recovery |", "|-----------|-------|-------------|----------|----------|"}
		d.AppendLine("Violations", strings.Join(append(block, rows...), nl))
	}
	d.Set("violations", d.IntProp("violations")+len(missing))
	d.Set("updated", now)
	b, err := d.Bytes()
	if err != nil {
		return err
	}
	return tx.Write(rel, b)
}

// cell makes text safe inside a markdown table cell.
func cell(s string) string { return strings.ReplaceAll(OneLine(s), "|", `\|`) }

func currentPhase(d *Doc) string { return FirstNonEmpty(d.Prop("phase"), PhaseInit) }
