package session

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/lazyregexp"
	"github.com/sessionvault/sessionvault/internal/note"
	"github.com/sessionvault/sessionvault/internal/protocol"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// MaxMessage is the longest update message, in characters (seed 000:
// messageLength [1, 500]).
const MaxMessage = 500

// StartOptions are the inputs of Start (seed 000 START operation).
type StartOptions struct {
	Project   string
	Objective string // required, 1-500 characters
	Epic      string
	Linear    string // a Linear issue key, e.g. ENG-123
	Branch    string // the code repository's branch
	Commit    string // the code repository's starting commit
	Continue  string // the id of an archived session this one continues
	Force     bool   // abandon an active session instead of failing
}

// Outcome is what an operation returns: the session state after it and the
// commits it made.
type Outcome struct {
	State  State        `json:"state"`
	Result vault.Result `json:"git"`
	// ID is the id the operation created: a session, decision or blocker id.
	ID string `json:"id,omitempty"`
	// Repeat is true when the operation id (--op-id) had already taken
	// effect: nothing was done again, and ID and the commits are the first
	// run's.
	Repeat bool `json:"repeat,omitempty"`
	// Phase is the phase a session ended in (end): COMPLETE or VIOLATION.
	Phase string `json:"phase,omitempty"`
	// Violations are the unmet MUSTs an operation logged (end).
	Violations []Missing `json:"violations,omitempty"`
}

var linearKeyRe = lazyregexp.New(`^[A-Za-z][A-Za-z0-9]*-\d+$`)

// checkFields refuses a NUL byte or invalid UTF-8 in any text argument,
// given as flag name and value pairs: errs.UpdateValidationFailed naming the flag
// (the NUL would reach the commit message and break `git fsck --strict`).
func CheckFields(kv ...string) error {
	for i := 0; i+1 < len(kv); i += 2 {
		if err := vault.CheckText("--"+kv[i], kv[i+1]); err != nil {
			var e *errs.Error
			if errors.As(err, &e) {
				err = e.With("flag", kv[i])
			}
			return err
		}
	}
	return nil
}

// checkText checks a text field (named as both the CLI and MCP know it:
// message, objective, rationale): not empty, at most max characters.
func CheckText(flag, v string, max int) error {
	if err := CheckFields(flag, v); err != nil {
		return err
	}
	if strings.TrimSpace(v) == "" {
		return errs.New(errs.UpdateValidationFailed, "the %s must not be empty", flag).With("field", flag)
	}
	if n := utf8.RuneCountInString(v); n > max {
		return errs.New(errs.UpdateValidationFailed, "the %s is %d characters; at most %d are allowed", flag, n, max).With("field", flag)
	}
	return nil
}

