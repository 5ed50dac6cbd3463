// Package leanhook is the whole of the lean sessionvault-hook binary. Hooks
// run on every tool call, so its start-up is what each call pays. It decides
// a PreToolUse call by itself when it can without reading the state: a
// reading call or a person's command (the policy table), or any call while
// the project's signed facts cache (internal/guard) matches the state note,
// its seal, the protocol and the tool evidence as they are now. Everything
// else — another hook, a changed state, no cache, a vault it cannot find —
// it hands, with the same arguments and input, to `sessionvault hook` (the
// full binary, beside this one or on PATH), which reads and verifies the
// state and refreshes the cache. It links no git, note parser or CLI.
//
// A PostToolUse (or PostToolUseFailure) call that needs only the active
// session's heartbeat, the tool history and, for a Bash or MCP call, an
// entry appended to the command history (most calls) it records by itself,
// from the same cache (guard.Post); the rest it hands on in the same way.
//
// Without the full binary, a PreToolUse call it cannot decide is denied
// (exit 2: fail closed) with how to install it; other hooks warn (exit 1).
package leanhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"

	"github.com/sessionvault/sessionvault/integrations/claudecode/hookio"
	"github.com/sessionvault/sessionvault/internal/guard"
	"github.com/sessionvault/sessionvault/internal/integrity"
	"github.com/sessionvault/sessionvault/internal/policy"
	"github.com/sessionvault/sessionvault/internal/shellquote"
	"github.com/sessionvault/sessionvault/internal/vaultloc"
)

// Main answers one hook (args as for sessionvault-hook, the hook input on
// stdin) and returns the exit code; see the package comment.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a, err := hookio.ParseArgs(args)
	if err != nil {
		fmt.Fprintf(stderr, "sessionvault-hook: %v\n", err)
		return 2
	}
	if a.Help {
		io.WriteString(stdout, hookio.Usage())
		return 0
	}
	if a.Event == "post-tool-use" || a.Event == "post-tool-use-failure" {
		data, in, err := hookio.ReadInput(stdin)
		if err == nil && in.ToolName != "" {
			if r, ok := post(a, in); ok {
				return r.Write(stdout, stderr)
			}
		}
		return delegate(a, bytes.NewReader(data), stdout, stderr)
	}
	if a.Event != "pre-tool-use" {
		return delegate(a, stdin, stdout, stderr)
	}
	data, in, err := hookio.ReadInput(stdin)
	if err != nil || in.ToolName == "" {
		return delegate(a, bytes.NewReader(data), stdout, stderr)
	}
	if r, root, ok := decide(a, in); ok {
		if r.Exit != 2 && root != "" {
			// The command history's duration: PostToolUse takes it back.
			_ = guard.NoteCallStart(root, in.ToolName, in.ToolUseID)
		}
		return r.Write(stdout, stderr)
	}
	return delegate(a, bytes.NewReader(data), stdout, stderr)
}

// decide answers a PreToolUse call from the policy table and the facts
// cache, and names the vault's root where the call is noted for
// PostToolUse ("" when it is not: a vault in a format newer than this
// binary writes, which the hooks only read); ok is false when it cannot
// decide (the full binary decides then).
func decide(a hookio.Args, in hookio.Input) (resp hookio.Response, root string, ok bool) {
	root, project, cfg, key, ok := locate(a, in)
	if !ok {
		return hookio.Response{}, "", false
	}
	// A newer format's vault: decided as any other, but nothing is noted
	// (PostToolUse records nothing there). One int compared: no file read.
	writable := vaultloc.CheckWritable(cfg.Version) == nil
	noteRoot := root
	if !writable {
		noteRoot = ""
	}
	// An agent whose session lost a clash (or was ended on another
	// machine) is told with every answer until it reads the state: one
	// stat when there is nothing to tell.
	notice := ""
	if project != "" {
		notice = guard.ClashNotice(root, project)
	}
	table := policy.TableFrom(cfg.ReadOnlyTools, cfg.ModeBlocks)
	call := policy.Classify(in.ToolName, in.ToolInput, policy.Config{UnknownMCP: cfg.UnknownMCPTools})
	if v, decided := guard.Screen(&call, table); decided {
		return hookio.Decided(v.Allowed, v.Reason).WithNotice(notice), noteRoot, true
	}
	if project == "" {
		return hookio.Response{}, "", false
	}
	c, ok := guard.LoadWith(root, project, key)
	if !ok {
		return hookio.Response{}, "", false
	}
	v := guard.Decide(call, in.Cwd, guard.Place{Root: root, Project: project, DefaultProject: cfg.DefaultProject}, table, c.Facts)
	if v.Allowed && v.Class == policy.Write && writable {
		// A call that may write files it does not name: PostToolUse commits
		// the notes it changed as the agent's edit.
		return hookio.Warn("the tool call was not noted for PostToolUse", guard.NoteToolCall(root, project, in.ToolName, in.ToolUseID, c.Watch)).WithNotice(notice), noteRoot, true
	}
	return hookio.Decided(v.Allowed, v.Reason).WithNotice(notice), noteRoot, true
}

