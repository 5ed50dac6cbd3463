package session

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/lazyregexp"
	"github.com/sessionvault/sessionvault/internal/note"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// MaxMessage is the longest update message, in characters (a message holds
// 1 to 500).
const MaxMessage = 500

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
	// Unmet are the SHOULD items of both checklists a session ended
	// without (end), each with what would have met it; they block nothing.
	Unmet []Missing `json:"unmet_should,omitempty"`
}

var linearKeyRe = lazyregexp.New(`^[A-Za-z][A-Za-z0-9]*-\d+$`)

// CheckFields refuses a NUL byte or invalid UTF-8 in any text argument,
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

// CheckText checks a text field (named as both the CLI and MCP know it:
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

// BumpVersion queues the properties every session write updates.
func BumpVersion(d *Doc, st State, now time.Time) {
	d.Set("updated", now)
	d.Set("version", st.Version+1)
}

// entryOp is the body of an operation on the active session: it queues its
// edits on d (the current-state note) and may write other notes through tx.
// It returns the commit's description and the id it created. st holds the
// properties and checklists only (readLite), not the entries.
type entryOp func(tx *vault.Tx, d *Doc, st State, now time.Time) (vault.Change, string, error)

// OnActive runs op on the project's active session as one commit: it reads
// the current state (errs.NoActiveSession when idle), runs op, bumps
// updated and version, writes the note, and records a heartbeat. The
// outcome holds the state after the operation (Current).
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
			// stay monotonic: no entry's time is before the last one's.
			now = *st.Updated
		}
		ch, id, err := op(tx, d, st, now)
		if err != nil {
			return vault.Change{}, err
		}
		// The sections the operation filled are evidence it saw itself
		// (an update for "record the progress as updates").
		s.observeOp(d, st, strings.TrimSpace(ch.Operation+" "+id), now)
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
	// The state after the operation, as start and end return it, when it
	// is asked for. The operation took effect: a reading that fails (or, on
	// a repeat, finds another session) leaves the state with its session
	// only, rather than report an error a retry would repeat.
	if s.StateAfter {
		if st, err := s.Current(project); err == nil && st.Session == out.State.Session {
			out.State = st
		}
	}
	return out, nil
}

// UpdateOptions are the inputs of Update.
type UpdateOptions struct {
	Project  string
	Message  string // 1-500 characters
	Progress *int   // 0-100, optional
	Type     string // progress, note, blocker, milestone (default progress, or note without --progress)
	Tags     []string
	// At is the time the update happened when it is recorded later (nil:
	// now). It may not be in the future nor before the session's last
	// update: the updates are a log whose times only go forward; either is
	// UPDATE_VALIDATION_FAILED naming the flag --at and changes nothing.
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

// DecideOptions are the inputs of Decide.
type DecideOptions struct {
	Project      string
	Title        string // unique within the session (case-insensitive)
	Choice       string
	Rationale    string
	Alternatives []string
	Impact       string // low, medium, high (default medium)
	Category     string
	// Who decided, approved and rejected it: agent types (Service.AgentTypes);
	// optional.
	DecidedBy  string
	ApprovedBy []string
	RejectedBy []string
	// Cite are what the decision rests on in the code: "PATH",
	// "PATH#L10-L20" or a commit (Service.Cite); optional.
	Cite []string
}

// SlugRe matches the runs of characters a slug replaces with one hyphen.
var SlugRe = lazyregexp.New(`[^a-z0-9]+`)

// Slug returns s as a note name: lower case, runs of other characters as
// one hyphen, at most 50 bytes ("decision" when nothing is left).
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
	project, err := s.Project(o.Project)
	if err != nil {
		return Outcome{}, err
	}
	cites, err := s.Cite(project, o.Cite)
	if err != nil {
		return Outcome{}, err
	}
	var citeText []string
	for _, c := range cites {
		citeText = append(citeText, c.String())
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
			DecidedBy: o.DecidedBy, ApprovedBy: o.ApprovedBy, RejectedBy: o.RejectedBy, Cites: citeText}
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

// LogDecision puts a decision's line at the top of session-decisions.md
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

// DecisionNote renders the note of decision d of session id; sessionLink is
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
		"Cites":            note.ListValue(d.Cites),
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

// Pairs turns the values of a repeatable flag into flag, value pairs.
func Pairs(flag string, values []string) []string {
	out := make([]string, 0, 2*len(values))
	for _, v := range values {
		out = append(out, flag, v)
	}
	return out
}

// FirstNonEmpty returns the first of v that is not "" (or "").
func FirstNonEmpty(v ...string) string {
	for _, s := range v {
		if strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}

// BulletLines returns items as markdown bullets, one line each.
func BulletLines(items []string) []string {
	out := make([]string, 0, len(items))
	for _, it := range items {
		if it = OneLine(it); it != "" {
			out = append(out, "- "+it)
		}
	}
	return out
}