// Start begins a session: idle -> active. It fails with
// errs.SessionAlreadyActive when a session is active (unless Force, which
// archives that one as abandoned in the same commit).
func (s *Service) Start(o StartOptions) (Outcome, error) {
	if err := CheckText("objective", o.Objective, MaxMessage); err != nil {
		return Outcome{}, err
	}
	if err := CheckFields("project", o.Project, "epic", o.Epic, "linear", o.Linear, "branch", o.Branch, "commit", o.Commit, "continue", o.Continue); err != nil {
		return Outcome{}, err
	}
	if o.Linear != "" && !linearKeyRe().MatchString(o.Linear) {
		return Outcome{}, errs.New(errs.UpdateValidationFailed, "--linear %q is not an issue key like ENG-123", o.Linear).With("flag", "linear")
	}
	project, err := s.Project(o.Project)
	if err != nil {
		return Outcome{}, err
	}
	if o.Continue != "" {
		if err := vault.CheckName("session id", o.Continue); err != nil {
			return Outcome{}, err
		}
	}
	proto, err := s.Protocol(project)
	if err != nil {
		return Outcome{}, err
	}
	var out Outcome
	cur, _, _ := Paths(project)
	out.Result, err = s.Transact(&out, func(tx *vault.Tx) (vault.Change, error) {
		now := s.NowUTC()
		d, err := s.ReadDoc(tx, cur)
		if err != nil {
			return vault.Change{}, err
		}
		st := d.ReadState(project)
		if st.Active() {
			if !o.Force {
				if s.crashed(project, &st) {
					return vault.Change{}, errs.New(errs.SessionCrashed, "session %s of project %s (objective: %s) has shown no sign of life since %s: resume it with `sessionvault recover`, or abandon it and start anew with `sessionvault start --force --objective ...`", st.Session, project, st.Objective, note.FormatTime(*st.LastSign)).With("session", st.Session)
				}
				where := ""
				if m := d.Prop("machine"); m != "" {
					if here, err := s.V.Machine(); err != nil || here.Name != m {
						where = " on machine " + m
					}
				}
				return vault.Change{}, errs.New(errs.SessionAlreadyActive, "session %s is already active%s in project %s (objective: %s); end it with `sessionvault end`, or abandon it and start anew with `sessionvault start --force --objective ...`", st.Session, where, project, st.Objective).With("session", st.Session)
			}
			if err := s.archive(tx, d, st, StatusAbandoned, "", "Abandoned: a new session was started with --force.", nil, now); err != nil {
				return vault.Change{}, err
			}
			// The new session starts from the idle note the archive wrote
			// (its edits are applied; queuing more on the old body would
			// overlap them).
			if d, err = s.ReadDoc(tx, cur); err != nil {
				return vault.Change{}, err
			}
			st.Version = d.IntProp("version")
		}
		if o.Continue != "" && !tx.Exists(project+"/"+SessionsDir+"/"+o.Continue+".md") {
			return vault.Change{}, errs.New(errs.SessionNotFound, "--continue %s: no archived session %s/%s/%s.md", o.Continue, project, SessionsDir, o.Continue).With("session", o.Continue)
		}
		id, err := s.nextID(tx, project, now, st.Session)
		if err != nil {
			return vault.Change{}, err
		}
		progress := 0
		if o.Continue != "" {
			if prev, err := s.ReadDoc(tx, project+"/"+SessionsDir+"/"+o.Continue+".md"); err == nil {
				progress = prev.IntProp("progress")
			}
		}
		d.Set("status", StatusActive)
		d.Set("session", id)
		d.Set("objective", OneLine(o.Objective))
		d.Set("progress", progress)
		d.Set("progress_start", progress)
		d.Set("epic", o.Epic)
		d.Set("linear", strings.ToUpper(o.Linear))
		d.Set("branch", o.Branch)
		d.Set("commit", o.Commit)
		d.Set("started", now)
		d.Set("updated", now)
		if m, err := s.V.Machine(); err == nil {
			d.Set("machine", m.Name) // the machine the session runs on (a start elsewhere names it)
		}
		if o.Continue != "" {
			d.Set("continues", SessionLink(project, o.Continue))
		} else {
			d.Set("continues", "")
		}
		d.Set("version", st.Version+1)
		for _, p := range []string{PropCompacted, PropCompactedInvocations, propCompactions, propArchive, propUpdatesLog} {
			d.Unset(p)
		}
		if _, ok := d.Section(SecCompactions); ok {
			d.SetSection(SecCompactions, nil)
		}
		d.Set("phase", PhaseInit)
		// Every session starts in the vault's default mode (seed 004); the
		// last session's mode, even a person's disabled, does not carry over.
		d.Set("mode", FirstNonEmpty(s.V.Config.DefaultMode, "coding"))
		d.SetSection(SecObjective, []string{OneLine(o.Objective)})
		d.SetSection(SecStart, checklistLines(proto.Start, "c"))
		d.SetSection(SecUpdates, nil)
		d.SetSection(SecDecisions, nil)
		d.SetSection(SecBlockers, nil)
		d.SetSection(SecEnd, checklistLines(proto.End, "e"))
		d.SetSection(SecNext, d.OtherLines(SecNext))
		d.resetWorkflow()
		b, err := d.Bytes()
		if err != nil {
			return vault.Change{}, err
		}
		if err := tx.Write(cur, b); err != nil {
			return vault.Change{}, err
		}
		out.ID = id
		return vault.Change{Operation: "start", Session: id, Summary: OneLine(o.Objective)}, nil
	})
	if err != nil {
		return Outcome{}, err
	}
	if !out.Repeat {
		_ = s.writeHeartbeat(project, out.ID) // the commit's updated time is the sign of life; the heartbeat repeats it
	}
	out.State, err = s.Current(project)
	if err == nil {
		s.commitSessionLog(project, out.State.LastSession, &out.Result) // an abandoned session's command history
	}
	return out, err
}

