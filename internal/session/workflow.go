package session

// The orchestrator workflow (the active agent, the workflow phase, agent
// invocations, handoffs and verdicts) and the mode history, kept in the
// current-state note — three properties and four sections of one-line
// entries that a person can read and fix in Obsidian — and carried into the
// archived record when the session ends.
//
// Entry line formats (each ends in its block id; fields in [ ] only when set):
//
//	invocation: - 2026-11-25T10:00:00Z[ → 2026-11-25T10:20:00Z] · **implementer** · completed[ · **in:** PROMPT][ · **in artifacts:** a.md; b.md][ · **out:** SUMMARY][ · **artifacts:** a.go; b.go][ · **recommendations:** r1; r2][ · **blockers:** b1][ · **from:** analyst][ · **to:** qa][ · **reason:** WHY] ^a-3
//	handoff:    - 2026-11-25T10:20:00Z · **implementer** → **qa** · pending[ · **reason:** WHY][ · **context:** TEXT][ · **artifacts:** a.go] ^h-1
//	verdict:    - 2026-11-25T10:30:00Z · **qa** · approve · confidence 0.8[ · **reasoning:** WHY][ · **conditions:** c1; c2][ · **blockers:** b1] ^v-1
//	mode:       - 2026-11-25T10:40:00Z · coding → analysis[ · NOTE] ^m-1
//
// Lists are joined with "; " (a ";" inside an item is written as ","). An
// invocation's status is in_progress, completed, failed or blocked; its
// "reason" is the reason of its handoff to "to". A handoff is pending until
// its target agent starts, then accepted. Each line stands alone: nothing
// depends on its position, so older lines can move to an archive note.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/config"
	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/lazyregexp"
	"github.com/sessionvault/sessionvault/internal/note"
)

// Sections and properties of the orchestrator workflow in the current-state
// note (and the archived session records).
const (
	SecInvocations = "Agent invocations"
	SecHandoffs    = "Handoffs"
	SecVerdicts    = "Verdicts"
	SecModes       = "Mode history"

	PropActiveAgent     = "active_agent"      // the agent type whose invocation is in progress, "" for none
	PropWorkflowPhase   = "workflow_phase"    // planning, implementation, validation, complete; "" before the first agent
	PropLastAgentChange = "last_agent_change" // when an agent last started, ended or handed off
)

// Workflow phases (Workflow.WorkflowPhase), in order:
// a phase moves forward only, unless forced. (Not the protocol's phases,
// PhaseInit and the others, which the gates move.)
const (
	WorkflowPlanning       = "planning"
	WorkflowImplementation = "implementation"
	WorkflowValidation     = "validation"
	WorkflowComplete       = "complete"
)

// WorkflowPhases returns the workflow phases in their order.
func WorkflowPhases() []string {
	return []string{WorkflowPlanning, WorkflowImplementation, WorkflowValidation, WorkflowComplete}
}

// Agent invocation statuses (AgentInvocation.Status).
const (
	InvocationInProgress = "in_progress"
	InvocationCompleted  = "completed"
	InvocationFailed     = "failed"
	InvocationBlocked    = "blocked"
)

// Handoff statuses: pending until the target agent starts.
const (
	HandoffPending  = "pending"
	HandoffAccepted = "accepted"
)

// VerdictDecisions returns the values of Verdict.Decision.
func VerdictDecisions() []string {
	return []string{"approve", "reject", "conditional", "needs_revision"}
}

// BuiltinAgentTypes returns the agent types every vault accepts, in a fixed
// order.
func BuiltinAgentTypes() []string {
	return []string{"orchestrator", "analyst", "architect", "planner", "implementer", "critic", "qa", "security",
		"devops", "retrospective", "memory", "skillbook", "independent-thinker", "high-level-advisor", "explainer",
		"task-generator", "pr-comment-responder"}
}

