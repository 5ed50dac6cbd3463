// Package cli holds sessionvault's cobra commands, one file each. It wires
// concrete parts together (as cmd/sessionvault-hook does for the hook path
// alone); it maps errors to exit codes
// (0 ok, 1 error, 2 usage or blocked) and to the --json error shape
// {"success":false,"error":{"code","name","message","details"}}.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/workflow"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sessionvault/sessionvault/internal/config"
	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/guard"
	"github.com/sessionvault/sessionvault/internal/session"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// app carries what every command needs: the global flags and the streams.
type app struct {
	vaultDir string
	project  string
	opID     string
	jsonOut  bool
	stdout   io.Writer
	stderr   io.Writer
	stdin    io.Reader
	// place is the opened vault (nil before one is): an error's quoted
	// `sessionvault ...` remedies name it, so they run pasted anywhere.
	place *guard.Place
	// exit, when non-zero, is the exit code of a command that succeeded in
	// answering but must report a decision by its code (hooks, gates).
	exit int
	// newerFormat, when non-zero, is the format of an opened vault newer
	// than this binary writes: Main warns after the command (formatWarning).
	newerFormat int
	// svc is the service the command opened (service), nil when it opened
	// none: after the command, emit and fail print from it the notice for
	// an agent whose session is no longer the current one
	// (session.Service.ClashNotice) as the command left the vault.
	svc *session.Service
	// clashDone is set once the notice was printed or found empty.
	clashDone bool
	// args is the command line Main was given (without the program name):
	// what `serve` hands over to the daemon binary.
	args []string
	// serve is Options.Serve: nil when `serve` hands over (handOffServe).
	serve func(ctx context.Context, job ServeJob) error
}

// Main runs the sessionvault command line with args (without the program
// name) and returns the process exit code. Its `serve` hands over to the
// sessionvault-daemon binary (MainWith sets what runs it in process).
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return MainWith(args, stdin, stdout, stderr, Options{})
}

// MainWith is Main with what a binary adds (Options): the daemon binary
// passes the daemon `serve` runs.
func MainWith(args []string, stdin io.Reader, stdout, stderr io.Writer, opts Options) int {
	a := &app{stdout: stdout, stderr: stderr, stdin: stdin, args: args, serve: opts.Serve}
	root := a.rootCommand(commandToRun(args))
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.Execute()
	a.formatWarning(err)
	if err == nil {
		return a.exit
	}
	return a.fail(err)
}

// formatWarning warns on stderr, once the command is done, that the vault
// it opened is in a format newer than this binary writes: what it read
// may lack what that format adds, and writing commands fail. Not when the
// command failed for that reason (its error says it), and never on stdout
// (--json keeps its one object).
func (a *app) formatWarning(err error) {
	if a.newerFormat == 0 || errs.Is(err, errs.VaultFormatNewer) {
		return
	}
	fmt.Fprintf(a.stderr, "sessionvault: warning: %s; reading works meanwhile, writing commands fail [%s %s]\n",
		(&config.NewerFormatError{What: "this vault", Version: a.newerFormat}).Error(), errs.VaultFormatNewer.ID, errs.VaultFormatNewer.Name)
}

// topCommand is a top-level command: its name (the first word of its Use)
// and its constructor, so that a run builds only the command it runs.
type topCommand struct {
	name string
	make func(*app) *cobra.Command
}

// commandGroup is a titled group of top-level commands in `sessionvault
// --help`.
type commandGroup struct {
	id, title string
	cmds      []topCommand
}

