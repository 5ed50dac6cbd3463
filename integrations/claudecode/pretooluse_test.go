package claudecode_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sessionvault/sessionvault/integrations/claudecode"
)

// pass is the expectation of a tool call PreToolUse lets run.
const pass = ""

// TestPreToolUseAcrossTheSession asks PreToolUse about the same tool calls in
// each state a session goes through — no session, start gate open, start
// gate met, analysis mode, disabled by a person — and checks the answer
// Claude Code acts on: exit 0 with no output lets the call run; exit 2 denies
// it with the reason (and what to do) on stderr. Each column is a state; a
// cell is pass or a pattern the deny's stderr must match.
func TestPreToolUseAcrossTheSession(t *testing.T) {
	f := newFixture(t)
	inVault := filepath.Join(f.Vault, project, "session-current-state.md")
	sv := regexp.QuoteMeta("`sessionvault --vault " + f.Vault)
	const (
		noSession = `no session is active\. Start one: ` // + the start command
		gateOpen  = `the session start protocol is incomplete: 1 MUST item\(s\) lack evidence`
		analysis  = `mode analysis allows reading only`
		vaultNote = `is in the session vault`
		person    = `a person's command`
	)
	calls := []struct {
		name   string
		fields map[string]any
		// the expectation in each state
		noSession, gateOpen, gateMet, analysis, disabled string
	}{
		{"Read a code file", call("Read", map[string]any{"file_path": filepath.Join(f.Code, "main.go")}),
			pass, pass, pass, pass, pass},
		{"Read a vault note", call("Read", map[string]any{"file_path": inVault}),
			pass, pass, pass, pass, pass},
		{"Grep", call("Grep", map[string]any{"pattern": "func", "path": f.Code}),
			pass, pass, pass, pass, pass},
		{"a reading Bash command", bash("git status && ls -la"),
			pass, pass, pass, pass, pass},
		{"Edit a code file", call("Edit", map[string]any{"file_path": filepath.Join(f.Code, "main.go"), "old_string": "a", "new_string": "b", "replace_all": false}),
			noSession, gateOpen, pass, analysis, pass},
		{"Write a code file", call("Write", map[string]any{"file_path": "x.go", "content": "package x"}),
			noSession, gateOpen, pass, analysis, pass},
		{"a writing Bash command", bash("go test ./..."),
			noSession, gateOpen, pass, analysis, pass},
		{"an unknown tool", call("FancyRefactor", map[string]any{"target": "main.go"}),
			noSession, gateOpen, pass, analysis, pass},
		{"another MCP server's tool", call("mcp__github__create_issue", map[string]any{"title": "x"}),
			noSession, gateOpen, pass, analysis, pass},
		{"Write a vault note", call("Write", map[string]any{"file_path": inVault, "content": "x"}),
			vaultNote, vaultNote, vaultNote, vaultNote, pass},
		{"Edit a vault note by a relative path", call("Edit", map[string]any{"file_path": "../vault/demo/session-decisions.md", "old_string": "a", "new_string": "b"}),
			vaultNote, vaultNote, vaultNote, vaultNote, pass},
		{"sed -i on a vault note", bash("sed -i 's/idle/active/' ../vault/demo/session-current-state.md"),
			vaultNote, vaultNote, vaultNote, vaultNote, pass},
		{"sessionvault's own command", bash("sessionvault evidence record c-1 --file session-current-state.md"),
			pass, pass, pass, pass, pass},
		{"sessionvault's own MCP tool", call("mcp__sessionvault__session_update", map[string]any{"message": "x"}),
			pass, pass, pass, pass, pass},
		{"sessionvault accept", bash("sessionvault accept"),
			person, person, person, person, person},
		{"mode set disabled, quoted", bash("sessionvault --vault=/v mode set dis''abled"),
			person, person, person, person, person},
		{"hooks install after a write", bash("echo x > notes.txt && sessionvault hooks install"),
			person, person, person, person, person},
	}
	check := func(state string, want func(i int) string) {
		t.Helper()
		for i, c := range calls {
			r := f.hook("pre-tool-use", c.fields)
			w := want(i)
			if w == pass {
				if r.Exit != 0 || r.Stdout != "" || r.Stderr != "" {
					t.Errorf("%s, %s: exit %d, stdout %q, stderr %q; want it to pass silently", state, c.name, r.Exit, r.Stdout, r.Stderr)
				}
				continue
			}
			if r.Exit != 2 || r.Stdout != "" || !strings.HasPrefix(r.Stderr, "sessionvault blocked this tool call: ") || !regexp.MustCompile(w).MatchString(r.Stderr) {
				t.Errorf("%s, %s: exit %d, stdout %q, stderr %q; want exit 2 and stderr matching %q", state, c.name, r.Exit, r.Stdout, r.Stderr, w)
			}
		}
	}

	check("no session", func(i int) string { return calls[i].noSession })
	// The deny says how to start, as a command that runs where it is pasted.
	if r := f.hook("pre-tool-use", bash("make")); !strings.Contains(r.Stderr, "`sessionvault --vault "+f.Vault+" start --objective \"...\"`") {
		t.Errorf("no session: the deny does not name the start command: %q", r.Stderr)
	}

	f.start("Login page")
	check("start gate open", func(i int) string { return calls[i].gateOpen })
	// The deny lists each open MUST item with what to do: the objective was
	// observed by start, the branch item is a SHOULD; reading the state is
	// what is left (without the SessionStart hook, which hands it over).
	r := f.hook("pre-tool-use", bash("make"))
	for _, want := range []string{
		`- c-1 Read the current state .*: read the current state: run ` + sv + ` status` + "`",
	} {
		if !regexp.MustCompile(want).MatchString(r.Stderr) {
			t.Errorf("start gate open: the deny lacks %q:\n%s", want, r.Stderr)
		}
	}
	for _, not := range []string{"c-2", "c-3"} {
		if strings.Contains(r.Stderr, not) {
			t.Errorf("start gate open: the deny names %s, which needs nothing:\n%s", not, r.Stderr)
		}
	}

	f.meetStartGate()
	check("start gate met", func(i int) string { return calls[i].gateMet })

	f.sv("mode", "set", "analysis")
	check("analysis mode", func(i int) string { return calls[i].analysis })
	if r := f.hook("pre-tool-use", call("Edit", map[string]any{"file_path": "main.go"})); !strings.Contains(r.Stderr, "`sessionvault --vault "+f.Vault+" mode set coding`") {
		t.Errorf("analysis mode: the deny does not say how to get out of it: %q", r.Stderr)
	}

	f.sv("mode", "set", "disabled")
	check("disabled by a person", func(i int) string { return calls[i].disabled })
}