func checklistLines(reqs []protocol.Requirement, prefix string) []string {
	var lines []string
	for i, r := range reqs {
		lines = append(lines, FormatCheck(CheckItem{ID: prefix + "-" + strconv.Itoa(i+1), Level: r.Level, Step: r.Step}))
	}
	return lines
}

// nextID returns the next session id of the day: YYYY-MM-DD-session-NN, NN
// counting that day's sessions in the project (of every machine), and on a
// secondary machine its name after it: YYYY-MM-DD-session-NN-laptop.
func (s *Service) nextID(tx *vault.Tx, project string, now time.Time, current string) (string, error) {
	prefix := now.Format("2006-01-02") + "-session-"
	max := 0
	consider := func(name string) {
		if rest, ok := strings.CutPrefix(strings.TrimSuffix(name, ".md"), prefix); ok {
			rest, _, _ = strings.Cut(rest, "-") // 01-laptop: another machine's
			if n, err := strconv.Atoi(rest); err == nil && n > max {
				max = n
			}
		}
	}
	names, err := tx.List(project + "/" + SessionsDir)
	if err != nil {
		return "", err
	}
	for _, n := range names {
		consider(n)
	}
	consider(current)
	return fmt.Sprintf("%s%02d%s", prefix, max+1, s.IdSuffix()), nil
}

// ActiveDoc reads the current-state note and requires an active session.
// The state is read whole when full is set; else only its properties and
// checklists (readLite): an entry needs no pass over every update of a long
// session.
func (s *Service) ActiveDoc(tx *vault.Tx, project string, full bool) (*Doc, State, error) {
	cur, _, _ := Paths(project)
	d, err := s.ReadDoc(tx, cur)
	if err != nil {
		return nil, State{}, err
	}
	var st State
	if full {
		st = d.ReadState(project)
	} else {
		st = d.ReadLite(project)
	}
	if !st.Active() {
		last := ""
		if st.LastSession != "" {
			last = " (the last one was " + st.LastSession + ")"
		}
		return nil, st, errs.New(errs.NoActiveSession, "no active session in project %s%s; start one with `sessionvault start --objective ...`", project, last).With("project", project)
	}
	// A session that looked crashed (no sign of life for the heartbeat
	// timeout) takes the entry anyway: the entry is itself a sign of life,
	// and refusing it would block the agent's work.
	return d, st, nil
}

// bumpVersion queues the properties every session write updates.
func BumpVersion(d *Doc, st State, now time.Time) {
	d.Set("updated", now)
	d.Set("version", st.Version+1)
}

// entryOp is the body of an operation on the active session: it queues its
// edits on d (the current-state note) and may write other notes through tx.
// It returns the commit's description and the id it created. st holds the
// properties and checklists only (readLite), not the entries.
type entryOp func(tx *vault.Tx, d *Doc, st State, now time.Time) (vault.Change, string, error)

// onActive runs op on the project's active session as one commit: it reads
// the current state (errs.NoActiveSession when idle), runs op, bumps
// updated and version, writes the note, and records a heartbeat.
func (s *Service) OnActive(project string, op entryOp) (Outcome, error) {
	project, err := s.Project(project)
	if err != nil {
		return Outcome{}, err
	}
	var out Outcome
	out.Result, err = s.Transact(&out, func(tx *vault.Tx) (vault.Change, error) {
		d, st, err := s.ActiveDoc(tx, project, false)
		if err != nil {
			return vault.Change{}, err
		}
		now := s.NowUTC()
		if st.Updated != nil && now.Before(*st.Updated) {
			// The clock went back (NTP, another machine's commit): entries
			// stay monotonic (seed 003 "Ensure timestamps are monotonic").
			now = *st.Updated
		}
		ch, id, err := op(tx, d, st, now)
		if err != nil {
			return vault.Change{}, err
		}
		if err := s.compact(tx, d, st, now); err != nil {
			return vault.Change{}, err
		}
		BumpVersion(d, st, now)
		if d.Prop("status") == StatusCrashed {
			// An entry is a sign of life: the session is no longer crashed.
			d.Set("status", StatusActive)
		}
		b, err := d.Bytes()
		if err != nil {
			return vault.Change{}, err
		}
		out.ID = id
		out.State.Session = st.Session
		ch.Session = st.Session
		return ch, tx.Write(d.Path, b)
	})
	if err != nil {
		return Outcome{}, err
	}
	if !out.Repeat {
		_ = s.writeHeartbeat(project, out.State.Session) // the commit's updated time is the sign of life; the heartbeat repeats it
	}
	return out, nil
}

