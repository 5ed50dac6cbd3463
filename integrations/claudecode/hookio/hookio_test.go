package hookio_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/sessionvault/sessionvault/integrations/claudecode/hookio"
)

func ptr[T any](v T) *T { return &v }

// TestParseInputReadsWhatClaudeCodeSends parses the stdin JSON of each hook
// event as Claude Code sends it (fields sessionvault does not read, like
// transcript_path and permission_mode, included) and checks the fields the
// hooks act on; input that is not the hook JSON is an error saying so.
func TestParseInputReadsWhatClaudeCodeSends(t *testing.T) {
	base := `"session_id":"abc123","transcript_path":"/home/me/.claude/projects/x/abc123.jsonl","cwd":"/code","permission_mode":"default"`
	for _, c := range []struct {
		event, json string
		want        hookio.Input
	}{
		{"PreToolUse", `{` + base + `,"hook_event_name":"PreToolUse","tool_name":"Edit","tool_use_id":"toolu_01","tool_input":{"file_path":"/code/main.go","old_string":"a","new_string":"b"}}`,
			hookio.Input{SessionID: "abc123", Cwd: "/code", HookEventName: "PreToolUse", ToolName: "Edit", ToolUseID: "toolu_01",
				ToolInput: json.RawMessage(`{"file_path":"/code/main.go","old_string":"a","new_string":"b"}`)}},
		{"PostToolUse", `{` + base + `,"hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"toolu_02","tool_input":{"command":"go test ./..."},"tool_response":{"stdout":"ok","stderr":"","interrupted":false},"duration_ms":1520.7,"agent_id":"a1","agent_type":"Explore"}`,
			hookio.Input{SessionID: "abc123", Cwd: "/code", HookEventName: "PostToolUse", ToolName: "Bash", ToolUseID: "toolu_02",
				ToolInput: json.RawMessage(`{"command":"go test ./..."}`), ToolResponse: json.RawMessage(`{"stdout":"ok","stderr":"","interrupted":false}`),
				DurationMs: ptr(1520.7), AgentID: "a1", AgentType: "Explore"}},
		{"PostToolUseFailure", `{` + base + `,"hook_event_name":"PostToolUseFailure","tool_name":"mcp__serena__find_symbol","tool_input":{"name":"Main"},"error":"symbol not found","is_interrupt":false}`,
			hookio.Input{SessionID: "abc123", Cwd: "/code", HookEventName: "PostToolUseFailure", ToolName: "mcp__serena__find_symbol",
				ToolInput: json.RawMessage(`{"name":"Main"}`), Error: json.RawMessage(`"symbol not found"`)}},
		{"SessionStart", `{` + base + `,"hook_event_name":"SessionStart","source":"compact","model":"claude-opus-4-1"}`,
			hookio.Input{SessionID: "abc123", Cwd: "/code", HookEventName: "SessionStart", Source: "compact", Model: "claude-opus-4-1"}},
		{"PreCompact", `{` + base + `,"hook_event_name":"PreCompact","trigger":"manual","custom_instructions":"keep the auth decisions"}`,
			hookio.Input{SessionID: "abc123", Cwd: "/code", HookEventName: "PreCompact", Trigger: "manual", CustomInstructions: "keep the auth decisions"}},
		{"Stop", `{` + base + `,"hook_event_name":"Stop","stop_hook_active":true}`,
			hookio.Input{SessionID: "abc123", Cwd: "/code", HookEventName: "Stop", StopHookActive: true}},
		{"an error that is not a string", `{"hook_event_name":"PostToolUseFailure","error":{"message":"boom"}}`,
			hookio.Input{HookEventName: "PostToolUseFailure", Error: json.RawMessage(`{"message":"boom"}`)}},
	} {
		got, err := hookio.ParseInput([]byte(c.json))
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %+v, %v;\nwant %+v", c.event, got, err, c.want)
		}
	}
	for _, bad := range []string{``, `not json`, `{"tool_name":`, `{"stop_hook_active":"yes"}`, `{"duration_ms":"fast"}`, `["PreToolUse"]`} {
		if _, err := hookio.ParseInput([]byte(bad)); err == nil || !strings.HasPrefix(err.Error(), "hook input is not valid JSON: ") {
			t.Errorf("ParseInput(%q): %v; want an error saying the input is not valid JSON", bad, err)
		}
	}
}

