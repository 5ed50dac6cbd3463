package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/sessionvault/sessionvault/internal/workflow"

	"github.com/spf13/cobra"

	"github.com/sessionvault/sessionvault/internal/note"
	"github.com/sessionvault/sessionvault/internal/session"
)

// agentCommand is `agent`: the orchestrator workflow — which agent
// works now, its invocations and handoffs — in the current-state note.
func (a *app) agentCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "agent",
		Short: "The orchestrator workflow: start, end and hand off agent invocations",
		Long: `Records which agent (orchestrator, analyst, architect, planner, implementer,
critic, qa, security, devops, ... and the vault's agent_types) works on the
active session: each invocation is one line (^a-N) of the Agent invocations
section of the current-state note, each handoff one line (^h-N) of Handoffs.
One agent is active at a time: start refuses while another is in progress
(end it, or hand it over). Every change is one commit.`,
	}
	c.AddCommand(a.agentStartCommand(), a.agentEndCommand(), a.agentHandoffCommand(), a.agentListCommand(), a.agentShowCommand())
	return c
}

func (a *app) agentStartCommand() *cobra.Command {
	var o workflow.AgentStartOptions
	c := &cobra.Command{
		Use:   "start AGENT [--prompt TEXT] [--artifact PATH]... [--phase PHASE]",
		Short: "Start an agent's invocation (it becomes the active agent)",
		Long: `Appends an invocation in progress (^a-N) for AGENT and makes it the active
agent. The workflow phase becomes --phase (forward only), or planning when the
session has none yet. A pending handoff to AGENT is taken: the invocation names
its sender (handoff_from) and gets its context and artifacts unless --prompt and
--artifact are given. Refused (E1682) while another agent is in progress: end
it with 'agent end' or hand it over with 'agent handoff'.`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			svc, err := a.service()
			if err != nil {
				return err
			}
			o.Project, o.Agent = a.project, argv[0]
			out, err := workflow.New(svc).AgentStart(o)
			if err != nil {
				return err
			}
			text := fmt.Sprintf("agent %s started %s (phase %s)", out.Workflow.ActiveAgent, out.Invocation, out.Workflow.WorkflowPhase)
			if out.Handoff != "" {
				text += fmt.Sprintf("; took handoff %s", out.Handoff)
			}
			return a.emit(out, text)
		},
	}
	f := c.Flags()
	f.StringVar(&o.Prompt, "prompt", "", "summary of the agent's input")
	f.StringArrayVar(&o.Artifacts, "artifact", nil, "an artifact the agent is given (repeatable)")
	f.StringVar(&o.Phase, "phase", "", "move the workflow to this phase: planning, implementation, validation or complete (forward only)")
	return c
}

func (a *app) agentEndCommand() *cobra.Command {
	var o workflow.AgentEndOptions
	c := &cobra.Command{
		Use:   "end [--status completed|failed|blocked] [--summary TEXT] [--artifact PATH]... [--recommendation TEXT]... [--blocker TEXT]...",
		Short: "End the invocation in progress with its output",
		Long: `Completes the invocation in progress: its end time, status and output (summary,
artifacts, recommendations, blockers) are written into its line, and no agent is
active any more. Without one in progress: E1681.`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			svc, err := a.service()
			if err != nil {
				return err
			}
			o.Project = a.project
			out, err := workflow.New(svc).AgentEnd(o)
			if err != nil {
				return err
			}
			return a.emit(out, fmt.Sprintf("ended %s (%s)", out.Invocation, o.Status))
		},
	}
	f := c.Flags()
	f.StringVar(&o.Status, "status", "completed", "completed, failed or blocked")
	f.StringVar(&o.Summary, "summary", "", "what the agent did")
	f.StringArrayVar(&o.Artifacts, "artifact", nil, "an artifact it produced (repeatable)")
	f.StringArrayVar(&o.Recommendations, "recommendation", nil, "a recommendation (repeatable)")
	f.StringArrayVar(&o.Blockers, "blocker", nil, "what blocks it (repeatable)")
	return c
}