// UpdateOptions are the inputs of Update (seed 000 UPDATE operation).
type UpdateOptions struct {
	Project  string
	Message  string // 1-500 characters
	Progress *int   // 0-100, optional
	Type     string // progress, note, blocker, milestone (default progress, or note without --progress)
	Tags     []string
	// At is the time the update happened when it is recorded later (nil:
	// now). It may not be in the future nor before the session's last
	// update: the updates are a log whose times only go forward (seed 003
	// "Ensure timestamps are monotonic"); either is UPDATE_VALIDATION_FAILED
	// naming the flag --at and changes nothing.
	At *time.Time
}

var tagRe = lazyregexp.New(`^[\p{L}\p{N}_/-]+$`)

// Update records an update in the active session.
func (s *Service) Update(o UpdateOptions) (Outcome, error) {
	if err := CheckText("message", o.Message, MaxMessage); err != nil {
		return Outcome{}, err
	}
	if err := CheckFields(append([]string{"project", o.Project, "type", o.Type}, Pairs("tag", o.Tags)...)...); err != nil {
		return Outcome{}, err
	}
	if o.Progress != nil && (*o.Progress < 0 || *o.Progress > 100) {
		return Outcome{}, errs.New(errs.UpdateValidationFailed, "--progress %d is out of range; use 0-100", *o.Progress).With("flag", "progress")
	}
	if o.Type == "" {
		o.Type = "progress"
		if o.Progress == nil {
			o.Type = "note"
		}
	}
	switch o.Type {
	case "progress", "note", "blocker", "milestone":
	default:
		return Outcome{}, errs.New(errs.UpdateValidationFailed, "--type %q is not one of progress, note, blocker, milestone", o.Type).With("flag", "type")
	}
	for _, t := range o.Tags {
		if !tagRe().MatchString(strings.TrimPrefix(t, "#")) {
			return Outcome{}, errs.New(errs.UpdateValidationFailed, "--tag %q: tags are letters, digits, '_', '-' and '/'", t).With("flag", "tag")
		}
	}
	return s.OnActive(o.Project, func(tx *vault.Tx, d *Doc, st State, now time.Time) (vault.Change, string, error) {
		at := now
		if o.At != nil {
			if err := checkUpdateTime(d, st, *o.At, now); err != nil {
				return vault.Change{}, "", err
			}
			at = o.At.UTC()
		}
		u := Update{ID: d.nextUpdateID() + s.IdSuffix(), Time: at, Type: o.Type, Progress: o.Progress, Message: o.Message}
		for _, t := range o.Tags {
			u.Tags = append(u.Tags, strings.TrimPrefix(t, "#"))
		}
		d.AppendLine(SecUpdates, FormatUpdate(u))
		if o.Progress != nil {
			d.Set("progress", *o.Progress)
		}
		return vault.Change{Operation: "update", Summary: o.Message}, u.ID, nil
	})
}

// checkUpdateTime refuses an explicit update time at that is in the future
// (more than a minute past now, for clocks a little apart) or before the
// last update of the session in d, whose entries stay in time order.
func checkUpdateTime(d *Doc, st State, at, now time.Time) error {
	if at.After(now.Add(time.Minute)) {
		return errs.New(errs.UpdateValidationFailed, "--at %s is in the future (now is %s); give the time the update happened, or leave --at out",
			at.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339)).With("flag", "at")
	}
	lines := d.SectionLines(SecUpdates)
	for i := len(lines) - 1; i >= 0; i-- {
		u, ok := parseUpdate(string(lines[i].Content()))
		if !ok {
			continue
		}
		if at.Before(u.Time) {
			return errs.New(errs.UpdateValidationFailed, "--at %s is before the session's last update %s (%s): updates are a log in time order; use --at %s or later, or leave --at out",
				at.UTC().Format(time.RFC3339), u.ID, u.Time.UTC().Format(time.RFC3339), u.Time.UTC().Format(time.RFC3339)).With("flag", "at")
		}
		break
	}
	return nil
}