// Workflow is the orchestrator workflow as read from a session note.
// Lists are never null in JSON.
type Workflow struct {
	ActiveAgent     string     `json:"active_agent"`   // "" when no invocation is in progress
	WorkflowPhase   string     `json:"workflow_phase"` // "" until the first agent starts
	LastAgentChange *time.Time `json:"last_agent_change"`
	// AgentHistory is the session's invocations in the order written: those
	// a compaction moved to the archive note first when the state was read
	// in full (Status), else only the note's.
	AgentHistory    []AgentInvocation `json:"agent_history"`
	Handoffs        []Handoff         `json:"handoffs"`
	PendingHandoffs []Handoff         `json:"pending_handoffs"`
	Verdicts        []Verdict         `json:"verdicts"`
	// Decisions are the session's decisions (State.Decisions), with who
	// decided, approved and rejected them.
	Decisions []Decision `json:"decisions"`
}

// AgentInvocation is one agent's turn in the session: an "^a-N" line of the
// Agent invocations section.
type AgentInvocation struct {
	ID          string     `json:"id"` // "a-3"
	Agent       string     `json:"agent"`
	StartedAt   time.Time  `json:"started_at"`
	CompletedAt *time.Time `json:"completed_at"`
	Status      string     `json:"status"` // in_progress, completed, failed, blocked
	Input       AgentInput `json:"input"`
	// Output is null while the invocation is in progress and has none.
	Output        *AgentOutput `json:"output"`
	HandoffFrom   string       `json:"handoff_from"`
	HandoffTo     string       `json:"handoff_to"`
	HandoffReason string       `json:"handoff_reason"` // why it handed off to HandoffTo
	Line          int          `json:"line"`
}

// AgentInput is an invocation's input: the summary of its prompt and the
// artifacts it was given.
type AgentInput struct {
	Prompt    string   `json:"prompt"`
	Artifacts []string `json:"artifacts"`
}

// AgentOutput is what an invocation produced.
type AgentOutput struct {
	Artifacts       []string `json:"artifacts"`
	Summary         string   `json:"summary"`
	Recommendations []string `json:"recommendations"`
	Blockers        []string `json:"blockers"`
}

// Handoff is one agent handing the work to another: an "^h-N" line of the
// Handoffs section.
type Handoff struct {
	ID        string    `json:"id"` // "h-1"
	FromAgent string    `json:"from_agent"`
	ToAgent   string    `json:"to_agent"`
	Reason    string    `json:"reason"`
	Context   string    `json:"context"`
	Artifacts []string  `json:"artifacts"`
	CreatedAt time.Time `json:"created_at"`
	Status    string    `json:"status"` // pending, accepted
	Line      int       `json:"line"`
}

// Verdict is an agent's judgement: an "^v-N" line of the Verdicts section.
// Verdicts are never compacted.
type Verdict struct {
	ID         string    `json:"id"` // "v-1"
	Agent      string    `json:"agent"`
	Decision   string    `json:"decision"`   // approve, reject, conditional, needs_revision
	Confidence float64   `json:"confidence"` // 0 to 1
	Reasoning  string    `json:"reasoning"`
	Conditions []string  `json:"conditions,omitempty"`
	Blockers   []string  `json:"blockers,omitempty"`
	Timestamp  time.Time `json:"timestamp"`
	Line       int       `json:"line"`
}

// ModeChange is one change of the session's mode: a line of the Mode history
// section. Lines written before they carried an id are read too (ID "").
type ModeChange struct {
	ID   string    `json:"id,omitempty"` // "m-2"
	Mode string    `json:"mode"`
	From string    `json:"from"`
	At   time.Time `json:"at"`
	Note string    `json:"note,omitempty"`
	Line int       `json:"line"`
}

var (
	invocationRe = lazyregexp.New(`^- (\S+)(?: → (\S+))? · \*\*([^*]+)\*\* · (in_progress|completed|failed|blocked)(.*?) \^(a-\d+` + MachineSuffix + `)\s*$`)
	handoffRe    = lazyregexp.New(`^- (\S+) · \*\*([^*]+)\*\* → \*\*([^*]+)\*\* · (pending|accepted)(.*?) \^(h-\d+` + MachineSuffix + `)\s*$`)
	verdictRe    = lazyregexp.New(`^- (\S+) · \*\*([^*]+)\*\* · (approve|reject|conditional|needs_revision) · confidence (\d+(?:\.\d+)?)(.*?) \^(v-\d+` + MachineSuffix + `)\s*$`)
	modeRe       = lazyregexp.New(`^- (\S+) · (\S+) → (\S+?)(?: · (.*?))?(?: \^(m-\d+` + MachineSuffix + `))?\s*$`)
	labelRe      = lazyregexp.New(` · \*\*([a-z][a-z ]*):\*\* `)
)

