package guard

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/sessionvault/sessionvault/internal/policy"
)

// fixture is a vault and a code repository side by side in a temporary
// folder, as in the replayed session: <dir>/vault holds project demo with
// its current-state note, <dir>/code is where the agent works, and
// <dir>/code/.serena/memories links to the project's folder in the vault
// (what `init --serena` makes).
type fixture struct {
	dir, root, code string
	place           Place
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	dir := t.TempDir()
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r // (macOS: /var is a link)
	}
	f := fixture{dir: dir, root: filepath.Join(dir, "vault"), code: filepath.Join(dir, "code")}
	f.place = Place{Root: f.root, Project: "demo", DefaultProject: "demo"}
	writeFile(t, filepath.Join(f.root, "demo", "session-current-state.md"), "---\nstatus: active\nmode: coding\n---\n# Current state\n")
	writeFile(t, filepath.Join(f.code, "main.go"), "package main\n")
	if err := os.MkdirAll(filepath.Join(f.code, ".serena"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(f.root, "demo"), filepath.Join(f.code, ".serena", "memories")); err != nil {
		t.Fatal(err)
	}
	return f
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// traceCall is one PreToolUse input of a replayed Claude Code session
// (testdata/session.jsonl, copied from internal/cli/testdata/traces),
// labelled with what it does: read, way (sessionvault's own), edit, write,
// vault (writes a vault note by some path; {vault} stands for the vault's
// root) or person (a person's command in some spelling).
type traceCall struct {
	Tool  string          `json:"tool"`
	Input json.RawMessage `json:"input"`
	Kind  string          `json:"kind"`
}

func loadTrace(t *testing.T, root string) []traceCall {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var calls []traceCall
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		var c traceCall
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("trace line %d: %v", len(calls)+1, err)
		}
		c.Input = bytes.ReplaceAll(c.Input, []byte("{vault}"), []byte(root))
		calls = append(calls, c)
	}
	kinds := map[string]bool{}
	for _, c := range calls {
		kinds[c.Kind] = true
	}
	for _, k := range []string{"read", "way", "edit", "write", "vault", "person"} {
		if !kinds[k] {
			t.Fatalf("the trace has no %s call", k)
		}
	}
	return calls
}

// decideCall is what the hooks do with a tool call: classify it, Screen it,
// and Decide what Screen leaves open with the state's facts.
func decideCall(tool string, input json.RawMessage, cwd string, at Place, tab policy.Table, f Facts) Verdict {
	call := policy.Classify(tool, input, policy.Config{})
	if v, decided := Screen(&call, tab); decided {
		return v
	}
	return Decide(call, cwd, at, tab, f)
}

// startItems are open MUST items of a start checklist, as the engine
// reports them (session.Gate): one checked by a file, one a person ticks,
// one checked by running a command in the code repository.
var startItems = []Missing{
	{ID: "c-1", Step: "Read the current state", Do: "read session-current-state.md, then run `sessionvault evidence record c-1 --file session-current-state.md`"},
	{ID: "c-2", Step: "Confirm the objective", Do: "a person ticks it in session-current-state.md"},
	{ID: "c-3", Step: "Check the branch", Do: "run `sessionvault evidence record c-3 --run` (it runs: git branch --show-current)"},
}

// sessionState is one state the guard decides in: the facts of the
// verified note, the labels of the calls it lets through, and what the
// reason of a denied editing or writing call must say.
type sessionState struct {
	name    string
	facts   Facts
	allowed []string
	why     func(f fixture) []string
}