// TestDecideAnswersWhatPreToolUseWould checks Handler.Decide, which
// `blocked-reason` and the get_blocked_reason MCP tool ask: the same verdict
// as the hook, its reason without the trailing newline.
func TestDecideAnswersWhatPreToolUseWould(t *testing.T) {
	f := newFixture(t)
	f.start("Login page")
	edit := json.RawMessage(`{"file_path":"main.go","old_string":"a","new_string":"b"}`)
	for _, c := range []struct {
		tool   string
		input  json.RawMessage
		cwd    string
		allow  bool
		reason string
	}{
		{"Read", json.RawMessage(`{"file_path":"main.go"}`), f.Code, true, ""},
		{"Edit", edit, f.Code, false, "the session start protocol is incomplete"},
		{"Edit", edit, "", false, "the session start protocol is incomplete"},
		{"Bash", json.RawMessage(`{"command":"sessionvault accept"}`), f.Code, false, "a person's command"},
	} {
		allowed, reason := f.handler().Decide(c.tool, c.input, c.cwd)
		if allowed != c.allow || !strings.Contains(reason, c.reason) || reason != strings.TrimSpace(reason) {
			t.Errorf("Decide(%s, cwd %q) = %v, %q; want %v and a trimmed reason containing %q", c.tool, c.cwd, allowed, reason, c.allow, c.reason)
		}
		cwd := any(c.cwd)
		if c.cwd == "" {
			cwd = nil // Claude Code always sends one; without it, the working directory
		}
		r := f.hook("pre-tool-use", map[string]any{"tool_name": c.tool, "tool_input": c.input, "cwd": cwd})
		if (r.Exit == 0) != c.allow || strings.TrimSpace(strings.TrimPrefix(r.Stderr, "sessionvault blocked this tool call: ")) != reason {
			t.Errorf("%s: the hook answered exit %d, %q; Decide said %v, %q", c.tool, r.Exit, r.Stderr, allowed, reason)
		}
	}
	f.meetStartGate()
	if allowed, reason := f.handler().Decide("Edit", edit, f.Code); !allowed || reason != "" {
		t.Errorf("start gate met: Decide(Edit) = %v, %q; want true, \"\"", allowed, reason)
	}
}

