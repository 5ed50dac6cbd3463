package workflow

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/session"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/note"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// checkPhase checks a workflow phase given as --flag.
func checkPhase(flag, phase string) error {
	if !slices.Contains(session.WorkflowPhases(), phase) {
		return errs.New(errs.InvalidWorkflowPhase, "%s %q is not a workflow phase; use one of %s", flag, phase, strings.Join(session.WorkflowPhases(), ", ")).With("flag", strings.TrimPrefix(flag, "--"))
	}
	return nil
}

// phaseMove checks a move of the workflow phase from cur to next: forward
// (or to the same phase) always, back only when forced.
func phaseMove(cur, next string, force bool) error {
	if force || slices.Index(session.WorkflowPhases(), next) >= slices.Index(session.WorkflowPhases(), cur) {
		return nil
	}
	return errs.New(errs.InvalidWorkflowPhase, "the workflow phase is %s; phases move forward (%s), so going back to %s needs --force: `sessionvault workflow phase %s --force`",
		cur, strings.Join(session.WorkflowPhases(), " → "), next, next).With("phase", cur)
}

// checkOptional checks optional text fields (flag, value pairs): at most max
// characters each, no NUL byte.
func checkOptional(max int, kv ...string) error {
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			continue
		}
		if err := session.CheckText(kv[i], kv[i+1], max); err != nil {
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
	session.Outcome
	Invocation string           `json:"invocation,omitempty"` // the invocation started or ended, "a-3"
	Handoff    string           `json:"handoff,omitempty"`    // the handoff made or taken, "h-1"
	Workflow   session.Workflow `json:"orchestrator_workflow"`
}

// AgentStartOptions are the inputs of AgentStart (the start_agent MCP tool).
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
	agent, err := s.AgentType("agent", "agent", o.Agent)
	if err != nil {
		return WorkflowOutcome{}, err
	}
	if err := checkOptional(maxWorkflowText, "prompt", o.Prompt); err != nil {
		return WorkflowOutcome{}, err
	}
	if err := session.CheckFields(append([]string{"project", o.Project}, session.Pairs("artifact", o.Artifacts)...)...); err != nil {
		return WorkflowOutcome{}, err
	}
	if o.Phase != "" {
		if err := checkPhase("--phase", o.Phase); err != nil {
			return WorkflowOutcome{}, err
		}
	}
	var inv, handoff string
	out, err := s.OnActive(o.Project, func(tx *vault.Tx, d *session.Doc, st session.State, now time.Time) (vault.Change, string, error) {
		if cur, ok := d.CurrentInvocation(); ok {
			c := cur.Entry
			return vault.Change{}, "", errs.New(errs.AgentAlreadyActive, "agent %s is in progress (%s, since %s) in session %s; end it with `sessionvault agent end`, or hand the work over with `sessionvault agent handoff --to %s --reason '%s takes over'`",
				c.Agent, c.ID, note.FormatTime(c.StartedAt), st.Session, agent, agent).With("invocation", c.ID).With("agent", c.Agent)
		}
		phase := d.Prop(session.PropWorkflowPhase)
		switch {
		case o.Phase != "":
			if err := phaseMove(phase, o.Phase, false); err != nil {
				return vault.Change{}, "", err
			}
			phase = o.Phase
		case phase == "":
			phase = session.WorkflowPlanning
		}
		a := session.AgentInvocation{ID: d.NextInvocationID() + s.IdSuffix(), Agent: agent, StartedAt: now, Status: session.InvocationInProgress,
			Input: session.AgentInput{Prompt: o.Prompt, Artifacts: o.Artifacts}}
		summary := agent + " " + a.ID
		if h, ok := d.PendingHandoffTo(agent); ok {
			a.HandoffFrom = h.Entry.FromAgent
			if a.Input.Prompt == "" {
				a.Input.Prompt = session.FirstNonEmpty(h.Entry.Context, h.Entry.Reason)
			}
			if len(a.Input.Artifacts) == 0 {
				a.Input.Artifacts = h.Entry.Artifacts
			}
			h.Entry.Status = session.HandoffAccepted
			d.ReplaceLine(h.Off, session.FormatHandoff(h.Entry))
			handoff = h.Entry.ID
			summary += ", handed off by " + h.Entry.FromAgent + " (" + h.Entry.ID + ")"
		}
		d.AppendLine(session.SecInvocations, session.FormatInvocation(a))
		d.Set(session.PropActiveAgent, agent)
		d.Set(session.PropWorkflowPhase, phase)
		d.Set(session.PropLastAgentChange, now)
		inv = a.ID
		return vault.Change{Operation: "agent-start", Summary: summary}, a.ID, nil
	})
	return s.workflowOutcome(o.Project, out, err, inv, handoff)
}