// DecideOptions are the inputs of Decide (seed 000 DECIDE operation).
type DecideOptions struct {
	Project      string
	Title        string // unique within the session (case-insensitive)
	Choice       string
	Rationale    string
	Alternatives []string
	Impact       string // low, medium, high (default medium)
	Category     string
	// Who decided, approved and rejected it (seed 004 Decision): agent
	// types (Service.AgentTypes); optional.
	DecidedBy  string
	ApprovedBy []string
	RejectedBy []string
}

var SlugRe = lazyregexp.New(`[^a-z0-9]+`)

func Slug(s string) string {
	v := strings.Trim(SlugRe().ReplaceAllString(strings.ToLower(s), "-"), "-")
	if len(v) > 50 {
		v = strings.TrimRight(v[:50], "-")
	}
	if v == "" {
		v = "decision"
	}
	return v
}

// Decide records a decision: an entry in the current state, its own note in
// decisions/, and a line at the top of session-decisions.md, in one commit.
func (s *Service) Decide(o DecideOptions) (Outcome, error) {
	for flag, v := range map[string]string{"title": o.Title, "choice": o.Choice, "rationale": o.Rationale} {
		if err := CheckText(flag, v, 2000); err != nil {
			return Outcome{}, err
		}
	}
	if err := CheckFields(append([]string{"project", o.Project, "impact", o.Impact, "category", o.Category}, Pairs("alternative", o.Alternatives)...)...); err != nil {
		return Outcome{}, err
	}
	if o.Impact == "" {
		o.Impact = "medium"
	}
	switch o.Impact {
	case "low", "medium", "high":
	default:
		return Outcome{}, errs.New(errs.UpdateValidationFailed, "--impact %q is not one of low, medium, high", o.Impact).With("flag", "impact")
	}
	if o.DecidedBy != "" {
		a, err := s.AgentType("--decided-by", "decided-by", o.DecidedBy)
		if err != nil {
			return Outcome{}, err
		}
		o.DecidedBy = a
	}
	var err error
	if o.ApprovedBy, err = s.agentTypes("approved-by", o.ApprovedBy); err != nil {
		return Outcome{}, err
	}
	if o.RejectedBy, err = s.agentTypes("rejected-by", o.RejectedBy); err != nil {
		return Outcome{}, err
	}
	return s.OnActive(o.Project, func(tx *vault.Tx, d *Doc, st State, now time.Time) (vault.Change, string, error) {
		for _, prev := range d.readDecisions(&st) {
			if strings.EqualFold(strings.TrimSpace(prev.Title), strings.TrimSpace(LinkLabel(o.Title))) {
				return vault.Change{}, "", errs.New(errs.DuplicateDecisionTitle, "session %s already has a decision titled %q (%s); titles are unique within a session", st.Session, prev.Title, prev.ID).With("decision", prev.ID)
			}
		}
		base := st.Project + "/" + DecisionsDir + "/" + now.Format("2006-01-02") + "-" + Slug(o.Title)
		rel := base + ".md"
		for i := 2; tx.Exists(rel); i++ {
			rel = fmt.Sprintf("%s-%d.md", base, i)
		}
		dec := Decision{ID: "d-" + strconv.Itoa(d.lastEntryNumber(SecDecisions, 'd')+1) + s.IdSuffix(), Time: now, Title: o.Title,
			Note: strings.TrimSuffix(rel, ".md"), Choice: o.Choice, Rationale: o.Rationale,
			Alternatives: o.Alternatives, Impact: o.Impact, Category: o.Category,
			DecidedBy: o.DecidedBy, ApprovedBy: o.ApprovedBy, RejectedBy: o.RejectedBy}
		d.AppendLine(SecDecisions, FormatDecision(dec))
		nb, err := s.DecisionNote(st.Session, activeSessionLink(st.Project, st.Session), dec)
		if err != nil {
			return vault.Change{}, "", err
		}
		if err := tx.Write(rel, nb); err != nil {
			return vault.Change{}, "", err
		}
		if err := s.LogDecision(tx, st.Project, activeSessionLink(st.Project, st.Session), dec, now, true); err != nil {
			return vault.Change{}, "", err
		}
		return vault.Change{Operation: "decide", Summary: o.Title}, dec.ID, nil
	})
}