// commandGroups lists the top-level commands by what they are for, in the
// order `sessionvault --help` lists them.
func commandGroups() []commandGroup {
	return []commandGroup{
		{"sessions", "Sessions:", []topCommand{{"start", (*app).startCommand}, {"update", (*app).updateCommand},
			{"decide", (*app).decideCommand}, {"block", (*app).blockCommand}, {"resolve", (*app).resolveCommand},
			{"end", (*app).endCommand}, {"status", (*app).statusCommand}, {"heartbeat", (*app).heartbeatCommand},
			{"recover", (*app).recoverCommand}, {"recovery", (*app).recoveryCommand}, {"log", (*app).logCommand}}},
		{"protocol", "The session protocol:", []topCommand{{"evidence", (*app).evidenceCommand}, {"gate", (*app).gateCommand},
			{"phase", (*app).phaseCommand}, {"mode", (*app).modeCommand}, {"accept", (*app).acceptCommand},
			{"blocked-reason", (*app).blockedReasonCommand}, {"protocol", (*app).protocolCommand}, {"check", (*app).checkCommand}}},
		{"tasks", "Tasks:", []topCommand{{"task", (*app).taskCommand}, {"checkpoint", (*app).checkpointCommand},
			{"rollback", (*app).rollbackCommand}, {"conflicts", (*app).conflictsCommand}}},
		{"features", "Features and the workflow:", []topCommand{{"feature", (*app).featureCommand}, {"history", (*app).historyCommand},
			{"agent", (*app).agentCommand}, {"verdict", (*app).verdictCommand}, {"workflow", (*app).workflowCommand}}},
		{"sync", "Sync and remotes:", []topCommand{{"remote", (*app).remoteCommand}, {"sync", (*app).syncCommand},
			{"linear", (*app).linearCommand}, {"serve", (*app).serveCommand}, {"merge-driver", (*app).mergeDriverCommand}}},
		{"data", "Import and export:", []topCommand{{"import", (*app).importCommand}, {"export", (*app).exportCommand}}},
		{"setup", "Setup:", []topCommand{{"init", (*app).initCommand}, {"link", (*app).linkCommand}, {"hooks", (*app).hooksCommand},
			{"hook", (*app).hookCommand}, {"mcp", (*app).mcpCommand}, {"doctor", (*app).doctorCommand}, {"migrate", (*app).migrateCommand}}},
	}
}

// commandToRun is the name of the top-level command args run, when nothing
// but that command is needed to run them: the root's value flags (--vault,
// --project, --op-id) and --json may come before it. It is "" — build every
// command — when args hold another flag before the command (--help,
// --version, a mistake), name no command or an unknown one (cobra's
// suggestions), or ask for help or completions, which list every command.
func commandToRun(args []string) string {
	for i := 0; i < len(args); i++ {
		arg := args[i]
		switch {
		case arg == "--vault" || arg == "--project" || arg == "--op-id":
			i++ // its value
		case arg == "--json" || strings.HasPrefix(arg, "--vault=") || strings.HasPrefix(arg, "--project=") || strings.HasPrefix(arg, "--op-id="):
		case strings.HasPrefix(arg, "-"):
			return ""
		default:
			for _, g := range commandGroups() {
				for _, c := range g.cmds {
					if c.name == arg {
						return arg
					}
				}
			}
			return ""
		}
	}
	return ""
}

