// Package mcpserver is sessionvault's MCP server (official go-sdk): the
// session operations as tools, grouped in toolsets (the session toolset
// always, the others on request), and the canonical notes as resources. A
// tool call runs the same session.Service method as its CLI verb — same
// validation, same notes, one commit per change. Errors come back as tool
// errors (isError) carrying the stable code, and the server keeps serving.
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sessionvault/sessionvault/internal/recovery"

	"github.com/sessionvault/sessionvault/internal/tasks"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/note"
	"github.com/sessionvault/sessionvault/internal/protocol"
	"github.com/sessionvault/sessionvault/internal/session"
)

// Options are what the server takes from the rest of sessionvault, wired by
// the command that runs it (internal/cli): the project and version, and the
// two answers the Claude Code integration gives.
type Options struct {
	// Project is the vault's project the tools work on ("" = the default).
	Project string
	// Version is the server version reported to clients.
	Version string
	// ResumePrompt renders the resume prompt of st, at most limit bytes
	// (get_unified_context).
	ResumePrompt func(st session.State, proto *protocol.Protocol, limit int) string
	// Decide is the PreToolUse decision on a call of tool with input
	// (get_blocked_reason): whether it is allowed, and if not, why.
	Decide func(tool string, input json.RawMessage) (allowed bool, reason string)
	// Toolsets are the toolsets served besides the session toolset, which is
	// always served (names from ToolsetNames; "all" serves every one).
	Toolsets []string
}

// Server wires the tools to one vault's session service.
type Server struct {
	svc     *session.Service
	project string
	opts    Options
	// served are the names of the tools this server serves: a remedy names
	// a tool call only for them.
	served map[string]bool
	// taskCache keeps the tasks read from the task notes between tool calls
	// (tasks.TaskCache): a call reads again only the notes changed since.
	taskCache *tasks.TaskCache
}

// New returns the MCP server for svc's vault, wired as opts says. An
// unknown toolset in opts.Toolsets is an error (CheckToolsets).
func New(svc *session.Service, opts Options) (*mcp.Server, error) {
	names, err := CheckToolsets(opts.Toolsets)
	if err != nil {
		return nil, fmt.Errorf("toolsets: %w", err)
	}
	s := &Server{svc: svc, project: opts.Project, opts: opts, served: map[string]bool{}, taskCache: tasks.NewTaskCache()}
	srv := mcp.NewServer(&mcp.Implementation{Name: "sessionvault", Version: opts.Version}, nil)
	on := serving(names)
	for _, d := range s.tools() {
		if on[d.set] {
			d.add(srv)
			s.served[d.name] = true
		}
	}
	s.addResources(srv)
	srv.AddReceivingMiddleware(codeSchemaErrors)
	return srv, nil
}

// tasks returns the task service over the server's session service, reading
// the tasks through the server's task cache.
func (s *Server) tasks() *tasks.Service { return tasks.New(s.svc).WithCache(s.taskCache) }

// serves reports whether this server serves tool.
func (s *Server) serves(tool string) bool { return s.served[tool] }

// codeSchemaErrors gives the SDK's own argument-validation errors (a tool
// called with `progress: "abc"`) the stable code our handlers' errors carry.
func codeSchemaErrors(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if r, ok := res.(*mcp.CallToolResult); ok && err == nil && r.IsError {
			for _, c := range r.Content {
				if t, ok := c.(*mcp.TextContent); ok && strings.HasPrefix(t.Text, "validating") {
					t.Text = errs.UpdateValidationFailed.ID + " " + errs.UpdateValidationFailed.Name + ": invalid argument: " + t.Text
				}
			}
		}
		return res, err
	}
}