func (a *app) agentHandoffCommand() *cobra.Command {
	var o workflow.HandoffOptions
	c := &cobra.Command{
		Use:   "handoff --to AGENT --reason TEXT [--context TEXT] [--artifact PATH]... [--pending]",
		Short: "Hand the work of the agent in progress to another agent",
		Long: `One commit: the invocation in progress is completed with handoff_to and the
reason, a handoff (^h-N) is recorded, and the target agent's invocation starts in
progress with handoff_from, the context as its prompt and the artifacts as its
input. With --pending the target does not start yet: the handoff stays pending
(status shows it) until 'agent start AGENT' takes it.`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			if err := requireFlags(c, "to", "reason"); err != nil {
				return err
			}
			svc, err := a.service()
			if err != nil {
				return err
			}
			o.Project = a.project
			out, err := workflow.New(svc).AgentHandoff(o)
			if err != nil {
				return err
			}
			text := fmt.Sprintf("handoff %s to %s", out.Handoff, strings.ToLower(o.To))
			if out.Invocation != "" {
				text += fmt.Sprintf("; agent %s started %s", out.Workflow.ActiveAgent, out.Invocation)
			} else {
				text += " (pending)"
			}
			return a.emit(out, text)
		},
	}
	f := c.Flags()
	f.StringVar(&o.To, "to", "", "the agent taking over (required)")
	f.StringVar(&o.Reason, "reason", "", "why (required)")
	f.StringVar(&o.Context, "context", "", "what the next agent needs to know")
	f.StringArrayVar(&o.Artifacts, "artifact", nil, "an artifact handed over (repeatable)")
	f.BoolVar(&o.Pending, "pending", false, "leave the handoff pending: the target's 'agent start' takes it")
	return c
}

func (a *app) agentListCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "The session's agent invocations, pending handoffs and verdicts (read-only)",
		Args:  args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			svc, err := a.service()
			if err != nil {
				return err
			}
			st, err := svc.Status(a.project)
			if err != nil {
				return err
			}
			return a.emit(st.Workflow, strings.Join(workflowLines(st.Workflow, -1), "\n"))
		},
	}
}

func (a *app) agentShowCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "show INVOCATION",
		Short: "One agent invocation of the session, e.g. a-3 (read-only)",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			svc, err := a.service()
			if err != nil {
				return err
			}
			inv, err := workflow.New(svc).Invocation(a.project, argv[0])
			if err != nil {
				return err
			}
			return a.emit(inv, formatInvocationText(inv))
		},
	}
}

func (a *app) verdictCommand() *cobra.Command {
	var o workflow.VerdictOptions
	var confidence float64
	c := &cobra.Command{
		Use:   "verdict AGENT approve|reject|conditional|needs_revision --confidence 0-1 --reasoning TEXT [--condition TEXT]... [--blocker TEXT]...",
		Short: "Record an agent's verdict, never compacted",
		Long: `Appends a verdict (^v-N) to the Verdicts section of the current-state note:
the agent, its decision, its confidence (0 to 1), its reasoning, and any
conditions and blockers. A decision or confidence out of range is E1684 and
changes nothing.`,
		Args: args(cobra.ExactArgs(2)),
		RunE: func(c *cobra.Command, argv []string) error {
			if err := requireFlags(c, "confidence", "reasoning"); err != nil {
				return err
			}
			svc, err := a.service()
			if err != nil {
				return err
			}
			o.Project, o.Agent, o.Decision = a.project, argv[0], argv[1]
			if c.Flags().Changed("confidence") {
				o.Confidence = &confidence
			}
			out, err := workflow.New(svc).RecordVerdict(o)
			if err != nil {
				return err
			}
			return a.emit(out, "verdict "+out.ID)
		},
	}
	f := c.Flags()
	f.Float64Var(&confidence, "confidence", 0, "how sure, from 0 to 1 (required)")
	f.StringVar(&o.Reasoning, "reasoning", "", "why (required)")
	f.StringArrayVar(&o.Conditions, "condition", nil, "a condition of the verdict (repeatable)")
	f.StringArrayVar(&o.Blockers, "blocker", nil, "what blocks approval (repeatable)")
	return c
}

