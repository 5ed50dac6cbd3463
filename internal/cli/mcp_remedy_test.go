package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// cliAdvice finds what an MCP client cannot act on: a CLI flag, or a quoted
// `sessionvault VERB` command for an operation a tool does.
var cliAdvice = regexp.MustCompile("(^|[\\s(])--(objective|force|progress|type|tag|impact|severity|file|sha|run|session|continue|op-id|message)\\b|`sessionvault (start|update|decide|block|resolve|end|status|recover|heartbeat|evidence|gate|phase|blocked-reason)\\b")

// toolCallRe finds a tool call named in a text: `tool {"argument": value}`.
var toolCallRe = regexp.MustCompile("`([a-z_]+)( \\{[^`]*\\})?`")

// followAdvice calls the first tool call text names with its arguments, as an
// agent would paste it, and returns the tool's result.
func followAdvice(t *testing.T, cs *mcp.ClientSession, text, tool string) (map[string]any, bool, string) {
	t.Helper()
	for _, m := range toolCallRe.FindAllStringSubmatch(text, -1) {
		if m[1] != tool {
			continue
		}
		args := map[string]any{}
		if m[2] != "" {
			if err := json.Unmarshal([]byte(strings.TrimSpace(m[2])), &args); err != nil {
				t.Fatalf("%q: the arguments are not JSON: %v", m[0], err)
			}
		}
		return call(t, cs, tool, args)
	}
	t.Fatalf("no call of %s in:\n%s", tool, text)
	return nil, false, ""
}

// MCP errors, gate remedies, the hooks' reasons and the resume prompt speak
// the server's own terms: the tool to call with its arguments, never a CLI
// flag or a CLI command a tool does — and the tool call named works as
// written.
func TestMCPAdviceNamesTools(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	cs := inMemory(t, v)
	noCLI := func(what, text string) {
		t.Helper()
		if m := cliAdvice.FindString(text); m != "" {
			t.Errorf("%s gives CLI advice (%q):\n%s", what, m, text)
		}
	}

	_, isErr, text := call(t, cs, "session_update", map[string]any{"message": "no session yet"})
	if !isErr || !strings.Contains(text, "E1602") || !strings.Contains(text, "`session_start {\"objective\": ") || strings.Contains(text, "last one was") {
		t.Errorf("update without a session:\n%s", text)
	}
	noCLI("update without a session", text)

	mustCall(t, cs, "session_start", map[string]any{"objective": "Advice"})
	_, _, text = call(t, cs, "session_start", map[string]any{"objective": "Again"})
	noCLI("a second start", text)
	if !strings.Contains(text, "`session_end`") || !strings.Contains(text, `"force": true`) {
		t.Errorf("a second start names neither session_end nor force:\n%s", text)
	}

	_, _, text = call(t, cs, "session_update", map[string]any{"message": "x", "progress": 120})
	noCLI("progress out of range", text)
	if !strings.Contains(text, "progress 120 is out of range") {
		t.Errorf("progress out of range:\n%s", text)
	}
	_, _, text = call(t, cs, "resolve_blocker", map[string]any{"blocker_id": "b-9"})
	noCLI("an unknown blocker", text)
	if !strings.Contains(text, "`session_status`") {
		t.Errorf("an unknown blocker does not point at session_status:\n%s", text)
	}

	gate := mustCall(t, cs, "validate_gate", map[string]any{"phase": "start"})
	missing, _ := gate["missing"].([]any)
	if len(missing) == 0 {
		t.Fatalf("validate_gate = %v", gate)
	}
	for _, m := range missing {
		do, _ := m.(map[string]any)["do"].(string)
		noCLI("a gate remedy", do)
	}
	blocked := mustCall(t, cs, "get_blocked_reason", map[string]any{"tool": "Edit"})
	reason, _ := blocked["reason"].(string)
	noCLI("the blocked reason", reason)
	if blocked["blocked"] != true || !strings.Contains(reason, "session_status") {
		t.Errorf("get_blocked_reason = %v", blocked)
	}

	first, _ := missing[0].(map[string]any)["do"].(string)
	if _, isErr, text := followAdvice(t, cs, first, "session_status"); isErr {
		t.Errorf("the gate's remedy, called as written, fails: %s\n(remedy: %s)", text, first)
	}
	if blocked := mustCall(t, cs, "get_blocked_reason", map[string]any{"tool": "Edit"}); blocked["blocked"] != false {
		t.Errorf("get_blocked_reason after the remedy = %v", blocked)
	}

	ctx := mustCall(t, cs, "get_unified_context", nil)
	prompt, _ := ctx["prompt"].(string)
	noCLI("the resume prompt", prompt)

	// The start that names force, called as written, abandons the session
	// and starts a new one.
	_, _, text = call(t, cs, "session_start", map[string]any{"objective": "Again"})
	if out, isErr, res := followAdvice(t, cs, text, "session_start"); isErr || out["session"] == "" {
		t.Errorf("session_start as the error names it: %s", res)
	}
	assertClean(t, v)
}

// A crashed session over MCP: check_recovery and the start refused name
// session_recover, and calling it resumes the session.
func TestMCPRecoversACrashedSession(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	mustRun(t, v, "start", "--objective", "Crash")
	cfg := filepath.Join(v, ".sessionvault", "config.yaml")
	data, _ := os.ReadFile(cfg)
	os.WriteFile(cfg, []byte(strings.Replace(string(data), "heartbeat_timeout: 30m", "heartbeat_timeout: 1s", 1)), 0o644)
	time.Sleep(2100 * time.Millisecond)
	cs := inMemory(t, v)

	rec := mustCall(t, cs, "check_recovery", nil)
	advice, _ := rec["recover"].(string)
	if rec["crashed"] != true || !strings.Contains(advice, "`session_recover`") || cliAdvice.MatchString(advice) {
		t.Errorf("check_recovery = %v", rec)
	}
	_, isErr, text := call(t, cs, "session_start", map[string]any{"objective": "Over it"})
	if !isErr || !strings.Contains(text, "E1603") || !strings.Contains(text, "`session_recover`") || cliAdvice.MatchString(text) {
		t.Errorf("start over a crashed session:\n%s", text)
	}
	if _, isErr, text := followAdvice(t, cs, advice, "session_recover"); isErr {
		t.Fatalf("session_recover: %s", text)
	}
	if st := mustCall(t, cs, "session_status", nil); st["state"].(map[string]any)["status"] != "active" {
		t.Errorf("after session_recover: %v", st)
	}
}

// A server started without --project on a vault of two projects and no
// default project says how to
// start it, not to pass a flag no tool has.
func TestMCPWithoutProjectNamesTheServerFlag(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	mustRun(t, v, "init", v, "--project", "api")
	cfg := filepath.Join(v, ".sessionvault", "config.yaml")
	data, _ := os.ReadFile(cfg)
	os.WriteFile(cfg, regexp.MustCompile(`(?m)^default_project:.*\n`).ReplaceAll(data, nil), 0o644)
	_, isErr, text := call(t, inMemory(t, v), "session_status", nil)
	if !isErr || !strings.Contains(text, "(api, demo)") || !strings.Contains(text, "mcp --project NAME") || strings.Contains(text, "pass --project") {
		t.Errorf("session_status on two projects without --project (error %v):\n%s", isErr, text)
	}
}
