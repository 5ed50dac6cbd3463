// Package claudecode answers Claude Code hooks (PreToolUse, PostToolUse,
// SessionStart, PreCompact, Stop) by the hooks protocol, and installs
// sessionvault's hook entries into .claude/settings.json. Source: Claude Code
// hooks reference: a hook gets one JSON object on stdin; exit 2 blocks with
// stderr shown to Claude; on exit 0, stdout JSON carries decisions and
// additional context.
package claudecode

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/sessionvault/sessionvault/internal/recovery"

	"github.com/sessionvault/sessionvault/internal/features"

	"github.com/sessionvault/sessionvault/integrations/claudecode/hookio"
	"github.com/sessionvault/sessionvault/integrations/claudecode/leanhook"
	"github.com/sessionvault/sessionvault/internal/guard"
	"github.com/sessionvault/sessionvault/internal/policy"
	"github.com/sessionvault/sessionvault/internal/protocol"
	"github.com/sessionvault/sessionvault/internal/session"
)

// Input is the hook's stdin JSON (see hookio.Input).
type Input = hookio.Input

// Response is what the hook process does: its exit code, stdout and stderr.
type Response = hookio.Response

// Deny blocks a tool call: exit 2 with the reason on stderr.
func Deny(reason string) Response { return hookio.Deny(reason) }

// Allow lets the tool call go ahead (exit 0, no output).
func Allow() Response { return hookio.Allow() }

// Warn reports what went wrong without blocking anything (exit 1); a nil
// error is Allow.
func Warn(what string, err error) Response { return hookio.Warn(what, err) }

// Handler answers hooks for one project of a vault. Open returns the
// session service; it is called only when the decision needs the state, so
// a read-only tool is allowed even when the vault cannot be opened.
type Handler struct {
	Open    func() (*session.Service, error)
	Project string
	Policy  protocol.Policy
	// PolicyConfig is the vault's part of the tool policy table.
	PolicyConfig policy.Config
	// PromptLimit bounds the SessionStart resume prompt, in bytes (default 8 KB).
	PromptLimit int
}

// PreToolUse decides whether a tool call may run (Claude Code hooks:
// PreToolUse), by the policy table (internal/policy): a call that reaches a
// person's command is denied; reading calls always pass; anything else is
// denied, with what to do next, when the state cannot be read, parsed or
// verified (fail closed), when it writes inside the vault (paths resolved
// against the call's cwd and through symlinks, the Serena link included),
// when no session is active, when the mode does not allow it, or while MUST
// items of the start checklist lack evidence. sessionvault's own tools and
// commands pass once the state verifies: they are the way out.
func (h Handler) PreToolUse(in Input) (resp Response) {
	defer func() {
		if r := recover(); r != nil {
			resp = Deny(fmt.Sprintf("internal error in the hook (%v); failing closed. A person can run `sessionvault mode set disabled`", r))
		}
	}()
	if in.ToolName == "" {
		return Deny("the hook input names no tool; failing closed")
	}
	d := h.decide(in)
	// An agent whose session lost a clash (or was ended on another
	// machine) is told with every answer until it reads the state.
	defer func() { resp = resp.WithNotice(h.clashNotice(d)) }()
	if !d.Allowed {
		return hookio.Decided(false, d.Reason)
	}
	if guard.RecordsCommand(in.ToolName) {
		// The command history's duration: PostToolUse takes it back. The
		// vault decide opened serves; a call the policy passed without
		// reading the state opens it here.
		svc := d.svc
		if svc == nil {
			svc, _ = h.Open()
		}
		if svc != nil && !svc.V.NewerFormat() { // a newer format's vault: PostToolUse records nothing
			_ = guard.NoteCallStart(svc.V.Root, in.ToolName, in.ToolUseID) // without it, the duration is the input's or none
		}
	}
	if d.class == policy.Write && d.svc != nil && !d.svc.V.NewerFormat() {
		// A call that may write files it does not name (a shell, an unknown
		// tool; an editing tool's file was checked above): PostToolUse
		// commits notes it changed as the agent's edit. Allowed either way;
		// without the note, what the call changes is committed later as a
		// person's edit.
		return Warn("the tool call was not noted for PostToolUse", d.svc.NoteToolCall(d.project, in.ToolName, in.ToolUseID))
	}
	return Allow()
}

