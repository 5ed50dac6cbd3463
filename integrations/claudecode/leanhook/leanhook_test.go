package leanhook_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// silent is the answer of a hook with nothing to say: exit 0, no output.
var silent = result{}

func edit() map[string]any {
	return map[string]any{"tool_name": "Edit", "tool_input": map[string]any{"file_path": "main.go", "old_string": "a", "new_string": "b"}}
}

var toolUses int

func bash(command string) map[string]any {
	toolUses++
	return map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": command}, "tool_use_id": "toolu_0" + strconv.Itoa(toolUses)}
}

// TestLeanHookDecidesAloneFromTheCache runs sessionvault-hook where only it
// is installed (no full binary): reading calls and a person's commands are
// decided by the policy table; while the signed facts cache matches the
// state, every PreToolUse call is decided from it — editing passes, writing
// into the vault does not; once the note changes behind sessionvault's
// back, the cache is not used and the call fails closed.
func TestLeanHookDecidesAloneFromTheCache(t *testing.T) {
	f := newFixture(t)
	withoutFullBinary(t)
	read := map[string]any{"tool_name": "Read", "tool_input": map[string]any{"file_path": "main.go"}}
	if r := f.hook("pre-tool-use", read); r != silent {
		t.Errorf("Read, no session: %+v; want it to pass", r)
	}
	if r := f.hook("pre-tool-use", bash("sessionvault accept")); r.Exit != 2 || !strings.Contains(r.Stderr, "a person's command") {
		t.Errorf("sessionvault accept: %+v; want exit 2, a person's command", r)
	}

	f.working("Login page")
	inVault := map[string]any{"tool_name": "Write", "tool_input": map[string]any{"file_path": filepath.Join(f.Vault, project, "notes.md"), "content": "x"}}
	for _, c := range []struct {
		name   string
		fields map[string]any
		want   string // "" = pass, else a pattern of the deny
	}{
		{"Edit", edit(), ""},
		{"a writing Bash call", bash("go test ./..."), ""},
		{"an unknown tool", map[string]any{"tool_name": "FancyRefactor", "tool_input": map[string]any{}}, ""},
		{"Write into the vault", inVault, `^sessionvault blocked this tool call: \S+/demo/notes\.md is in the session vault`},
		{"Read", read, ""},
	} {
		r := f.hook("pre-tool-use", c.fields)
		if c.want == "" && r != silent || c.want != "" && (r.Exit != 2 || !regexp.MustCompile(c.want).MatchString(r.Stderr)) {
			t.Errorf("start gate met, %s: %+v; want %q", c.name, r, c.want)
		}
	}

	f.edit("session-current-state.md", `(?m)^mode: coding$`, "mode: disabled")
	if r := f.hook("pre-tool-use", edit()); r.Exit != 2 || !strings.Contains(r.Stderr, "failing closed. Read-only tools still work") {
		t.Errorf("Edit after the note was changed by hand: %+v; want a deny (the cache no longer matches)", r)
	}
	if r := f.hook("pre-tool-use", read); r != silent {
		t.Errorf("Read after the note was changed by hand: %+v; want it to pass", r)
	}
}