// logDecision puts a decision's line at the top of session-decisions.md
// (newest first), and when touch is set, its updated property. sessionLink
// is the link to the decision's session (activeSessionLink while it is
// active).
func (s *Service) LogDecision(tx *vault.Tx, project, sessionLink string, dec Decision, when time.Time, touch bool) error {
	_, _, rel := Paths(project)
	dd, err := s.ReadDoc(tx, rel)
	if err != nil {
		return err
	}
	dd.prependLine("Decisions", "- "+when.Format("2006-01-02")+Sep+Link(dec.Note, dec.Title)+" — "+OneLine(dec.Choice)+" (session "+sessionLink+")")
	dd.Set("decisions", dd.IntProp("decisions")+1)
	if touch {
		dd.Set("updated", when)
	}
	b, err := dd.Bytes()
	if err != nil {
		return err
	}
	return tx.Write(rel, b)
}

// decisionNote renders the note of decision d of session id; sessionLink is
// the link to that session (activeSessionLink while it is active).
func (s *Service) DecisionNote(session, sessionLink string, d Decision) ([]byte, error) {
	alts := "_None recorded._"
	if len(d.Alternatives) > 0 {
		alts = "- " + strings.Join(d.Alternatives, "\n- ")
	}
	return s.Render("decision.md", map[string]string{
		"ID":               note.Scalar(d.ID),
		"Title":            note.Scalar(OneLine(d.Title)),
		"Session":          note.Scalar(session),
		"Date":             note.FormatTime(d.Time),
		"Impact":           note.Scalar(d.Impact),
		"Category":         note.Scalar(d.Category),
		"Alternatives":     note.ListValue(d.Alternatives),
		"DecidedBy":        note.Scalar(d.DecidedBy),
		"ApprovedBy":       note.ListValue(d.ApprovedBy),
		"RejectedBy":       note.ListValue(d.RejectedBy),
		"Heading":          OneLine(d.Title),
		"SessionLink":      sessionLink,
		"Choice":           d.Choice,
		"Rationale":        d.Rationale,
		"AlternativesList": alts,
	})
}

// Block records a blocker in the active session and returns its id (b-N).
func (s *Service) Block(project, description, severity string) (Outcome, error) {
	if err := CheckText("description", description, MaxMessage); err != nil {
		return Outcome{}, err
	}
	if err := CheckFields("project", project, "severity", severity); err != nil {
		return Outcome{}, err
	}
	if severity == "" {
		severity = "medium"
	}
	switch severity {
	case "low", "medium", "high", "critical":
	default:
		return Outcome{}, errs.New(errs.UpdateValidationFailed, "--severity %q is not one of low, medium, high, critical", severity).With("flag", "severity")
	}
	return s.OnActive(project, func(tx *vault.Tx, d *Doc, st State, now time.Time) (vault.Change, string, error) {
		b := Blocker{ID: "b-" + strconv.Itoa(d.lastEntryNumber(SecBlockers, 'b')+1) + s.IdSuffix(), Time: now, Severity: severity, Status: "active", Text: description}
		d.AppendLine(SecBlockers, formatBlocker(b))
		return vault.Change{Operation: "block", Summary: b.ID + " " + description}, b.ID, nil
	})
}

// Resolve marks a blocker resolved. Unknown ids give errs.BlockerNotFound;
// an already resolved one gives errs.BlockerAlreadyResolved.
func (s *Service) Resolve(project, id, resolution string) (Outcome, error) {
	if err := CheckFields("project", project, "blocker", id, "resolution", resolution); err != nil {
		return Outcome{}, err
	}
	if !blockerIDRe().MatchString(id) {
		return Outcome{}, errs.New(errs.BlockerNotFound, "%q is not a blocker id; blocker ids look like b-1 (see `sessionvault status`)", id).With("blocker", id)
	}
	return s.OnActive(project, func(tx *vault.Tx, d *Doc, st State, now time.Time) (vault.Change, string, error) {
		for _, l := range d.SectionLines(SecBlockers) {
			b, ok := parseBlocker(string(l.Content()))
			if !ok || b.ID != id {
				continue
			}
			if b.Status == "resolved" {
				return vault.Change{}, "", errs.New(errs.BlockerAlreadyResolved, "blocker %s of session %s is already resolved", id, st.Session).With("blocker", id)
			}
			b.Status, b.Resolution, b.ResolvedAt = "resolved", resolution, &now
			d.ReplaceLine(l.Offset, formatBlocker(b))
			return vault.Change{Operation: "resolve", Summary: id + " " + resolution}, id, nil
		}
		return vault.Change{}, "", errs.New(errs.BlockerNotFound, "session %s has no blocker %s (see `sessionvault status` for open blockers)", st.Session, id).With("blocker", id)
	})
}