// labelled returns the " · **label:** value" fields of rest by label.
func labelled(rest string) map[string]string {
	out := map[string]string{}
	locs := labelRe().FindAllStringSubmatchIndex(rest, -1)
	for i, loc := range locs {
		end := len(rest)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		out[rest[loc[2]:loc[3]]] = strings.TrimSpace(rest[loc[1]:end])
	}
	return out
}

// joinList writes a list field: items on one line, "; " between them.
func joinList(items []string) string {
	var out []string
	for _, it := range items {
		if it = strings.ReplaceAll(OneLine(it), ";", ","); it != "" {
			out = append(out, it)
		}
	}
	return strings.Join(out, "; ")
}

// splitList reads a list field back; never nil.
func splitList(v string) []string {
	out := []string{}
	for _, it := range strings.Split(v, ";") {
		if it = strings.TrimSpace(it); it != "" {
			out = append(out, it)
		}
	}
	return out
}

// fieldWriter appends " · **label:** value" fields, skipping empty values.
type fieldWriter struct{ b strings.Builder }

func (w *fieldWriter) field(label, v string) {
	if v = OneLine(v); v != "" {
		w.b.WriteString(Sep + "**" + label + ":** " + v)
	}
}

// FormatInvocation renders an agent invocation as its entry line.
func FormatInvocation(a AgentInvocation) string {
	var w fieldWriter
	w.b.WriteString("- " + note.FormatTime(a.StartedAt))
	if a.CompletedAt != nil {
		w.b.WriteString(" → " + note.FormatTime(*a.CompletedAt))
	}
	w.b.WriteString(Sep + "**" + a.Agent + "**" + Sep + a.Status)
	w.field("in", a.Input.Prompt)
	w.field("in artifacts", joinList(a.Input.Artifacts))
	if o := a.Output; o != nil {
		w.field("out", o.Summary)
		w.field("artifacts", joinList(o.Artifacts))
		w.field("recommendations", joinList(o.Recommendations))
		w.field("blockers", joinList(o.Blockers))
	}
	w.field("from", a.HandoffFrom)
	w.field("to", a.HandoffTo)
	w.field("reason", a.HandoffReason)
	w.b.WriteString(" ^" + a.ID)
	return w.b.String()
}

func parseInvocation(line string) (AgentInvocation, bool) {
	m := invocationRe().FindStringSubmatch(line)
	if m == nil {
		return AgentInvocation{}, false
	}
	start, err := time.Parse(time.RFC3339, m[1])
	if err != nil {
		return AgentInvocation{}, false
	}
	a := AgentInvocation{ID: m[6], Agent: strings.TrimSpace(m[3]), StartedAt: start, Status: m[4]}
	if m[2] != "" {
		end, err := time.Parse(time.RFC3339, m[2])
		if err != nil {
			return AgentInvocation{}, false
		}
		a.CompletedAt = &end
	}
	f := labelled(m[5])
	a.Input = AgentInput{Prompt: f["in"], Artifacts: splitList(f["in artifacts"])}
	_, o1 := f["out"]
	_, o2 := f["artifacts"]
	_, o3 := f["recommendations"]
	_, o4 := f["blockers"]
	if o1 || o2 || o3 || o4 || a.Status != InvocationInProgress {
		a.Output = &AgentOutput{Summary: f["out"], Artifacts: splitList(f["artifacts"]),
			Recommendations: splitList(f["recommendations"]), Blockers: splitList(f["blockers"])}
	}
	a.HandoffFrom, a.HandoffTo, a.HandoffReason = f["from"], f["to"], f["reason"]
	return a, true
}

// FormatHandoff renders a handoff as its entry line.
func FormatHandoff(h Handoff) string {
	var w fieldWriter
	w.b.WriteString("- " + note.FormatTime(h.CreatedAt) + Sep + "**" + h.FromAgent + "** → **" + h.ToAgent + "**" + Sep + h.Status)
	w.field("reason", h.Reason)
	w.field("context", h.Context)
	w.field("artifacts", joinList(h.Artifacts))
	w.b.WriteString(" ^" + h.ID)
	return w.b.String()
}