// AgentEndOptions are the inputs of AgentEnd (the end_agent MCP tool).
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
		o.Status = session.InvocationCompleted
	}
	switch o.Status {
	case session.InvocationCompleted, session.InvocationFailed, session.InvocationBlocked:
	default:
		return WorkflowOutcome{}, errs.New(errs.UpdateValidationFailed, "--status %q is not one of completed, failed, blocked", o.Status).With("flag", "status")
	}
	if err := checkOptional(maxWorkflowText, "summary", o.Summary); err != nil {
		return WorkflowOutcome{}, err
	}
	kv := append([]string{"project", o.Project}, session.Pairs("artifact", o.Artifacts)...)
	kv = append(append(kv, session.Pairs("recommendation", o.Recommendations)...), session.Pairs("blocker", o.Blockers)...)
	if err := session.CheckFields(kv...); err != nil {
		return WorkflowOutcome{}, err
	}
	var inv string
	out, err := s.OnActive(o.Project, func(tx *vault.Tx, d *session.Doc, st session.State, now time.Time) (vault.Change, string, error) {
		cur, ok := d.CurrentInvocation()
		if !ok {
			return vault.Change{}, "", noActiveAgent(st)
		}
		a := cur.Entry
		a.CompletedAt, a.Status = &now, o.Status
		a.Output = mergeOutput(a.Output, o.Summary, o.Artifacts, o.Recommendations, o.Blockers)
		d.ReplaceLine(cur.Off, session.FormatInvocation(a))
		d.Set(session.PropActiveAgent, "")
		d.Set(session.PropLastAgentChange, now)
		inv = a.ID
		return vault.Change{Operation: "agent-end", Summary: a.Agent + " " + a.ID + " " + o.Status}, a.ID, nil
	})
	return s.workflowOutcome(o.Project, out, err, inv, "")
}

// mergeOutput is an invocation's output with what its end gives: given
// fields replace, the others stay as the line had them.
func mergeOutput(o *session.AgentOutput, summary string, artifacts, recs, blockers []string) *session.AgentOutput {
	if o == nil {
		o = &session.AgentOutput{}
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

func noActiveAgent(st session.State) error {
	return errs.New(errs.NoActiveAgent, "no agent invocation is in progress in session %s; start one with `sessionvault agent start AGENT`", st.Session).With("session", st.Session)
}

// HandoffOptions are the inputs of AgentHandoff (the handoff_agent MCP tool).
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
	to, err := s.AgentType("--to", "to", o.To)
	if err != nil {
		return WorkflowOutcome{}, err
	}
	if err := session.CheckText("reason", o.Reason, maxWorkflowText); err != nil {
		return WorkflowOutcome{}, err
	}
	if err := checkOptional(maxWorkflowText, "context", o.Context); err != nil {
		return WorkflowOutcome{}, err
	}
	if err := session.CheckFields(append([]string{"project", o.Project}, session.Pairs("artifact", o.Artifacts)...)...); err != nil {
		return WorkflowOutcome{}, err
	}
	var inv, handoff string
	out, err := s.OnActive(o.Project, func(tx *vault.Tx, d *session.Doc, st session.State, now time.Time) (vault.Change, string, error) {
		cur, ok := d.CurrentInvocation()
		if !ok {
			return vault.Change{}, "", noActiveAgent(st)
		}
		a := cur.Entry
		if a.Agent == to {
			return vault.Change{}, "", errs.New(errs.UpdateValidationFailed, "--to %s is the agent handing off (%s); hand off to another agent, or end the invocation with `sessionvault agent end`", to, a.ID).With("flag", "to")
		}
		a.CompletedAt, a.Status = &now, session.InvocationCompleted
		a.HandoffTo, a.HandoffReason = to, o.Reason
		if a.Output == nil {
			a.Output = &session.AgentOutput{}
		}
		d.ReplaceLine(cur.Off, session.FormatInvocation(a))
		h := session.Handoff{ID: d.NextEntryID(session.SecHandoffs, 'h') + s.IdSuffix(), FromAgent: a.Agent, ToAgent: to, Reason: o.Reason, Context: o.Context,
			Artifacts: o.Artifacts, CreatedAt: now, Status: session.HandoffPending}
		next := ""
		if !o.Pending {
			h.Status = session.HandoffAccepted
			n := session.AgentInvocation{ID: d.NextInvocationID() + s.IdSuffix(), Agent: to, StartedAt: now, Status: session.InvocationInProgress,
				Input: session.AgentInput{Prompt: session.FirstNonEmpty(o.Context, o.Reason), Artifacts: o.Artifacts}, HandoffFrom: a.Agent}
			d.AppendLine(session.SecInvocations, session.FormatInvocation(n))
			next = to
			inv = n.ID
		}
		d.AppendLine(session.SecHandoffs, session.FormatHandoff(h))
		if d.Prop(session.PropWorkflowPhase) == "" {
			d.Set(session.PropWorkflowPhase, session.WorkflowPlanning)
		}
		d.Set(session.PropActiveAgent, next)
		d.Set(session.PropLastAgentChange, now)
		handoff = h.ID
		return vault.Change{Operation: "agent-handoff", Summary: a.Agent + " → " + to + ": " + session.OneLine(o.Reason)}, h.ID, nil
	})
	return s.workflowOutcome(o.Project, out, err, inv, handoff)
}

// VerdictOptions are the inputs of RecordVerdict (the record_verdict MCP
// tool).
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
	agent, err := s.AgentType("agent", "agent", o.Agent)
	if err != nil {
		return WorkflowOutcome{}, err
	}
	if !slices.Contains(session.VerdictDecisions(), o.Decision) {
		return WorkflowOutcome{}, errs.New(errs.InvalidVerdict, "the decision %q is not one of %s", o.Decision, strings.Join(session.VerdictDecisions(), ", ")).With("flag", "decision")
	}
	if o.Confidence == nil {
		return WorkflowOutcome{}, errs.New(errs.InvalidVerdict, "--confidence is missing; give a number from 0 to 1, e.g. --confidence 0.8").With("flag", "confidence")
	}
	if c := *o.Confidence; math.IsNaN(c) || c < 0 || c > 1 {
		return WorkflowOutcome{}, errs.New(errs.InvalidVerdict, "--confidence %s is out of range; give a number from 0 to 1, e.g. --confidence 0.8", strconv.FormatFloat(c, 'g', -1, 64)).With("flag", "confidence")
	}
	if err := session.CheckText("reasoning", o.Reasoning, maxWorkflowText); err != nil {
		return WorkflowOutcome{}, err
	}
	if err := session.CheckFields(append(append([]string{"project", o.Project}, session.Pairs("condition", o.Conditions)...), session.Pairs("blocker", o.Blockers)...)...); err != nil {
		return WorkflowOutcome{}, err
	}
	// The confidence as written in the note (and read back).
	conf, _ := strconv.ParseFloat(strconv.FormatFloat(*o.Confidence, 'f', -1, 64), 64)
	out, err := s.OnActive(o.Project, func(tx *vault.Tx, d *session.Doc, st session.State, now time.Time) (vault.Change, string, error) {
		v := session.Verdict{ID: d.NextEntryID(session.SecVerdicts, 'v') + s.IdSuffix(), Agent: agent, Decision: o.Decision, Confidence: conf,
			Reasoning: o.Reasoning, Conditions: o.Conditions, Blockers: o.Blockers, Timestamp: now}
		d.AppendLine(session.SecVerdicts, session.FormatVerdict(v))
		return vault.Change{Operation: "verdict", Summary: fmt.Sprintf("%s %s (%s)", agent, o.Decision, strconv.FormatFloat(conf, 'f', -1, 64))}, v.ID, nil
	})
	return s.workflowOutcome(o.Project, out, err, "", "")
}

