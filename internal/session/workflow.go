package session

// The orchestrator workflow (seed 004 Component 1: OrchestratorWorkflow,
// AgentInvocation, Handoff, Verdict) and the mode history (SessionState
// modeHistory), kept in the current-state note — three properties and four
// sections of one-line entries that a person can read and fix in Obsidian —
// and carried into the archived record when the session ends.
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
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/config"
	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/note"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// Sections and properties of the orchestrator workflow in the current-state
// note (and the archived session records).
const (
	secInvocations = "Agent invocations"
	secHandoffs    = "Handoffs"
	secVerdicts    = "Verdicts"
	secModes       = "Mode history"

	propActiveAgent     = "active_agent"      // the agent type whose invocation is in progress, "" for none
	propWorkflowPhase   = "workflow_phase"    // planning, implementation, validation, complete; "" before the first agent
	propLastAgentChange = "last_agent_change" // when an agent last started, ended or handed off
)

// Workflow phases (seed 004 OrchestratorWorkflow.workflowPhase), in order:
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

// Agent invocation statuses (seed 004 AgentInvocation.status).
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

// VerdictDecisions returns seed 004's Verdict.decision values.
func VerdictDecisions() []string {
	return []string{"approve", "reject", "conditional", "needs_revision"}
}

// BuiltinAgentTypes returns seed 004's AgentType values, in the seed's order.
func BuiltinAgentTypes() []string {
	return []string{"orchestrator", "analyst", "architect", "planner", "implementer", "critic", "qa", "security",
		"devops", "retrospective", "memory", "skillbook", "independent-thinker", "high-level-advisor", "explainer",
		"task-generator", "pr-comment-responder"}
}

// Workflow is seed 004's OrchestratorWorkflow as read from a session note.
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

// AgentInvocation is one agent's turn in the session (seed 004
// AgentInvocation): an "^a-N" line of the Agent invocations section.
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

// Handoff is one agent handing the work to another (seed 004 Handoff): an
// "^h-N" line of the Handoffs section.
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

// Verdict is an agent's judgement (seed 004 Verdict): an "^v-N" line of the
// Verdicts section. Verdicts are never compacted.
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

// ModeChange is one change of the session's mode (seed 004 modeHistory): a
// line of the Mode history section. Lines written before they carried an
// id are read too (ID "").
type ModeChange struct {
	ID   string    `json:"id,omitempty"` // "m-2"
	Mode string    `json:"mode"`
	From string    `json:"from"`
	At   time.Time `json:"at"`
	Note string    `json:"note,omitempty"`
	Line int       `json:"line"`
}

