// Package hookio is the Claude Code hooks protocol as bytes: the hook's
// stdin JSON, its arguments, and the response (exit code, stdout, stderr).
// Source: Claude Code hooks reference: a hook gets one JSON object on stdin;
// exit 2 blocks with stderr shown to Claude; on exit 0, stdout JSON carries
// decisions and additional context. It imports nothing of the module, so the
// lean sessionvault-hook binary can use it.
package hookio

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
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
	// CustomInstructions is PreCompact's: what a manual /compact was told
	// to keep ("" for auto).
	CustomInstructions string `json:"custom_instructions"`
	// ToolResponse is PostToolUse's: the tool's result.
	ToolResponse json.RawMessage `json:"tool_response"`
	// ToolUseID names one tool call in its PreToolUse, PostToolUse and
	// PostToolUseFailure inputs.
	ToolUseID string `json:"tool_use_id"`
	// AgentID and AgentType name the subagent a call runs in (absent for
	// the main agent).
	AgentID   string `json:"agent_id"`
	AgentType string `json:"agent_type"`
	// Model is SessionStart's: the model of the Claude Code session.
	Model string `json:"model"`
	// DurationMs is PostToolUse's (optional): how long the tool ran.
	DurationMs *float64 `json:"duration_ms"`
	// Error is PostToolUseFailure's: why the tool failed (a string; kept raw
	// so another type never fails the whole input).
	Error json.RawMessage `json:"error"`
}

// ToolFailed reports whether the call failed: the input is
// PostToolUseFailure's, or a PostToolUse tool_response says so (an object
// with "is_error": true, "success": false, or a non-empty "error").
func (in Input) ToolFailed() bool {
	if in.HookEventName == "PostToolUseFailure" {
		return true
	}
	var r struct {
		IsError bool            `json:"is_error"`
		Success *bool           `json:"success"`
		Error   json.RawMessage `json:"error"`
	}
	if json.Unmarshal(in.ToolResponse, &r) != nil {
		return false
	}
	e := string(r.Error)
	return r.IsError || (r.Success != nil && !*r.Success) || (e != "" && e != "null" && e != `""` && e != "false")
}

// ErrorText is why a failed call failed: PostToolUseFailure's error, else
// the tool_response's "error" or (Bash) "stderr" when they are strings; ""
// when none says.
func (in Input) ErrorText() string {
	var e string
	if json.Unmarshal(in.Error, &e) == nil && e != "" {
		return e
	}
	var r struct {
		Error  json.RawMessage `json:"error"`
		Stderr string          `json:"stderr"`
	}
	if json.Unmarshal(in.ToolResponse, &r) == nil {
		if json.Unmarshal(r.Error, &e) == nil && e != "" {
			return e
		}
		return strings.TrimSpace(r.Stderr)
	}
	return ""
}

// Duration is the input's duration_ms rounded to a millisecond, or nil.
func (in Input) Duration() *int64 {
	if in.DurationMs == nil || *in.DurationMs < 0 {
		return nil
	}
	d := int64(*in.DurationMs + 0.5)
	return &d
}

// MaxInput bounds the hook input read from stdin (4 MiB).
const MaxInput = 4 << 20

