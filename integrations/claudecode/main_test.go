package claudecode_test

import (
	"strings"
	"testing"
)

// Without a readable vault the hook still answers: read-only tools pass,
// everything else is denied (fail closed); bad input is denied too.
func TestMainFailsClosedWithoutAVault(t *testing.T) {
	isolate(t)
	nowhere := t.TempDir()
	cases := []struct {
		name, stdin string
		args        []string
		code        int
		stderr      string
	}{
		{"read passes", `{"tool_name":"Read","tool_input":{}}`, []string{"--vault", nowhere, "pre-tool-use"}, 0, ""},
		{"grep passes", `{"tool_name":"Grep","tool_input":{}}`, []string{"--vault=" + nowhere, "hook", "pre-tool-use"}, 0, ""},
		{"edit denied", `{"tool_name":"Edit","tool_input":{}}`, []string{"--vault", nowhere, "pre-tool-use"}, 2, "is not a vault"},
		{"writing bash denied", `{"tool_name":"Bash","tool_input":{"command":"go test ./..."}}`, []string{"--vault", nowhere, "pre-tool-use"}, 2, "failing closed"},
		{"reading bash passes", `{"tool_name":"Bash","tool_input":{"command":"git status && ls"}}`, []string{"--vault", nowhere, "pre-tool-use"}, 0, ""},
		{"a person's command denied", `{"tool_name":"Bash","tool_input":{"command":"sessionvault mode set dis''abled"}}`, []string{"--vault", nowhere, "pre-tool-use"}, 2, "person's command"},
		{"no tool named", `{}`, []string{"--vault", nowhere, "pre-tool-use"}, 2, "names no tool"},
		{"garbage", `not json`, []string{"--vault", nowhere, "pre-tool-use"}, 2, "cannot be read"},
		{"stop never blocks without a vault", `{"stop_hook_active":false}`, []string{"--vault", nowhere, "stop"}, 0, ""},
		{"post-tool-use is silent without a vault", `{"tool_name":"Bash","tool_input":{"command":"go test"}}`, []string{"--vault", nowhere, "post-tool-use"}, 0, ""},
		{"session-start is silent without a vault", `{"source":"startup"}`, []string{"--vault", nowhere, "session-start"}, 0, ""},
		{"pre-compact is silent without a vault", `{"trigger":"auto"}`, []string{"--vault", nowhere, "pre-compact"}, 0, ""},
		{"unknown event", `{}`, []string{"--vault", nowhere, "pre-tool"}, 2, "unknown hook"},
		{"missing flag value", `{}`, []string{"--vault"}, 2, "needs a value"},
		{"missing project value", `{}`, []string{"stop", "--project"}, 2, "--project needs a value"},
	}
	for _, c := range cases {
		r := hook(c.stdin, c.args...)
		if r.Exit != c.code || !strings.Contains(r.Stderr, c.stderr) || (c.stderr == "" && r.Stderr != "") {
			t.Errorf("%s: exit %d, stderr %q; want %d and %q", c.name, r.Exit, r.Stderr, c.code, c.stderr)
		}
		if c.code == 0 && r.Stdout != "" {
			t.Errorf("%s: stdout %q; want none", c.name, r.Stdout)
		}
	}
}

// TestMainArguments checks what the hook command does with its arguments
// before any vault is read: --help prints the usage on stdout (exit 0); an
// unknown hook lists the known ones; hook input that does not parse stops
// only PreToolUse (every other event passes silently, exit 0).
func TestMainArguments(t *testing.T) {
	isolate(t)
	nowhere := t.TempDir()
	for _, args := range [][]string{{"--help"}, {"-h", "pre-tool-use"}, {"hook", "--help"}} {
		r := hook("", args...)
		if r.Exit != 0 || !strings.HasPrefix(r.Stdout, "usage: sessionvault-hook [--vault DIR] [--project P] pre-tool-use|post-tool-use|post-tool-use-failure|session-start|pre-compact|stop") || r.Stderr != "" {
			t.Errorf("%v: %+v; want the usage on stdout, exit 0", args, r)
		}
	}
	r := hook(`{"hook_event_name":"UserPromptSubmit","prompt":"hi"}`, "--vault", nowhere, "user-prompt-submit")
	if r.Exit != 2 || r.Stderr != "sessionvault hook: unknown hook \"user-prompt-submit\": use one of pre-tool-use, post-tool-use, post-tool-use-failure, session-start, pre-compact, stop\n" {
		t.Errorf("user-prompt-submit: %+v; want exit 2 listing the hooks sessionvault answers", r)
	}
	for _, event := range []string{"post-tool-use", "post-tool-use-failure", "session-start", "pre-compact", "stop"} {
		if r := hook(`{"tool_name":`, "--vault", nowhere, event); r != (result{}) {
			t.Errorf("%s with truncated input: %+v; want exit 0 and no output", event, r)
		}
	}
	if r := hook(`{"tool_name":`, "--vault", nowhere, "pre-tool-use"); r.Exit != 2 || !strings.Contains(r.Stderr, "the hook input cannot be read (hook input is not valid JSON: unexpected end of JSON input); failing closed") {
		t.Errorf("pre-tool-use with truncated input: %+v; want exit 2 saying the input cannot be read", r)
	}
}
