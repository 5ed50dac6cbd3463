package leanhook_test

// The test setup of the package, in one place: a real vault on disk made and
// driven through sessionvault's own command line (internal/cli), and the
// lean hook answered through its entry point, leanhook.Main. The full
// binary the lean hook hands calls to is this test binary, run as
// `sessionvault` (see TestMain). Only this file names the engine's packages;
// when their API changes, it is the one to follow.

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/integrations/claudecode/leanhook"
	"github.com/sessionvault/sessionvault/internal/cli"
	"github.com/sessionvault/sessionvault/internal/testenv"
)

// asFullBinary, set to "sessionvault" in the environment, makes the test
// binary run as the full sessionvault binary instead of running the tests.
const asFullBinary = "LEANHOOK_TEST_RUN_AS"

// TestMain runs the test binary as sessionvault when the lean hook under
// test hands it a call (its environment says so), and the tests otherwise.
func TestMain(m *testing.M) {
	if os.Getenv(asFullBinary) == "sessionvault" {
		os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(testenv.Run(m))
}

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
		asFullBinary:                "",
	} {
		t.Setenv(k, v)
	}
}

// withFullBinary makes the test binary the sessionvault the lean hook hands
// calls to.
func withFullBinary(t *testing.T) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("SESSIONVAULT_FULL_BIN", exe)
	t.Setenv(asFullBinary, "sessionvault")
}

// withoutFullBinary points $SESSIONVAULT_FULL_BIN at a file that does not
// exist, as on a machine where only sessionvault-hook is installed; it
// returns that path.
func withoutFullBinary(t *testing.T) string {
	t.Helper()
	nowhere := filepath.Join(t.TempDir(), "nowhere")
	t.Setenv("SESSIONVAULT_FULL_BIN", nowhere)
	return nowhere
}

// fixture is a vault with project demo and a code repository on branch
// feat/login, the test's working directory, linked to the vault as `hooks
// install` links it — so the lean hook finds the vault as the installed
// hook entries run it, without --vault.
type fixture struct {
	t     *testing.T
	Vault string
	Code  string
}

// newFixture makes the vault (`sessionvault init`), the code repository and
// the link (`sessionvault hooks install`); no session is active.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	isolate(t)
	dir := t.TempDir()
	f := &fixture{t: t, Vault: filepath.Join(dir, "vault"), Code: filepath.Join(dir, "code")}
	git(t, "", "init", "-q", "-b", "feat/login", f.Code)
	git(t, f.Code, "commit", "-q", "--allow-empty", "-m", "start")
	t.Chdir(f.Code)
	f.sv("init", f.Vault, "--project", project)
	f.sv("hooks", "install", "--project-dir", f.Code)
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

// sv runs `sessionvault --vault VAULT ARGS...` in process; it must succeed.
func (f *fixture) sv(args ...string) string {
	f.t.Helper()
	var out, errb bytes.Buffer
	if code := cli.Main(append([]string{"--vault", f.Vault}, args...), strings.NewReader(""), &out, &errb); code != 0 {
		f.t.Fatalf("sessionvault %s: exit %d\n%s%s", strings.Join(args, " "), code, out.String(), errb.String())
	}
	return out.String()
}

// working starts a session and records the evidence of its start
// checklist's MUST items: editing is allowed.
func (f *fixture) working(objective string) {
	f.t.Helper()
	f.sv("start", "--objective", objective)
	f.sv("evidence", "record", "c-1", "--file", "session-current-state.md")
	f.sv("evidence", "record", "c-2")
	f.sv("evidence", "record", "c-3", "--run")
}

// edit rewrites the project's note name behind sessionvault's back: every
// match of re becomes repl; nothing matching fails the test.
func (f *fixture) edit(name, re, repl string) {
	f.t.Helper()
	p := filepath.Join(f.Vault, project, name)
	old, err := os.ReadFile(p)
	if err != nil {
		f.t.Fatal(err)
	}
	changed := regexp.MustCompile(re).ReplaceAll(old, []byte(repl))
	if bytes.Equal(changed, old) {
		f.t.Fatalf("%s: nothing matches %q", name, re)
	}
	if err := os.WriteFile(p, changed, 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// touch changes the current-state note's modification time, its content
// as it was: the facts cache, keyed by the note's identity, no longer
// matches.
func (f *fixture) touch() {
	f.t.Helper()
	note := filepath.Join(f.Vault, project, "session-current-state.md")
	if err := os.Chtimes(note, time.Time{}, time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)); err != nil {
		f.t.Fatal(err)
	}
}

// commandLog is the text of the project's command history ("" when none).
func (f *fixture) commandLog() string {
	f.t.Helper()
	logs, _ := filepath.Glob(filepath.Join(f.Vault, project, "sessions", "*", "commands.md"))
	var b strings.Builder
	for _, l := range logs {
		data, err := os.ReadFile(l)
		if err != nil {
			f.t.Fatal(err)
		}
		b.Write(data)
	}
	return b.String()
}

// result is what one hook run did, as Claude Code sees it.
type result struct {
	Exit           int
	Stdout, Stderr string
}

// lean runs sessionvault-hook with args and stdin.
func lean(stdin string, args ...string) result {
	var out, errb bytes.Buffer
	code := leanhook.Main(args, strings.NewReader(stdin), &out, &errb)
	return result{code, out.String(), errb.String()}
}

// hook runs sessionvault-hook for event as a settings entry does (no
// --vault: the link finds it), with Claude Code's input for this code
// repository: the common fields and fields over them (nil removes one).
func (f *fixture) hook(event string, fields map[string]any) result {
	return lean(f.input(event, fields), event)
}

// full runs `sessionvault hook EVENT` in process, as the lean hook hands a
// call on, with the same input as hook.
func (f *fixture) full(event string, fields map[string]any) result {
	var out, errb bytes.Buffer
	code := cli.Main([]string{"hook", event}, strings.NewReader(f.input(event, fields)), &out, &errb)
	return result{code, out.String(), errb.String()}
}

// input is the hook JSON Claude Code sends for event.
func (f *fixture) input(event string, fields map[string]any) string {
	name := map[string]string{"pre-tool-use": "PreToolUse", "post-tool-use": "PostToolUse", "post-tool-use-failure": "PostToolUseFailure",
		"session-start": "SessionStart", "pre-compact": "PreCompact", "stop": "Stop"}[event]
	m := map[string]any{"session_id": "9f3c2a1e", "transcript_path": filepath.Join(f.Code, "t.jsonl"), "cwd": f.Code,
		"permission_mode": "default", "hook_event_name": name}
	for k, v := range fields {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	data, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return string(data)
}

// script writes an executable shell script (body after the #! line) and
// returns its path.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!"+sh+"\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}