// locate finds the hook's vault (its absolute root), project (the vault's
// default when no flag names one; "" when it has none) and settings, as
// the full hook does, from the copies of the repository links and the
// settings the full binary keeps (vaultloc.MirroredLink,
// guard.LoadSettings): it reads no YAML. It also returns the vault's key,
// read once for the settings and the facts cache (guard.LoadWith). ok is
// false when it cannot (no key, a copy missing or older than its file: the
// full hook reads the file and renews the copy).
func locate(a hookio.Args, in hookio.Input) (root, project string, cfg guard.Settings, key []byte, ok bool) {
	root, project, ok = locateVault(a, in)
	if !ok {
		return "", "", cfg, nil, false
	}
	key, err := integrity.ReadKey(root)
	if err != nil {
		return "", "", cfg, nil, false
	}
	if cfg, ok = guard.LoadSettingsWith(root, key); !ok {
		return "", "", cfg, nil, false
	}
	if project == "" {
		project = cfg.DefaultProject
	}
	return root, project, cfg, key, true
}

// locateVault is locate without the settings: the vault's absolute root and
// the project named (by a flag or the repository's link), "" for the
// default.
func locateVault(a hookio.Args, in hookio.Input) (root, project string, ok bool) {
	cwd, err := hookio.WorkDir(in.Cwd)
	if err != nil {
		return "", "", false
	}
	root, project, err = vaultloc.Locate(a.Vault, a.Project, cwd, vaultloc.MirroredLink)
	if err != nil {
		return "", "", false
	}
	if root, err = filepath.Abs(root); err != nil || !vaultloc.IsVault(root) {
		return "", "", false
	}
	return root, project, true
}

// screenAlone decides, when the full binary cannot be run, what needs
// neither it nor the vault's settings, as the full hook would: a reading
// call by its kind (not by the vault's read_only_tools, unknown here)
// passes, a person's command is denied; ok is false for the rest, and for
// input that does not read (stdin holds the hook input).
func screenAlone(stdin io.Reader) (hookio.Response, bool) {
	_, in, err := hookio.ReadInput(stdin)
	if err != nil || in.ToolName == "" {
		return hookio.Response{}, false
	}
	t := policy.DefaultTable()
	t.ReadOnly = nil
	call := policy.Classify(in.ToolName, in.ToolInput, policy.Config{})
	if v, decided := guard.Screen(&call, t); decided {
		return hookio.Decided(v.Allowed, v.Reason), true
	}
	return hookio.Response{}, false
}

// post records a PostToolUse (or PostToolUseFailure) call by itself when
// it needs nothing but the heartbeat, the tool history and, for a Bash or
// MCP call, an entry appended to the command history (guard.Post,
// guard.RecordCommand), and reports whether it did. It leaves to the full
// hook, having written nothing but taken back a noted call that changed no
// note (guard.SettleToolCall): a Read of the state or history note
// (evidence that the agent read it), a writing call PreToolUse noted that
// changed a canonical note (committed as the agent's edit), a vault in a
// format this binary does not write, a state the cache does not hold, and
// whatever those two leave (a command log to create or commit, tool
// evidence).
func post(a hookio.Args, in hookio.Input) (hookio.Response, bool) {
	root, project, cfg, key, ok := locate(a, in)
	if !ok || project == "" || vaultloc.CheckWritable(cfg.Version) != nil {
		return hookio.Response{}, false
	}
	failed := in.ToolFailed()
	if in.ToolName == "Read" && !failed && readsStateNote(in) {
		return hookio.Response{}, false
	}
	c, ok := guard.LoadWith(root, project, key)
	if !ok || guard.SettleToolCall(root, project, in.ToolName, in.ToolUseID) {
		return hookio.Response{}, false
	}
	var cmd *guard.CommandCall
	if guard.RecordsCommand(in.ToolName) {
		c := CommandCall(in, failed)
		cmd = &c
	}
	err := guard.Post(root, project, c, guard.ToolUse{Timestamp: time.Now(), Tool: in.ToolName, Success: !failed}, cmd, cfg.LockTimeout)
	if errors.Is(err, guard.ErrNotLean) {
		return hookio.Response{}, false
	}
	if err != nil { // the full hook's warning: what was not recorded, and why
		return hookio.Response{Exit: 1, Stderr: "sessionvault: " + err.Error() + "\n"}, true
	}
	return hookio.Allow(), true
}