// TestLeanHookHandsTheRestToSessionvault runs sessionvault-hook with the
// full binary installed: what the cache cannot decide (no session, a
// changed state, other events, input it cannot read, another project) is
// answered by `sessionvault hook` with the same arguments and input, its
// output and exit code passed on; after it decided, the lean hook decides
// alone again. What the lean hook noted of the calls it passed — when a
// Bash call started, that a writing call may change vault notes — is what
// sessionvault's PostToolUse records the call's duration and commits the
// agent's edit by.
func TestLeanHookHandsTheRestToSessionvault(t *testing.T) {
	f := newFixture(t)
	f.touch() // no cache that matches the state
	withFullBinary(t)
	if r := f.hook("pre-tool-use", edit()); r.Exit != 2 || !strings.Contains(r.Stderr, "no session is active. Start one: `sessionvault --vault "+f.Vault+" start") {
		t.Errorf("Edit, no session: %+v; want sessionvault's deny", r)
	}
	if r := lean("not json", "pre-tool-use"); r.Exit != 2 || !strings.Contains(r.Stderr, "the hook input cannot be read") {
		t.Errorf("garbage: %+v; want sessionvault's deny of unreadable input", r)
	}
	if r := f.hook("pre-tool-use", map[string]any{"tool_input": map[string]any{}}); r.Exit != 2 || !strings.Contains(r.Stderr, "names no tool") {
		t.Errorf("no tool_name: %+v; want sessionvault's deny", r)
	}
	if r := lean(f.input("pre-tool-use", edit()), "--vault", f.Vault, "--project", "billing", "pre-tool-use"); r.Exit != 2 || !strings.Contains(r.Stderr, `project "billing" has no session-current-state.md`) {
		t.Errorf("--project billing: %+v; want sessionvault's deny for that project", r)
	}

	f.working("Login page")
	f.touch()
	withoutFullBinary(t)
	if r := f.hook("pre-tool-use", edit()); r.Exit != 2 || !strings.Contains(r.Stderr, "failing closed") {
		t.Errorf("Edit after the note was touched, without the full binary: %+v; want a deny (the cache no longer matches)", r)
	}
	withFullBinary(t)
	if r := f.hook("pre-tool-use", edit()); r != silent {
		t.Errorf("Edit after the note was touched: %+v; want sessionvault to read it and let the call pass", r)
	}
	withoutFullBinary(t)
	if r := f.hook("pre-tool-use", edit()); r != silent {
		t.Errorf("Edit again, without the full binary: %+v; want it decided from the cache sessionvault refreshed", r)
	}
	withFullBinary(t)

	// Other events go to sessionvault whole: its SessionStart context, its
	// Stop decision, its command history of a Bash call the lean hook
	// passed (and timed).
	r := f.hook("session-start", map[string]any{"source": "startup", "model": "claude-opus-4-1"})
	if r.Exit != 0 || !strings.HasPrefix(r.Stdout, `{"hookSpecificOutput":{"additionalContext":"# sessionvault: session `) || !strings.Contains(r.Stdout, "Objective: Login page") {
		t.Errorf("session-start: %+v; want sessionvault's resume prompt", r)
	}
	if r := f.hook("stop", map[string]any{"stop_hook_active": false}); r.Exit != 0 || !strings.HasPrefix(r.Stdout, `{"decision":"block","reason":"Session `) {
		t.Errorf("stop: %+v; want sessionvault's block", r)
	}
	status := bash("git status")
	if r := f.hook("pre-tool-use", status); r != silent {
		t.Fatalf("pre-tool-use git status: %+v", r)
	}
	if r := f.hook("post-tool-use", status); r != silent {
		t.Errorf("post-tool-use: %+v; want exit 0 and no output", r)
	}
	if log := f.commandLog(); !regexp.MustCompile("(?m)^- \\S+Z · success · `git status` · \\*\\*model:\\*\\* claude-opus-4-1 · \\*\\*duration:\\*\\* \\d+ ms \\^h-1$").MatchString(log) {
		t.Errorf("the command history lacks the timed call:\n%s", log)
	}

	// A writing call the lean hook passes alone is noted, so a vault note
	// it changes is committed by PostToolUse as the agent's edit.
	withoutFullBinary(t)
	notes := bash("python3 write_notes.py")
	if r := f.hook("pre-tool-use", notes); r != silent {
		t.Fatalf("pre-tool-use %s, from the cache: %+v; want it to pass", notes["tool_input"], r)
	}
	p := filepath.Join(f.Vault, project, "session-current-state.md")
	text, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, append(text, "- a line the agent's script wrote\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	withFullBinary(t)
	if r := f.hook("post-tool-use", notes); r != silent {
		t.Errorf("post-tool-use: %+v; want exit 0 and no output", r)
	}
	if got := git(t, f.Vault, "log", "-1", "--format=%an: %s"); got != "sessionvault agent: agent-edit: demo/session-current-state.md changed by the agent's Bash call\n" {
		t.Errorf("last vault commit %q; want the agent's edit", got)
	}
}

// TestLeanHookWithoutTheFullBinary checks what sessionvault-hook does with
// a call it cannot decide when sessionvault is not installed: PreToolUse
// fails closed (exit 2), other events warn (exit 1); both say how to
// install it.
func TestLeanHookWithoutTheFullBinary(t *testing.T) {
	f := newFixture(t)
	f.touch() // no cache that matches the state
	nowhere := withoutFullBinary(t)
	hint := "which is not installed beside it or on PATH ($SESSIONVAULT_FULL_BIN names " + nowhere + ", which is not a file). Build it beside this one, in a checkout of sessionvault: `go build -o "
	r := f.hook("pre-tool-use", edit())
	if r.Exit != 2 || !strings.HasPrefix(r.Stderr, "sessionvault blocked this tool call: sessionvault-hook hands what its cache cannot decide to the sessionvault binary, ") ||
		!strings.Contains(r.Stderr, hint) || !strings.HasSuffix(r.Stderr, "/sessionvault ./cmd/sessionvault`; or name it in $SESSIONVAULT_FULL_BIN; failing closed. Read-only tools still work\n") {
		t.Errorf("pre-tool-use: %+v; want exit 2 with how to install", r)
	}
	for _, event := range []string{"post-tool-use", "post-tool-use-failure", "session-start", "pre-compact", "stop"} {
		r := f.hook(event, bash("go test ./..."))
		if r.Exit != 1 || r.Stdout != "" || !strings.HasPrefix(r.Stderr, "sessionvault: hook "+event+" not answered: ") || !strings.Contains(r.Stderr, hint) {
			t.Errorf("%s: %+v; want exit 1 with how to install", event, r)
		}
	}

	// Not on PATH either, and $SESSIONVAULT_FULL_BIN unset.
	t.Setenv("SESSIONVAULT_FULL_BIN", "")
	t.Setenv("PATH", t.TempDir())
	if r := f.hook("stop", nil); r.Exit != 1 || !strings.Contains(r.Stderr, `not installed beside it or on PATH (exec: "sessionvault": executable file not found in $PATH)`) {
		t.Errorf("stop, nothing on PATH: %+v; want exit 1 saying sessionvault is not on PATH", r)
	}
}

// TestLeanHookPassesItsArgumentsAndInputOn checks, with a stand-in
// sessionvault found on PATH, that a handed-on call gets `[--vault DIR]
// [--project P] hook EVENT` and the very bytes of the input, and that its
// output and exit code come back — for other events, and for PreToolUse
// calls the lean hook cannot decide because it finds no vault it can read
// (not a vault, none found for the folder, settings that do not parse, no
// project to ask about).
func TestLeanHookPassesItsArgumentsAndInputOn(t *testing.T) {
	isolate(t)
	bin := t.TempDir()
	script(t, bin, "sessionvault", "echo \"args: $*\"\necho \"stdin: $(cat)\"\necho 'to stderr' >&2\nexit 3\n")
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	notVault, elsewhere, broken, noProject := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	for dir, cfg := range map[string]string{broken: "version: [1\n", noProject: "version: 1\n"} {
		if err := os.MkdirAll(filepath.Join(dir, ".sessionvault"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, ".sessionvault", "config.yaml"), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stop := `{"hook_event_name":"Stop", "stop_hook_active": false}`
	edit := `{"hook_event_name":"PreToolUse","cwd":"` + elsewhere + `","tool_name":"Edit","tool_input":{"file_path":"main.go"}}`
	for _, c := range []struct {
		name  string
		stdin string
		args  []string
		want  string
	}{
		{"stop", stop, []string{"stop"}, "args: hook stop\n"},
		{"session-start", stop, []string{"hook", "session-start"}, "args: hook session-start\n"},
		{"flags", stop, []string{"--vault=/my vault", "--project", "demo", "pre-compact"}, "args: --vault /my vault --project demo hook pre-compact\n"},
		{"not a vault", edit, []string{"--vault", notVault, "pre-tool-use"}, "args: --vault " + notVault + " hook pre-tool-use\n"},
		{"no vault found", edit, []string{"pre-tool-use"}, "args: hook pre-tool-use\n"},
		{"settings that do not parse", edit, []string{"--vault", broken, "pre-tool-use"}, "args: --vault " + broken + " hook pre-tool-use\n"},
		{"no default project", edit, []string{"--vault", noProject, "pre-tool-use"}, "args: --vault " + noProject + " hook pre-tool-use\n"},
	} {
		r := lean(c.stdin, c.args...)
		if r.Exit != 3 || !strings.HasPrefix(r.Stdout, c.want) || !strings.HasSuffix(r.Stdout, "stdin: "+c.stdin+"\n") || r.Stderr != "to stderr\n" {
			t.Errorf("%s: %+v; want exit 3, %q and the input passed on", c.name, r, c.want)
		}
	}
}

// TestLeanHookWhenTheFullBinaryCannotRun checks a full binary that cannot
// be run (not executable) or dies of a signal: the lean hook says so, and
// PreToolUse fails closed (exit 2) while other events warn (exit 1).
func TestLeanHookWhenTheFullBinaryCannotRun(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	killed := script(t, dir, "killed", "kill -9 $$\n")
	notExec := filepath.Join(dir, "not-executable")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\nexit 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		bin, why string
	}{
		{killed, "signal: killed"},
		{notExec, "permission denied"},
	} {
		t.Setenv("SESSIONVAULT_FULL_BIN", c.bin)
		for event, exit := range map[string]int{"pre-tool-use": 2, "stop": 1} {
			r := lean(`{"hook_event_name":"Stop"}`, event)
			if r.Exit != exit || !strings.HasPrefix(r.Stderr, "sessionvault-hook: running "+c.bin+": ") || !strings.Contains(r.Stderr, c.why) {
				t.Errorf("%s, %s: %+v; want exit %d saying %q", filepath.Base(c.bin), event, r, exit, c.why)
			}
		}
	}
}

// TestLeanHookArguments checks help and a flag without its value.
func TestLeanHookArguments(t *testing.T) {
	isolate(t)
	withoutFullBinary(t)
	if r := lean("", "--help"); r.Exit != 0 || !strings.HasPrefix(r.Stdout, "usage: sessionvault-hook [--vault DIR] [--project P] pre-tool-use|") || r.Stderr != "" {
		t.Errorf("--help: %+v; want the usage, exit 0", r)
	}
	if r := lean("{}", "pre-tool-use", "--project"); r.Exit != 2 || r.Stderr != "sessionvault-hook: --project needs a value\n" {
		t.Errorf("--project without a value: %+v; want exit 2 naming the flag", r)
	}
}

// TestLeanHookRecordsPostToolUseAlone checks that a PostToolUse call that
// records nothing but the session's heartbeat and the tool history — a
// Read of a code file, an Edit, a failed Grep — is answered by
// sessionvault-hook alone (no full binary installed), with what the full
// hook writes: the heartbeat the recovery check reads and a line of the tool
// history each. What needs more is still handed on: a Bash call (the
// command history), a Read of the state note (evidence of reading it), a
// writing call PreToolUse noted (its note edits are committed), a state the
// cache no longer matches.
func TestLeanHookRecordsPostToolUseAlone(t *testing.T) {
	f := newFixture(t)
	f.working("Login page")
	withFullBinary(t)
	if r := f.hook("pre-tool-use", edit()); r != silent { // the facts cache, as the agent's first call leaves it
		t.Fatalf("pre-tool-use Edit: %+v", r)
	}
	withoutFullBinary(t)
	state := filepath.Join(f.Vault, ".sessionvault", "state")
	if err := os.Remove(filepath.Join(state, "heartbeat-"+project)); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	read := map[string]any{"tool_name": "Read", "tool_input": map[string]any{"file_path": "main.go"}, "tool_response": map[string]any{"type": "text"}}
	grep := map[string]any{"tool_name": "Grep", "tool_input": map[string]any{"pattern": "x"}, "error": "no such path"}
	before := time.Now().UTC().Truncate(time.Second)
	for _, c := range []struct {
		event  string
		fields map[string]any
	}{{"post-tool-use", read}, {"post-tool-use", edit()}, {"post-tool-use-failure", grep}} {
		if r := f.hook(c.event, c.fields); r != silent {
			t.Fatalf("%s %s without the full binary: %+v; want it answered alone", c.event, c.fields["tool_name"], r)
		}
	}
	beat, err := os.ReadFile(filepath.Join(state, "heartbeat-"+project))
	if err != nil {
		t.Fatalf("no heartbeat: %v", err)
	}
	var st struct {
		Data struct {
			Session       string `json:"session"`
			LastHeartbeat string `json:"last_heartbeat"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(f.sv("status", "--json")), &st); err != nil || st.Data.Session == "" {
		t.Fatalf("status --json: %v %+v", err, st)
	}
	ts, id, _ := strings.Cut(strings.TrimSuffix(string(beat), "\n"), " ")
	if at, err := time.Parse(time.RFC3339, ts); err != nil || id != st.Data.Session || at.Before(before) || !strings.HasSuffix(string(beat), "\n") {
		t.Errorf("heartbeat %q; want the time and session %s", beat, st.Data.Session)
	}
	if st.Data.LastHeartbeat != ts {
		t.Errorf("status says the last heartbeat was %q; want the lean hook's, %s", st.Data.LastHeartbeat, ts)
	}
	hist, err := os.ReadFile(filepath.Join(state, "tool-history-"+project))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`"tool":"Read","success":true}`, `"tool":"Edit","success":true}`, `"tool":"Grep","success":false}`}
	lines := strings.Split(strings.TrimSuffix(string(hist), "\n"), "\n")
	if len(lines) < len(want) {
		t.Fatalf("tool history:\n%s\nwant the three calls", hist)
	}
	for i, w := range want {
		if l := lines[len(lines)-len(want)+i]; !strings.HasPrefix(l, `{"timestamp":"`) || !strings.HasSuffix(l, w) {
			t.Errorf("tool history line %q; want ...%s", l, w)
		}
	}

	// A call PreToolUse noted as writing that changed no canonical note:
	// answered alone, the note taken back.
	write := map[string]any{"tool_name": "FancyRefactor", "tool_input": map[string]any{}} // a tool that may write what it does not name
	if r := f.hook("pre-tool-use", write); r != silent {
		t.Fatalf("pre-tool-use FancyRefactor: %+v", r)
	}
	if r := f.hook("post-tool-use", write); r != silent {
		t.Errorf("post-tool-use FancyRefactor, which changed no note, without the full binary: %+v; want it answered alone", r)
	}
	if data, err := os.ReadFile(filepath.Join(state, "toolcall-"+project)); err != nil || len(data) != 0 {
		t.Errorf("the noted call was not taken back: %q, %v", data, err)
	}
	// With its tool_use_id, the call has a record of its own, which its
	// PostToolUse takes back (calls at once do not clear each other's).
	write["tool_use_id"] = "toolu_01FancyRefactor"
	if r := f.hook("pre-tool-use", write); r != silent {
		t.Fatalf("pre-tool-use FancyRefactor with its id: %+v", r)
	}
	own := filepath.Join(state, "toolcalls", "toolu_01FancyRefactor")
	if data, err := os.ReadFile(own); err != nil || !strings.HasPrefix(string(data), "FancyRefactor\n") {
		t.Fatalf("the call's own record: %q, %v", data, err)
	}
	if r := f.hook("post-tool-use", write); r != silent {
		t.Errorf("post-tool-use FancyRefactor with its id: %+v; want it answered alone", r)
	}
	if _, err := os.Stat(own); !os.IsNotExist(err) {
		t.Errorf("the call's own record was not taken back: %v", err)
	}

	// What the lean hook leaves to sessionvault: without it, each warns
	// that it was not answered (and wrote nothing).
	stateRead := map[string]any{"tool_name": "Read", "tool_input": map[string]any{"file_path": filepath.Join(f.Vault, project, "session-current-state.md")}}
	historyRead := map[string]any{"tool_name": "Read", "tool_input": map[string]any{"file_path": filepath.Join(f.Vault, project, "session-history.md")}}
	if err := os.Symlink(filepath.Join(f.Vault, project, "session-current-state.md"), filepath.Join(f.Code, "state.md")); err != nil {
		t.Fatal(err)
	}
	linkRead := map[string]any{"tool_name": "Read", "tool_input": map[string]any{"file_path": "state.md"}}
	for name, fields := range map[string]map[string]any{"Bash, the log's first entry": bash("go test ./..."), "a Read of the state note": stateRead,
		"a Read of the history note": historyRead, "a Read of the state note through a link": linkRead} {
		size := len(readFile(t, filepath.Join(state, "tool-history-"+project)))
		if r := f.hook("post-tool-use", fields); r.Exit != 1 || !strings.HasPrefix(r.Stderr, "sessionvault: hook post-tool-use not answered: ") {
			t.Errorf("post-tool-use, %s, without the full binary: %+v; want it handed on", name, r)
		}
		if now := len(readFile(t, filepath.Join(state, "tool-history-"+project))); now != size {
			t.Errorf("post-tool-use, %s: the lean hook wrote the tool history before handing it on", name)
		}
	}
	f.touch()
	if r := f.hook("post-tool-use", read); r.Exit != 1 {
		t.Errorf("post-tool-use Read after the note changed, without the full binary: %+v; want it handed on", r)
	}
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestLeanHookHandsOnToolEvidence checks that a PostToolUse call whose tool
// ticks a checklist item of the protocol (`tool:` evidence) is handed to
// sessionvault, which records it as the item's evidence, while other tools
// are still answered alone.
func TestLeanHookHandsOnToolEvidence(t *testing.T) {
	f := newFixture(t)
	proto := "# Protocol\n\n## Session start\n\n| Req | Step | Evidence |\n|---|---|---|\n| MUST | State the objective | `section: Objective` |\n\n" +
		"## Session end\n\n| Req | Step | Evidence |\n|---|---|---|\n| MUST | Search the code | `tool: Gr.p` |\n"
	if err := os.WriteFile(filepath.Join(f.Vault, "SESSION-PROTOCOL.md"), []byte(proto), 0o644); err != nil {
		t.Fatal(err)
	}
	f.sv("accept")
	f.sv("start", "--objective", "Search")
	withFullBinary(t)
	if r := f.hook("pre-tool-use", edit()); r != silent {
		t.Fatalf("pre-tool-use Edit: %+v", r)
	}
	withoutFullBinary(t)
	grep := map[string]any{"tool_name": "Grep", "tool_input": map[string]any{"pattern": "x"}}
	if r := f.hook("post-tool-use", grep); r.Exit != 1 {
		t.Errorf("post-tool-use Grep without the full binary: %+v; want it handed on", r)
	}
	if r := f.hook("post-tool-use", edit()); r != silent {
		t.Errorf("post-tool-use Edit without the full binary: %+v; want it answered alone", r)
	}
	withFullBinary(t)
	if r := f.hook("post-tool-use", grep); r != silent {
		t.Errorf("post-tool-use Grep: %+v", r)
	}
	if tools := string(readFile(t, filepath.Join(f.Vault, ".sessionvault", "state", "tools-"+project))); !regexp.MustCompile(`(?m)^\S+ e-1 Grep \S+Z [0-9a-f]{32}$`).MatchString(tools) {
		t.Errorf("tool evidence recorded:\n%s\nwant a signed line of e-1 for Grep", tools)
	}
}

// TestLeanHookRecordsCommandsAlone checks that sessionvault-hook appends a
// Bash or MCP call's entry to the command history by itself, once the log
// exists and is not due for a commit, with the very line the full hook
// writes for the same input (but for its time, id and duration); that the
// entries read back in order; and that a noted writing call that changed a
// canonical note is still handed on, to be committed as the agent's edit.
func TestLeanHookRecordsCommandsAlone(t *testing.T) {
	f := newFixture(t)
	f.working("Login page")
	f.sv("task", "new", "Auth flow")
	f.sv("task", "switch", "auth-flow")
	withFullBinary(t)
	call := func(command string) map[string]any {
		c := bash(command)
		c["agent_type"], c["model"], c["duration_ms"] = "Explore", "claude-opus-4-1", 1234
		c["tool_input"].(map[string]any)["description"] = "Run `it`\twith\\n a tab"
		return c
	}
	first := call("git status")
	if r := f.hook("pre-tool-use", first); r != silent {
		t.Fatalf("pre-tool-use: %+v", r)
	}
	if r := f.hook("post-tool-use", first); r != silent { // the log's first entry: made and committed by sessionvault
		t.Fatalf("post-tool-use: %+v", r)
	}
	if r := f.full("post-tool-use", call("go test ./...")); r != silent { // sessionvault's own hook, whatever the lean one would do
		t.Fatalf("sessionvault hook post-tool-use: %+v", r)
	}

	withoutFullBinary(t)
	for _, c := range []map[string]any{call("go test ./..."), {"tool_name": "mcp__serena__find_symbol", "tool_input": map[string]any{"name": "Login"}, "tool_use_id": "toolu_mcp"}} {
		if r := f.hook("pre-tool-use", c); r != silent {
			t.Fatalf("pre-tool-use %s, from the cache: %+v", c["tool_name"], r)
		}
		if r := f.hook("post-tool-use", c); r != silent {
			t.Fatalf("post-tool-use %s without the full binary: %+v; want it recorded alone", c["tool_name"], r)
		}
	}
	failed := call("make lint")
	failed["error"] = "exit status 2"
	if r := f.hook("post-tool-use-failure", failed); r != silent {
		t.Fatalf("post-tool-use-failure without the full binary: %+v; want it recorded alone", r)
	}

	lines := regexp.MustCompile(`(?m)^- .*$`).FindAllString(f.commandLog(), -1)
	if len(lines) != 5 {
		t.Fatalf("%d entries:\n%s\nwant 5", len(lines), f.commandLog())
	}
	norm := regexp.MustCompile(`^- \S+Z · (.*?)( · \*\*duration:\*\* \d+ ms)?(.*) \^h-\d+$`)
	byFull, byLean := norm.ReplaceAllString(lines[1], "$1$3"), norm.ReplaceAllString(lines[2], "$1$3")
	if byFull != byLean || !strings.Contains(byLean, "**task:** [[demo/tasks/auth-flow|auth-flow]]") || !strings.Contains(byLean, "**agent:** Explore") {
		t.Errorf("the lean hook's entry differs from sessionvault's for the same call:\n%s\n%s", lines[2], lines[1])
	}
	for i, want := range []string{"`git status`", "`go test ./...`", "`go test ./...`", "`mcp__serena__find_symbol` · **args:** `{\"name\":\"Login\"}`", "failure · `make lint`"} {
		if !strings.Contains(lines[i], want) || !strings.HasSuffix(lines[i], " ^h-"+strconv.Itoa(i+1)) {
			t.Errorf("entry %d: %s\nwant %s and id h-%d", i+1, lines[i], want, i+1)
		}
	}
	if !strings.Contains(lines[4], "**error:** `exit status 2`") || !strings.Contains(lines[2], "**duration:** 1234 ms") {
		t.Errorf("the failed call's entry: %s; the timed call's: %s", lines[4], lines[2])
	}
	var show struct {
		Data struct {
			Entries  []json.RawMessage `json:"entries"`
			Problems []json.RawMessage `json:"problems"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(f.sv("history", "show", "--json")), &show); err != nil || len(show.Data.Entries) != 5 || len(show.Data.Problems) != 0 {
		t.Errorf("history show --json: %v, %d entries, problems %s", err, len(show.Data.Entries), show.Data.Problems)
	}

	// A shell call that wrote into a canonical note: handed on.
	notes := bash("python3 write_notes.py")
	if r := f.hook("pre-tool-use", notes); r != silent {
		t.Fatalf("pre-tool-use: %+v", r)
	}
	p := filepath.Join(f.Vault, project, "session-decisions.md")
	if err := os.WriteFile(p, append(readFile(t, p), "- a line the agent's script wrote\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := f.hook("post-tool-use", notes); r.Exit != 1 || !strings.Contains(r.Stderr, "not answered") {
		t.Errorf("post-tool-use of a call that changed a note, without the full binary: %+v; want it handed on", r)
	}
	if n := len(regexp.MustCompile(`(?m)^- `).FindAllString(f.commandLog(), -1)); n != 5 {
		t.Errorf("%d entries after a handed-on call; want 5 (nothing written)", n)
	}
	withFullBinary(t)
	if r := f.hook("post-tool-use", notes); r != silent {
		t.Errorf("post-tool-use: %+v", r)
	}
	if got := git(t, f.Vault, "log", "-1", "--format=%s"); !strings.HasPrefix(got, "agent-edit: demo/session-decisions.md changed by the agent's Bash call") {
		t.Errorf("last vault commit %q; want the agent's edit", got)
	}
}

// TestLeanHookFollowsThePersonsFiles checks that sessionvault-hook, which
// reads no YAML, never decides from a stale copy of the vault's settings or
// of the repository links: once a person edits config.yaml or repos.yaml,
// reading calls still pass alone, and the rest is handed to sessionvault
// until it has read the files and renewed the copies.
func TestLeanHookFollowsThePersonsFiles(t *testing.T) {
	f := newFixture(t)
	f.working("Login page")
	withoutFullBinary(t)
	fancy := map[string]any{"tool_name": "FancyLookup", "tool_input": map[string]any{}}
	read := map[string]any{"tool_name": "Read", "tool_input": map[string]any{"file_path": "main.go"}}
	if r := f.hook("pre-tool-use", edit()); r != silent {
		t.Fatalf("Edit from the copies: %+v", r)
	}

	cfg := filepath.Join(f.Vault, ".sessionvault", "config.yaml")
	if err := os.WriteFile(cfg, append(readFile(t, cfg), "read_only_tools: [Read, FancyLookup]\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := f.hook("pre-tool-use", read); r != silent {
		t.Errorf("Read after config.yaml changed: %+v; want it to pass alone", r)
	}
	if r := f.hook("pre-tool-use", fancy); r.Exit != 2 || !strings.Contains(r.Stderr, "not installed") {
		t.Errorf("FancyLookup after config.yaml changed, without sessionvault: %+v; want it handed on", r)
	}
	withFullBinary(t)
	if r := f.hook("pre-tool-use", edit()); r != silent {
		t.Fatalf("Edit through sessionvault: %+v", r)
	}
	withoutFullBinary(t)
	if r := f.hook("pre-tool-use", fancy); r != silent {
		t.Errorf("FancyLookup once sessionvault read the new settings: %+v; want it to pass alone (read_only_tools)", r)
	}

	links := filepath.Join(os.Getenv("SESSIONVAULT_CONFIG_DIR"), "repos.yaml")
	if err := os.WriteFile(links, append([]byte("# edited by hand\n"), readFile(t, links)...), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := f.hook("pre-tool-use", edit()); r.Exit != 2 || !strings.Contains(r.Stderr, "not installed") {
		t.Errorf("Edit after repos.yaml changed, without sessionvault: %+v; want it handed on", r)
	}
	if r := f.hook("pre-tool-use", read); r != silent {
		t.Errorf("Read after repos.yaml changed: %+v; want it to pass alone", r)
	}
	withFullBinary(t)
	if r := f.hook("pre-tool-use", edit()); r != silent {
		t.Fatalf("Edit through sessionvault: %+v", r)
	}
	withoutFullBinary(t)
	if r := f.hook("pre-tool-use", edit()); r != silent {
		t.Errorf("Edit once sessionvault read the links again: %+v; want it decided alone", r)
	}
}