func parseHandoff(line string) (Handoff, bool) {
	m := handoffRe().FindStringSubmatch(line)
	if m == nil {
		return Handoff{}, false
	}
	t, err := time.Parse(time.RFC3339, m[1])
	if err != nil {
		return Handoff{}, false
	}
	f := labelled(m[5])
	return Handoff{ID: m[6], FromAgent: strings.TrimSpace(m[2]), ToAgent: strings.TrimSpace(m[3]), Status: m[4], CreatedAt: t,
		Reason: f["reason"], Context: f["context"], Artifacts: splitList(f["artifacts"])}, true
}

// FormatVerdict renders a verdict as its entry line.
func FormatVerdict(v Verdict) string {
	var w fieldWriter
	w.b.WriteString("- " + note.FormatTime(v.Timestamp) + Sep + "**" + v.Agent + "**" + Sep + v.Decision + Sep + "confidence " + strconv.FormatFloat(v.Confidence, 'f', -1, 64))
	w.field("reasoning", v.Reasoning)
	w.field("conditions", joinList(v.Conditions))
	w.field("blockers", joinList(v.Blockers))
	w.b.WriteString(" ^" + v.ID)
	return w.b.String()
}

func parseVerdict(line string) (Verdict, bool) {
	m := verdictRe().FindStringSubmatch(line)
	if m == nil {
		return Verdict{}, false
	}
	t, err := time.Parse(time.RFC3339, m[1])
	if err != nil {
		return Verdict{}, false
	}
	c, err := strconv.ParseFloat(m[4], 64)
	if err != nil || c < 0 || c > 1 {
		return Verdict{}, false
	}
	f := labelled(m[5])
	v := Verdict{ID: m[6], Timestamp: t, Agent: strings.TrimSpace(m[2]), Decision: m[3], Confidence: c, Reasoning: f["reasoning"]}
	if l := splitList(f["conditions"]); len(l) > 0 {
		v.Conditions = l
	}
	if l := splitList(f["blockers"]); len(l) > 0 {
		v.Blockers = l
	}
	return v, true
}

func formatModeChange(m ModeChange) string {
	s := "- " + note.FormatTime(m.At) + Sep + m.From + " → " + m.Mode
	if n := OneLine(m.Note); n != "" {
		s += Sep + n
	}
	if m.ID != "" {
		s += " ^" + m.ID
	}
	return s
}

func parseModeChange(line string) (ModeChange, bool) {
	m := modeRe().FindStringSubmatch(line)
	if m == nil {
		return ModeChange{}, false
	}
	t, err := time.Parse(time.RFC3339, m[1])
	if err != nil {
		return ModeChange{}, false
	}
	return ModeChange{At: t, From: m[2], Mode: m[3], Note: m[4], ID: m[5]}, true
}

// readModeHistory reads the Mode history section: every change line, with
// an id or without (the lines written before they had one). A line with an
// id that it cannot read is a Problem; other lines are a person's.
func (d *Doc) readModeHistory(st *State) []ModeChange {
	out := []ModeChange{}
	for _, l := range d.SectionLines(SecModes) {
		line := string(l.Content())
		if !strings.HasPrefix(line, "- ") {
			continue
		}
		m, ok := parseModeChange(line)
		if !ok && idTailRe().MatchString(line) {
			st.Problems = append(st.Problems, Problem{Note: d.Path, Line: d.LineNo(l.Offset), Text: line, Why: "cannot read this mode history entry back; it is kept as written"})
			continue
		}
		if !ok {
			continue // a person's own line
		}
		m.Line = d.LineNo(l.Offset)
		out = append(out, m)
	}
	return out
}

// readWorkflowProps reads the workflow's properties (cheap: readLite).
func (d *Doc) readWorkflowProps() Workflow {
	return Workflow{ActiveAgent: d.Prop(PropActiveAgent), WorkflowPhase: d.Prop(PropWorkflowPhase), LastAgentChange: d.TimeProp(PropLastAgentChange),
		AgentHistory: []AgentInvocation{}, Handoffs: []Handoff{}, PendingHandoffs: []Handoff{}, Verdicts: []Verdict{}, Decisions: []Decision{}}
}

