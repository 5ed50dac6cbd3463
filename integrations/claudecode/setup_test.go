package claudecode_test

// The test setup of the package, in one place: a real vault on disk made and
// driven through sessionvault's own command line (internal/cli), as a person
// or agent would, and the hook answered through the package's entry point,
// claudecode.Main. Only this file names the engine's packages (cli, config,
// session, vault); when their API changes, it is the one to follow.

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/sessionvault/sessionvault/integrations/claudecode"
	"github.com/sessionvault/sessionvault/internal/cli"
	"github.com/sessionvault/sessionvault/internal/config"
	"github.com/sessionvault/sessionvault/internal/session"
	"github.com/sessionvault/sessionvault/internal/testenv"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// TestMain lets more subtests run at once than the default -parallel
// (GOMAXPROCS): the parallel ones spend their time waiting — a note that
// does not parse is read again for about two seconds before the hook gives
// up on it — not computing. An explicit -parallel is kept.
func TestMain(m *testing.M) {
	var err error
	if testdata, err = filepath.Abs("testdata"); err != nil {
		panic(err)
	}
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", "16")
	}
	os.Exit(testenv.Run(m))
}

// testdata is the package's testdata folder (the tests run elsewhere).
var testdata string

// project is the project every fixture vault holds.
const project = "demo"

// isolate gives the test a fresh HOME, per-user config folder and git
// identity, and clears every variable that would point sessionvault at
// another vault, key, clock or binary.
func isolate(t *testing.T) {
	t.Helper()
	home := t.TempDir()
	for k, v := range map[string]string{
		"HOME":                      home,
		"XDG_CONFIG_HOME":           filepath.Join(home, ".config"),
		"SESSIONVAULT_CONFIG_DIR":   filepath.Join(home, ".config", "sessionvault"),
		"SESSIONVAULT_VAULT":        "",
		"SESSIONVAULT_SECRET":       "",
		"SESSIONVAULT_NOW":          "",
		"SESSIONVAULT_FULL_BIN":     "",
		"SESSIONVAULT_PERSON_NAME":  "",
		"SESSIONVAULT_PERSON_EMAIL": "",
		"SESSIONVAULT_AGENT_NAME":   "",
		"SESSIONVAULT_AGENT_EMAIL":  "",
		"CLAUDE_PROJECT_DIR":        "",
		"GIT_CONFIG_NOSYSTEM":       "1",
		"GIT_CONFIG_GLOBAL":         filepath.Join(home, ".gitconfig"),
		"GIT_AUTHOR_NAME":           "test",
		"GIT_AUTHOR_EMAIL":          "test@example.invalid",
		"GIT_COMMITTER_NAME":        "test",
		"GIT_COMMITTER_EMAIL":       "test@example.invalid",
	} {
		t.Setenv(k, v)
	}
}

// fixture is a vault with project demo and a code repository on branch
// feat/login, the test's working directory.
type fixture struct {
	t     *testing.T
	Vault string // the vault's folder
	Code  string // the code repository, where Claude Code runs
}

// newFixture makes the vault as `sessionvault init VAULT --project demo`
// does, beside a code repository with one commit; the test runs in the code
// repository. No session is active.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	isolate(t)
	dir := t.TempDir()
	f := &fixture{t: t, Vault: filepath.Join(dir, "vault"), Code: filepath.Join(dir, "code")}
	git(t, "", "init", "-q", "-b", "feat/login", f.Code)
	git(t, f.Code, "commit", "-q", "--allow-empty", "-m", "start")
	t.Chdir(f.Code)
	f.sv("init", f.Vault, "--project", project)
	return f
}

