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
	"path/filepath"
	"regexp"
	"strings"

	"github.com/sessionvault/sessionvault/internal/note"
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

// Handler answers hooks for one project of a vault. Open returns the
// session service; it is called only when the decision needs the state, so
// a read-only tool is allowed even when the vault cannot be opened.
type Handler struct {
	Open    func() (*session.Service, error)
	Project string
	Policy  protocol.Policy
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
// PreToolUse). Read-only tools always pass. Anything else is denied, with
// what to do next, when: the state cannot be read, parsed or verified (fail
// closed); no session is active; the mode blocks the tool; or MUST items of
// the start checklist lack evidence. sessionvault's own commands pass so the
// agent can start a session and record evidence — except `accept` and
// `mode set disabled`, which are a person's.
func (h Handler) PreToolUse(in Input) (resp Response) {
	defer func() {
		if r := recover(); r != nil {
			resp = Deny(fmt.Sprintf("internal error in the hook (%v); failing closed. A person can run `sessionvault mode set disabled`", r))
		}
	}()
	if in.ToolName == "" {
		return Deny("the hook input names no tool; failing closed")
	}
	if h.Policy.IsReadOnly(in.ToolName) {
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
	cmd := bashCommand(in)
	if raw := bashText(in); personOnlyRe.MatchString(raw) {
		return Deny("`" + strings.TrimSpace(raw) + "` runs a person's command (sessionvault accept, mode set disabled, hooks install); the agent may not run it")
	}
	st, err := svc.VerifiedFast(project)
	if err != nil {
		if cmd != nil && cmd.readOnly() {
			return Allow()
		}
		if errors.Is(err, session.ErrTampered) {
			return Deny(err.Error() + ". A person reviews the change (`" + svc.GitCommand("diff") + "`) and runs `" + svc.Command(project, "accept") + "`; until then only read-only tools run")
		}
		return Deny("the session state cannot be read: " + err.Error() + ". Fix the note or restore it (the command above), then a person runs `" + svc.Command(project, "accept") + "`; until then only read-only tools run")
	}
	if st.ModeOrDefault() == protocol.Disabled {
		return Allow()
	}
	if p := editedPath(in); p != "" && insideDir(p, svc.V.Root) {
		return Deny(p + " is in the session vault: notes there are written through sessionvault (update, decide, block, evidence record, ...), so that every change is verified, signed and committed")
	}
	if cmd != nil {
		if cmd.personOnly() {
			return Deny("`" + cmd.raw + "` is a person's command; the agent may not run it")
		}
		return Allow()
	}
	if !st.Active() {
		return Deny("no session is active. Start one: `" + svc.Command(project, `start --objective "..."`) + "`")
	}
	if mode := st.ModeOrDefault(); h.Policy.BlockedBy(mode, in.ToolName) {
		return Deny(fmt.Sprintf("mode %s does not allow %s. If the work calls for it, switch: `%s`", mode, in.ToolName, svc.Command(project, "mode set coding")))
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
			fmt.Fprintf(&b, "\n- %s %s: %s", m.ID, m.Step, svc.Runnable(project, m.Do))
		}
		return Deny(b.String())
	}
	return Allow()
}

// svCommand is a Bash call of sessionvault itself.
type svCommand struct {
	raw  string
	args []string
}

var shellMeta = regexp.MustCompile("[;&|`$<>()\\n]")

// personOnlyRe finds a person's command anywhere in a shell command line,
// compound ones included (`sed -i … && sessionvault accept`).
var personOnlyRe = regexp.MustCompile(`\bsessionvault(-hook)?((\s+--(vault|project)(\s+|=)\S+)|(\s+--?[\w-]+))*\s+(accept|hooks\s+install|mode\s+set\s+["']?disabled)\b`)

// bashText returns the command line of a Bash tool call, or "".
func bashText(in Input) string {
	if in.ToolName != "Bash" {
		return ""
	}
	var ti struct {
		Command string `json:"command"`
	}
	json.Unmarshal(in.ToolInput, &ti)
	return ti.Command
}

// bashCommand returns the sessionvault invocation a Bash tool call makes, or
// nil when it is anything else (including a compound shell command).
func bashCommand(in Input) *svCommand {
	c := strings.TrimSpace(bashText(in))
	if c == "" || shellMeta.MatchString(c) {
		return nil
	}
	f := strings.Fields(c)
	if filepath.Base(f[0]) != "sessionvault" {
		return nil
	}
	var args []string
	for i := 1; i < len(f); i++ {
		a := strings.Trim(f[i], `"'`)
		switch {
		case a == "--vault" || a == "--project":
			i++ // the flag's value is not a verb
		case strings.HasPrefix(a, "-"):
		default:
			args = append(args, a)
		}
	}
	return &svCommand{raw: c, args: args}
}

func (c *svCommand) verb() string {
	if len(c.args) == 0 {
		return ""
	}
	return c.args[0]
}

func (c *svCommand) readOnly() bool {
	switch c.verb() {
	case "", "status", "log", "check", "help", "gate":
		return true
	}
	return false
}

func (c *svCommand) personOnly() bool {
	switch c.verb() {
	case "accept", "hooks":
		return true
	case "mode":
		return len(c.args) >= 3 && c.args[1] == "set" && c.args[2] == string(protocol.Disabled)
	}
	return false
}

// PostToolUse records a heartbeat of the active session and, when the
// protocol has `tool:` evidence matching the tool, the call as evidence (in
// .sessionvault/state, no commit). It never blocks.
func (h Handler) PostToolUse(in Input) Response {
	svc, err := h.Open()
	if err != nil {
		return Allow()
	}
	if project, err := svc.Project(h.Project); err == nil {
		svc.RecordToolCall(project, in.ToolName)
		svc.Touch(project)
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
			svc.V.WriteState("recovery-"+project, []byte(fmt.Sprintf("%s %s %s\n", st.Session, in.Trigger, note.FormatTime(nowUTC()))))
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
	st, err := svc.VerifiedFast(project)
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
		fmt.Fprintf(&b, "\n- %s %s: %s", m.ID, m.Step, svc.Runnable(project, m.Do))
	}
	b.WriteString("\nThen end the session: `" + svc.Command(project, `end --summary "..." --next "..."`) + "`.")
	out, _ := json.Marshal(map[string]string{"decision": "block", "reason": b.String()})
	return Response{Stdout: string(out) + "\n"}
}

// editedPath returns the file an editing tool call writes, or "".
func editedPath(in Input) string {
	switch in.ToolName {
	case "Edit", "MultiEdit", "Write", "NotebookEdit":
	default:
		return ""
	}
	var ti struct {
		FilePath     string `json:"file_path"`
		NotebookPath string `json:"notebook_path"`
	}
	json.Unmarshal(in.ToolInput, &ti)
	if ti.FilePath != "" {
		return ti.FilePath
	}
	return ti.NotebookPath
}

// insideDir reports whether path lies in dir (after cleaning; symlinks are
// not resolved).
func insideDir(path, dir string) bool {
	rel, err := filepath.Rel(dir, filepath.Clean(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}