// readWorkflow reads the workflow's entries into st.Workflow (its
// properties are already there), lines it cannot read into st.Problems.
func (d *Doc) readWorkflow(st *State) {
	w := &st.Workflow
	if inv := readEntries(d, st, SecInvocations, parseInvocation); inv != nil {
		w.AgentHistory = inv
	}
	if hs := readEntries(d, st, SecHandoffs, parseHandoff); hs != nil {
		w.Handoffs = hs
	}
	for _, h := range w.Handoffs {
		if h.Status == HandoffPending {
			w.PendingHandoffs = append(w.PendingHandoffs, h)
		}
	}
	if vs := readEntries(d, st, SecVerdicts, parseVerdict); vs != nil {
		w.Verdicts = vs
	}
	if st.Decisions != nil {
		w.Decisions = st.Decisions
	}
}

// Current returns the invocation in progress (the latest, should a person
// have left two), or nil.
func (w *Workflow) Current() *AgentInvocation {
	for i := len(w.AgentHistory) - 1; i >= 0; i-- {
		if w.AgentHistory[i].Status == InvocationInProgress {
			return &w.AgentHistory[i]
		}
	}
	return nil
}

// located is an entry with the body offset of its line.
type located[T any] struct {
	Entry T
	Off   int
}

// CurrentInvocation returns the invocation in progress in d (the one with
// the highest id, should a person have left two), or ok=false.
func (d *Doc) CurrentInvocation() (located[AgentInvocation], bool) {
	var cur located[AgentInvocation]
	found := false
	for _, l := range d.SectionLines(SecInvocations) {
		a, ok := parseInvocation(string(l.Content()))
		if !ok || a.Status != InvocationInProgress {
			continue
		}
		if !found || IdNumber(a.ID) >= IdNumber(cur.Entry.ID) {
			cur, found = located[AgentInvocation]{a, l.Offset}, true
		}
	}
	return cur, found
}

// PendingHandoffTo returns the oldest pending handoff to agent in d.
func (d *Doc) PendingHandoffTo(agent string) (located[Handoff], bool) {
	for _, l := range d.SectionLines(SecHandoffs) {
		h, ok := parseHandoff(string(l.Content()))
		if ok && h.Status == HandoffPending && h.ToAgent == agent {
			return located[Handoff]{h, l.Offset}, true
		}
	}
	return located[Handoff]{}, false
}

// NextInvocationID is the id of the next agent invocation of the session in
// d: one past the highest in its section or already moved to its archive.
func (d *Doc) NextInvocationID() string {
	return "a-" + strconv.Itoa(max(d.lastEntryNumber(SecInvocations, 'a'), d.IntProp(PropCompactedInvocations))+1)
}

// NextEntryID is the id of the next entry of a section whose ids are
// "<prefix>-N": one past the highest in the section.
func (d *Doc) NextEntryID(section string, prefix byte) string {
	return string(prefix) + "-" + strconv.Itoa(d.lastEntryNumber(section, prefix)+1)
}

// clearSection empties an existing section, keeping the lines in it that
// are not list items (a person's); a missing section stays missing.
func (d *Doc) clearSection(title string) {
	if _, ok := d.Section(title); ok {
		d.SetSection(title, d.OtherLines(title))
	}
}

// resetWorkflow queues what a new or ended session leaves of the workflow:
// no active agent, no phase, empty sections (the archived record keeps
// them). Properties a note never had are not added.
func (d *Doc) resetWorkflow() {
	for _, k := range []string{PropActiveAgent, PropWorkflowPhase} {
		if _, ok := d.Note.Node(k); ok {
			d.Set(k, "")
		}
	}
	if _, ok := d.Note.Node(PropLastAgentChange); ok {
		d.Set(PropLastAgentChange, nil)
	}
	for _, sec := range []string{SecInvocations, SecHandoffs, SecVerdicts, SecModes} {
		d.clearSection(sec)
	}
}