// toolErr renders an error with its stable code, in this server's terms
// (say): "E1602 NO_ACTIVE_SESSION: … start one with `session_start
// {"objective": "..."}`".
func (s *Server) toolErr(err error) error {
	c := errs.CodeOf(err)
	msg := err.Error()
	var e *errs.Error
	if errors.As(err, &e) && e.Details["flag"] == "project" && e.Code == errs.InvalidCommand {
		// The project is the server's, chosen when it was started.
		projects, _ := e.Details["projects"].([]string)
		msg = fmt.Sprintf("this MCP server was started without --project and the vault has %d projects (%s); start it with `%s` (`sessionvault mcp install` writes that)",
			len(projects), strings.Join(projects, ", "), s.svc.Command("", "mcp --project NAME"))
		return fmt.Errorf("%s %s: %s", c.ID, c.Name, msg)
	}
	return fmt.Errorf("%s %s: %s", c.ID, c.Name, s.say(s.project, msg))
}

func readOnly() *mcp.ToolAnnotations { return &mcp.ToolAnnotations{ReadOnlyHint: true} }

// asMap turns a value into its JSON object form (structured output).
func asMap(v any) map[string]any {
	b, _ := json.Marshal(v)
	var m map[string]any
	_ = json.Unmarshal(b, &m) // b is an object json.Marshal just wrote
	return m
}

