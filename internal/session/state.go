package session

import (
	"bytes"
	"encoding/json"
	"path"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/sessionvault/sessionvault/internal/note"
)

// Canonical note names and the sections the engine owns in the
// current-state note (by their H2 heading).
const (
	CurrentStateNote = "session-current-state.md"
	HistoryNote      = "session-history.md"
	ViolationsNote   = "session-violations-log.md"
	DecisionsNote    = "session-decisions.md"
	SessionsDir      = "sessions"
	DecisionsDir     = "decisions"

	SecObjective = "Objective"
	SecStart     = "Start checklist"
	SecUpdates   = "Updates"
	SecDecisions = "Decisions"
	SecBlockers  = "Blockers"
	SecEnd       = "End checklist"
	SecNext      = "Next steps"
	SecSummary   = "Summary"
)

// CanonicalNotes lists the four canonical notes of a project.
var CanonicalNotes = []string{CurrentStateNote, HistoryNote, ViolationsNote, DecisionsNote}

// Lifecycle statuses. The engine writes idle, active (from start to end),
// complete (after end), crashed (an active session whose signs of life
// stopped, until it is recovered) and abandoned (replaced by start
// --force). It never writes ending or recovered: a note that says
// recovered is read as an open session, one that says ending as a closed
// one.
const (
	StatusIdle      = "idle"
	StatusActive    = "active"
	StatusEnding    = "ending"
	StatusComplete  = "complete"
	StatusCrashed   = "crashed"
	StatusRecovered = "recovered"
	StatusAbandoned = "abandoned"
)

// State is a session as read from its note: the current-state note while a
// session is active, or an archived record in sessions/.
type State struct {
	Project        string      `json:"project"`
	Status         string      `json:"status"`
	Session        string      `json:"session,omitempty"`
	Objective      string      `json:"objective,omitempty"`
	Progress       int         `json:"progress"`
	ProgressStart  int         `json:"progress_start"`
	Epic           string      `json:"epic,omitempty"`
	Linear         string      `json:"linear,omitempty"`
	Branch         string      `json:"branch,omitempty"`
	Commit         string      `json:"commit,omitempty"`
	Continues      string      `json:"continues,omitempty"`    // session id this one continues
	LastSession    string      `json:"last_session,omitempty"` // session id of the project's last ended session
	Summary        string      `json:"summary,omitempty"`
	Mode           string      `json:"mode,omitempty"`
	ActiveTask     string      `json:"active_task,omitempty"` // task id (the switch_task MCP tool)
	ActiveFeature  string      `json:"active_feature,omitempty"`
	Started        *time.Time  `json:"started,omitempty"`
	Updated        *time.Time  `json:"updated,omitempty"`
	Ended          *time.Time  `json:"ended,omitempty"`
	LastSign       *time.Time  `json:"last_heartbeat,omitempty"`
	Version        int         `json:"version"`
	StartChecklist []CheckItem `json:"start_checklist"`
	EndChecklist   []CheckItem `json:"end_checklist"`
	Updates        []Update    `json:"updates"`
	// CompactedUpdates is, when the state was read from the note only
	// (Current), the note's compacted_updates: the highest update number a
	// compaction moved to the session's archive note, whose updates are not
	// in Updates. 0 when read in full (Status) or never compacted.
	CompactedUpdates int `json:"compacted_updates,omitempty"`
	// Compactions are the session's compactions, oldest first.
	Compactions []Compaction `json:"compaction_history,omitempty"`
	Decisions   []Decision   `json:"decisions"`
	Blockers    []Blocker    `json:"blockers"`
	NextSteps   []string     `json:"next_steps,omitempty"`
	Problems    []Problem    `json:"problems,omitempty"`

	// The orchestrator workflow and the mode history (workflow.go). readLite
	// reads only the workflow's properties.
	Workflow    Workflow     `json:"orchestrator_workflow"`
	ModeHistory []ModeChange `json:"mode_history"`

	// Gate is, in a full reading of an active session (Status), what its
	// checklists lack now, with what to do (Report); nil otherwise.
	Gate *GateReport `json:"gate,omitempty"`
}

// Active reports whether the state holds a session that accepts entries.
func (s *State) Active() bool {
	return s.Status == StatusActive || s.Status == StatusRecovered || s.Status == StatusCrashed
}

// OpenBlockers returns the blockers not yet resolved.
func (s *State) OpenBlockers() []Blocker {
	var out []Blocker
	for _, b := range s.Blockers {
		if b.Status != "resolved" {
			out = append(out, b)
		}
	}
	return out
}

// Prop returns the property key's scalar value, "" when absent.
func (d *Doc) Prop(key string) string {
	v, _ := d.Note.Get(key)
	return v
}