func sessionStates() []sessionState {
	readAndWay := []string{"read", "way"}
	working := []string{"read", "way", "edit", "write"}
	startOne := func(f fixture) []string {
		return []string{"no session is active", "`sessionvault --vault " + f.root + ` start --objective "..."` + "`"}
	}
	switchMode := func(mode string) func(fixture) []string {
		return func(f fixture) []string {
			return []string{"mode " + mode + " allows reading only", "`sessionvault --vault " + f.root + " mode set coding`"}
		}
	}
	gateOpen := func(f fixture) []string {
		return []string{"the session start protocol is incomplete: 3 MUST item(s) lack evidence", "c-1 Read the current state", "c-2 Confirm the objective", "c-3 Check the branch"}
	}
	return []sessionState{
		{name: "no session", facts: Facts{Mode: policy.ModeCoding}, allowed: readAndWay, why: startOne},
		{name: "idle note naming no mode", facts: Facts{}, allowed: readAndWay, why: startOne},
		{name: "no session, analysis", facts: Facts{Mode: policy.ModeAnalysis}, allowed: readAndWay, why: startOne},
		{name: "coding, start items open", facts: Facts{Session: "s-1", Active: true, Mode: policy.ModeCoding, StartMissing: startItems}, allowed: readAndWay, why: gateOpen},
		{name: "coding, start gate unverifiable", facts: Facts{Session: "s-1", Active: true, Mode: policy.ModeCoding, GateError: "the protocol cannot be read: SESSION-PROTOCOL.md: no MUST items"}, allowed: readAndWay,
			why: func(fixture) []string {
				return []string{"the protocol cannot be read: SESSION-PROTOCOL.md: no MUST items", "failing closed"}
			}},
		{name: "coding, start gate passed", facts: Facts{Session: "s-1", Active: true, Mode: policy.ModeCoding}, allowed: working},
		{name: "unknown mode, start gate passed", facts: Facts{Session: "s-1", Active: true, Mode: "reviewing"}, allowed: working},
		{name: "planning", facts: Facts{Session: "s-1", Active: true, Mode: policy.ModePlanning}, allowed: readAndWay, why: switchMode("planning")},
		{name: "analysis", facts: Facts{Session: "s-1", Active: true, Mode: policy.ModeAnalysis}, allowed: readAndWay, why: switchMode("analysis")},
		{name: "analysis, start items open", facts: Facts{Session: "s-1", Active: true, Mode: policy.ModeAnalysis, StartMissing: startItems}, allowed: readAndWay, why: switchMode("analysis")},
		{name: "disabled", facts: Facts{Session: "s-1", Active: true, Mode: policy.ModeDisabled}, allowed: []string{"read", "way", "edit", "write", "vault"}},
		{name: "disabled, no session", facts: Facts{Mode: policy.ModeDisabled}, allowed: []string{"read", "way", "edit", "write", "vault"}},
	}
}

// Every call of a replayed session gets, in every state the guard knows,
// the decision the user expects: reading calls and sessionvault's own
// commands always pass; editing and writing calls only in an active coding
// session whose start gate passed (or in mode disabled); a call that
// writes a vault note is refused unless disabled, with a reason that points
// to sessionvault's commands; a person's command never passes. Each deny
// names its remedy: start a session, switch the mode, the open start items
// with runnable commands, or the reason the gate could not be checked.
func TestDecisionForEveryCallInEveryState(t *testing.T) {
	f := newFixture(t)
	calls := loadTrace(t, f.root)
	tab := policy.DefaultTable()
	for _, s := range sessionStates() {
		t.Run(s.name, func(t *testing.T) {
			for _, c := range calls {
				v := decideCall(c.Tool, c.Input, f.code, f.place, tab, s.facts)
				want := slices.Contains(s.allowed, c.Kind)
				if v.Allowed != want {
					t.Errorf("%s %s (%s): allowed %v, want %v; reason: %s", c.Tool, c.Input, c.Kind, v.Allowed, want, v.Reason)
					continue
				}
				if v.Allowed {
					if v.Reason != "" {
						t.Errorf("%s %s: allowed with a reason %q", c.Tool, c.Input, v.Reason)
					}
					continue
				}
				var wantWhy []string
				switch {
				case c.Kind == "person":
					wantWhy = []string{"the agent may not run a person's command", "sessionvault accept"}
				case c.Kind == "vault":
					wantWhy = []string{"is in the session vault", "written through sessionvault"}
				case s.why != nil:
					wantWhy = s.why(f)
				default:
					t.Fatalf("state %s denies %s without an expected reason", s.name, c.Kind)
				}
				for _, w := range wantWhy {
					if !strings.Contains(v.Reason, w) {
						t.Errorf("%s %s (%s): reason %q lacks %q", c.Tool, c.Input, c.Kind, v.Reason, w)
					}
				}
			}
		})
	}
}

