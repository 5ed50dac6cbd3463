package mcpserver

import (
	"context"

	"github.com/sessionvault/sessionvault/internal/workflow"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sessionvault/sessionvault/internal/session"
)

// The orchestrator workflow as tools (the workflow toolset): which agent
// works on the active session, its invocations and handoffs, verdicts and
// the workflow phase. Arguments mirror the CLI flags of `agent start|end|handoff`,
// `verdict` and `workflow phase`, in snake_case.
type (
	StartAgentIn struct {
		Agent     string   `json:"agent" jsonschema:"agent type, e.g. orchestrator, analyst, planner, implementer, critic, qa"`
		Prompt    string   `json:"prompt,omitempty" jsonschema:"summary of the agent's input"`
		Artifacts []string `json:"artifacts,omitempty" jsonschema:"artifacts the agent is given"`
		Phase     string   `json:"phase,omitempty" jsonschema:"move the workflow forward to this phase"`
		OpID      string   `json:"op_id,omitempty" jsonschema:"retry key: a call repeated with it returns the first result"`
	}
	EndAgentIn struct {
		Status          string   `json:"status,omitempty" jsonschema:"completed (default), failed or blocked"`
		Summary         string   `json:"summary,omitempty" jsonschema:"what the agent did"`
		Artifacts       []string `json:"artifacts,omitempty" jsonschema:"artifacts it produced"`
		Recommendations []string `json:"recommendations,omitempty" jsonschema:"its recommendations"`
		Blockers        []string `json:"blockers,omitempty" jsonschema:"what blocks it"`
		OpID            string   `json:"op_id,omitempty" jsonschema:"retry key: a call repeated with it returns the first result"`
	}
	HandoffAgentIn struct {
		To        string   `json:"to" jsonschema:"the agent type taking over"`
		Reason    string   `json:"reason" jsonschema:"why the work is handed over"`
		Context   string   `json:"context,omitempty" jsonschema:"what the next agent needs to know"`
		Artifacts []string `json:"artifacts,omitempty" jsonschema:"artifacts handed over"`
		Pending   bool     `json:"pending,omitempty" jsonschema:"the target starts only when start_agent names it"`
		OpID      string   `json:"op_id,omitempty" jsonschema:"retry key: a call repeated with it returns the first result"`
	}
	VerdictIn struct {
		Agent      string   `json:"agent" jsonschema:"the agent type giving the verdict"`
		Decision   string   `json:"decision" jsonschema:"approve, reject, conditional or needs_revision"`
		Confidence float64  `json:"confidence" jsonschema:"how sure, from 0 to 1"`
		Reasoning  string   `json:"reasoning" jsonschema:"why"`
		Conditions []string `json:"conditions,omitempty" jsonschema:"conditions of the verdict"`
		Blockers   []string `json:"blockers,omitempty" jsonschema:"what blocks approval"`
		OpID       string   `json:"op_id,omitempty" jsonschema:"retry key: a call repeated with it returns the first result"`
	}
	WorkflowPhaseIn struct {
		Phase string `json:"phase" jsonschema:"planning, implementation, validation or complete"`
		Force bool   `json:"force,omitempty" jsonschema:"allow moving back to an earlier phase"`
		OpID  string `json:"op_id,omitempty" jsonschema:"retry key: a call repeated with it returns the first result"`
	}
	// WorkflowOut is what a workflow tool returns: the commit, the
	// invocation and handoff it made or touched, and the workflow after it.
	WorkflowOut struct {
		Result
		// Invocation is the invocation started or ended, e.g. a-3.
		Invocation string `json:"invocation,omitempty"`
		// Handoff is the handoff made or taken, e.g. h-1.
		Handoff string `json:"handoff,omitempty"`
		// ActiveAgent is the agent whose invocation is in progress, empty
		// for none.
		ActiveAgent string `json:"active_agent"`
		// WorkflowPhase is planning, implementation, validation or complete.
		WorkflowPhase string `json:"workflow_phase"`
		// Workflow is the workflow after the call.
		Workflow session.Workflow `json:"orchestrator_workflow"`
	}
)