// git runs git in dir ("" = the working directory) and returns its output.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	if dir != "" {
		args = append([]string{"-C", dir}, args...)
	}
	out, err := exec.Command("git", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// run runs `sessionvault --vault VAULT ARGS...` and returns its exit code
// and output.
func (f *fixture) run(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := cli.Main(append([]string{"--vault", f.Vault}, args...), strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// sv runs `sessionvault --vault VAULT ARGS...`, which must succeed, and
// returns its stdout.
func (f *fixture) sv(args ...string) string {
	f.t.Helper()
	code, out, errs := f.run(args...)
	if code != 0 {
		f.t.Fatalf("sessionvault %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
	}
	return out
}

// start starts a session: its start checklist's MUST items are open.
func (f *fixture) start(objective string) {
	f.t.Helper()
	f.sv("start", "--objective", objective)
}

// meetStartGate records the evidence of the start checklist's MUST items
// (c-1 file, c-2 section, c-3 run in the code repository).
// The objective is observed by start; the agent reading the current state
// is observed by PostToolUse: no evidence is recorded by hand.
func (f *fixture) meetStartGate() {
	f.t.Helper()
	if r := f.hook("post-tool-use", call("Read", map[string]any{"file_path": f.notePath("session-current-state.md")})); r.Exit != 0 {
		f.t.Fatalf("post-tool-use Read of the state: exit %d, %s", r.Exit, r.Stderr)
	}
}

// working is a session whose start gate is met.
func (f *fixture) working(objective string) {
	f.t.Helper()
	f.start(objective)
	f.meetStartGate()
}

// notePath is the absolute path of a note of the project.
func (f *fixture) notePath(name string) string {
	return filepath.Join(f.Vault, project, name)
}

// readFile returns a file's text ("" when it does not exist).
func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(data)
}

// writeFile writes a file as a person would.
func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// config is the vault's settings as sessionvault reads them.
func (f *fixture) config() config.Config {
	f.t.Helper()
	c, err := config.Load(f.Vault)
	if err != nil {
		f.t.Fatal(err)
	}
	return c
}

// edit rewrites the project's note name as a person (or an agent's sed)
// would, behind sessionvault's back: every match of re becomes repl. It
// fails the test when nothing matched.
func (f *fixture) edit(name, re, repl string) {
	f.t.Helper()
	p := f.notePath(name)
	old := readFile(f.t, p)
	changed := regexp.MustCompile(re).ReplaceAllString(old, repl)
	if changed == old {
		f.t.Fatalf("%s: nothing matches %q", name, re)
	}
	if err := os.WriteFile(p, []byte(changed), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// breakNote leaves the current-state note's front matter with an unclosed
// quote, as a person's slip in an editor does.
func (f *fixture) breakNote() {
	f.t.Helper()
	f.edit("session-current-state.md", `(?m)^objective: .*$`, `objective: "Login page`)
}

// tamper turns the gates off by rewriting the sealed mode in the note.
func (f *fixture) tamper() {
	f.t.Helper()
	f.edit("session-current-state.md", `(?m)^mode: coding$`, `mode: disabled`)
}

// commandLog is the text of the command history of the project's sessions
// (sessions/<id>/commands.md), "" when none was written.
func (f *fixture) commandLog() string {
	f.t.Helper()
	logs, _ := filepath.Glob(filepath.Join(f.Vault, project, "sessions", "*", "commands.md"))
	var b strings.Builder
	for _, l := range logs {
		b.WriteString(readFile(f.t, l))
	}
	return b.String()
}

// vaultLog is the vault's last n commits: "author: subject" a line.
func (f *fixture) vaultLog(n int) string {
	f.t.Helper()
	return git(f.t, f.Vault, "log", "-"+strconv.Itoa(n), "--format=%an: %s")
}

// vaultStatus is `git status --porcelain` of the vault.
func (f *fixture) vaultStatus() string {
	f.t.Helper()
	return git(f.t, f.Vault, "status", "--porcelain")
}

// result is what one hook run did, as Claude Code sees it.
type result struct {
	Exit           int
	Stdout, Stderr string
}

// hook answers one hook as `sessionvault hook` does: claudecode.Main with
// args (e.g. "--vault", DIR, "pre-tool-use") and stdin, the handler built as
// internal/cli builds it.
func hook(stdin string, args ...string) result {
	var out, errb bytes.Buffer
	code := claudecode.Main(args, strings.NewReader(stdin), &out, &errb, openVault)
	return result{code, out.String(), errb.String()}
}

// hook answers event for this fixture's vault (--vault given) with the
// input in.
func (f *fixture) hook(event string, in map[string]any) result {
	return hook(f.input(event, in), "--vault", f.Vault, event)
}

// openVault is the claudecode.NewHandlerFunc `sessionvault hook` and
// cmd/sessionvault-hook wire: locate the vault, open it, build the handler.
func openVault(vaultDir, project, cwd string) claudecode.Handler {
	dir, project, err := vault.Locate(vaultDir, project, cwd)
	if err != nil {
		return claudecode.NewHandler(nil, project, claudecode.Unlinked(err, cwd))
	}
	v, err := vault.Open(dir)
	return claudecode.NewHandler(v, project, err)
}

// handler is the hook handler for the fixture's vault, for the entry points
// that take one directly (Decide, SessionStart's prompt limit).
func (f *fixture) handler() claudecode.Handler {
	return openVault(f.Vault, "", f.Code)
}

// panicking is a handler whose state read panics.
func panicking() claudecode.Handler {
	h := claudecode.NewHandler(nil, "", os.ErrNotExist)
	h.Open = func() (*session.Service, error) { panic("the state read blew up") }
	return h
}

// hookEventNames are the hook_event_name values Claude Code sends for each
// `sessionvault hook` argument.
var hookEventNames = map[string]string{
	"pre-tool-use":          "PreToolUse",
	"post-tool-use":         "PostToolUse",
	"post-tool-use-failure": "PostToolUseFailure",
	"session-start":         "SessionStart",
	"pre-compact":           "PreCompact",
	"stop":                  "Stop",
}

// input is the JSON Claude Code sends on stdin for event: the common
// fields (session_id, transcript_path, cwd = the code repository,
// permission_mode, hook_event_name) with fields over them (a nil value
// removes a field).
func (f *fixture) input(event string, fields map[string]any) string {
	m := map[string]any{
		"session_id":      "9f3c2a1e-claude-session",
		"transcript_path": filepath.Join(f.Code, ".claude", "transcript.jsonl"),
		"cwd":             f.Code,
		"permission_mode": "default",
		"hook_event_name": hookEventNames[event],
	}
	for k, v := range fields {
		if v == nil {
			delete(m, k)
			continue
		}
		m[k] = v
	}
	data, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return string(data)
}

// toolUses numbers the tool_use_id of the calls a test makes.
var toolUses int

// call is the tool fields of a PreToolUse or PostToolUse input: tool_name,
// tool_input and a fresh tool_use_id, with extra fields over them.
func call(tool string, input any, extra ...map[string]any) map[string]any {
	toolUses++
	m := map[string]any{"tool_name": tool, "tool_input": input, "tool_use_id": "toolu_" + strconv.Itoa(toolUses)}
	for _, e := range extra {
		for k, v := range e {
			m[k] = v
		}
	}
	return m
}

// bash is a Bash call's tool fields.
func bash(command string, extra ...map[string]any) map[string]any {
	return call("Bash", map[string]any{"command": command, "description": "run it"}, extra...)
}