// clashNotice is the clash notice of the call's project (guard.ClashFile),
// "" when there is none or the vault cannot be opened: it never turns an
// answer into a deny (a reading call passes even when the vault does not
// open).
func (h Handler) clashNotice(d decision) (notice string) {
	defer func() {
		if recover() != nil {
			notice = ""
		}
	}()
	svc, project := d.svc, d.project
	if svc == nil {
		var err error
		if svc, err = h.Open(); err != nil {
			return ""
		}
		if project, err = svc.Project(h.Project); err != nil {
			return ""
		}
	}
	return guard.ClashNotice(svc.V.Root, project)
}

// Decide is PreToolUse's decision for one tool call (Claude Code hooks:
// tool_name, tool_input and cwd; cwd "" = the working directory): whether it
// may run now and, when not, why and what to do. `blocked-reason` and the
// MCP tool get_blocked_reason ask it directly.
func (h Handler) Decide(tool string, input json.RawMessage, cwd string) (allowed bool, reason string) {
	d := h.decide(Input{ToolName: tool, ToolInput: input, Cwd: cwd})
	return d.Allowed, strings.TrimSpace(d.Reason)
}

// decision is a tool call's verdict with what PreToolUse goes on with: the
// call's class and, when the state was read, the service and project (a
// call that may write unnamed files is noted for PostToolUse).
type decision struct {
	guard.Verdict
	class   policy.Class
	svc     *session.Service
	project string
}

// decide classifies the call once and decides on it.
func (h Handler) decide(in Input) decision {
	call := policy.Classify(in.ToolName, in.ToolInput, h.PolicyConfig)
	var d decision
	v, decided := guard.Screen(&call, h.Policy) // may mark the call Read
	d.class = call.Class
	if decided {
		d.Verdict = v
		return d
	}
	deny := func(reason string) decision {
		d.Verdict = guard.Verdict{Reason: reason}
		return d
	}
	svc, err := h.Open()
	if err != nil {
		return deny("the vault cannot be opened (" + err.Error() + "); failing closed. Read-only tools still work")
	}
	svc = withCodeDir(svc, in.Cwd)
	project, err := svc.Project(h.Project)
	if err != nil {
		return deny(err.Error() + "; failing closed")
	}
	facts, err := svc.Guard(project) // on a state it cannot read or verify: facts that say so (Unreadable)
	if err != nil && facts.Unreadable == "" {
		return deny("the session state cannot be read: " + err.Error() + "; failing closed. Read-only tools still work")
	}
	d.Verdict = guard.Decide(call, in.Cwd, svc.Place(project), h.Policy, facts)
	d.svc, d.project = svc, project
	return d
}

// PostToolUse (and PostToolUseFailure) appends a Bash or MCP tool call to
// the session's command history (sessions/<id>/commands.md) and commits
// the log when session.RecordToolCommand says it is due, commits the
// canonical notes the tool call changed (seen against what PreToolUse
// recorded) as the agent's edit, and records a heartbeat of the active
// session and, when the protocol has `tool:` evidence matching the tool,
// the call as evidence (in .sessionvault/state, no commit). It never
// blocks. On a vault in a newer format than this binary writes it records
// nothing, and says why once per Claude Code session (formatRefused).
func (h Handler) PostToolUse(in Input) Response {
	svc, err := h.Open()
	if err != nil {
		return Allow()
	}
	if r, err := formatRefused(svc, in); err != nil {
		return r
	}
	svc = withCodeDir(svc, in.Cwd)
	if project, err := svc.Project(h.Project); err == nil {
		if in.ToolName == "Read" && !in.ToolFailed() {
			// Evidence that the agent read the state or the history; without
			// it, the item stays open.
			switch readsNote(svc, project, in) {
			case session.CurrentStateNote:
				_ = svc.ObserveStateRead(project, "Read")
			case session.HistoryNote:
				_ = svc.ObserveHistoryRead(project, "Read")
			}
		}
		failed := in.ToolFailed() // tool_response parsed once: it may be megabytes
		var log string
		var due bool
		var herr error
		if guard.RecordsCommand(in.ToolName) {
			log, due, herr = features.New(svc).RecordToolCommand(project, leanhook.CommandCall(in, failed))
		}
		if due {
			if _, err := svc.CommitCommandLogs(project, log); err != nil {
				return Warn("the command history was not committed", err)
			}
		}
		if _, err := svc.CommitToolEdits(project, in.ToolName, in.ToolUseID); err != nil {
			return Warn("the notes the tool call changed were not committed", err)
		}
		if herr != nil {
			return Warn("the tool call was not recorded in the command history", herr)
		}
		if _, err := svc.RecordToolCall(project, in.ToolName); err != nil {
			return Warn("the tool call was not recorded as evidence", err)
		}
		if err := recovery.New(svc).RecordToolUse(project, in.ToolName, !failed); err != nil {
			return Warn("the tool call was not recorded in the tool history", err)
		}
		return Warn("the session's heartbeat was not recorded", svc.HookHeartbeat(project))
	}
	return Allow()
}