// AgentTypes returns the agent types the vault accepts: the built-in ones
// (BuiltinAgentTypes), then the config's agent_types.
func (s *Service) AgentTypes() []string {
	out := BuiltinAgentTypes()
	for _, a := range s.V.Config.AgentTypes {
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// AgentType checks an agent name given as what (e.g. "--to" or "agent";
// flag is its flag/argument name): the canonical, lowercase agent type, or
// errs.UnknownAgent listing the valid ones and naming the config key.
func (s *Service) AgentType(what, flag, name string) (string, error) {
	if err := CheckFields(flag, name); err != nil {
		return "", err
	}
	n := strings.ToLower(strings.TrimSpace(name))
	types := s.AgentTypes()
	if n != "" && slices.Contains(types, n) {
		return n, nil
	}
	return "", errs.New(errs.UnknownAgent, "%s %q is not an agent type; the agent types are %s (a vault adds its own under agent_types in %s)",
		what, name, strings.Join(types, ", "), config.File).With("flag", flag).With("agent_types", types)
}

// agentTypes checks a list of agent names (a repeatable flag).
func (s *Service) agentTypes(flag string, names []string) ([]string, error) {
	var out []string
	for _, n := range names {
		a, err := s.AgentType("--"+flag, flag, n)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out, nil
}

// Empty reports whether no agent has worked in the session yet: no phase,
// no active agent, no invocation, handoff or verdict.
func (w *Workflow) Empty() bool {
	return w.WorkflowPhase == "" && w.ActiveAgent == "" && len(w.AgentHistory) == 0 && len(w.Handoffs) == 0 && len(w.Verdicts) == 0
}

// WorkflowSummary renders the workflow for a resume prompt (markdown list
// lines, no heading): the phase, the active agent and its input, how to end
// or hand it over, the pending handoffs and the latest verdicts (at most
// verdicts of them). "" when the workflow is Empty.
func WorkflowSummary(w Workflow, verdicts int) string {
	if w.Empty() {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "- Workflow phase: %s\n", FirstNonEmpty(w.WorkflowPhase, "—"))
	if c := w.Current(); c != nil {
		fmt.Fprintf(&b, "- Active agent: %s (%s, since %s", c.Agent, c.ID, note.FormatTime(c.StartedAt))
		if c.HandoffFrom != "" {
			fmt.Fprintf(&b, ", handed over by %s", c.HandoffFrom)
		}
		b.WriteString(")")
		if c.Input.Prompt != "" {
			fmt.Fprintf(&b, ": %s", c.Input.Prompt)
		}
		if len(c.Input.Artifacts) > 0 {
			fmt.Fprintf(&b, " [artifacts: %s]", strings.Join(c.Input.Artifacts, ", "))
		}
		b.WriteString("\n  When it is done: `sessionvault agent end --summary ...`, or hand over with `sessionvault agent handoff --to AGENT --reason ...`\n")
	} else {
		fmt.Fprintf(&b, "- Active agent: %s\n", FirstNonEmpty(w.ActiveAgent, "none"))
	}
	for i, h := range w.PendingHandoffs {
		if i == 5 {
			fmt.Fprintf(&b, "- … and %d more pending handoffs\n", len(w.PendingHandoffs)-5)
			break
		}
		fmt.Fprintf(&b, "- Pending handoff %s: %s → %s: %s", h.ID, h.FromAgent, h.ToAgent, h.Reason)
		if h.Context != "" {
			fmt.Fprintf(&b, " (context: %s)", h.Context)
		}
		fmt.Fprintf(&b, "; `sessionvault agent start %s` takes it\n", h.ToAgent)
	}
	if n := len(w.Verdicts); n > 0 && verdicts > 0 {
		b.WriteString("- Latest verdicts:\n")
		for _, v := range w.Verdicts[max(0, n-verdicts):] {
			fmt.Fprintf(&b, "  - %s %s %s (confidence %s): %s", v.ID, v.Agent, v.Decision, strconv.FormatFloat(v.Confidence, 'f', -1, 64), v.Reasoning)
			if len(v.Conditions) > 0 {
				fmt.Fprintf(&b, "; conditions: %s", strings.Join(v.Conditions, "; "))
			}
			if len(v.Blockers) > 0 {
				fmt.Fprintf(&b, "; blockers: %s", strings.Join(v.Blockers, "; "))
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}