// TestToolFailedAndErrorText checks how a PostToolUse or PostToolUseFailure
// input tells whether the tool failed and why — the status and error of the
// command history's entry.
func TestToolFailedAndErrorText(t *testing.T) {
	for _, c := range []struct {
		name, event, response, errJSON string
		failed                         bool
		text                           string
	}{
		{"PostToolUseFailure", "PostToolUseFailure", ``, `"symbol not found"`, true, "symbol not found"},
		{"PostToolUseFailure without an error", "PostToolUseFailure", ``, ``, true, ""},
		{"a success", "PostToolUse", `{"stdout":"ok","stderr":"","interrupted":false}`, ``, false, ""},
		{"is_error", "PostToolUse", `{"is_error":true,"stderr":"  --- FAIL: TestLogin\n"}`, ``, true, "--- FAIL: TestLogin"},
		{"success false", "PostToolUse", `{"success":false}`, ``, true, ""},
		{"success false, with why", "PostToolUse", `{"success":false,"error":"file not found"}`, ``, true, "file not found"},
		{"success true", "PostToolUse", `{"success":true}`, ``, false, ""},
		{"an error string", "PostToolUse", `{"error":"timed out"}`, ``, true, "timed out"},
		{"an error object", "PostToolUse", `{"error":{"code":1},"stderr":"exit 1"}`, ``, true, "exit 1"},
		{"an empty error", "PostToolUse", `{"error":""}`, ``, false, ""},
		{"a null error", "PostToolUse", `{"error":null}`, ``, false, ""},
		{"error false", "PostToolUse", `{"error":false}`, ``, false, ""},
		{"a text response", "PostToolUse", `"file written"`, ``, false, ""},
		{"a list response", "PostToolUse", `[{"type":"text","text":"ok"}]`, ``, false, ""},
		{"no response", "PostToolUse", ``, ``, false, ""},
		{"the failure's error before the response's", "PostToolUseFailure", `{"error":"other"}`, `"first"`, true, "first"},
		{"an empty failure error falls back", "PostToolUseFailure", `{"error":"from the response"}`, `""`, true, "from the response"},
	} {
		in := hookio.Input{HookEventName: c.event, ToolResponse: json.RawMessage(c.response), Error: json.RawMessage(c.errJSON)}
		if c.response == "" {
			in.ToolResponse = nil
		}
		if c.errJSON == "" {
			in.Error = nil
		}
		if got := in.ToolFailed(); got != c.failed {
			t.Errorf("%s: ToolFailed = %v; want %v", c.name, got, c.failed)
		}
		if got := in.ErrorText(); got != c.text {
			t.Errorf("%s: ErrorText = %q; want %q", c.name, got, c.text)
		}
	}
}