// Inputs and outputs. Argument names follow the CLI flags. Descriptions are
// short: every client reads them before an agent's first message.
type (
	StartIn struct {
		Objective string `json:"objective" jsonschema:"what the session is for (1-500 characters)"`
		Epic      string `json:"epic,omitempty" jsonschema:"epic or larger goal"`
		Linear    string `json:"linear,omitempty" jsonschema:"Linear issue key, e.g. ENG-123"`
		Branch    string `json:"branch,omitempty" jsonschema:"code branch"`
		Commit    string `json:"commit,omitempty" jsonschema:"starting commit SHA"`
		Continue  string `json:"continue,omitempty" jsonschema:"id of an archived session this one continues"`
		Force     bool   `json:"force,omitempty" jsonschema:"abandon an active session and start anyway"`
		OpID      string `json:"op_id,omitempty" jsonschema:"retry key: a call repeated with it returns the first result"`
	}
	UpdateIn struct {
		Message  string   `json:"message" jsonschema:"the update (1-500 characters)"`
		Progress *int     `json:"progress,omitempty" jsonschema:"session progress, 0-100"`
		Type     string   `json:"type,omitempty" jsonschema:"progress, note, blocker or milestone"`
		Tags     []string `json:"tags,omitempty" jsonschema:"tags"`
		At       string   `json:"at,omitempty" jsonschema:"RFC 3339 or 2026-11-25T09:30 (default now); not before the last update"`
		OpID     string   `json:"op_id,omitempty" jsonschema:"retry key: a call repeated with it returns the first result"`
	}
	DecideIn struct {
		Title        string   `json:"title" jsonschema:"short title, unique in the session"`
		Choice       string   `json:"choice" jsonschema:"what was chosen"`
		Rationale    string   `json:"rationale" jsonschema:"why"`
		Alternatives []string `json:"alternatives,omitempty" jsonschema:"alternatives considered"`
		Impact       string   `json:"impact,omitempty" jsonschema:"low, medium (default) or high"`
		Category     string   `json:"category,omitempty" jsonschema:"e.g. architecture"`
		DecidedBy    string   `json:"decided_by,omitempty" jsonschema:"agent type that decided"`
		ApprovedBy   []string `json:"approved_by,omitempty" jsonschema:"agent types that approved"`
		RejectedBy   []string `json:"rejected_by,omitempty" jsonschema:"agent types that rejected"`
		Cite         []string `json:"cite,omitempty" jsonschema:"code it rests on: PATH, PATH#L10-L20 or a commit; marked stale when it changes"`
		OpID         string   `json:"op_id,omitempty" jsonschema:"retry key: a call repeated with it returns the first result"`
	}
	BlockIn struct {
		Description string `json:"description" jsonschema:"what blocks the work"`
		Severity    string `json:"severity,omitempty" jsonschema:"low, medium (default), high or critical"`
		OpID        string `json:"op_id,omitempty" jsonschema:"retry key: a call repeated with it returns the first result"`
	}
	ResolveIn struct {
		BlockerID  string `json:"blocker_id" jsonschema:"e.g. b-1"`
		Resolution string `json:"resolution,omitempty" jsonschema:"how it was resolved"`
		OpID       string `json:"op_id,omitempty" jsonschema:"retry key: a call repeated with it returns the first result"`
	}
	EndIn struct {
		Summary string   `json:"summary,omitempty" jsonschema:"what the session did"`
		Next    []string `json:"next,omitempty" jsonschema:"next steps"`
		OpID    string   `json:"op_id,omitempty" jsonschema:"retry key: a call repeated with it returns the first result"`
	}
	EmptyIn struct{}
	// OpIn is the input of a mutating tool without arguments.
	OpIn struct {
		OpID string `json:"op_id,omitempty" jsonschema:"retry key: a call repeated with it returns the first result"`
	}
	RecoverIn struct {
		Session string `json:"session,omitempty" jsonschema:"the crashed session (default: the active one)"`
		OpID    string `json:"op_id,omitempty" jsonschema:"retry key: a call repeated with it returns the first result"`
	}
	GateIn struct {
		Phase string `json:"phase" jsonschema:"start or end"`
	}
	EvidenceIn struct {
		Item string `json:"item" jsonschema:"checklist item: c-N (start) or e-N (end)"`
		File string `json:"file,omitempty" jsonschema:"the file read (file evidence)"`
		SHA  string `json:"sha,omitempty" jsonschema:"a commit (commit evidence)"`
		Run  bool   `json:"run,omitempty" jsonschema:"run the item's command (run evidence)"`
		OpID string `json:"op_id,omitempty" jsonschema:"retry key: a call repeated with it returns the first result"`
	}
	BlockedIn struct {
		Tool    string `json:"tool,omitempty" jsonschema:"Claude Code tool name (default Edit)"`
		Command string `json:"command,omitempty" jsonschema:"for Bash: the command line to judge"`
	}
	ModeIn struct {
		Mode string `json:"mode" jsonschema:"analysis, planning or coding"`
		OpID string `json:"op_id,omitempty" jsonschema:"retry key: a call repeated with it returns the first result"`
	}

	// Result is what a mutating tool returns: the id it created or touched,
	// the session, and the commits made.
	Result struct {
		// ID is the id created or touched (session, update, decision,
		// blocker, item, phase or mode).
		ID string `json:"id,omitempty"`
		// Session is the session id.
		Session string `json:"session,omitempty"`
		// Commit is the operation's commit.
		Commit string `json:"commit,omitempty"`
		// PersonCommit is a commit of edits made outside sessionvault, made
		// first.
		PersonCommit string `json:"person_commit,omitempty"`
		// Repeat is true when op_id had already taken effect: nothing was
		// done again, and this is the first result.
		Repeat bool `json:"repeat,omitempty"`
	}
	StateOut struct {
		// State is the session state read from the current-state note.
		State map[string]any `json:"state"`
	}
	RecoveryIn struct {
		MarkRecovered  string `json:"mark_recovered,omitempty" jsonschema:"a session id to mark recovered (a crashed one is resumed)"`
		IncludeHistory bool   `json:"include_history,omitempty" jsonschema:"include the last 10 tool calls"`
	}
	RecoveryOut struct {
		recovery.RecoveryReport
		// Crashed: the active session shows no sign of life for the
		// heartbeat timeout.
		Crashed        bool   `json:"crashed"`
		Session        string `json:"session,omitempty"`
		LastSignOfLife string `json:"last_sign_of_life,omitempty"`
		// Recover says what to do.
		Recover string `json:"recover,omitempty"`
	}
	ContextOut struct {
		// Prompt is the bounded resume prompt (8 KB at most).
		Prompt string         `json:"prompt"`
		State  map[string]any `json:"state"`
		tasks.UnifiedContext
	}
	GateOut struct {
		Phase   string            `json:"phase"`
		Passed  bool              `json:"passed"`
		Missing []session.Missing `json:"missing,omitempty"`
	}
	BlockedOut struct {
		Tool    string `json:"tool"`
		Blocked bool   `json:"blocked"`
		Reason  string `json:"reason,omitempty"`
	}
)