// The class a verdict reports is the call's class in the policy table (the
// hooks log it and decide from it whether PostToolUse must look for changed
// notes).
func TestVerdictReportsTheCallsClass(t *testing.T) {
	f := newFixture(t)
	want := map[string]policy.Class{"read": policy.Read, "way": policy.Way, "edit": policy.Edit, "write": policy.Write, "person": policy.Person}
	for _, c := range loadTrace(t, f.root) {
		w, ok := want[c.Kind]
		if !ok {
			continue
		}
		for _, facts := range []Facts{{}, {Active: true, Mode: policy.ModeCoding}} {
			if v := decideCall(c.Tool, c.Input, f.code, f.place, policy.DefaultTable(), facts); v.Class != w {
				t.Errorf("%s %s: class %s, want %s", c.Tool, c.Input, v.Class, w)
			}
		}
	}
}

// Without trusted session facts (no state yet, a tampered or unreadable
// note, a cache that does not check) only Screen can decide: it lets the
// reading calls through and refuses a person's command, and leaves every
// other call open — the hooks then deny it or read the state, never allow
// it unseen.
func TestScreenDecidesOnlyWhatNeedsNoState(t *testing.T) {
	f := newFixture(t)
	for _, c := range loadTrace(t, f.root) {
		call := policy.Classify(c.Tool, c.Input, policy.Config{})
		v, decided := Screen(&call, policy.DefaultTable())
		switch c.Kind {
		case "read":
			if !decided || !v.Allowed {
				t.Errorf("%s %s: decided %v allowed %v, want a reading call allowed", c.Tool, c.Input, decided, v.Allowed)
			}
		case "person":
			if !decided || v.Allowed || !strings.Contains(v.Reason, call.Why) || !strings.Contains(v.Reason, "may not run a person's command") {
				t.Errorf("%s %s: decided %v allowed %v (%s), want denied naming why", c.Tool, c.Input, decided, v.Allowed, v.Reason)
			}
		default:
			if decided {
				t.Errorf("%s %s (%s): decided without the state: %+v", c.Tool, c.Input, c.Kind, v)
			}
		}
	}
}

// The vault's tool table changes decisions: a tool it declares read-only
// passes without a session (and is reported as Read), a mode's blocks deny a
// tool the mode's class rules would allow, an empty blocks list does not
// open what the mode's class rules forbid, and neither can let a person's
// command through or stop sessionvault's own commands.
func TestVaultTableChangesDecisions(t *testing.T) {
	f := newFixture(t)
	coding := Facts{Session: "s-1", Active: true, Mode: policy.ModeCoding}
	planning := Facts{Session: "s-1", Active: true, Mode: policy.ModePlanning}
	analysis := Facts{Session: "s-1", Active: true, Mode: policy.ModeAnalysis}
	custom := policy.TableFrom([]string{"mcp__github__get_.*", "Bash"}, map[string][]string{
		"coding":   {"mcp__github__create_.*"},
		"planning": {},
	})
	tests := []struct {
		name    string
		tab     policy.Table
		facts   Facts
		tool    string
		input   string
		allowed bool
		class   policy.Class
		why     string
	}{
		{name: "declared read-only, no session", tab: custom, facts: Facts{}, tool: "mcp__github__get_issue", input: `{}`, allowed: true, class: policy.Read},
		{name: "not declared, no session", tab: custom, facts: Facts{}, tool: "mcp__github__list_issues", input: `{}`, class: policy.Write, why: "no session is active"},
		{name: "blocked in coding", tab: custom, facts: coding, tool: "mcp__github__create_pull_request", input: `{}`, class: policy.Write, why: "`mcp__github__create_pull_request` is a tool of an MCP server"},
		{name: "not blocked in coding", tab: custom, facts: coding, tool: "mcp__github__merge_pull_request", input: `{}`, allowed: true, class: policy.Write},
		{name: "empty planning blocks still deny editing", tab: custom, facts: planning, tool: "Edit", input: `{"file_path":"main.go"}`, class: policy.Edit, why: "mode planning allows reading only"},
		{name: "Bash declared read-only: writing Bash passes without a session", tab: custom, facts: Facts{}, tool: "Bash", input: `{"command":"make"}`, allowed: true, class: policy.Read},
		{name: "Bash declared read-only: a person's command is still refused", tab: custom, facts: coding, tool: "Bash", input: `{"command":"sessionvault accept"}`, class: policy.Person, why: "person's command"},
		{name: "analysis blocks Bash: a reading line still passes", tab: policy.DefaultTable(), facts: analysis, tool: "Bash", input: `{"command":"git log -3"}`, allowed: true, class: policy.Read},
		{name: "analysis blocks Bash: sessionvault still passes", tab: policy.DefaultTable(), facts: analysis, tool: "Bash", input: `{"command":"sessionvault mode set coding"}`, allowed: true, class: policy.Way},
		{name: "analysis blocks Bash: a writing line is denied", tab: policy.DefaultTable(), facts: analysis, tool: "Bash", input: `{"command":"go test ./..."}`, class: policy.Write, why: "`go test` builds or runs code"},
		{name: "sessionvault MCP tools pass in analysis", tab: policy.DefaultTable(), facts: analysis, tool: "mcp__sessionvault__session_update", input: `{}`, allowed: true, class: policy.Way},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := decideCall(tc.tool, json.RawMessage(tc.input), f.code, f.place, tc.tab, tc.facts)
			if v.Allowed != tc.allowed || v.Class != tc.class {
				t.Fatalf("allowed %v class %s (%s), want allowed %v class %s", v.Allowed, v.Class, v.Reason, tc.allowed, tc.class)
			}
			if !strings.Contains(v.Reason, tc.why) {
				t.Errorf("reason %q lacks %q", v.Reason, tc.why)
			}
		})
	}
}