// CommandCall is what the hook input in says of a Bash or MCP call for the
// command history (failed: in.ToolFailed(), which parses the tool response
// once); the full hook records the same.
func CommandCall(in hookio.Input, failed bool) guard.CommandCall {
	c := guard.CommandCall{Tool: in.ToolName, Input: in.ToolInput, Failed: failed, DurationMs: in.Duration(), ToolUseID: in.ToolUseID,
		AgentID: in.AgentID, AgentType: in.AgentType, Model: in.Model, ClaudeSession: in.SessionID}
	if failed {
		c.Error = in.ErrorText()
	}
	return c
}

// readsStateNote reports whether a Read call's file may be a project's
// current-state or history note (by its name, before and after following
// links): the full hook records such a read as evidence.
func readsStateNote(in hookio.Input) bool {
	var args struct {
		FilePath string `json:"file_path"`
	}
	if json.Unmarshal(in.ToolInput, &args) != nil || args.FilePath == "" {
		return false
	}
	p := args.FilePath
	if !filepath.IsAbs(p) {
		p = filepath.Join(in.Cwd, p)
	}
	names := []string{filepath.Base(p)}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		names = append(names, filepath.Base(r))
	}
	for _, n := range names {
		if n == stateNote || n == historyNote {
			return true
		}
	}
	return false
}

// The names of the notes whose Read the full hook records as evidence
// (package session: CurrentStateNote, HistoryNote; names_test.go holds them
// equal).
const (
	stateNote   = "session-current-state.md"
	historyNote = "session-history.md"
)

// delegate runs `sessionvault [--vault DIR] [--project P] hook EVENT` with
// stdin and passes on its output and exit code.
func delegate(a hookio.Args, stdin io.Reader, stdout, stderr io.Writer) int {
	event := a.Event
	bin, err := fullBinary()
	if err != nil {
		why := "sessionvault-hook hands what its cache cannot decide to the sessionvault binary, which is not installed beside it or on PATH (" + err.Error() + "). " + installHint()
		if event == "pre-tool-use" {
			if r, ok := screenAlone(stdin); ok {
				return r.Write(stdout, stderr)
			}
			return hookio.Deny(why+"; failing closed. Read-only tools still work").Write(stdout, stderr)
		}
		return hookio.Warn("hook "+event+" not answered", errors.New(why)).Write(stdout, stderr)
	}
	var argv []string
	if a.Vault != "" {
		argv = append(argv, "--vault", a.Vault)
	}
	if a.Project != "" {
		argv = append(argv, "--project", a.Project)
	}
	cmd := exec.Command(bin, append(argv, "hook", event)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit) && exit.ExitCode() >= 0:
		return exit.ExitCode()
	}
	fmt.Fprintf(stderr, "sessionvault-hook: running %s: %v\n", bin, err)
	if event == "pre-tool-use" {
		return 2 // fail closed
	}
	return 1
}

// installHint says how to put the full binary where fullBinary finds it:
// built beside this one (a command to run in a checkout of sessionvault),
// or named in $SESSIONVAULT_FULL_BIN.
func installHint() string {
	dir := "DIR"
	if self, err := os.Executable(); err == nil {
		dir = filepath.Dir(self)
	}
	name := "sessionvault"
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	return "Build it beside this one, in a checkout of sessionvault: `go build -o " + shellquote.Quote(filepath.Join(dir, name)) + " ./cmd/sessionvault`; or name it in $SESSIONVAULT_FULL_BIN"
}

// fullBinary finds the sessionvault binary: $SESSIONVAULT_FULL_BIN when
// set (a path), else beside this one, else on PATH.
func fullBinary() (string, error) {
	if p := os.Getenv("SESSIONVAULT_FULL_BIN"); p != "" {
		if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
			return "", fmt.Errorf("$SESSIONVAULT_FULL_BIN names %s, which is not a file", p)
		}
		return p, nil
	}
	name := "sessionvault"
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, nil
		}
	}
	return exec.LookPath("sessionvault")
}