// ParseInput reads the hook JSON. An error names what is wrong.
func ParseInput(data []byte) (Input, error) {
	var in Input
	if err := json.Unmarshal(data, &in); err != nil {
		return in, fmt.Errorf("hook input is not valid JSON: %w", err)
	}
	return in, nil
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

// Decided is a decision as the response: Allow, or Deny for reason.
func Decided(allowed bool, reason string) Response {
	if allowed {
		return Allow()
	}
	return Deny(reason)
}

// Allow lets the tool call go ahead (exit 0, no output).
func Allow() Response { return Response{} }

// AllowWithContext lets the tool call go ahead through Claude Code's usual
// permission flow and hands Claude text (Claude Code hooks: PreToolUse
// hookSpecificOutput.additionalContext, no permissionDecision). "" is
// Allow.
func AllowWithContext(text string) Response {
	if text == "" {
		return Allow()
	}
	out, _ := json.Marshal(map[string]any{"hookSpecificOutput": map[string]any{"hookEventName": "PreToolUse", "additionalContext": text}})
	return Response{Stdout: string(out) + "\n"}
}

// WithNotice is r with notice handed to Claude too: appended to a deny's
// reason, or as additionalContext of a call allowed without output. ""
// leaves r as it is.
func (r Response) WithNotice(notice string) Response {
	switch {
	case notice == "":
		return r
	case r.Exit == 2:
		r.Stderr = strings.TrimRight(r.Stderr, "\n") + "\n" + notice + "\n"
		return r
	case r.Exit == 0 && r.Stdout == "":
		return AllowWithContext(notice)
	}
	return r
}

// Warn reports what went wrong without blocking anything: exit 1, which
// Claude Code treats as a non-blocking error and shows to the user (Claude
// Code hooks: exit codes). A nil error is Allow.
func Warn(what string, err error) Response {
	if err == nil {
		return Allow()
	}
	return Response{Exit: 1, Stderr: "sessionvault: " + what + ": " + err.Error() + "\n"}
}

// Write writes r's output and returns its exit code.
func (r Response) Write(stdout, stderr io.Writer) int {
	io.WriteString(stdout, r.Stdout)
	io.WriteString(stderr, r.Stderr)
	return r.Exit
}

// Events are the hook names sessionvault answers.
var Events = []string{"pre-tool-use", "post-tool-use", "post-tool-use-failure", "session-start", "pre-compact", "stop"}

// Args are a hook command's arguments: [--vault DIR] [--project P] [hook] EVENT.
type Args struct {
	Vault   string // --vault, "" when not given
	Project string // --project, "" when not given
	Event   string // one of Events (not checked here)
	Help    bool   // -h or --help
}

// Usage is the hook command's usage line.
func Usage() string {
	return "usage: sessionvault-hook [--vault DIR] [--project P] " + strings.Join(Events, "|") + "\n"
}

// ParseArgs reads a hook command's arguments; an error names the flag
// that lacks its value.
func ParseArgs(args []string) (Args, error) {
	var a Args
	for i := 0; i < len(args); i++ {
		s := args[i]
		switch {
		case s == "--vault" || s == "--project":
			if i+1 >= len(args) {
				return a, fmt.Errorf("%s needs a value", s)
			}
			if s == "--vault" {
				a.Vault = args[i+1]
			} else {
				a.Project = args[i+1]
			}
			i++
		case strings.HasPrefix(s, "--vault="):
			a.Vault = strings.TrimPrefix(s, "--vault=")
		case strings.HasPrefix(s, "--project="):
			a.Project = strings.TrimPrefix(s, "--project=")
		case s == "hook" && a.Event == "":
		case s == "-h" || s == "--help":
			a.Help = true
		default:
			a.Event = s
		}
	}
	return a, nil
}

// WorkDir is the folder of the code repository a hook runs for: the hook
// input's cwd, else $CLAUDE_PROJECT_DIR, else the working directory.
func WorkDir(inputCwd string) (string, error) {
	if inputCwd != "" {
		return inputCwd, nil
	}
	if d := os.Getenv("CLAUDE_PROJECT_DIR"); d != "" {
		return d, nil
	}
	return os.Getwd()
}

// ReadInput reads the hook input from stdin (at most MaxInput bytes) and
// parses it; the bytes read are returned also when they do not parse.
func ReadInput(stdin io.Reader) ([]byte, Input, error) {
	data, err := io.ReadAll(io.LimitReader(stdin, MaxInput))
	if err != nil {
		return data, Input{}, err
	}
	in, err := ParseInput(data)
	return data, in, err
}