// TestDurationRoundsToAMillisecond checks the duration the command history
// records from duration_ms: rounded to the nearest millisecond; none when
// absent or negative.
func TestDurationRoundsToAMillisecond(t *testing.T) {
	for _, c := range []struct {
		ms   *float64
		want *int64
	}{
		{nil, nil}, {ptr(-1.0), nil}, {ptr(0.0), ptr(int64(0))}, {ptr(0.4), ptr(int64(0))},
		{ptr(812.4), ptr(int64(812))}, {ptr(812.5), ptr(int64(813))}, {ptr(120000.0), ptr(int64(120000))},
	} {
		got := hookio.Input{DurationMs: c.ms}.Duration()
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("Duration(%v) = %v; want %v", deref(c.ms), deref(got), deref(c.want))
		}
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestResponsesAreWhatClaudeCodeActsOn checks each response's exit code and
// output, and that Write writes them where Claude Code reads them: a deny is
// exit 2 with the reason on stderr; a warning exit 1; allowing is exit 0
// and silence.
func TestResponsesAreWhatClaudeCodeActsOn(t *testing.T) {
	for _, c := range []struct {
		name string
		r    hookio.Response
		want hookio.Response
	}{
		{"Allow", hookio.Allow(), hookio.Response{}},
		{"Deny", hookio.Deny("no session is active"), hookio.Response{Exit: 2, Stderr: "sessionvault blocked this tool call: no session is active\n"}},
		{"Decided true", hookio.Decided(true, "ignored"), hookio.Response{}},
		{"Decided false", hookio.Decided(false, "mode analysis"), hookio.Response{Exit: 2, Stderr: "sessionvault blocked this tool call: mode analysis\n"}},
		{"Warn without an error", hookio.Warn("the heartbeat was not recorded", nil), hookio.Response{}},
		{"Warn", hookio.Warn("the heartbeat was not recorded", errors.New("disk full")), hookio.Response{Exit: 1, Stderr: "sessionvault: the heartbeat was not recorded: disk full\n"}},
	} {
		if c.r != c.want {
			t.Errorf("%s = %+v; want %+v", c.name, c.r, c.want)
		}
	}
	var out, errb bytes.Buffer
	r := hookio.Response{Exit: 0, Stdout: `{"decision":"block","reason":"e-1 open"}` + "\n", Stderr: "note\n"}
	if code := r.Write(&out, &errb); code != 0 || out.String() != r.Stdout || errb.String() != r.Stderr {
		t.Errorf("Write: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	if code := hookio.Deny("x").Write(&out, &errb); code != 2 || out.Len() != 0 || errb.String() != "sessionvault blocked this tool call: x\n" {
		t.Errorf("Deny.Write: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
}

// TestParseArgs checks the hook command's arguments as Claude Code's
// settings entries and people write them: flags before or after the event,
// "=" or a separate value, the optional word "hook", help; a flag without
// its value is an error naming it.
func TestParseArgs(t *testing.T) {
	for _, c := range []struct {
		args []string
		want hookio.Args
		err  string
	}{
		{[]string{"pre-tool-use"}, hookio.Args{Event: "pre-tool-use"}, ""},
		{[]string{"hook", "stop"}, hookio.Args{Event: "stop"}, ""},
		{[]string{"--vault", "/v", "--project", "demo", "hook", "session-start"}, hookio.Args{Vault: "/v", Project: "demo", Event: "session-start"}, ""},
		{[]string{"--vault=/v", "--project=demo", "pre-compact"}, hookio.Args{Vault: "/v", Project: "demo", Event: "pre-compact"}, ""},
		{[]string{"post-tool-use", "--vault", "/my vault"}, hookio.Args{Vault: "/my vault", Event: "post-tool-use"}, ""},
		{[]string{"--vault="}, hookio.Args{}, ""},
		{[]string{"-h"}, hookio.Args{Help: true}, ""},
		{[]string{"stop", "--help"}, hookio.Args{Event: "stop", Help: true}, ""},
		{[]string{"pre-tool-use", "stop"}, hookio.Args{Event: "stop"}, ""},
		{nil, hookio.Args{}, ""},
		{[]string{"pre-tool-use", "--vault"}, hookio.Args{Event: "pre-tool-use"}, "--vault needs a value"},
		{[]string{"--vault", "/v", "--project"}, hookio.Args{Vault: "/v"}, "--project needs a value"},
	} {
		got, err := hookio.ParseArgs(c.args)
		if got != c.want || (err == nil) != (c.err == "") || (err != nil && err.Error() != c.err) {
			t.Errorf("ParseArgs(%q) = %+v, %v; want %+v, %q", c.args, got, err, c.want, c.err)
		}
	}
	want := "usage: sessionvault-hook [--vault DIR] [--project P] pre-tool-use|post-tool-use|post-tool-use-failure|session-start|pre-compact|stop\n"
	if got := hookio.Usage(); got != want {
		t.Errorf("Usage() = %q; want %q", got, want)
	}
}

// TestWorkDir checks which folder a hook runs for: the input's cwd, else
// $CLAUDE_PROJECT_DIR, else the working directory; a working directory that
// no longer exists is an error.
func TestWorkDir(t *testing.T) {
	wd := t.TempDir()
	t.Chdir(wd)
	here, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("CLAUDE_PROJECT_DIR", "/project")
	if got, err := hookio.WorkDir("/code"); got != "/code" || err != nil {
		t.Errorf("WorkDir(/code) = %q, %v", got, err)
	}
	if got, err := hookio.WorkDir(""); got != "/project" || err != nil {
		t.Errorf("WorkDir(\"\") with $CLAUDE_PROJECT_DIR = %q, %v; want /project", got, err)
	}
	t.Setenv("CLAUDE_PROJECT_DIR", "")
	if got, err := hookio.WorkDir(""); got != here || err != nil {
		t.Errorf("WorkDir(\"\") = %q, %v; want the working directory %s", got, err, here)
	}
	if err := os.Remove(wd); err != nil {
		t.Fatal(err)
	}
	if got, err := hookio.WorkDir(""); err == nil {
		t.Errorf("WorkDir(\"\") in a deleted folder = %q; want an error", got)
	}
}

// TestReadInput checks reading stdin: the bytes come back with the parsed
// input, and also when they do not parse; input past MaxInput is cut (and so
// does not parse); a failing read is an error.
func TestReadInput(t *testing.T) {
	stdin := `{"hook_event_name":"Stop","stop_hook_active":true}`
	data, in, err := hookio.ReadInput(strings.NewReader(stdin))
	if err != nil || string(data) != stdin || !in.StopHookActive || in.HookEventName != "Stop" {
		t.Errorf("ReadInput = %q, %+v, %v", data, in, err)
	}
	data, _, err = hookio.ReadInput(strings.NewReader("garbage"))
	if err == nil || string(data) != "garbage" {
		t.Errorf("ReadInput(garbage) = %q, %v; want the bytes and an error", data, err)
	}
	big := `{"tool_name":"Write","tool_input":{"content":"` + strings.Repeat("x", hookio.MaxInput) + `"}}`
	data, _, err = hookio.ReadInput(strings.NewReader(big))
	if len(data) != hookio.MaxInput || err == nil || !strings.Contains(err.Error(), "not valid JSON") {
		t.Errorf("ReadInput(%d bytes) = %d bytes, %v; want %d bytes and an error", len(big), len(data), err, hookio.MaxInput)
	}
	fits := `{"tool_name":"Write","tool_input":{"content":"` + strings.Repeat("x", hookio.MaxInput-100) + `"}}`
	if _, in, err := hookio.ReadInput(strings.NewReader(fits)); err != nil || in.ToolName != "Write" {
		t.Errorf("ReadInput(%d bytes) = %v; want it read whole", len(fits), err)
	}
	if _, _, err := hookio.ReadInput(iotest.ErrReader(errors.New("stdin closed"))); err == nil || err.Error() != "stdin closed" {
		t.Errorf("ReadInput(a failing reader) = %v; want its error", err)
	}
}