// TestPreToolUseFailsClosedOnAPanic checks that a panic while the state is
// read denies the call (exit 2) and says how a person unlocks; a reading
// call never reads the state, so it still passes.
func TestPreToolUseFailsClosedOnAPanic(t *testing.T) {
	h := panicking()
	r := h.PreToolUse(claudecode.Input{ToolName: "Edit", ToolInput: json.RawMessage(`{"file_path":"main.go"}`)})
	if r.Exit != 2 || !strings.Contains(r.Stderr, "internal error in the hook (the state read blew up); failing closed") ||
		!strings.Contains(r.Stderr, "`sessionvault mode set disabled`") {
		t.Errorf("Edit: %+v; want exit 2 naming the internal error and the way out", r)
	}
	if r := h.PreToolUse(claudecode.Input{ToolName: "Read", ToolInput: json.RawMessage(`{"file_path":"main.go"}`)}); r.Exit != 0 || r.Stderr != "" {
		t.Errorf("Read: %+v; want it to pass", r)
	}
}

// TestPreToolUseFollowsTheVaultsToolPolicy checks that a person's tool
// policy in .sessionvault/config.yaml (read_only_tools, mode_blocks,
// unknown_mcp_tools) is what the hook decides by, and that
// claudecode.PolicyFrom reads the same settings.
func TestPreToolUseFollowsTheVaultsToolPolicy(t *testing.T) {
	f := newFixture(t)
	docs := call("mcp__docs__search", map[string]any{"q": "hooks"})
	other := call("mcp__jira__get_issue", map[string]any{"key": "X-1"})
	// The defaults: with no session, neither MCP tool runs.
	for _, c := range []map[string]any{docs, other} {
		if r := f.hook("pre-tool-use", c); r.Exit != 2 {
			t.Errorf("default policy, %s: exit %d; want 2", c["tool_name"], r.Exit)
		}
	}
	cfg := filepath.Join(f.Vault, ".sessionvault", "config.yaml")
	text := readFile(t, cfg) + `
read_only_tools: [Read, Grep, "mcp__docs__.*"]
unknown_mcp_tools: read
mode_blocks:
  coding: [WebFetch, Bash]
`
	writeFile(t, cfg, text)
	if r := f.hook("pre-tool-use", docs); r.Exit != 0 {
		t.Errorf("read_only_tools names mcp__docs__.*: exit %d, %q; want it to pass", r.Exit, r.Stderr)
	}
	if r := f.hook("pre-tool-use", other); r.Exit != 0 {
		t.Errorf("unknown_mcp_tools: read: exit %d, %q; want it to pass", r.Exit, r.Stderr)
	}
	f.working("Login page")
	if r := f.hook("pre-tool-use", bash("go test ./...")); r.Exit != 2 || !strings.Contains(r.Stderr, "mode coding") {
		t.Errorf("mode_blocks blocks Bash in coding: exit %d, %q; want 2 naming the mode", r.Exit, r.Stderr)
	}
	if r := f.hook("pre-tool-use", call("Edit", map[string]any{"file_path": "main.go"})); r.Exit != 0 {
		t.Errorf("Edit, not in mode_blocks: exit %d, %q; want it to pass", r.Exit, r.Stderr)
	}

	p := claudecode.PolicyFrom(f.config())
	if !p.IsReadOnly("mcp__docs__search") || !p.BlockedBy("coding", "Bash") || p.BlockedBy("coding", "Edit") {
		t.Errorf("PolicyFrom(the vault's settings) = %+v", p)
	}
}