// TimeProp reads a time property in any form note.ParseTime reads (the
// engine's RFC 3339, and Obsidian's forms without a zone, in the vault's
// time_zone); nil when it is empty or unreadable (timeProblems reports it).
func (d *Doc) TimeProp(key string) *time.Time {
	v := d.Prop(key)
	if v == "" {
		return nil
	}
	t, err := note.ParseTime(v, d.Loc)
	if err != nil {
		return nil
	}
	return &t
}

// timeKeys are the time properties of session notes.
var timeKeys = []string{"started", "updated", "ended", PropLastAgentChange}

// timeProblems reports each time property that is set but unreadable, with
// its line.
func (d *Doc) timeProblems() []Problem {
	var out []Problem
	for _, k := range timeKeys {
		if v := d.Prop(k); v != "" {
			if _, err := note.ParseTime(v, d.Loc); err != nil {
				out = append(out, Problem{Note: d.Path, Line: d.Note.KeyLine(k), Why: "cannot read " + k + ": " + err.Error()})
			}
		}
	}
	return out
}

// IntProp returns the property key as an integer, 0 when absent or not one.
func (d *Doc) IntProp(key string) int {
	v, _ := strconv.Atoi(d.Prop(key))
	return v
}

// ReadState reads the session state from a current-state or archived note.
// Entry lines it cannot read are reported in Problems.
func (d *Doc) ReadState(project string) State {
	st := d.ReadLite(project)
	st.Updates = readEntries(d, &st, SecUpdates, parseUpdate)
	st.Compactions = readEntries(d, &st, SecCompactions, parseCompaction)
	st.Decisions = d.readDecisions(&st)
	st.Blockers = readEntries(d, &st, SecBlockers, parseBlocker)
	d.readWorkflow(&st)
	st.ModeHistory = d.readModeHistory(&st)
	st.Problems = append(st.Problems, d.timeProblems()...)
	for _, l := range d.SectionLines(SecNext) {
		if t := strings.TrimSpace(string(l.Content())); strings.HasPrefix(t, "- ") {
			st.NextSteps = append(st.NextSteps, strings.TrimSpace(t[2:]))
		}
	}
	return st
}

// OtherLines returns the lines of section title that are not its list
// items: what a person wrote there (appended to the note's end, say), which
// an operation that rewrites the section keeps after its own lines.
func (d *Doc) OtherLines(title string) []string {
	var out []string
	for _, l := range d.SectionLines(title) {
		t := strings.TrimRight(string(l.Content()), " \t\r\n")
		if strings.TrimSpace(t) != "" && !strings.HasPrefix(strings.TrimSpace(t), "- ") {
			out = append(out, t)
		}
	}
	return out
}

// readDecisions reads the decisions section into st's problems and
// returns its entries, their notes as paths from the vault root.
func (d *Doc) readDecisions(st *State) []Decision {
	decs := readEntries(d, st, SecDecisions, parseDecision)
	for i := range decs {
		decs[i].Note = inProject(st.Project, decs[i].Note)
	}
	return decs
}

// ReadLite reads the properties and the checklists only: what the hooks
// decide on, without reading every update of a long session.
func (d *Doc) ReadLite(project string) State {
	st := State{
		Project:       project,
		Status:        d.Prop("status"),
		Session:       d.Prop("session"),
		Objective:     d.Prop("objective"),
		Progress:      d.IntProp("progress"),
		ProgressStart: d.IntProp("progress_start"),
		Epic:          d.Prop("epic"),
		Linear:        d.Prop("linear"),
		Branch:        d.Prop("branch"),
		Commit:        d.Prop("commit"),
		Continues:     sessionID(d.Prop("continues")),
		LastSession:   sessionID(d.Prop("last_session")),
		Summary:       d.Prop("summary"),
		Mode:          d.Prop("mode"),
		ActiveTask:    FirstNonEmpty(TaskIDs(NonEmpty(d.Prop("active_task")))...),
		ActiveFeature: featureIDOf(d.Prop("active_feature")),
		Started:       d.TimeProp("started"),
		Updated:       d.TimeProp("updated"),
		Ended:         d.TimeProp("ended"),
		Version:       d.IntProp("version"),
		Workflow:      d.readWorkflowProps(),
	}
	if st.Status == "" {
		st.Status = StatusIdle
	}
	st.StartChecklist = readEntries(d, &st, SecStart, parseCheck)
	st.EndChecklist = readEntries(d, &st, SecEnd, parseCheck)
	return st
}

// OwnedSections are the H2 sections the engine writes in the current-state
// note; their entry lines are part of the signed state.
var OwnedSections = []string{SecObjective, SecStart, SecUpdates, SecDecisions, SecBlockers, SecEnd, SecNext, "Mode history"}