func result(o session.Outcome) Result {
	return Result{ID: o.ID, Session: o.State.Session, Commit: o.Result.Commit, PersonCommit: o.Result.PersonCommit, Repeat: o.Repeat}
}

// tools are every tool the server can serve, each in its toolset.
func (s *Server) tools() []toolDef {
	defs := []toolDef{
		s.sessionStart(),
		s.sessionUpdate(),
		s.recordDecision(),
		s.recordBlocker(),
		s.resolveBlocker(),
		s.sessionEnd(),
		s.sessionStatus(),
		s.heartbeat(),
		s.sessionRecover(),
		s.checkRecovery(),
		s.getUnifiedContext(),
		s.validateGate(),
		s.recordEvidence(),
		s.getBlockedReason(),
		s.advancePhase(),
		s.setMode(),
	}
	defs = append(defs, s.orchestrationTools()...)
	defs = append(defs, s.workflowTools()...)
	return append(defs, s.featureTools()...)
}

// sessionStart is the session_start tool.
func (s *Server) sessionStart() toolDef {
	return tool(SessionToolset, &mcp.Tool{Name: "session_start", Description: "Start a session; returns its id (YYYY-MM-DD-session-NN)."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in StartIn) (*mcp.CallToolResult, Result, error) {
			o, err := s.svc.WithOp(in.OpID).Start(session.StartOptions{Project: s.project, Objective: in.Objective, Epic: in.Epic, Linear: in.Linear, Branch: in.Branch, Commit: in.Commit, Continue: in.Continue, Force: in.Force})
			if err != nil {
				return nil, Result{}, s.toolErr(err)
			}
			r := result(o)
			r.Session = o.ID
			return nil, r, nil
		})
}

// sessionUpdate is the session_update tool.
func (s *Server) sessionUpdate() toolDef {
	return tool(SessionToolset, &mcp.Tool{Name: "session_update", Description: "Record an update (progress, note, blocker or milestone) in the active session."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in UpdateIn) (*mcp.CallToolResult, Result, error) {
			uo := session.UpdateOptions{Project: s.project, Message: in.Message, Progress: in.Progress, Type: in.Type, Tags: in.Tags}
			if in.At != "" {
				t, err := s.svc.ParseTime(in.At)
				if err != nil {
					return nil, Result{}, s.toolErr(errs.New(errs.UpdateValidationFailed, "at: %v", err).With("field", "at"))
				}
				uo.At = &t
			}
			o, err := s.svc.WithOp(in.OpID).Update(uo)
			if err != nil {
				return nil, Result{}, s.toolErr(err)
			}
			return nil, result(o), nil
		})
}

// recordDecision is the record_decision tool.
func (s *Server) recordDecision() toolDef {
	return tool(SessionToolset, &mcp.Tool{Name: "record_decision", Description: "Record a decision of the active session (its own note in decisions/)."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in DecideIn) (*mcp.CallToolResult, Result, error) {
			o, err := s.svc.WithOp(in.OpID).Decide(session.DecideOptions{Project: s.project, Title: in.Title, Choice: in.Choice, Rationale: in.Rationale, Alternatives: in.Alternatives, Impact: in.Impact, Category: in.Category,
				DecidedBy: in.DecidedBy, ApprovedBy: in.ApprovedBy, RejectedBy: in.RejectedBy, Cite: in.Cite})
			if err != nil {
				return nil, Result{}, s.toolErr(err)
			}
			return nil, result(o), nil
		})
}

// recordBlocker is the record_blocker tool.
func (s *Server) recordBlocker() toolDef {
	return tool(SessionToolset, &mcp.Tool{Name: "record_blocker", Description: "Record a blocker; returns its id (b-N)."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in BlockIn) (*mcp.CallToolResult, Result, error) {
			o, err := s.svc.WithOp(in.OpID).Block(s.project, in.Description, in.Severity)
			if err != nil {
				return nil, Result{}, s.toolErr(err)
			}
			return nil, result(o), nil
		})
}