// A call that edits or may write a file in the vault is refused whatever
// way it names the file: absolute, relative to the working folder, through
// a symbolic link (Serena's memories link), under ~, a file or folder not
// made yet, the vault's root itself, or a shell redirection named only at
// run time while working in the vault. Files outside the vault — including
// a sibling folder whose name starts like the vault's — pass. Reading the
// vault and sessionvault's own commands pass.
func TestWritesIntoTheVaultAreRefused(t *testing.T) {
	f := newFixture(t)
	t.Setenv("HOME", f.dir)
	writeFile(t, filepath.Join(f.dir, "vault2", "x.md"), "x")
	if err := os.Symlink(filepath.Join(f.root, "demo"), filepath.Join(f.code, "notes")); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(f.dir, "other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	note := filepath.Join(f.root, "demo", "session-current-state.md")
	in := func(k, v string) string { b, _ := json.Marshal(map[string]string{k: v}); return string(b) }
	tests := []struct {
		name    string
		tool    string
		input   string
		cwd     string
		refused bool
		names   string // a part of the reason: the file (or folder) refused
	}{
		{name: "Edit, absolute", tool: "Edit", input: in("file_path", note), cwd: f.code, refused: true, names: note},
		{name: "Write, relative", tool: "Write", input: in("file_path", "../vault/demo/session-current-state.md"), cwd: f.code, refused: true, names: "vault/demo/session-current-state.md"},
		{name: "Write, a new folder in the vault", tool: "Write", input: in("file_path", "../vault/demo/tasks/new/t.md"), cwd: f.code, refused: true},
		{name: "Edit, through a link", tool: "Edit", input: in("file_path", "notes/session-current-state.md"), cwd: f.code, refused: true},
		{name: "Write, a new file through a link", tool: "Write", input: in("file_path", "notes/new.md"), cwd: f.code, refused: true},
		{name: "Edit, Serena's memories link", tool: "Edit", input: in("file_path", ".serena/memories/session-current-state.md"), cwd: f.code, refused: true},
		{name: "Edit, under ~", tool: "Edit", input: in("file_path", "~/vault/demo/session-current-state.md"), cwd: f.code, refused: true},
		{name: "Edit, the vault's root", tool: "Edit", input: in("file_path", f.root), cwd: f.code, refused: true},
		{name: "Edit, relative while in the vault", tool: "Edit", input: in("file_path", "session-current-state.md"), cwd: filepath.Join(f.root, "demo"), refused: true},
		{name: "NotebookEdit in the vault", tool: "NotebookEdit", input: in("notebook_path", filepath.Join(f.root, "a.ipynb")), cwd: f.code, refused: true},
		{name: "Bash sed -i on the note", tool: "Bash", input: in("command", "sed -i 's/- \\[ \\]/- [x]/' ../vault/demo/session-current-state.md"), cwd: f.code, refused: true},
		{name: "Bash append through the link", tool: "Bash", input: in("command", "echo '- [x] done' >> .serena/memories/session-current-state.md"), cwd: f.code, refused: true},
		{name: "Bash rm of the vault", tool: "Bash", input: in("command", "rm -rf "+f.root), cwd: f.code, refused: true},
		{name: "Bash, file named at run time, in the vault", tool: "Bash", input: in("command", `echo x > "$F"`), cwd: filepath.Join(f.root, "demo"), refused: true},
		{name: "Serena memory write, project linked to the vault", tool: "mcp__serena__write_memory", input: in("memory_file_name", "m"), cwd: f.code, refused: true, names: "Serena's memories folder (" + filepath.Join(f.code, ".serena", "memories") + ")"},
		{name: "Serena edit in the vault", tool: "mcp__serena__create_text_file", input: in("relative_path", "../vault/demo/x.md"), cwd: f.code, refused: true},

		{name: "Edit, code", tool: "Edit", input: in("file_path", "main.go"), cwd: f.code},
		{name: "Write, a sibling folder named like the vault", tool: "Write", input: in("file_path", "../vault2/x.md"), cwd: f.code},
		{name: "Edit, under ~ outside the vault", tool: "Edit", input: in("file_path", "~/code/main.go"), cwd: f.code},
		{name: "Edit, no path given", tool: "Edit", input: `{}`, cwd: f.code},
		{name: "Bash, file named at run time, outside the vault", tool: "Bash", input: in("command", `echo x > "$F"`), cwd: f.code},
		{name: "Bash cp into another folder", tool: "Bash", input: in("command", "cp main.go ../other/main.go"), cwd: f.code},
		{name: "Serena memory write, project not linked", tool: "mcp__serena__write_memory", input: in("memory_file_name", "m"), cwd: other},
		{name: "Read of the note", tool: "Read", input: in("file_path", note), cwd: f.code},
		{name: "Bash cat of the note", tool: "Bash", input: in("command", "cat "+note), cwd: f.code},
		{name: "sessionvault command in the vault", tool: "Bash", input: in("command", "sessionvault update 'done'"), cwd: filepath.Join(f.root, "demo")},
	}
	facts := Facts{Session: "s-1", Active: true, Mode: policy.ModeCoding}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := decideCall(tc.tool, json.RawMessage(tc.input), tc.cwd, f.place, policy.DefaultTable(), facts)
			if v.Allowed == tc.refused {
				t.Fatalf("allowed %v, want refused %v; reason: %s", v.Allowed, tc.refused, v.Reason)
			}
			if tc.refused && (!strings.Contains(v.Reason, "is in the session vault") || !strings.Contains(v.Reason, tc.names)) {
				t.Errorf("reason %q does not say the vault is written through sessionvault, naming %q", v.Reason, tc.names)
			}
		})
	}
}