// TestPreToolUseFindsTheVaultThroughTheRepositoryLink checks the hook run as
// `hooks install` wires it — no --vault, in the code repository: unlinked,
// editing is denied with how to link (reading passes); once linked by
// `sessionvault hooks install`, the vault is found from the input's cwd,
// from $CLAUDE_PROJECT_DIR, or from the working directory.
func TestPreToolUseFindsTheVaultThroughTheRepositoryLink(t *testing.T) {
	f := newFixture(t)
	edit := call("Edit", map[string]any{"file_path": "main.go"})
	r := hook(f.input("pre-tool-use", edit), "pre-tool-use")
	if r.Exit != 2 || !strings.Contains(r.Stderr, "link the code repository to its vault: `sessionvault --vault VAULT hooks install` in "+f.Code) {
		t.Errorf("unlinked: exit %d, %q; want the deny to say how to link", r.Exit, r.Stderr)
	}
	if r := hook(f.input("pre-tool-use", call("Read", map[string]any{"file_path": "main.go"})), "pre-tool-use"); r.Exit != 0 {
		t.Errorf("unlinked, Read: exit %d, %q; want it to pass", r.Exit, r.Stderr)
	}

	f.sv("hooks", "install", "--project-dir", f.Code)
	noSession := "no session is active"
	elsewhere := t.TempDir()
	t.Chdir(elsewhere)
	if r := hook(f.input("pre-tool-use", edit), "hook", "pre-tool-use"); r.Exit != 2 || !strings.Contains(r.Stderr, noSession) {
		t.Errorf("linked, cwd in the input: exit %d, %q; want the vault's answer (%s)", r.Exit, r.Stderr, noSession)
	}
	t.Setenv("CLAUDE_PROJECT_DIR", f.Code)
	if r := hook(f.input("pre-tool-use", call("Edit", map[string]any{"file_path": "main.go"}, map[string]any{"cwd": nil})), "pre-tool-use"); r.Exit != 2 || !strings.Contains(r.Stderr, noSession) {
		t.Errorf("linked, no cwd, $CLAUDE_PROJECT_DIR: exit %d, %q; want the vault's answer", r.Exit, r.Stderr)
	}
	t.Setenv("CLAUDE_PROJECT_DIR", "")
	if r := hook(f.input("pre-tool-use", call("Edit", map[string]any{"file_path": "main.go"}, map[string]any{"cwd": nil})), "pre-tool-use"); r.Exit != 2 || !strings.Contains(r.Stderr, "link the code repository to its vault") || !strings.Contains(r.Stderr, elsewhere) {
		t.Errorf("no cwd, working directory unlinked: exit %d, %q; want how to link %s", r.Exit, r.Stderr, elsewhere)
	}
	t.Chdir(f.Code)
	if r := hook(f.input("pre-tool-use", call("Edit", map[string]any{"file_path": "main.go"}, map[string]any{"cwd": nil})), "pre-tool-use"); r.Exit != 2 || !strings.Contains(r.Stderr, noSession) {
		t.Errorf("linked, no cwd, working directory: exit %d, %q; want the vault's answer", r.Exit, r.Stderr)
	}
}

// TestPreToolUseForAProjectTheVaultLacks checks --project naming no project
// of the vault: editing is denied with how to make it; the other hooks stay
// silent.
func TestPreToolUseForAProjectTheVaultLacks(t *testing.T) {
	f := newFixture(t)
	r := hook(f.input("pre-tool-use", call("Edit", map[string]any{"file_path": "main.go"})), "--vault", f.Vault, "--project", "billing", "pre-tool-use")
	if r.Exit != 2 || !strings.Contains(r.Stderr, `project "billing" has no session-current-state.md`) || !strings.Contains(r.Stderr, "init --project billing`; failing closed") {
		t.Errorf("Edit: exit %d, %q; want a deny naming the missing project and how to make it", r.Exit, r.Stderr)
	}
	for _, event := range []string{"post-tool-use", "session-start", "pre-compact", "stop"} {
		r := hook(f.input(event, bash("go test ./...")), "--vault", f.Vault, "--project=billing", event)
		if r != (result{}) {
			t.Errorf("%s: %+v; want exit 0 and no output", event, r)
		}
	}
}

// TestHookWhenTheFolderCannotBeKnown checks a hook run with no cwd in its
// input, no $CLAUDE_PROJECT_DIR and a working directory that was deleted:
// no vault can be found, so editing is denied saying why, and reading
// passes.
func TestHookWhenTheFolderCannotBeKnown(t *testing.T) {
	isolate(t)
	gone := filepath.Join(t.TempDir(), "gone")
	writeFile(t, filepath.Join(gone, "x"), "")
	t.Chdir(gone)
	if err := os.RemoveAll(gone); err != nil {
		t.Fatal(err)
	}
	r := hook(`{"hook_event_name":"PreToolUse","tool_name":"Edit","tool_input":{"file_path":"main.go"}}`, "pre-tool-use")
	if r.Exit != 2 || !strings.Contains(r.Stderr, "the vault cannot be opened (") || !strings.Contains(r.Stderr, "failing closed. Read-only tools still work") {
		t.Errorf("Edit: %+v; want exit 2 saying the vault cannot be opened", r)
	}
	if r := hook(`{"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"main.go"}}`, "pre-tool-use"); r != silent {
		t.Errorf("Read: %+v; want it to pass", r)
	}
}