// canonicalForm is what the state's HMAC covers: the front matter
// properties as a JSON object with sorted keys (scalars as text, lists as
// arrays), then, for each owned section in a fixed order, a line "## TITLE"
// followed by its non-blank lines, trimmed. A person's
// whitespace-only edit, or an edit outside the owned sections, does not
// change it; any change to a property or an entry does.
func (d *Doc) canonicalForm() ([]byte, error) {
	props := map[string]any{}
	for _, k := range d.Note.Keys() {
		node, _ := d.Note.Node(k)
		if v, ok := d.Note.Get(k); ok {
			props[k] = v
		} else if node != nil && node.Kind == yaml.SequenceNode {
			props[k] = d.Note.GetList(k)
		} else {
			props[k] = nil
		}
	}
	out, err := json.Marshal(props) // encoding/json sorts map keys
	if err != nil {
		return nil, err
	}
	out = append(out, '\n')
	for _, title := range OwnedSections {
		out = append(out, "## "+title+"\n"...)
		for _, l := range d.SectionLines(title) {
			if t := bytes.TrimSpace(l.Content()); len(t) > 0 {
				out = append(append(out, t...), '\n')
			}
		}
	}
	return out, nil
}

// readEntries parses the entry lines of one section: lines ending in a block
// id. Lines with an id that do not parse become Problems.
func readEntries[T any](d *Doc, st *State, section string, parse func(string) (T, bool)) []T {
	var out []T
	for _, l := range d.SectionLines(section) {
		line := string(l.Content())
		if !idTailRe().MatchString(line) {
			continue
		}
		e, ok := parse(line)
		if !ok {
			st.Problems = append(st.Problems, Problem{Note: d.Path, Line: d.LineNo(l.Offset), Text: line, Why: "cannot read this " + strings.ToLower(section) + " entry back; it is kept as written"})
			continue
		}
		setLine(&e, d.LineNo(l.Offset))
		out = append(out, e)
	}
	return out
}

func setLine(e any, line int) {
	switch v := e.(type) {
	case *Update:
		v.Line = line
	case *Decision:
		v.Line = line
	case *Blocker:
		v.Line = line
	case *CheckItem:
		v.Line = line
	case *AgentInvocation:
		v.Line = line
	case *Handoff:
		v.Line = line
	case *Verdict:
		v.Line = line
	}
}

// lastEntryNumber returns the largest N among "^p-N" ids in a section,
// scanning only the lines that carry one.
func (d *Doc) lastEntryNumber(section string, prefix byte) int {
	max := 0
	for _, l := range d.SectionLines(section) {
		id := IdTail(l.Content())
		if id == nil || id[0] != prefix {
			continue
		}
		if n := IdNumber(string(id)); n > max {
			max = n
		}
	}
	return max
}

// Link renders a wikilink to target, a note's path from the vault root
// (with or without .md), with label as its alias: [[demo/sessions/x|x]].
// Links are written from the vault root so that two projects with notes of
// the same name never make one ambiguous; the alias keeps them short to read.
func Link(target, label string) string {
	return "[[" + strings.TrimSuffix(target, ".md") + "|" + LinkLabel(label) + "]]"
}

// SessionLink is the link to session id's record, project/sessions/id.
func SessionLink(project, id string) string {
	return Link(project+"/"+SessionsDir+"/"+id, id)
}

// activeSessionLink is the link that stands for session id while it is
// active: the current-state note, aliased by the session's id. When the
// session ends, relinkSession turns each one into its sessionLink.
func activeSessionLink(project, id string) string {
	return Link(project+"/"+CurrentStateNote, id)
}

// sessionID returns the session id a link value names: the last path
// element of its target ("[[demo/sessions/x|x]]", "[[sessions/x]]" and "x"
// all name x).
func sessionID(v string) string {
	if t := Unlink(v); t != "" {
		return path.Base(t)
	}
	return ""
}

// inProject returns a note target written from the project folder (the
// links before they were written from the vault root, "decisions/x") as a
// path from the vault root ("demo/decisions/x"); a target that already is one
// is returned as it is.
func inProject(project, target string) string {
	if target == "" || strings.HasPrefix(target, project+"/") {
		return target
	}
	return project + "/" + target
}

// Unlink returns the target of a "[[target]]", "[[target|label]]" or
// "[[target#heading]]" value (trimmed outside the brackets), or the value
// itself, trimmed, when it is no wikilink.
func Unlink(v string) string {
	v = strings.TrimSpace(v)
	if strings.HasPrefix(v, "[[") && strings.HasSuffix(v, "]]") {
		v = v[2 : len(v)-2]
		if i := strings.IndexAny(v, "|#"); i >= 0 {
			v = v[:i]
		}
	}
	return v
}

// TimeOrEmpty returns t as written in a note, "" for nil.
func TimeOrEmpty(t *time.Time) any {
	if t == nil {
		return ""
	}
	return *t
}