// A hook input without a working folder (cwd "") resolves relative paths
// against the hook's own working folder.
func TestWritesResolvedAgainstTheHooksFolderWithoutCwd(t *testing.T) {
	f := newFixture(t)
	facts := Facts{Session: "s-1", Active: true, Mode: policy.ModeCoding}
	t.Chdir(filepath.Join(f.root, "demo"))
	if v := decideCall("Bash", json.RawMessage(`{"command":"echo x >> session-current-state.md"}`), "", f.place, policy.DefaultTable(), facts); v.Allowed {
		t.Error("a write in the vault, relative to the hook's folder, was allowed")
	}
	t.Chdir(f.code)
	if v := decideCall("Bash", json.RawMessage(`{"command":"echo x >> session-current-state.md"}`), "", f.place, policy.DefaultTable(), facts); !v.Allowed {
		t.Errorf("a write in the code repository was denied: %s", v.Reason)
	}
}

// shellWords are the words a POSIX shell gives the command line cmd (no
// variables set), or the test fails when it is not one simple command.
func shellWords(t *testing.T, cmd string) []string {
	t.Helper()
	f, err := syntax.NewParser().Parse(strings.NewReader(cmd), "")
	if err != nil {
		t.Fatalf("%q does not parse: %v", cmd, err)
	}
	if len(f.Stmts) != 1 {
		t.Fatalf("%q is %d commands", cmd, len(f.Stmts))
	}
	call, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok {
		t.Fatalf("%q is not a simple command", cmd)
	}
	words, err := expand.Fields(&expand.Config{}, call.Args...)
	if err != nil {
		t.Fatalf("%q: %v", cmd, err)
	}
	return words
}