var (
	invocationRe = lazyRegexp(`^- (\S+)(?: → (\S+))? · \*\*([^*]+)\*\* · (in_progress|completed|failed|blocked)(.*?) \^(a-\d+` + machineSuffix + `)\s*$`)
	handoffRe    = lazyRegexp(`^- (\S+) · \*\*([^*]+)\*\* → \*\*([^*]+)\*\* · (pending|accepted)(.*?) \^(h-\d+` + machineSuffix + `)\s*$`)
	verdictRe    = lazyRegexp(`^- (\S+) · \*\*([^*]+)\*\* · (approve|reject|conditional|needs_revision) · confidence (\d+(?:\.\d+)?)(.*?) \^(v-\d+` + machineSuffix + `)\s*$`)
	modeRe       = lazyRegexp(`^- (\S+) · (\S+) → (\S+?)(?: · (.*?))?(?: \^(m-\d+` + machineSuffix + `))?\s*$`)
	labelRe      = lazyRegexp(` · \*\*([a-z][a-z ]*):\*\* `)
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
		if it = strings.ReplaceAll(oneLine(it), ";", ","); it != "" {
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
	if v = oneLine(v); v != "" {
		w.b.WriteString(sep + "**" + label + ":** " + v)
	}
}

func formatInvocation(a AgentInvocation) string {
	var w fieldWriter
	w.b.WriteString("- " + note.FormatTime(a.StartedAt))
	if a.CompletedAt != nil {
		w.b.WriteString(" → " + note.FormatTime(*a.CompletedAt))
	}
	w.b.WriteString(sep + "**" + a.Agent + "**" + sep + a.Status)
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

func formatHandoff(h Handoff) string {
	var w fieldWriter
	w.b.WriteString("- " + note.FormatTime(h.CreatedAt) + sep + "**" + h.FromAgent + "** → **" + h.ToAgent + "**" + sep + h.Status)
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

func formatVerdict(v Verdict) string {
	var w fieldWriter
	w.b.WriteString("- " + note.FormatTime(v.Timestamp) + sep + "**" + v.Agent + "**" + sep + v.Decision + sep + "confidence " + strconv.FormatFloat(v.Confidence, 'f', -1, 64))
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
	s := "- " + note.FormatTime(m.At) + sep + m.From + " → " + m.Mode
	if n := oneLine(m.Note); n != "" {
		s += sep + n
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
func (d *doc) readModeHistory(st *State) []ModeChange {
	out := []ModeChange{}
	for _, l := range d.sectionLines(secModes) {
		line := string(l.Content())
		if !strings.HasPrefix(line, "- ") {
			continue
		}
		m, ok := parseModeChange(line)
		if !ok && idTailRe().MatchString(line) {
			st.Problems = append(st.Problems, Problem{Note: d.path, Line: d.lineNo(l.Offset), Text: line, Why: "cannot read this mode history entry back; it is kept as written"})
			continue
		}
		if !ok {
			continue // a person's own line
		}
		m.Line = d.lineNo(l.Offset)
		out = append(out, m)
	}
	return out
}

// readWorkflowProps reads the workflow's properties (cheap: readLite).
func (d *doc) readWorkflowProps() Workflow {
	return Workflow{ActiveAgent: d.prop(propActiveAgent), WorkflowPhase: d.prop(propWorkflowPhase), LastAgentChange: d.timeProp(propLastAgentChange),
		AgentHistory: []AgentInvocation{}, Handoffs: []Handoff{}, PendingHandoffs: []Handoff{}, Verdicts: []Verdict{}, Decisions: []Decision{}}
}

// readWorkflow reads the workflow's entries into st.Workflow (its
// properties are already there), lines it cannot read into st.Problems.
func (d *doc) readWorkflow(st *State) {
	w := &st.Workflow
	if inv := readEntries(d, st, secInvocations, parseInvocation); inv != nil {
		w.AgentHistory = inv
	}
	if hs := readEntries(d, st, secHandoffs, parseHandoff); hs != nil {
		w.Handoffs = hs
	}
	for _, h := range w.Handoffs {
		if h.Status == HandoffPending {
			w.PendingHandoffs = append(w.PendingHandoffs, h)
		}
	}
	if vs := readEntries(d, st, secVerdicts, parseVerdict); vs != nil {
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
	e   T
	off int
}

// currentInvocation returns the invocation in progress in d (the one with
// the highest id, should a person have left two), or ok=false.
func (d *doc) currentInvocation() (located[AgentInvocation], bool) {
	var cur located[AgentInvocation]
	found := false
	for _, l := range d.sectionLines(secInvocations) {
		a, ok := parseInvocation(string(l.Content()))
		if !ok || a.Status != InvocationInProgress {
			continue
		}
		if !found || idNumber(a.ID) >= idNumber(cur.e.ID) {
			cur, found = located[AgentInvocation]{a, l.Offset}, true
		}
	}
	return cur, found
}

// pendingHandoffTo returns the oldest pending handoff to agent in d.
func (d *doc) pendingHandoffTo(agent string) (located[Handoff], bool) {
	for _, l := range d.sectionLines(secHandoffs) {
		h, ok := parseHandoff(string(l.Content()))
		if ok && h.Status == HandoffPending && h.ToAgent == agent {
			return located[Handoff]{h, l.Offset}, true
		}
	}
	return located[Handoff]{}, false
}

// nextInvocationID is the id of the next agent invocation of the session in
// d: one past the highest in its section or already moved to its archive.
func (d *doc) nextInvocationID() string {
	return "a-" + strconv.Itoa(max(d.lastEntryNumber(secInvocations, 'a'), d.intProp(propCompactedInvocations))+1)
}

// nextEntryID is the id of the next entry of a section whose ids are
// "<prefix>-N": one past the highest in the section.
func (d *doc) nextEntryID(section string, prefix byte) string {
	return string(prefix) + "-" + strconv.Itoa(d.lastEntryNumber(section, prefix)+1)
}

// clearSection empties an existing section, keeping the lines in it that
// are not list items (a person's); a missing section stays missing.
func (d *doc) clearSection(title string) {
	if _, ok := d.section(title); ok {
		d.setSection(title, d.otherLines(title))
	}
}

// resetWorkflow queues what a new or ended session leaves of the workflow:
// no active agent, no phase, empty sections (the archived record keeps
// them). Properties a note never had are not added.
func (d *doc) resetWorkflow() {
	for _, k := range []string{propActiveAgent, propWorkflowPhase} {
		if _, ok := d.n.Node(k); ok {
			d.set(k, "")
		}
	}
	if _, ok := d.n.Node(propLastAgentChange); ok {
		d.set(propLastAgentChange, nil)
	}
	for _, sec := range []string{secInvocations, secHandoffs, secVerdicts, secModes} {
		d.clearSection(sec)
	}
}

// AgentTypes returns the agent types the vault accepts: seed 004's, then
// the config's agent_types.
func (s *Service) AgentTypes() []string {
	out := BuiltinAgentTypes()
	for _, a := range s.V.Config.AgentTypes {
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// agentType checks an agent name given as what (e.g. "--to" or "agent";
// flag is its flag/argument name): the canonical, lowercase agent type, or
// errs.UnknownAgent listing the valid ones and naming the config key.
func (s *Service) agentType(what, flag, name string) (string, error) {
	if err := checkFields(flag, name); err != nil {
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
		a, err := s.agentType("--"+flag, flag, n)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out, nil
}

// checkPhase checks a workflow phase given as --flag.
func checkPhase(flag, phase string) error {
	if !slices.Contains(WorkflowPhases(), phase) {
		return errs.New(errs.InvalidWorkflowPhase, "%s %q is not a workflow phase; use one of %s", flag, phase, strings.Join(WorkflowPhases(), ", ")).With("flag", strings.TrimPrefix(flag, "--"))
	}
	return nil
}

// phaseMove checks a move of the workflow phase from cur to next: forward
// (or to the same phase) always, back only when forced.
func phaseMove(cur, next string, force bool) error {
	if force || slices.Index(WorkflowPhases(), next) >= slices.Index(WorkflowPhases(), cur) {
		return nil
	}
	return errs.New(errs.InvalidWorkflowPhase, "the workflow phase is %s; phases move forward (%s), so going back to %s needs --force: `sessionvault workflow phase %s --force`",
		cur, strings.Join(WorkflowPhases(), " → "), next, next).With("phase", cur)
}

// checkOptional checks optional text fields (flag, value pairs): at most max
// characters each, no NUL byte.
func checkOptional(max int, kv ...string) error {
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			continue
		}
		if err := checkText(kv[i], kv[i+1], max); err != nil {
			return err
		}
	}
	return nil
}

// maxWorkflowText is the longest prompt, summary, reason, context or
// reasoning, in characters.
const maxWorkflowText = 2000

// WorkflowOutcome is what an agent, verdict or phase operation returns: the
// Outcome (ID: the invocation, handoff or verdict made; the state after
// it), the invocation and handoff it touched, and the workflow after it.
type WorkflowOutcome struct {
	Outcome
	Invocation string   `json:"invocation,omitempty"` // the invocation started or ended, "a-3"
	Handoff    string   `json:"handoff,omitempty"`    // the handoff made or taken, "h-1"
	Workflow   Workflow `json:"orchestrator_workflow"`
}

// AgentStartOptions are the inputs of AgentStart (seed 004
// addAgentInvocation).
type AgentStartOptions struct {
	Project   string
	Agent     string   // an agent type (AgentTypes)
	Prompt    string   // summary of the agent's input (optional, up to 2000 characters)
	Artifacts []string // the artifacts it is given
	Phase     string   // move the workflow to this phase (forward only); "" keeps it (planning when none yet)
}

// AgentStart records that agent starts working: a new invocation, in
// progress, becomes the active one; the workflow phase is set (Phase, or
// planning when the workflow has none). A pending handoff to agent is taken:
// it becomes accepted and the invocation names its sender (handoff_from),
// with its context and artifacts as input unless given. It refuses
// (errs.AgentAlreadyActive) while another invocation is in progress: that
// one is ended (agent end) or handed over (agent handoff) first, so no
// invocation is left open or closed without a word.
func (s *Service) AgentStart(o AgentStartOptions) (WorkflowOutcome, error) {
	agent, err := s.agentType("agent", "agent", o.Agent)
	if err != nil {
		return WorkflowOutcome{}, err
	}
	if err := checkOptional(maxWorkflowText, "prompt", o.Prompt); err != nil {
		return WorkflowOutcome{}, err
	}
	if err := checkFields(append([]string{"project", o.Project}, pairs("artifact", o.Artifacts)...)...); err != nil {
		return WorkflowOutcome{}, err
	}
	if o.Phase != "" {
		if err := checkPhase("--phase", o.Phase); err != nil {
			return WorkflowOutcome{}, err
		}
	}
	var inv, handoff string
	out, err := s.onActive(o.Project, func(tx *vault.Tx, d *doc, st State, now time.Time) (vault.Change, string, error) {
		if cur, ok := d.currentInvocation(); ok {
			c := cur.e
			return vault.Change{}, "", errs.New(errs.AgentAlreadyActive, "agent %s is in progress (%s, since %s) in session %s; end it with `sessionvault agent end`, or hand the work over with `sessionvault agent handoff --to %s --reason '%s takes over'`",
				c.Agent, c.ID, note.FormatTime(c.StartedAt), st.Session, agent, agent).With("invocation", c.ID).With("agent", c.Agent)
		}
		phase := d.prop(propWorkflowPhase)
		switch {
		case o.Phase != "":
			if err := phaseMove(phase, o.Phase, false); err != nil {
				return vault.Change{}, "", err
			}
			phase = o.Phase
		case phase == "":
			phase = WorkflowPlanning
		}
		a := AgentInvocation{ID: d.nextInvocationID() + s.idSuffix(), Agent: agent, StartedAt: now, Status: InvocationInProgress,
			Input: AgentInput{Prompt: o.Prompt, Artifacts: o.Artifacts}}
		summary := agent + " " + a.ID
		if h, ok := d.pendingHandoffTo(agent); ok {
			a.HandoffFrom = h.e.FromAgent
			if a.Input.Prompt == "" {
				a.Input.Prompt = firstNonEmpty(h.e.Context, h.e.Reason)
			}
			if len(a.Input.Artifacts) == 0 {
				a.Input.Artifacts = h.e.Artifacts
			}
			h.e.Status = HandoffAccepted
			d.replaceLine(h.off, formatHandoff(h.e))
			handoff = h.e.ID
			summary += ", handed off by " + h.e.FromAgent + " (" + h.e.ID + ")"
		}
		d.appendLine(secInvocations, formatInvocation(a))
		d.set(propActiveAgent, agent)
		d.set(propWorkflowPhase, phase)
		d.set(propLastAgentChange, now)
		inv = a.ID
		return vault.Change{Operation: "agent-start", Summary: summary}, a.ID, nil
	})
	return s.workflowOutcome(o.Project, out, err, inv, handoff)
}

// AgentEndOptions are the inputs of AgentEnd (seed 004
// completeAgentInvocation).
type AgentEndOptions struct {
	Project         string
	Status          string // completed (default), failed or blocked
	Summary         string // what the agent did (optional, up to 2000 characters)
	Artifacts       []string
	Recommendations []string
	Blockers        []string
}

// AgentEnd completes the invocation in progress: its end time, status and
// output are written into its line, and no agent is active any more.
// Without one in progress it is errs.NoActiveAgent.
func (s *Service) AgentEnd(o AgentEndOptions) (WorkflowOutcome, error) {
	if o.Status == "" {
		o.Status = InvocationCompleted
	}
	switch o.Status {
	case InvocationCompleted, InvocationFailed, InvocationBlocked:
	default:
		return WorkflowOutcome{}, errs.New(errs.UpdateValidationFailed, "--status %q is not one of completed, failed, blocked", o.Status).With("flag", "status")
	}
	if err := checkOptional(maxWorkflowText, "summary", o.Summary); err != nil {
		return WorkflowOutcome{}, err
	}
	kv := append([]string{"project", o.Project}, pairs("artifact", o.Artifacts)...)
	kv = append(append(kv, pairs("recommendation", o.Recommendations)...), pairs("blocker", o.Blockers)...)
	if err := checkFields(kv...); err != nil {
		return WorkflowOutcome{}, err
	}
	var inv string
	out, err := s.onActive(o.Project, func(tx *vault.Tx, d *doc, st State, now time.Time) (vault.Change, string, error) {
		cur, ok := d.currentInvocation()
		if !ok {
			return vault.Change{}, "", noActiveAgent(st)
		}
		a := cur.e
		a.CompletedAt, a.Status = &now, o.Status
		a.Output = mergeOutput(a.Output, o.Summary, o.Artifacts, o.Recommendations, o.Blockers)
		d.replaceLine(cur.off, formatInvocation(a))
		d.set(propActiveAgent, "")
		d.set(propLastAgentChange, now)
		inv = a.ID
		return vault.Change{Operation: "agent-end", Summary: a.Agent + " " + a.ID + " " + o.Status}, a.ID, nil
	})
	return s.workflowOutcome(o.Project, out, err, inv, "")
}

// mergeOutput is an invocation's output with what its end gives: given
// fields replace, the others stay as the line had them.
func mergeOutput(o *AgentOutput, summary string, artifacts, recs, blockers []string) *AgentOutput {
	if o == nil {
		o = &AgentOutput{}
	}
	n := *o
	if summary != "" {
		n.Summary = summary
	}
	if len(artifacts) > 0 {
		n.Artifacts = artifacts
	}
	if len(recs) > 0 {
		n.Recommendations = recs
	}
	if len(blockers) > 0 {
		n.Blockers = blockers
	}
	return &n
}

func noActiveAgent(st State) error {
	return errs.New(errs.NoActiveAgent, "no agent invocation is in progress in session %s; start one with `sessionvault agent start AGENT`", st.Session).With("session", st.Session)
}

// HandoffOptions are the inputs of AgentHandoff (seed 004 Handoff).
type HandoffOptions struct {
	Project   string
	To        string // the agent type taking over
	Reason    string // required, up to 2000 characters
	Context   string // what the target needs to know (optional)
	Artifacts []string
	// Pending leaves the handoff pending: the target's own `agent start`
	// takes it. Otherwise the target starts at once.
	Pending bool
}

// AgentHandoff hands the work of the invocation in progress to another
// agent, in one commit: the invocation is completed with handoff_to and the
// reason, a handoff (h-N) is recorded, and — unless Pending — the target's
// invocation starts in progress with handoff_from, the context as its
// prompt and the artifacts as its input, and becomes the active agent (the
// handoff then is accepted). Without an invocation in progress it is
// errs.NoActiveAgent.
func (s *Service) AgentHandoff(o HandoffOptions) (WorkflowOutcome, error) {
	to, err := s.agentType("--to", "to", o.To)
	if err != nil {
		return WorkflowOutcome{}, err
	}
	if err := checkText("reason", o.Reason, maxWorkflowText); err != nil {
		return WorkflowOutcome{}, err
	}
	if err := checkOptional(maxWorkflowText, "context", o.Context); err != nil {
		return WorkflowOutcome{}, err
	}
	if err := checkFields(append([]string{"project", o.Project}, pairs("artifact", o.Artifacts)...)...); err != nil {
		return WorkflowOutcome{}, err
	}
	var inv, handoff string
	out, err := s.onActive(o.Project, func(tx *vault.Tx, d *doc, st State, now time.Time) (vault.Change, string, error) {
		cur, ok := d.currentInvocation()
		if !ok {
			return vault.Change{}, "", noActiveAgent(st)
		}
		a := cur.e
		if a.Agent == to {
			return vault.Change{}, "", errs.New(errs.UpdateValidationFailed, "--to %s is the agent handing off (%s); hand off to another agent, or end the invocation with `sessionvault agent end`", to, a.ID).With("flag", "to")
		}
		a.CompletedAt, a.Status = &now, InvocationCompleted
		a.HandoffTo, a.HandoffReason = to, o.Reason
		if a.Output == nil {
			a.Output = &AgentOutput{}
		}
		d.replaceLine(cur.off, formatInvocation(a))
		h := Handoff{ID: d.nextEntryID(secHandoffs, 'h') + s.idSuffix(), FromAgent: a.Agent, ToAgent: to, Reason: o.Reason, Context: o.Context,
			Artifacts: o.Artifacts, CreatedAt: now, Status: HandoffPending}
		next := ""
		if !o.Pending {
			h.Status = HandoffAccepted
			n := AgentInvocation{ID: d.nextInvocationID() + s.idSuffix(), Agent: to, StartedAt: now, Status: InvocationInProgress,
				Input: AgentInput{Prompt: firstNonEmpty(o.Context, o.Reason), Artifacts: o.Artifacts}, HandoffFrom: a.Agent}
			d.appendLine(secInvocations, formatInvocation(n))
			next = to
			inv = n.ID
		}
		d.appendLine(secHandoffs, formatHandoff(h))
		if d.prop(propWorkflowPhase) == "" {
			d.set(propWorkflowPhase, WorkflowPlanning)
		}
		d.set(propActiveAgent, next)
		d.set(propLastAgentChange, now)
		handoff = h.ID
		return vault.Change{Operation: "agent-handoff", Summary: a.Agent + " → " + to + ": " + oneLine(o.Reason)}, h.ID, nil
	})
	return s.workflowOutcome(o.Project, out, err, inv, handoff)
}

// VerdictOptions are the inputs of RecordVerdict (seed 004 addVerdict).
type VerdictOptions struct {
	Project    string
	Agent      string   // the agent type giving the verdict
	Decision   string   // approve, reject, conditional or needs_revision
	Confidence *float64 // required, 0 to 1
	Reasoning  string   // required, up to 2000 characters
	Conditions []string
	Blockers   []string
}

// RecordVerdict records an agent's verdict (v-N). Verdicts are never
// compacted. A decision or confidence out of range is errs.InvalidVerdict
// naming it.
func (s *Service) RecordVerdict(o VerdictOptions) (WorkflowOutcome, error) {
	agent, err := s.agentType("agent", "agent", o.Agent)
	if err != nil {
		return WorkflowOutcome{}, err
	}
	if !slices.Contains(VerdictDecisions(), o.Decision) {
		return WorkflowOutcome{}, errs.New(errs.InvalidVerdict, "the decision %q is not one of %s", o.Decision, strings.Join(VerdictDecisions(), ", ")).With("flag", "decision")
	}
	if o.Confidence == nil {
		return WorkflowOutcome{}, errs.New(errs.InvalidVerdict, "--confidence is missing; give a number from 0 to 1, e.g. --confidence 0.8").With("flag", "confidence")
	}
	if c := *o.Confidence; math.IsNaN(c) || c < 0 || c > 1 {
		return WorkflowOutcome{}, errs.New(errs.InvalidVerdict, "--confidence %s is out of range; give a number from 0 to 1, e.g. --confidence 0.8", strconv.FormatFloat(c, 'g', -1, 64)).With("flag", "confidence")
	}
	if err := checkText("reasoning", o.Reasoning, maxWorkflowText); err != nil {
		return WorkflowOutcome{}, err
	}
	if err := checkFields(append(append([]string{"project", o.Project}, pairs("condition", o.Conditions)...), pairs("blocker", o.Blockers)...)...); err != nil {
		return WorkflowOutcome{}, err
	}
	// The confidence as written in the note (and read back).
	conf, _ := strconv.ParseFloat(strconv.FormatFloat(*o.Confidence, 'f', -1, 64), 64)
	out, err := s.onActive(o.Project, func(tx *vault.Tx, d *doc, st State, now time.Time) (vault.Change, string, error) {
		v := Verdict{ID: d.nextEntryID(secVerdicts, 'v') + s.idSuffix(), Agent: agent, Decision: o.Decision, Confidence: conf,
			Reasoning: o.Reasoning, Conditions: o.Conditions, Blockers: o.Blockers, Timestamp: now}
		d.appendLine(secVerdicts, formatVerdict(v))
		return vault.Change{Operation: "verdict", Summary: fmt.Sprintf("%s %s (%s)", agent, o.Decision, strconv.FormatFloat(conf, 'f', -1, 64))}, v.ID, nil
	})
	return s.workflowOutcome(o.Project, out, err, "", "")
}

// SetWorkflowPhase moves the active session's workflow to phase: forward
// only, unless force (errs.InvalidWorkflowPhase names --force). The phase it
// already has changes nothing and makes no commit.
func (s *Service) SetWorkflowPhase(project, phase string, force bool) (WorkflowOutcome, error) {
	if err := checkFields("project", project, "phase", phase); err != nil {
		return WorkflowOutcome{}, err
	}
	if err := checkPhase("phase", phase); err != nil {
		return WorkflowOutcome{}, err
	}
	project, err := s.Project(project)
	if err != nil {
		return WorkflowOutcome{}, err
	}
	var out Outcome
	out.Result, err = s.update(&out, func(tx *vault.Tx) (vault.Change, error) {
		d, st, err := s.activeDoc(tx, project, false)
		if err != nil {
			return vault.Change{}, err
		}
		cur := d.prop(propWorkflowPhase)
		out.ID = phase
		out.State.Session = st.Session
		if cur == phase {
			return vault.Change{Operation: "workflow-phase"}, nil
		}
		if err := phaseMove(cur, phase, force); err != nil {
			return vault.Change{}, err
		}
		now := s.now()
		d.set(propWorkflowPhase, phase)
		bumpVersion(d, st, now)
		b, err := d.bytes()
		if err != nil {
			return vault.Change{}, err
		}
		return vault.Change{Operation: "workflow-phase", Session: st.Session, Summary: firstNonEmpty(cur, "none") + " → " + phase}, tx.Write(d.path, b)
	})
	return s.workflowOutcome(project, out, err, "", "")
}

// workflowOutcome completes the outcome of a workflow operation with the
// state and workflow after it. On a repeat (op id) the invocation is the one
// in progress now.
func (s *Service) workflowOutcome(project string, out Outcome, err error, inv, handoff string) (WorkflowOutcome, error) {
	if err != nil {
		return WorkflowOutcome{}, err
	}
	st, err := s.Current(project)
	if err != nil {
		return WorkflowOutcome{}, err
	}
	out.State = st
	w := WorkflowOutcome{Outcome: out, Invocation: inv, Handoff: handoff, Workflow: st.Workflow}
	if out.Repeat && inv == "" {
		if c := st.Workflow.Current(); c != nil {
			w.Invocation = c.ID
		}
	}
	return w, nil
}

// Invocation returns the agent invocation with id (e.g. "a-3") of the
// project's current session, read through Status; errs.InvocationNotFound
// when the session has none with that id.
func (s *Service) Invocation(project, id string) (AgentInvocation, error) {
	st, err := s.Status(project)
	if err != nil {
		return AgentInvocation{}, err
	}
	for _, a := range st.Workflow.AgentHistory {
		if a.ID == id {
			return a, nil
		}
	}
	return AgentInvocation{}, errs.New(errs.InvocationNotFound, "session %s has no agent invocation %s (see `sessionvault agent list`)", firstNonEmpty(st.Session, "(none)"), id).With("invocation", id)
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
	fmt.Fprintf(&b, "- Workflow phase: %s\n", firstNonEmpty(w.WorkflowPhase, "—"))
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
		fmt.Fprintf(&b, "- Active agent: %s\n", firstNonEmpty(w.ActiveAgent, "none"))
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