// resolveBlocker is the resolve_blocker tool.
func (s *Server) resolveBlocker() toolDef {
	return tool(SessionToolset, &mcp.Tool{Name: "resolve_blocker", Description: "Mark a blocker of the active session resolved."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in ResolveIn) (*mcp.CallToolResult, Result, error) {
			o, err := s.svc.WithOp(in.OpID).Resolve(s.project, in.BlockerID, in.Resolution)
			if err != nil {
				return nil, Result{}, s.toolErr(err)
			}
			return nil, result(o), nil
		})
}

// sessionEnd is the session_end tool.
func (s *Server) sessionEnd() toolDef {
	return tool(SessionToolset, &mcp.Tool{Name: "session_end", Description: "End the active session: archive it, add it to the history, leave the state idle."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in EndIn) (*mcp.CallToolResult, Result, error) {
			o, err := s.svc.WithOp(in.OpID).End(s.project, in.Summary, in.Next)
			if err != nil {
				return nil, Result{}, s.toolErr(err)
			}
			_, _ = s.tasks().ReleaseSessionClaims(s.project, o.ID) // best effort: a claim not released ends with its lease
			r := result(o)
			r.Session = o.ID
			return nil, r, nil
		})
}

// sessionStatus is the session_status tool.
func (s *Server) sessionStatus() toolDef {
	return tool(SessionToolset, &mcp.Tool{Name: "session_status", Description: "The current session (or idle): objective, progress, checklists, entries.", Annotations: readOnly()},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ EmptyIn) (*mcp.CallToolResult, StateOut, error) {
			if project, err := s.svc.Project(s.project); err == nil {
				_ = s.svc.ObserveStateRead(project, "session_status") // the state handed over: the start checklist's "read the current state"
			}
			st, err := s.svc.Status(s.project)
			if err != nil {
				return nil, StateOut{}, s.toolErr(err)
			}
			return nil, StateOut{State: asMap(st)}, nil
		})
}

// heartbeat is the heartbeat tool.
func (s *Server) heartbeat() toolDef {
	return tool(SessionToolset, &mcp.Tool{Name: "heartbeat", Description: "Record a sign of life of the active session (no commit); renews this machine's task claims on the git remote."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ EmptyIn) (*mcp.CallToolResult, Result, error) {
			st, err := s.svc.Heartbeat(s.project)
			if err != nil {
				return nil, Result{}, s.toolErr(err)
			}
			if _, err := s.tasks().ConfirmClaims(); err != nil {
				return nil, Result{}, s.toolErr(err)
			}
			return nil, Result{Session: st.Session}, nil
		})
}

// sessionRecover is the session_recover tool.
func (s *Server) sessionRecover() toolDef {
	return tool(SessionToolset, &mcp.Tool{Name: "session_recover", Description: "Resume a crashed session (stale heartbeat): active again, with a recovery entry."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in RecoverIn) (*mcp.CallToolResult, Result, error) {
			o, err := s.svc.WithOp(in.OpID).Recover(s.project, in.Session, false)
			if err != nil {
				return nil, Result{}, s.toolErr(err)
			}
			return nil, result(o), nil
		})
}

// checkRecovery is the check_recovery tool.
func (s *Server) checkRecovery() toolDef {
	return tool(SessionToolset, &mcp.Tool{Name: "check_recovery", Description: "Sessions needing recovery (a stale heartbeat, or a context compaction), each with its resume prompt."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in RecoveryIn) (*mcp.CallToolResult, RecoveryOut, error) {
			rep, err := recovery.New(s.svc).CheckRecovery(recovery.RecoveryOptions{Project: s.project, MarkRecovered: in.MarkRecovered, IncludeHistory: in.IncludeHistory})
			if err != nil {
				return nil, RecoveryOut{}, s.toolErr(err)
			}
			st, err := s.svc.Current(s.project)
			if err != nil {
				return nil, RecoveryOut{}, s.toolErr(err)
			}
			out := RecoveryOut{RecoveryReport: rep, Session: st.Session, Crashed: st.Status == session.StatusCrashed}
			for i := range out.Sessions {
				out.Sessions[i].ResumePrompt = s.say(s.project, out.Sessions[i].ResumePrompt)
			}
			if st.LastSign != nil {
				out.LastSignOfLife = note.FormatTime(*st.LastSign)
			}
			if out.Crashed {
				out.Recover = s.say(s.project, "resume it with `sessionvault recover` (a new entry is a sign of life too)")
			}
			return nil, out, nil
		})
}

