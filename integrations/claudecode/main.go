package claudecode

import (
	"fmt"
	"io"
	"strings"

	"github.com/sessionvault/sessionvault/integrations/claudecode/hookio"
	"github.com/sessionvault/sessionvault/internal/config"
	"github.com/sessionvault/sessionvault/internal/policy"
	"github.com/sessionvault/sessionvault/internal/protocol"
	"github.com/sessionvault/sessionvault/internal/session"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// PolicyFrom applies a vault's configured tool policy over the built-in one.
func PolicyFrom(c config.Config) protocol.Policy {
	return policy.TableFrom(c.ReadOnlyTools, c.ModeBlocks)
}

// NewHandler builds the hook handler for project ("" = the vault's default)
// on v, the vault the caller located and opened, or on err, why it could
// not: then the handler still answers — reading calls pass, everything else
// is denied with err. The vault's settings give the tool policy; without a
// vault it is the built-in one.
func NewHandler(v *vault.Vault, project string, err error) Handler {
	h := Handler{Project: project, Policy: protocol.DefaultPolicy()}
	var svc *session.Service
	if err == nil {
		h.Policy = PolicyFrom(v.Config)
		h.PolicyConfig = policy.Config{UnknownMCP: v.Config.UnknownMCPTools}
		svc = session.New(v)
	}
	h.Open = func() (*session.Service, error) { return svc, err }
	return h
}

// NewHandlerFunc builds the handler of one hook from the --vault and
// --project flags ("" when not given) and cwd, the folder of the code
// repository the hook runs for (see hookio.WorkDir): it locates and opens the vault
// (vault.Locate, vault.Open; when Locate finds none, Unlinked says how to
// link) and passes the result to NewHandler. It is wired by
// cmd/sessionvault-hook and internal/cli; this package never finds or opens
// a vault itself.
type NewHandlerFunc func(vaultDir, project, cwd string) Handler

// HandlerFor builds the handler for the --vault and --project flags and the
// hook input's cwd with newHandler, given the folder hookio.WorkDir resolves; when
// that folder cannot be known, the handler answers without a vault.
func HandlerFor(newHandler NewHandlerFunc, vaultDir, project, inputCwd string) Handler {
	cwd, err := hookio.WorkDir(inputCwd)
	if err != nil {
		return NewHandler(nil, project, err)
	}
	return newHandler(vaultDir, project, cwd)
}

// Unlinked adds to err, why no vault was found for the code repository at
// cwd, how to link the repository to its vault on this machine.
func Unlinked(err error, cwd string) error {
	return fmt.Errorf("%w. On this machine, link the code repository to its vault: `sessionvault --vault VAULT hooks install` in %s", err, cwd)
}

// Main answers one hook: args are [--vault DIR] [--project P] [hook] EVENT;
// the hook JSON is read from stdin; newHandler builds the handler once the
// input is read (see HandlerFor). It returns the exit code (2 denies a
// PreToolUse). It is the whole of `sessionvault hook`; the lean
// sessionvault-hook binary hands it what its cache cannot decide.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer, newHandler NewHandlerFunc) int {
	a, err := hookio.ParseArgs(args)
	if err != nil {
		fmt.Fprintf(stderr, "sessionvault hook: %v\n", err)
		return 2
	}
	if a.Help {
		io.WriteString(stdout, hookio.Usage())
		return 0
	}
	_, in, err := hookio.ReadInput(stdin)
	if err != nil {
		if a.Event != "pre-tool-use" {
			return 0
		}
		return Deny(fmt.Sprintf("the hook input cannot be read (%v); failing closed", err)).Write(stdout, stderr)
	}
	h := HandlerFor(newHandler, a.Vault, a.Project, in.Cwd)
	var r Response
	switch a.Event {
	case "pre-tool-use":
		r = h.PreToolUse(in)
	case "post-tool-use", "post-tool-use-failure":
		r = h.PostToolUse(in)
	case "session-start":
		r = h.SessionStart(in)
	case "pre-compact":
		r = h.PreCompact(in)
	case "stop":
		r = h.Stop(in)
	default:
		fmt.Fprintf(stderr, "sessionvault hook: unknown hook %q: use one of %s\n", a.Event, strings.Join(hookio.Events, ", "))
		return 2
	}
	return r.Write(stdout, stderr)
}