// End finishes the active session: active -> ending -> complete. The session
// is archived to sessions/<id>.md, added to session-history.md, and the
// current state is left idle with a link to it — one commit.
func (s *Service) End(project, summary string, next []string) (Outcome, error) {
	if err := CheckFields(append([]string{"project", project, "summary", summary}, Pairs("next", next)...)...); err != nil {
		return Outcome{}, err
	}
	if summary != "" {
		if err := CheckText("summary", summary, 2000); err != nil {
			return Outcome{}, err
		}
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
		now := s.NowUTC()
		// The phase the session ends in: COMPLETE through a passing end
		// gate, VIOLATION when MUSTs of the end checklist were unmet (they
		// go to the violations log, and the outcome names them).
		phase := PhaseComplete
		out.Violations = nil
		if proto, err := s.Protocol(project); err == nil {
			if missing := s.Gate(st, proto, protocol.End); len(missing) > 0 {
				if err := s.logViolations(tx, st, string(protocol.End), missing, now); err != nil {
					return vault.Change{}, err
				}
				phase, out.Violations = PhaseViolation, missing
			}
		}
		if err := s.archive(tx, d, st, StatusComplete, phase, summary, next, now); err != nil {
			return vault.Change{}, err
		}
		out.Phase = phase
		out.ID = st.Session
		return vault.Change{Operation: "end", Session: st.Session, Summary: FirstNonEmpty(summary, st.Objective)}, nil
	})
	if err != nil {
		return Outcome{}, err
	}
	if !out.Repeat {
		_ = s.V.WriteState("heartbeat-"+project, nil) // a heartbeat names its session: an ended one's counts for nothing
	}
	s.commitSessionLog(project, out.ID, &out.Result) // the session's command history is in git by its end
	out.State, err = s.Current(project)
	return out, err
}

// pairs turns the values of a repeatable flag into flag, value pairs.
func Pairs(flag string, values []string) []string {
	out := make([]string, 0, 2*len(values))
	for _, v := range values {
		out = append(out, flag, v)
	}
	return out
}