func (a *app) workflowCommand() *cobra.Command {
	c := &cobra.Command{Use: "workflow phase PHASE", Short: "The orchestrator workflow's phase"}
	var force bool
	p := &cobra.Command{
		Use:   "phase planning|implementation|validation|complete [--force]",
		Short: "Move the workflow phase forward (back only with --force)",
		Long: `Sets the active session's workflow_phase. Phases move forward: planning,
implementation, validation, complete; going back (validation to implementation
after a rejecting verdict, say) needs --force. The phase the session already has
changes nothing.`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			svc, err := a.service()
			if err != nil {
				return err
			}
			out, err := workflow.New(svc).SetWorkflowPhase(a.project, argv[0], force)
			if err != nil {
				return err
			}
			return a.emit(out, "workflow phase "+out.Workflow.WorkflowPhase)
		},
	}
	p.Flags().BoolVar(&force, "force", false, "allow moving back to an earlier phase")
	c.AddCommand(p)
	return c
}

// workflowLines renders the workflow for status and agent list: the phase
// and active agent, the invocations (the last n; all when n < 0), pending
// handoffs and the verdicts (the last n). Nothing when the session has no
// workflow.
func workflowLines(w session.Workflow, n int) []string {
	if w.Empty() {
		return []string{"workflow: no agent has started"}
	}
	last := func(k int) int {
		if n < 0 || k <= n {
			return 0
		}
		return k - n
	}
	active := "none"
	if w.ActiveAgent != "" {
		active = w.ActiveAgent
		if c := w.Current(); c != nil {
			active += " (" + c.ID + " since " + note.FormatTime(c.StartedAt) + ")"
		}
	}
	out := []string{fmt.Sprintf("workflow: phase %s, active agent %s", orDash(w.WorkflowPhase), active)}
	if k := len(w.AgentHistory); k > 0 {
		out = append(out, fmt.Sprintf("agent invocations (%d of %d):", k-last(k), k))
		for _, inv := range w.AgentHistory[last(k):] {
			out = append(out, "  "+formatInvocationText(inv))
		}
	}
	if len(w.PendingHandoffs) > 0 {
		out = append(out, "pending handoffs:")
		for _, h := range w.PendingHandoffs {
			out = append(out, fmt.Sprintf("  %s %s → %s: %s", h.ID, h.FromAgent, h.ToAgent, h.Reason))
		}
	}
	if k := len(w.Verdicts); k > 0 {
		out = append(out, fmt.Sprintf("verdicts (%d of %d):", k-last(k), k))
		for _, v := range w.Verdicts[last(k):] {
			out = append(out, "  "+formatVerdictText(v))
		}
	}
	return out
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func formatInvocationText(inv session.AgentInvocation) string {
	s := fmt.Sprintf("%s %s %s %s", inv.ID, note.FormatTime(inv.StartedAt), inv.Agent, inv.Status)
	if inv.CompletedAt != nil {
		s += " until " + note.FormatTime(*inv.CompletedAt)
	}
	if inv.HandoffFrom != "" {
		s += " from " + inv.HandoffFrom
	}
	if inv.Input.Prompt != "" {
		s += " | in: " + inv.Input.Prompt
	}
	if len(inv.Input.Artifacts) > 0 {
		s += " | in artifacts: " + strings.Join(inv.Input.Artifacts, ", ")
	}
	if o := inv.Output; o != nil {
		if o.Summary != "" {
			s += " | out: " + o.Summary
		}
		if len(o.Artifacts) > 0 {
			s += " | artifacts: " + strings.Join(o.Artifacts, ", ")
		}
		if len(o.Recommendations) > 0 {
			s += " | recommendations: " + strings.Join(o.Recommendations, "; ")
		}
		if len(o.Blockers) > 0 {
			s += " | blockers: " + strings.Join(o.Blockers, "; ")
		}
	}
	if inv.HandoffTo != "" {
		s += " | to " + inv.HandoffTo + ": " + inv.HandoffReason
	}
	return s
}

func formatVerdictText(v session.Verdict) string {
	s := fmt.Sprintf("%s %s %s %s: %s", v.ID, v.Agent, v.Decision, strconv.FormatFloat(v.Confidence, 'f', -1, 64), v.Reasoning)
	if len(v.Conditions) > 0 {
		s += " | conditions: " + strings.Join(v.Conditions, "; ")
	}
	if len(v.Blockers) > 0 {
		s += " | blockers: " + strings.Join(v.Blockers, "; ")
	}
	return s
}