// SetWorkflowPhase moves the active session's workflow to phase: forward
// only, unless force (errs.InvalidWorkflowPhase names --force). The phase it
// already has changes nothing and makes no commit.
func (s *Service) SetWorkflowPhase(project, phase string, force bool) (WorkflowOutcome, error) {
	if err := session.CheckFields("project", project, "phase", phase); err != nil {
		return WorkflowOutcome{}, err
	}
	if err := checkPhase("phase", phase); err != nil {
		return WorkflowOutcome{}, err
	}
	project, err := s.Project(project)
	if err != nil {
		return WorkflowOutcome{}, err
	}
	var out session.Outcome
	out.Result, err = s.Transact(&out, func(tx *vault.Tx) (vault.Change, error) {
		d, st, err := s.ActiveDoc(tx, project, false)
		if err != nil {
			return vault.Change{}, err
		}
		cur := d.Prop(session.PropWorkflowPhase)
		out.ID = phase
		out.State.Session = st.Session
		if cur == phase {
			return vault.Change{Operation: "workflow-phase"}, nil
		}
		if err := phaseMove(cur, phase, force); err != nil {
			return vault.Change{}, err
		}
		now := s.NowUTC()
		d.Set(session.PropWorkflowPhase, phase)
		session.BumpVersion(d, st, now)
		b, err := d.Bytes()
		if err != nil {
			return vault.Change{}, err
		}
		return vault.Change{Operation: "workflow-phase", Session: st.Session, Summary: session.FirstNonEmpty(cur, "none") + " → " + phase}, tx.Write(d.Path, b)
	})
	return s.workflowOutcome(project, out, err, "", "")
}

// workflowOutcome completes the outcome of a workflow operation with the
// state and workflow after it. On a repeat (op id) the invocation is the one
// in progress now.
func (s *Service) workflowOutcome(project string, out session.Outcome, err error, inv, handoff string) (WorkflowOutcome, error) {
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
func (s *Service) Invocation(project, id string) (session.AgentInvocation, error) {
	st, err := s.Status(project)
	if err != nil {
		return session.AgentInvocation{}, err
	}
	for _, a := range st.Workflow.AgentHistory {
		if a.ID == id {
			return a, nil
		}
	}
	return session.AgentInvocation{}, errs.New(errs.InvocationNotFound, "session %s has no agent invocation %s (see `sessionvault agent list`)", session.FirstNonEmpty(st.Session, "(none)"), id).With("invocation", id)
}
