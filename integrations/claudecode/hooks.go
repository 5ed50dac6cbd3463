// Package claudecode answers Claude Code hooks (PreToolUse, PostToolUse,
// SessionStart, PreCompact, Stop) by the hooks protocol, and installs
// sessionvault's hook entries into .claude/settings.json. Source: Claude Code
// hooks reference (research/tech.md §5.1): a hook gets one JSON object on
// stdin; exit 2 blocks with stderr shown to Claude; on exit 0, stdout JSON
// carries decisions and additional context.
package claudecode

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sessionvault/sessionvault/internal/note"
	"github.com/sessionvault/sessionvault/internal/policy"
	"github.com/sessionvault/sessionvault/internal/protocol"
	"github.com/sessionvault/sessionvault/internal/session"
)

// Input is the hook's stdin JSON (Claude Code hooks: BaseHookInput and the
// event-specific fields sessionvault reads).
type Input struct {
	SessionID      string          `json:"session_id"`
	Cwd            string          `json:"cwd"`
	HookEventName  string          `json:"hook_event_name"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	StopHookActive bool            `json:"stop_hook_active"`
	Source         string          `json:"source"`  // SessionStart: startup, resume, clear, compact
	Trigger        string          `json:"trigger"` // PreCompact: manual, auto
}

// Response is what the hook process does: its exit code, stdout and stderr.
type Response struct {
	Exit   int
	Stdout string
	Stderr string
}

// Deny blocks a tool call: exit 2 with the reason on stderr (Claude Code
// shows it to the agent).
func Deny(reason string) Response {
	return Response{Exit: 2, Stderr: "sessionvault blocked this tool call: " + reason + "\n"}
}

// Allow lets the tool call go ahead (exit 0, no output).
func Allow() Response { return Response{} }

// Warn reports what went wrong without blocking anything: exit 1, which
// Claude Code treats as a non-blocking error and shows to the user (Claude
// Code hooks: exit codes). A nil error is Allow.
func Warn(what string, err error) Response {
	if err == nil {
		return Allow()
	}
	return Response{Exit: 1, Stderr: "sessionvault: " + what + ": " + err.Error() + "\n"}
}

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

// ParseInput reads the hook JSON. An error names what is wrong.
func ParseInput(data []byte) (Input, error) {
	var in Input
	if err := json.Unmarshal(data, &in); err != nil {
		return in, fmt.Errorf("hook input is not valid JSON: %w", err)
	}
	return in, nil
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
	resp, class := h.decide(in)
	if resp.Exit != 0 {
		return resp
	}
	if class == policy.Write {
		// A call that may write files it does not name (a shell, an unknown
		// tool; an editing tool's file was checked above): PostToolUse
		// commits notes it changed as the agent's edit.
		if svc, err := h.Open(); err == nil {
			if project, err := svc.Project(h.Project); err == nil {
				// Allowed either way; without the note, what the call
				// changes is committed later as a person's edit.
				return Warn("the tool call was not noted for PostToolUse", svc.NoteToolCall(project, in.ToolName))
			}
		}
	}
	return Allow()
}

// Decide is PreToolUse's decision for one tool call (Claude Code hooks:
// tool_name, tool_input and cwd; cwd "" = the working directory): whether it
// may run now and, when not, why and what to do. `blocked-reason` and the
// MCP tool get_blocked_reason ask it directly.
func (h Handler) Decide(tool string, input json.RawMessage, cwd string) (allowed bool, reason string) {
	resp, _ := h.decide(Input{ToolName: tool, ToolInput: input, Cwd: cwd})
	return resp.Exit == 0, strings.TrimSpace(strings.TrimPrefix(resp.Stderr, "sessionvault blocked this tool call: "))
}

// decide classifies the call once and decides on it; the class goes back to
// PreToolUse (a call that may write unnamed files is noted for PostToolUse).
func (h Handler) decide(in Input) (Response, policy.Class) {
	call := policy.Classify(in.ToolName, in.ToolInput, h.PolicyConfig)
	resp := h.decideCall(in, &call)
	return resp, call.Class
}

func (h Handler) decideCall(in Input, call *policy.Call) Response {
	if call.Class == policy.Person {
		return Deny(call.Why + "; the agent may not run a person's command (sessionvault accept, mode set disabled, hooks install)")
	}
	if call.Class != policy.Read && h.Policy.IsReadOnly(in.ToolName) {
		call.Class = policy.Read // declared read-only by the vault's read_only_tools
	}
	if call.Class == policy.Read {
		return Allow()
	}
	svc, err := h.Open()
	if err != nil {
		return Deny("the vault cannot be opened (" + err.Error() + "); failing closed. Read-only tools still work")
	}
	project, err := svc.Project(h.Project)
	if err != nil {
		return Deny(err.Error() + "; failing closed")
	}
	st, err := svc.VerifiedCached(project)
	if err != nil {
		if errors.Is(err, session.ErrTampered) {
			return Deny(err.Error() + ". A person reviews the change (`" + svc.GitCommand("diff") + "`) and runs `" + svc.Command(project, "accept") + "`; until then only read-only tools run")
		}
		return Deny("the session state cannot be read: " + err.Error() + ". Fix the note or restore it (the command above), then a person runs `" + svc.Command(project, "accept") + "`; until then only read-only tools run")
	}
	if st.ModeOrDefault() == protocol.Disabled {
		return Allow()
	}
	if p := writesInVault(*call, in.Cwd, svc.V.Root); p != "" {
		return Deny(p + " is in the session vault: notes there are written through sessionvault (update, decide, block, evidence record, ...), so that every change is verified, signed and committed")
	}
	if call.Class == policy.Way {
		return Allow()
	}
	if !st.Active() {
		return Deny("no session is active. Start one: `" + svc.Command(project, `start --objective "..."`) + "`")
	}
	if mode := st.ModeOrDefault(); !policy.Allows(string(mode), call.Class) || h.Policy.BlockedBy(mode, in.ToolName) {
		return Deny(fmt.Sprintf("mode %s allows reading only, and %s. If the work calls for it, switch: `%s`", mode, call.Why, svc.Command(project, "mode set coding")))
	}
	if !session.OpenMust(st.StartChecklist) {
		return Allow()
	}
	proto, err := svc.Protocol(project)
	if err != nil {
		return Deny("the protocol cannot be read: " + err.Error() + "; failing closed")
	}
	if missing := svc.Gate(st, proto, protocol.Start); len(missing) > 0 {
		var b strings.Builder
		fmt.Fprintf(&b, "the session start protocol is incomplete: %d MUST item(s) lack evidence. Do this first:", len(missing))
		for _, m := range missing {
			fmt.Fprintf(&b, "\n- %s %s: %s", m.ID, m.Step, svc.Runnable(project, m.Do, in.Cwd))
		}
		return Deny(b.String())
	}
	return Allow()
}

// writesInVault returns the first file a call edits or may write that lies
// in the vault (root), or "": paths are taken relative to cwd (the hook
// input's; else the hook's own working folder) and resolved through
// symlinks, so the Serena link (<repo>/.serena/memories) and relative paths
// count. A shell that names a file only at run time ("?") counts when cwd is
// in the vault.
func writesInVault(call policy.Call, cwd, root string) string {
	if call.Class != policy.Edit && call.Class != policy.Write {
		return ""
	}
	if cwd == "" {
		cwd, _ = os.Getwd()
	}
	paths := call.Paths
	if call.Memories {
		paths = append(paths, filepath.Join(".serena", "memories", "x.md"))
	}
	realRoot := resolvePath(root)
	for _, p := range paths {
		if p == "?" {
			p = "."
		}
		if strings.HasPrefix(p, "~/") {
			if home, err := os.UserHomeDir(); err == nil {
				p = filepath.Join(home, p[2:])
			}
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		if insideDir(resolvePath(p), realRoot) {
			if call.Memories {
				return "Serena's memories folder (" + filepath.Join(cwd, ".serena", "memories") + ")"
			}
			return p
		}
	}
	return ""
}

// resolvePath returns p with symlinks resolved in its longest existing
// prefix (the rest, not yet created, appended).
func resolvePath(p string) string {
	p = filepath.Clean(p)
	rest := ""
	for {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(p, rest)
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// PostToolUse commits the canonical notes the tool call changed (seen
// against what PreToolUse recorded) as the agent's edit, and records a
// heartbeat of the active session and, when the protocol has `tool:`
// evidence matching the tool, the call as evidence (in .sessionvault/state,
// no commit). It never blocks.
func (h Handler) PostToolUse(in Input) Response {
	svc, err := h.Open()
	if err != nil {
		return Allow()
	}
	if project, err := svc.Project(h.Project); err == nil {
		if _, err := svc.CommitToolEdits(project, in.ToolName); err != nil {
			return Warn("the notes the tool call changed were not committed", err)
		}
		if _, err := svc.RecordToolCall(project, in.ToolName); err != nil {
			return Warn("the tool call was not recorded as evidence", err)
		}
		return Warn("the session's heartbeat was not recorded", svc.HookHeartbeat(project))
	}
	return Allow()
}

// PreCompact records a recovery point (time and trigger) of the active
// session before Claude Code compacts its context. It never blocks.
func (h Handler) PreCompact(in Input) Response {
	svc, err := h.Open()
	if err != nil {
		return Allow()
	}
	if project, err := svc.Project(h.Project); err == nil {
		if st, err := svc.Status(project); err == nil && st.Active() {
			return Warn("the recovery point was not recorded", svc.V.WriteState("recovery-"+project, []byte(fmt.Sprintf("%s %s %s\n", st.Session, in.Trigger, note.FormatTime(nowUTC())))))
		}
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

// insideDir reports whether path lies in dir (after cleaning; symlinks are
// not resolved).
func insideDir(path, dir string) bool {
	rel, err := filepath.Rel(dir, filepath.Clean(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}