func FirstNonEmpty(v ...string) string {
	for _, s := range v {
		if strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}

// archive writes the session record sessions/<id>.md from the current-state
// note (with the end's summary and next steps), adds it to the history and
// resets the current state to idle.
func (s *Service) archive(tx *vault.Tx, d *Doc, st State, status, phase, summary string, next []string, now time.Time) error {
	if err := s.Record(tx, d, st, status, phase, summary, next, now); err != nil {
		return err
	}
	return resetState(tx, d, st, status, now)
}

// record writes the session record sessions/<id>.md of session st from d (a
// current-state note holding it) with status, phase (kept when ""), the
// summary and next steps, points the session's decisions at the record and
// adds the session to the project's history. d itself is not changed.
func (s *Service) Record(tx *vault.Tx, d *Doc, st State, status, phase, summary string, next []string, now time.Time) error {
	rel := st.Project + "/" + SessionsDir + "/" + st.Session + ".md"
	if err := vault.CheckPath(rel); err != nil {
		return err
	}
	if tx.Exists(rel) {
		return errs.New(errs.SessionAlreadyActive, "cannot archive session %s: %s already exists", st.Session, rel).With("note", rel)
	}
	if len(next) == 0 {
		next = st.NextSteps
	}
	a, err := s.ParseDoc(rel, d.Note.Bytes())
	if err != nil {
		return err
	}
	if phase != "" {
		a.Set("phase", phase)
	}
	a.Retitle(st.Session)
	a.Set("type", "session")
	a.Set("status", status)
	a.Set("ended", now)
	a.Set("updated", now)
	if st.Started != nil {
		a.Set("duration_minutes", int(now.Sub(*st.Started).Minutes()))
	}
	a.Set("summary", OneLine(summary))
	a.SetSection(SecNext, append(BulletLines(next), a.OtherLines(SecNext)...))
	if summary != "" {
		a.SetSection(SecSummary, []string{summary})
	}
	ab, err := a.Bytes()
	if err != nil {
		return err
	}
	if err := tx.Write(rel, ab); err != nil {
		return err
	}
	if err := s.relinkSession(tx, st); err != nil {
		return err
	}
	st.Summary, st.NextSteps, st.Status = summary, next, status
	st.Ended = &now
	return s.AddToHistory(tx, st, now)
}

// resetState makes the current-state note d idle after session st ended
// with status.
func resetState(tx *vault.Tx, d *Doc, st State, status string, now time.Time) error {
	d.Set("status", StatusIdle)
	d.Set("session", "")
	d.Set("objective", "")
	d.Set("progress", 0)
	d.Set("progress_start", 0)
	d.Set("epic", "")
	d.Set("linear", "")
	d.Set("branch", "")
	d.Set("commit", "")
	d.Set("started", nil) // empty, not "": Obsidian types it datetime
	d.Set("continues", "")
	d.Set("phase", "")
	d.Set("last_session", SessionLink(st.Project, st.Session))
	BumpVersion(d, st, now)
	d.SetSection(SecObjective, []string{"_No active session._ The last one was " + SessionLink(st.Project, st.Session) + " (" + status + ")."})
	for _, sec := range []string{SecStart, SecUpdates, SecDecisions, SecBlockers, SecEnd, SecNext} {
		d.SetSection(sec, nil)
	}
	if _, ok := d.Section(SecCompactions); ok {
		d.SetSection(SecCompactions, nil)
	}
	d.resetWorkflow()
	b, err := d.Bytes()
	if err != nil {
		return err
	}
	return tx.Write(d.Path, b)
}

// relinkSession points the links that stood for session st while it was
// active (activeSessionLink, in its decision notes and its lines of
// session-decisions.md) at its record, now that archive has written it. Only
// that link text changes; a decision note that no longer has it (a person
// rewrote the line) or no longer exists is left as it is.
func (s *Service) relinkSession(tx *vault.Tx, st State) error {
	from, to := []byte(activeSessionLink(st.Project, st.Session)), []byte(SessionLink(st.Project, st.Session))
	for _, dec := range st.Decisions {
		rel := dec.Note + ".md"
		if vault.CheckPath(rel) != nil || !tx.Exists(rel) {
			continue
		}
		var out []byte
		if _, err := tx.ReadNote(rel, func(data []byte) error {
			if bytes.Contains(data, from) {
				out = bytes.ReplaceAll(data, from, to)
			}
			return nil
		}); err != nil {
			return err
		}
		if out != nil {
			if err := tx.Write(rel, out); err != nil {
				return err
			}
		}
	}
	if len(st.Decisions) == 0 {
		return nil
	}
	_, _, rel := Paths(st.Project)
	dd, err := s.ReadDoc(tx, rel)
	if err != nil {
		return err
	}
	b, err := dd.Bytes()
	if err != nil || !bytes.Contains(b, from) {
		return err
	}
	return tx.Write(rel, bytes.ReplaceAll(b, from, to))
}

func BulletLines(items []string) []string {
	out := make([]string, 0, len(items))
	for _, it := range items {
		if it = OneLine(it); it != "" {
			out = append(out, "- "+it)
		}
	}
	return out
}

// Heartbeat records a sign of life of the active session in
// .sessionvault/state (no commit: DESIGN §4).
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

func (s *Service) writeHeartbeat(project, session string) error {
	return s.V.WriteState("heartbeat-"+project, []byte(note.FormatTime(s.NowUTC())+" "+session+"\n"))
}

// lastBeat returns the time of the last heartbeat of session, if any.
func (s *Service) LastBeat(project, session string) *time.Time {
	data, err := s.V.ReadState("heartbeat-" + project)
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

// MarkCrashed records, as one commit, that the project's active session has
// shown no sign of life for the heartbeat timeout (status crashed; DESIGN
// §7). It returns the session marked, or "" when there was nothing to mark.
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