// rootCommand builds the command tree: every command when only is "", else
// the root with the top-level command named only alone (what a run of it
// needs; its help, flags and errors are the same as in the whole tree).
func (a *app) rootCommand(only string) *cobra.Command {
	root := &cobra.Command{
		Use:   "sessionvault",
		Short: "Keep an AI coding agent's session state in a git-versioned Obsidian vault",
		Long: `sessionvault keeps an AI coding agent's working state — objective, progress,
decisions, blockers, checklists — as front-matter markdown notes in a vault that
is a git repository and an Obsidian vault at once. Every change is one git
commit; edits a person makes in Obsidian are kept byte for byte and read back.

The vault is --vault DIR, else $SESSIONVAULT_VAULT, else the nearest folder at
or above the current one that holds .sessionvault/.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       versionString(),
	}
	root.SetVersionTemplate("sessionvault {{.Version}}\n")
	root.PersistentFlags().StringVar(&a.vaultDir, "vault", "", "vault folder (default $SESSIONVAULT_VAULT, else the nearest parent holding .sessionvault/)")
	root.PersistentFlags().StringVar(&a.project, "project", "", "project folder in the vault (default: the config's default_project)")
	root.PersistentFlags().BoolVar(&a.jsonOut, "json", false, "print a machine-readable JSON result or error on stdout")
	root.PersistentFlags().StringVar(&a.opID, "op-id", "", "an id for this operation (e.g. a UUID): run again with the same id after an error or a lost reply, it does nothing again and prints the first result")
	root.PersistentPreRunE = func(c *cobra.Command, argv []string) error { return checkArgs(c, argv) }
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &errs.Error{Code: errs.InvalidCommand, Message: err.Error() + " (see `" + c.CommandPath() + " --help`)", Err: err}
	})
	// `sessionvault --help` lists the commands by what they are for.
	for _, g := range commandGroups() {
		root.AddGroup(&cobra.Group{ID: g.id, Title: g.title})
		for _, t := range g.cmds {
			if only != "" && t.name != only {
				continue
			}
			c := t.make(a)
			c.GroupID = g.id
			root.AddCommand(c)
		}
	}
	root.SetHelpCommandGroupID("setup")
	root.SetCompletionCommandGroupID("setup")
	// A run of one command never reaches `completion`: not built.
	root.CompletionOptions.DisableDefaultCmd = only != ""
	requireSubcommands(root)
	return root
}

// requireSubcommands makes every command that only groups subcommands (hooks,
// import, gate, ...) fail with a usage error (exit 2) when it is run without
// one or with an unknown one, instead of printing its help and exiting 0.
func requireSubcommands(c *cobra.Command) {
	for _, sub := range c.Commands() {
		requireSubcommands(sub)
	}
	if !c.HasSubCommands() || c.Run != nil || c.RunE != nil || c.Parent() == nil {
		return
	}
	c.Args = cobra.ArbitraryArgs
	c.RunE = func(c *cobra.Command, argv []string) error {
		var names []string
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() {
				names = append(names, sub.Name())
			}
		}
		if len(argv) > 0 {
			return usageError(c, fmt.Sprintf("unknown command %q for %q (its commands: %s)", argv[0], c.CommandPath(), strings.Join(names, ", ")))
		}
		return usageError(c, fmt.Sprintf("%q needs a command: %s", c.CommandPath(), strings.Join(names, ", ")))
	}
}

// openVault locates the vault (vault.Locate: --vault, $SESSIONVAULT_VAULT,
// this machine's link for the code repository holding the working directory,
// the nearest parent holding .sessionvault/) and opens it; a link's project
// fills in an empty --project.
func (a *app) openVault() (*vault.Vault, error) {
	dir, project, err := vault.Locate(a.vaultDir, a.project, "")
	if err != nil {
		return nil, err
	}
	a.project = project
	v, err := vault.Open(dir)
	if err == nil {
		a.place = &guard.Place{Root: v.Root, Project: project, DefaultProject: v.Config.DefaultProject}
		if v.NewerFormat() {
			a.newerFormat = v.Config.Version
		}
	}
	return v, err
}

func (a *app) service() (*session.Service, error) {
	v, err := a.openVault()
	if err != nil {
		return nil, err
	}
	svc := session.New(v).WithOp(a.opID)
	svc.StateAfter = a.jsonOut // --json prints the state after an operation
	if now := os.Getenv("SESSIONVAULT_NOW"); now != "" {
		t, err := time.Parse(time.RFC3339, now)
		if err != nil {
			return nil, errs.New(errs.InvalidCommand, "SESSIONVAULT_NOW=%q is not an RFC 3339 time like 2026-11-22T14:30:00Z", now)
		}
		svc.Now = func() time.Time { return t }
	}
	a.svc = svc // the clash notice is read from it after the command (printClash)
	return svc, nil
}

// projectService opens the vault and resolves --project.
func (a *app) projectService() (*session.Service, string, error) {
	svc, err := a.service()
	if err != nil {
		return nil, "", err
	}
	project, err := svc.Project(a.project)
	return svc, project, err
}

// emit prints a result: data as {"success":true,"data":...} with --json,
// else the text.
func (a *app) emit(data any, text string) error {
	var warnings []string
	switch o := data.(type) {
	case session.Outcome:
		warnings = o.Result.Warnings
	case workflow.WorkflowOutcome:
		warnings = o.Result.Warnings
	}
	// What failed after the commit: the operation stands (exit 0), and the
	// warning says what failed and what to do (also in --json's
	// git.warnings).
	for _, w := range warnings {
		fmt.Fprintln(a.stderr, "sessionvault: warning:", w)
	}
	if a.jsonOut {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"success": true, "data": data})
	}
	if text != "" {
		fmt.Fprintln(a.stdout, text)
	}
	a.printClash()
	return nil
}

// printClash prints the clash notice once, on stderr, as it is once the
// command is done (a start, a remote sync's merge, a status read it may
// have changed): from the service the command opened, nothing when it
// opened none.
func (a *app) printClash() {
	if a.clashDone || a.svc == nil {
		return
	}
	a.clashDone = true
	if notice := a.svc.ClashNotice(a.project); notice != "" {
		fmt.Fprintln(a.stderr, notice)
	}
}

// exitCode is the process exit code of an error with code c: 2 for a usage
// error, 1 for any other.
func exitCode(c errs.Code) int {
	if c == errs.InvalidCommand {
		return 2
	}
	return 1
}

// fail reports err and returns its exit code: 2 for usage errors, 1 otherwise.
func (a *app) fail(err error) int {
	defer a.printClash()
	var e *errs.Error
	if !errors.As(err, &e) {
		e = &errs.Error{Code: vault.OSErrorCode(err), Message: err.Error(), Err: err}
		if isUsage(err) {
			e.Code = errs.InvalidCommand
		}
	}
	code := exitCode(e.Code)
	if a.place != nil {
		msg := a.place.Runnable(e.Message, "")
		e = &errs.Error{Code: e.Code, Message: msg, Details: e.Details, Err: e.Err}
	}
	if a.jsonOut {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(map[string]any{"success": false, "error": map[string]any{
			"code": e.Code.ID, "name": e.Code.Name, "message": e.Message, "details": e.Details,
		}})
		return code
	}
	fmt.Fprintf(a.stderr, "sessionvault: %s [%s %s]\n", e.Message, e.Code.ID, e.Code.Name)
	return code
}

// checkArgs refuses a NUL byte or invalid UTF-8 in any argument or flag
// value before a command runs: errs.UpdateValidationFailed naming the flag (or the
// argument's position); nothing is changed.
func checkArgs(c *cobra.Command, argv []string) error {
	var bad error
	c.Flags().Visit(func(f *pflag.Flag) {
		if bad == nil {
			values := []string{f.Value.String()}
			if sv, ok := f.Value.(pflag.SliceValue); ok {
				values = sv.GetSlice()
			}
			for _, v := range values {
				if err := vault.CheckText("--"+f.Name, v); err != nil {
					bad = err
					break
				}
			}
		}
	})
	if bad != nil {
		return bad
	}
	for i, v := range argv {
		if err := vault.CheckText(fmt.Sprintf("argument %d of `%s`", i+1, c.CommandPath()), v); err != nil {
			return err
		}
	}
	return nil
}

// isUsage recognises cobra's own argument errors.
func isUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "accepts ", "requires at least", "unknown flag", "unknown shorthand", "invalid argument"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// args wraps a cobra positional-argument check so its error is a usage error.
func args(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(c *cobra.Command, a []string) error {
		if err := check(c, a); err != nil {
			msg := err.Error()
			// cobra.NoArgs calls an argument an unknown command; a command
			// with no subcommands takes its input in flags.
			if !c.HasSubCommands() && len(a) > 0 && strings.HasPrefix(msg, "unknown command ") {
				msg = fmt.Sprintf("%s takes no arguments, only flags: got %q", c.CommandPath(), strings.Join(a, " "))
			}
			return &errs.Error{Code: errs.InvalidCommand, Message: msg + " (see `" + c.CommandPath() + " --help`)", Err: err}
		}
		return nil
	}
}