func workflowOut(o workflow.WorkflowOutcome) WorkflowOut {
	return WorkflowOut{Result: result(o.Outcome), Invocation: o.Invocation, Handoff: o.Handoff,
		ActiveAgent: o.Workflow.ActiveAgent, WorkflowPhase: o.Workflow.WorkflowPhase, Workflow: o.Workflow}
}

// workflowTools are the workflow toolset: start_agent, end_agent,
// handoff_agent, record_verdict and set_workflow_phase.
func (s *Server) workflowTools() []toolDef {
	return []toolDef{
		tool(WorkflowToolset, &mcp.Tool{Name: "start_agent", Description: "Start an agent's invocation: it becomes the active agent, and takes a pending handoff to it. Refused while another agent is in progress."},
			func(ctx context.Context, _ *mcp.CallToolRequest, in StartAgentIn) (*mcp.CallToolResult, WorkflowOut, error) {
				o, err := workflow.New(s.svc.WithOp(in.OpID)).AgentStart(workflow.AgentStartOptions{Project: s.project, Agent: in.Agent, Prompt: in.Prompt, Artifacts: in.Artifacts, Phase: in.Phase})
				if err != nil {
					return nil, WorkflowOut{}, s.toolErr(err)
				}
				return nil, workflowOut(o), nil
			}),
		tool(WorkflowToolset, &mcp.Tool{Name: "end_agent", Description: "End the agent invocation in progress, with its status and output."},
			func(ctx context.Context, _ *mcp.CallToolRequest, in EndAgentIn) (*mcp.CallToolResult, WorkflowOut, error) {
				o, err := workflow.New(s.svc.WithOp(in.OpID)).AgentEnd(workflow.AgentEndOptions{Project: s.project, Status: in.Status, Summary: in.Summary, Artifacts: in.Artifacts, Recommendations: in.Recommendations, Blockers: in.Blockers})
				if err != nil {
					return nil, WorkflowOut{}, s.toolErr(err)
				}
				return nil, workflowOut(o), nil
			}),
		tool(WorkflowToolset, &mcp.Tool{Name: "handoff_agent", Description: "Hand the work of the agent in progress to another: its invocation ends, the target's starts (unless pending)."},
			func(ctx context.Context, _ *mcp.CallToolRequest, in HandoffAgentIn) (*mcp.CallToolResult, WorkflowOut, error) {
				o, err := workflow.New(s.svc.WithOp(in.OpID)).AgentHandoff(workflow.HandoffOptions{Project: s.project, To: in.To, Reason: in.Reason, Context: in.Context, Artifacts: in.Artifacts, Pending: in.Pending})
				if err != nil {
					return nil, WorkflowOut{}, s.toolErr(err)
				}
				return nil, workflowOut(o), nil
			}),
		tool(WorkflowToolset, &mcp.Tool{Name: "record_verdict", Description: "Record an agent's verdict on the work."},
			func(ctx context.Context, _ *mcp.CallToolRequest, in VerdictIn) (*mcp.CallToolResult, WorkflowOut, error) {
				conf := in.Confidence
				o, err := workflow.New(s.svc.WithOp(in.OpID)).RecordVerdict(workflow.VerdictOptions{Project: s.project, Agent: in.Agent, Decision: in.Decision, Confidence: &conf, Reasoning: in.Reasoning, Conditions: in.Conditions, Blockers: in.Blockers})
				if err != nil {
					return nil, WorkflowOut{}, s.toolErr(err)
				}
				return nil, workflowOut(o), nil
			}),
		tool(WorkflowToolset, &mcp.Tool{Name: "set_workflow_phase", Description: "Set the workflow phase (forward only unless force)."},
			func(ctx context.Context, _ *mcp.CallToolRequest, in WorkflowPhaseIn) (*mcp.CallToolResult, WorkflowOut, error) {
				o, err := workflow.New(s.svc.WithOp(in.OpID)).SetWorkflowPhase(s.project, in.Phase, in.Force)
				if err != nil {
					return nil, WorkflowOut{}, s.toolErr(err)
				}
				return nil, workflowOut(o), nil
			}),
	}
}