// getUnifiedContext is the get_unified_context tool.
func (s *Server) getUnifiedContext() toolDef {
	return tool(SessionToolset, &mcp.Tool{Name: "get_unified_context", Description: "What resuming needs: the resume prompt, the state and the project context; with task_id, that task too.", Annotations: readOnly()},
		func(ctx context.Context, _ *mcp.CallToolRequest, in UnifiedIn) (*mcp.CallToolResult, ContextOut, error) {
			project, err := s.svc.Project(s.project)
			if err != nil {
				return nil, ContextOut{}, s.toolErr(err)
			}
			_ = s.svc.ObserveStateRead(project, "get_unified_context") // the state handed over
			st, err := s.svc.Status(project)
			if err != nil {
				return nil, ContextOut{}, s.toolErr(err)
			}
			uc, err := s.tasks().UnifiedContext(tasks.UnifiedOptions{Project: project, TaskID: in.TaskID,
				NoRelationships: in.IncludeRelationships != nil && !*in.IncludeRelationships, IncludeVersionHistory: in.IncludeVersionHistory, MaxVersions: in.MaxVersions})
			if err != nil {
				return nil, ContextOut{}, s.toolErr(err)
			}
			proto, _ := s.svc.Protocol(project)
			return nil, ContextOut{Prompt: s.say(project, s.opts.ResumePrompt(st, proto, 8<<10)), State: asMap(st), UnifiedContext: uc}, nil
		})
}

// validateGate is the validate_gate tool.
func (s *Server) validateGate() toolDef {
	return tool(SessionToolset, &mcp.Tool{Name: "validate_gate", Description: "Which MUST items of the start or end checklist lack evidence, and what to do.", Annotations: readOnly()},
		func(ctx context.Context, _ *mcp.CallToolRequest, in GateIn) (*mcp.CallToolResult, GateOut, error) {
			phase := protocol.Phase(strings.ToLower(in.Phase))
			if phase != protocol.Start && phase != protocol.End {
				return nil, GateOut{}, s.toolErr(errs.New(errs.UpdateValidationFailed, "phase %q: use start or end", in.Phase).With("argument", "phase"))
			}
			project, err := s.svc.Project(s.project)
			if err != nil {
				return nil, GateOut{}, s.toolErr(err)
			}
			st, err := s.svc.Verified(project)
			if err != nil {
				return nil, GateOut{}, s.toolErr(err)
			}
			proto, err := s.svc.Protocol(project)
			if err != nil {
				return nil, GateOut{}, s.toolErr(err)
			}
			missing := s.svc.Gate(st, proto, phase)
			for i := range missing {
				missing[i].Do = s.say(project, missing[i].Do)
			}
			return nil, GateOut{Phase: string(phase), Passed: len(missing) == 0, Missing: missing}, nil
		})
}

// recordEvidence is the record_evidence tool.
func (s *Server) recordEvidence() toolDef {
	return tool(SessionToolset, &mcp.Tool{Name: "record_evidence", Description: "Verify a checklist item's evidence as the protocol says, and tick it."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in EvidenceIn) (*mcp.CallToolResult, Result, error) {
			o, err := s.svc.WithOp(in.OpID).RecordEvidence(session.EvidenceOptions{Project: s.project, Item: in.Item, File: in.File, SHA: in.SHA, Run: in.Run})
			if err != nil {
				return nil, Result{}, s.toolErr(err)
			}
			return nil, result(o), nil
		})
}