// PreCompact records a recovery point (time, trigger and a manual
// compaction's instructions) of the active session before Claude Code
// compacts its context; check_recovery reports it. It never blocks, and
// records nothing on a vault in a newer format (as PostToolUse).
func (h Handler) PreCompact(in Input) Response {
	svc, err := h.Open()
	if err != nil {
		return Allow()
	}
	if r, err := formatRefused(svc, in); err != nil {
		return r
	}
	if project, err := svc.Project(h.Project); err == nil {
		return Warn("the recovery point was not recorded", recovery.New(svc).RecordRecoveryPoint(project, in.Trigger, in.CustomInstructions))
	}
	return Allow()
}

// Stop keeps the agent working while MUST items of the end checklist are
// open: {"decision":"block","reason":...}. With stop_hook_active (it already
// blocked once), it lets the agent stop.
func (h Handler) Stop(in Input) Response {
	if in.StopHookActive {
		return Allow()
	}
	svc, err := h.Open()
	if err != nil {
		return Allow()
	}
	svc = withCodeDir(svc, in.Cwd)
	project, err := svc.Project(h.Project)
	if err != nil {
		return Allow()
	}
	st, err := svc.VerifiedCached(project)
	if errors.Is(err, session.ErrTampered) {
		// The end checklist cannot be trusted: ticks or status may have been
		// written by the agent itself.
		out, _ := json.Marshal(map[string]string{"decision": "block", "reason": err.Error() +
			"\nThe end checklist cannot be checked until a person reviews the change and runs `" + svc.Command(project, "accept") + "` (the agent may not)."})
		return Response{Stdout: string(out) + "\n"}
	}
	if err != nil || !st.Active() {
		return Allow()
	}
	proto, err := svc.Protocol(project)
	if err != nil {
		return Allow()
	}
	missing := svc.Gate(st, proto, protocol.End)
	if len(missing) == 0 {
		return Allow()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Session %s has %d open MUST item(s) in its end checklist:", st.Session, len(missing))
	for _, m := range missing {
		fmt.Fprintf(&b, "\n- %s %s: %s", m.ID, m.Step, svc.Runnable(project, m.Do, in.Cwd))
	}
	b.WriteString("\nThen end the session: `" + svc.Command(project, `end --summary "..." --next "..."`) + "`.")
	out, _ := json.Marshal(map[string]string{"decision": "block", "reason": b.String()})
	return Response{Stdout: string(out) + "\n"}
}

// withCodeDir returns svc working for an agent in cwd (the hook input's):
// its code repository is cwd's (session.Service.CodeDir). svc itself when
// cwd is "".
func withCodeDir(svc *session.Service, cwd string) *session.Service {
	if cwd == "" {
		return svc
	}
	c := *svc
	c.CodeDir = cwd
	return &c
}

// readsNote returns which canonical note of the project (its name) a Read
// call's file is (relative to the call's cwd; symlinks resolved), or "".
func readsNote(svc *session.Service, project string, in Input) string {
	var args struct {
		FilePath string `json:"file_path"`
	}
	if json.Unmarshal(in.ToolInput, &args) != nil || args.FilePath == "" {
		return ""
	}
	p := args.FilePath
	if !filepath.IsAbs(p) {
		p = filepath.Join(in.Cwd, p)
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	dir := filepath.Join(svc.V.Root, project)
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	if filepath.Dir(filepath.Clean(p)) != filepath.Clean(dir) {
		return ""
	}
	return filepath.Base(p)
}