// quoted returns the text between backquotes in s, in order.
func quoted(s string) []string {
	parts := strings.Split(s, "`")
	var out []string
	for i := 1; i < len(parts); i += 2 {
		out = append(out, parts[i])
	}
	return out
}

// The open start items in a deny are listed in checklist order, each with
// its remedy, and every sessionvault command quoted there runs pasted into
// a shell in any folder: it names the vault (and the project when it is not
// the default), and an evidence check that runs in the code repository
// names the agent's folder.
func TestStartGateReasonListsRunnableRemedies(t *testing.T) {
	f := newFixture(t)
	f.root = filepath.Join(f.dir, "my vault") // a root that needs quoting
	at := Place{Root: f.root, Project: "web app", DefaultProject: "demo"}
	cwd := filepath.Join(f.dir, "code dir")
	facts := Facts{Session: "s-1", Active: true, Mode: policy.ModeCoding, StartMissing: startItems}
	v := Decide(policy.Classify("Edit", json.RawMessage(`{"file_path":"main.go"}`), policy.Config{}), cwd, at, policy.DefaultTable(), facts)
	if v.Allowed {
		t.Fatal("allowed with the start gate open")
	}
	i1, i2, i3 := strings.Index(v.Reason, "- c-1 "), strings.Index(v.Reason, "- c-2 "), strings.Index(v.Reason, "- c-3 ")
	if i1 < 0 || !(i1 < i2 && i2 < i3) {
		t.Errorf("items not listed in order: %s", v.Reason)
	}
	if !strings.Contains(v.Reason, "a person ticks it in session-current-state.md") {
		t.Errorf("the person's item lacks its remedy: %s", v.Reason)
	}
	cmds := quoted(v.Reason)
	if len(cmds) != 2 {
		t.Fatalf("quoted commands %q, want the two evidence commands", cmds)
	}
	want := [][]string{
		{"sessionvault", "--vault", f.root, "--project", "web app", "evidence", "record", "c-1", "--file", "session-current-state.md"},
		{"sessionvault", "--vault", f.root, "--project", "web app", "evidence", "record", "c-3", "--run", "--dir", cwd},
	}
	for i, c := range cmds {
		if got := shellWords(t, c); !slices.Equal(got, want[i]) {
			t.Errorf("command %q runs as %q, want %q", c, got, want[i])
		}
	}
}

// A command shown to the agent names the vault, and the project only when
// it is not the vault's default, quoted so that a shell passes them as they
// are.
func TestCommandNamesVaultAndProject(t *testing.T) {
	tests := []struct {
		at   Place
		want []string
	}{
		{Place{Root: "/v", Project: "demo", DefaultProject: "demo"}, []string{"sessionvault", "--vault", "/v", "status"}},
		{Place{Root: "/v", Project: "", DefaultProject: "demo"}, []string{"sessionvault", "--vault", "/v", "status"}},
		{Place{Root: "/v", Project: "api", DefaultProject: "demo"}, []string{"sessionvault", "--vault", "/v", "--project", "api", "status"}},
		{Place{Root: "/home/o'neil/my vault", Project: "a b", DefaultProject: ""}, []string{"sessionvault", "--vault", "/home/o'neil/my vault", "--project", "a b", "status"}},
		{Place{Root: "/v/$HOME/`x`", Project: "p;rm -rf x"}, []string{"sessionvault", "--vault", "/v/$HOME/`x`", "--project", "p;rm -rf x", "status"}},
	}
	for _, tc := range tests {
		cmd := tc.at.Command("status")
		if got := shellWords(t, cmd); !slices.Equal(got, tc.want) {
			t.Errorf("%+v: %q runs as %q, want %q", tc.at, cmd, got, tc.want)
		}
	}
}