// getBlockedReason is the get_blocked_reason tool.
func (s *Server) getBlockedReason() toolDef {
	return tool(SessionToolset, &mcp.Tool{Name: "get_blocked_reason", Description: "Why the PreToolUse hook would block a tool now, and what to do.", Annotations: readOnly()},
		func(ctx context.Context, _ *mcp.CallToolRequest, in BlockedIn) (*mcp.CallToolResult, BlockedOut, error) {
			tool := in.Tool
			if tool == "" {
				tool = "Edit"
			}
			input, _ := json.Marshal(map[string]string{"command": in.Command})
			allowed, reason := s.opts.Decide(tool, input)
			return nil, BlockedOut{Tool: tool, Blocked: !allowed, Reason: s.say(s.project, reason)}, nil
		})
}

// advancePhase is the advance_phase tool.
func (s *Server) advancePhase() toolDef {
	return tool(AdminToolset, &mcp.Tool{Name: "advance_phase", Description: "Move the session through its next gate (INIT → WORKING → COMPLETE); a failed gate logs violations."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in OpIn) (*mcp.CallToolResult, Result, error) {
			o, err := s.svc.WithOp(in.OpID).AdvancePhase(s.project)
			if err != nil {
				return nil, Result{}, s.toolErr(err)
			}
			return nil, result(o), nil
		})
}

// setMode is the set_mode tool.
func (s *Server) setMode() toolDef {
	return tool(AdminToolset, &mcp.Tool{Name: "set_mode", Description: "Set the mode: analysis, planning or coding (disabled is a person's, refused here)."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in ModeIn) (*mcp.CallToolResult, Result, error) {
			mode, err := protocol.ParseMode(in.Mode)
			if err != nil {
				return nil, Result{}, s.toolErr(errs.New(errs.UpdateValidationFailed, "mode: %v", err).With("argument", "mode"))
			}
			if mode == protocol.Disabled {
				return nil, Result{}, s.toolErr(errs.New(errs.UpdateValidationFailed, "mode disabled is a person's escape hatch: a person runs `sessionvault mode set disabled`").With("argument", "mode"))
			}
			o, err := s.svc.WithOp(in.OpID).SetMode(s.project, mode)
			if err != nil {
				return nil, Result{}, s.toolErr(err)
			}
			return nil, result(o), nil
		})
}

// resources are the canonical notes, read as they are.
var resources = []struct {
	uri, name, note, desc string
}{
	{"session://state", "session-current-state", session.CurrentStateNote, "The current session (or idle): the canonical current-state note."},
	{"session://checklist", "session-checklist", session.CurrentStateNote, "The start and end checklists of the current session, as JSON."},
	{"session://history", "session-history", session.HistoryNote, "Completed sessions, newest first."},
	{"session://violations", "session-violations-log", session.ViolationsNote, "Protocol violations, append-only."},
}

func (s *Server) addResources(srv *mcp.Server) {
	for _, r := range resources {
		r := r
		mime := "text/markdown"
		if r.uri == "session://checklist" {
			mime = "application/json"
		}
		srv.AddResource(&mcp.Resource{URI: r.uri, Name: r.name, Description: r.desc, MIMEType: mime},
			func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				project, err := s.svc.Project(s.project)
				if err != nil {
					return nil, s.toolErr(err)
				}
				var text string
				if r.uri == "session://checklist" {
					st, err := s.svc.Status(project)
					if err != nil {
						return nil, s.toolErr(err)
					}
					b, _ := json.MarshalIndent(map[string]any{"start": st.StartChecklist, "end": st.EndChecklist}, "", "  ")
					text = string(b)
				} else {
					data, err := os.ReadFile(filepath.Join(s.svc.V.Root, project, r.note))
					if err != nil {
						return nil, s.toolErr(errs.Wrap(errs.StateParseError, err, "reading "+r.note))
					}
					text = string(data)
				}
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.uri, MIMEType: mime, Text: text}}}, nil
			})
	}
}

// ResourceURIs are the URIs of the resources the server serves, whatever
// its toolsets.
func ResourceURIs() []string {
	var uris []string
	for _, r := range resources {
		uris = append(uris, r.uri)
	}
	return uris
}