// Runnable rewrites each `sessionvault ...` quoted in a text so that it runs
// from any folder, adds the code folder to evidence checks that run there
// (--run, --sha), and leaves alone what it must not touch: commands that
// already name a vault, other commands, unterminated quotes, and the text
// around them.
func TestRunnableRewritesQuotedCommands(t *testing.T) {
	at := Place{Root: "/vaults/main", Project: "api", DefaultProject: "demo"}
	tests := []struct {
		name    string
		text    string
		codeDir string
		want    string // the text with each quoted command replaced by its words joined with |
	}{
		{name: "file evidence", text: "run `sessionvault evidence record c-1 --file a.md` now", codeDir: "/code",
			want: "run `sessionvault|--vault|/vaults/main|--project|api|evidence|record|c-1|--file|a.md` now"},
		{name: "run evidence gets the code folder", text: "run `sessionvault evidence record c-3 --run` (it runs: make)", codeDir: "/my code",
			want: "run `sessionvault|--vault|/vaults/main|--project|api|evidence|record|c-3|--run|--dir|/my code` (it runs: make)"},
		{name: "commit evidence gets the code folder", text: "`sessionvault evidence record c-4 --sha COMMIT`", codeDir: "/code",
			want: "`sessionvault|--vault|/vaults/main|--project|api|evidence|record|c-4|--sha|COMMIT|--dir|/code`"},
		{name: "no code folder", text: "`sessionvault evidence record c-3 --run`", codeDir: "",
			want: "`sessionvault|--vault|/vaults/main|--project|api|evidence|record|c-3|--run`"},
		{name: "two commands", text: "`sessionvault status` then `sessionvault update x`", codeDir: "/code",
			want: "`sessionvault|--vault|/vaults/main|--project|api|status` then `sessionvault|--vault|/vaults/main|--project|api|update|x`"},
		{name: "names its vault already", text: "`sessionvault --vault /other status` and `sessionvault check`", codeDir: "/code",
			want: "`sessionvault|--vault|/other|status` and `sessionvault|--vault|/vaults/main|--project|api|check`"},
		{name: "another command", text: "`git status` shows it", codeDir: "/code", want: "`git|status` shows it"},
		{name: "unterminated", text: "run `sessionvault status", codeDir: "/code", want: "run `sessionvault status"},
		{name: "plain text", text: "a person ticks it", codeDir: "/code", want: "a person ticks it"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := at.Runnable(tc.text, tc.codeDir)
			parts := strings.Split(got, "`")
			if len(parts)%2 == 1 { // complete quotes: compare what the shell runs
				for i := 1; i < len(parts); i += 2 {
					parts[i] = strings.Join(shellWords(t, parts[i]), "|")
				}
			}
			if s := strings.Join(parts, "`"); s != tc.want {
				t.Errorf("Runnable(%q) = %q\nruns as %q\nwant    %q", tc.text, got, s, tc.want)
			}
		})
	}
}

// A state that cannot be read or verified denies every call that needs it,
// whatever its mode, naming why and what a person runs; each command quoted
// in the deny is one shell command naming the vault (and the note).
func TestUnreadableStateDeniesWithWhatAPersonRuns(t *testing.T) {
	f := newFixture(t)
	at := Place{Root: f.root + "/my vault", Project: "web app", DefaultProject: "demo"}
	for _, tc := range []struct {
		name  string
		facts Facts
		want  []string
	}{
		{"broken", Facts{Unreadable: "web app/session-current-state.md:6: front matter is not valid YAML", Mode: "disabled"},
			[]string{"git -C " + at.Root + " checkout -- web app/session-current-state.md", "sessionvault --vault " + at.Root + " --project web app accept"}},
		{"tampered", Facts{Unreadable: "changed outside sessionvault", Tampered: true},
			[]string{"git -C " + at.Root + " diff -- web app/session-current-state.md", "git -C " + at.Root + " log -p -3 -- web app/session-current-state.md", "sessionvault --vault " + at.Root + " --project web app accept"}},
	} {
		for _, call := range []string{`{"command":"make"}`, `{"command":"sessionvault update x"}`} {
			v := decideCall("Bash", json.RawMessage(call), f.code, at, policy.DefaultTable(), tc.facts)
			if v.Allowed || !strings.Contains(v.Reason, tc.facts.Unreadable) || !strings.Contains(v.Reason, "until then only read-only tools run") {
				t.Fatalf("%s, %s: %+v", tc.name, call, v)
			}
			var got []string
			for _, q := range quoted(v.Reason) {
				for _, part := range strings.Split(q, "; ") {
					got = append(got, strings.Join(shellWords(t, part), " "))
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s: the commands of %q = %q\nwant %q", tc.name, v.Reason, got, tc.want)
			}
		}
		if v := decideCall("Read", json.RawMessage(`{"file_path":"main.go"}`), f.code, at, policy.DefaultTable(), tc.facts); !v.Allowed {
			t.Errorf("%s: Read %+v; reading never needs the state", tc.name, v)
		}
	}
}
