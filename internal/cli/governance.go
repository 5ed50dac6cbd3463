package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sessionvault/sessionvault/integrations/claudecode"
	"github.com/sessionvault/sessionvault/internal/config"
	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/protocol"
	"github.com/sessionvault/sessionvault/internal/session"
	"github.com/sessionvault/sessionvault/internal/vault"
)

func usageError(c *cobra.Command, msg string) error {
	return errs.New(errs.InvalidCommand, "%s (see `%s --help`)", msg, c.CommandPath())
}

func (a *app) hooksCommand() *cobra.Command {
	c := &cobra.Command{Use: "hooks install", Short: "Install sessionvault's Claude Code hooks"}
	var dir string
	install := &cobra.Command{
		Use:   "install [--project-dir DIR]",
		Short: "Merge sessionvault's hook entries into DIR/.claude/settings.json",
		Long: `Adds PreToolUse, PostToolUse, SessionStart, PreCompact and Stop entries to
DIR/.claude/settings.json, keeping every other key and hook of the file, and
links DIR to this vault on this machine (in the per-user file
~/.config/sessionvault/repos.yaml, or $SESSIONVAULT_CONFIG_DIR/repos.yaml).

The entries name no path of this machine, so the settings file can be
committed: they run sessionvault-hook or sessionvault from PATH, which finds
the vault through the link. On a machine where sessionvault is not installed,
every tool call is denied with how to install it; on a clone at another path,
run this command once there (the settings file does not change).
Running it twice changes nothing.`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			v, err := a.openVault()
			if err != nil {
				return err
			}
			changed, path, err := claudecode.Install(dir)
			if err != nil {
				return errs.Wrap(errs.ConfigInvalid, err, "installing the hooks")
			}
			links, linked, err := config.SaveRepoLink(dir, config.RepoLink{Vault: v.Root, Project: a.project})
			if err != nil {
				return errs.Wrap(errs.ConfigInvalid, err, "linking the repository to the vault")
			}
			absDir, _ := filepath.Abs(dir)
			text := path + ": hooks installed"
			if !changed {
				text = path + ": hooks already installed, nothing changed"
			}
			if linked {
				text += "\n" + links + ": " + absDir + " now uses the vault " + v.Root
			} else {
				text += "\n" + links + ": " + absDir + " already uses the vault " + v.Root
			}
			if _, err := exec.LookPath("sessionvault"); err != nil {
				if _, herr := exec.LookPath("sessionvault-hook"); herr != nil {
					text += "\nwarning: neither sessionvault nor sessionvault-hook is on PATH: the hooks deny every tool call until one is (e.g. go install ./cmd/sessionvault ./cmd/sessionvault-hook)"
				}
			}
			return a.emit(map[string]any{"settings": path, "changed": changed, "links": links, "linked": linked, "vault": v.Root}, text)
		},
	}
	install.Flags().StringVar(&dir, "project-dir", ".", "the Claude Code project folder")
	c.AddCommand(install)
	return c
}

func (a *app) evidenceCommand() *cobra.Command {
	c := &cobra.Command{Use: "evidence record ITEM", Short: "Record verified evidence for a checklist item"}
	var o session.EvidenceOptions
	rec := &cobra.Command{
		Use:   "record ITEM [--file F | --sha S | --run]",
		Short: "Verify an item's evidence as the protocol says, and tick it",
		Long: `Verifies the evidence the protocol's Evidence column names for ITEM (c-N of the
start checklist, e-N of the end checklist) and ticks the item with what was
verified — one commit:

  file: NAME    --file PATH   the file exists; its SHA-256 is recorded
  commit        --sha SHA     the commit exists in the code repository (current folder)
  run: COMMAND  --run         the protocol's command exits 0 in the current folder
  section: NAME (no flag)     that section of the current state is not empty

Items whose evidence is a person's tick cannot be recorded by the agent.`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			svc, err := a.service()
			if err != nil {
				return err
			}
			o.Project, o.Item = a.project, argv[0]
			out, err := svc.RecordEvidence(o)
			if err != nil {
				return err
			}
			return a.emit(out, "recorded "+out.ID)
		},
	}
	rec.Flags().StringVar(&o.File, "file", "", "the file read, for `file` evidence: absolute, or relative to --dir (default the current folder), else to the project folder in the vault; it must be the protocol's file (same name, or ending in its path)")
	rec.Flags().StringVar(&o.SHA, "sha", "", "a commit, for `commit` evidence")
	rec.Flags().BoolVar(&o.Run, "run", false, "run the protocol's command, for `run` evidence")
	rec.Flags().StringVar(&o.Dir, "dir", "", "the code repository, where `run` commands run and `commit` evidence is looked up (default: the current folder)")
	c.AddCommand(rec)
	return c
}

func (a *app) modeCommand() *cobra.Command {
	c := &cobra.Command{Use: "mode set MODE", Short: "Set the mode: analysis, planning, coding or disabled"}
	c.AddCommand(&cobra.Command{
		Use:   "set analysis|planning|coding|disabled",
		Short: "Record a mode change (disabled turns the gates off: a person's escape hatch)",
		Long: `Sets what kind of work the PreToolUse hook allows: analysis blocks editing tools
and Bash, planning blocks editing tools, coding blocks nothing the mode decides.
disabled turns every gate off; it is the person's escape hatch and the hook does
not let the agent set it. Each change is recorded in the Mode history section.`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			mode, err := protocol.ParseMode(argv[0])
			if err != nil {
				return usageError(c, err.Error())
			}
			svc, err := a.service()
			if err != nil {
				return err
			}
			out, err := svc.SetMode(a.project, mode)
			if err != nil {
				return err
			}
			return a.emit(out, "mode "+string(mode))
		},
	})
	return c
}

func (a *app) acceptCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "accept",
		Short: "A person accepts the current state as it is (after the hooks found it changed)",
		Long: `When session-current-state.md was changed outside sessionvault (the note
rewritten by an agent's tool, or edited while no sessionvault operation ran),
the PreToolUse hook denies every non-read-only tool. Review the change (git diff
in the vault), then run accept: the edit is committed as yours and the state is
signed again. What the signature changes is printed: the session, status,
phase, mode and protocol as they are now. Checklist ticks are never signed
this way; only evidence recorded with 'sessionvault evidence record' counts.
The hook does not let the agent run this.`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			svc, project, err := a.projectService()
			if err != nil {
				return err
			}
			res, signed, err := svc.Accept(project)
			if err != nil {
				return err
			}
			text := "accepted the current state of " + project
			if res.PersonCommit != "" {
				text += "\ncommitted your edits as " + res.PersonCommit
			}
			if len(signed) == 0 {
				text += "\nsigned: nothing changed in the session, status, phase, mode or protocol"
			}
			for _, l := range signed {
				text += "\nsigned: " + l
			}
			return a.emit(struct {
				vault.Result
				Signed []string `json:"signed"`
			}{res, signed}, text)
		},
	}
}

func (a *app) gateCommand() *cobra.Command {
	c := &cobra.Command{Use: "gate validate start|end", Short: "Check a phase's gate: which MUST items lack evidence"}
	c.AddCommand(&cobra.Command{
		Use:   "validate start|end",
		Short: "List the MUST items of the start or end checklist that lack evidence; exit 1 if any",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			phase := protocol.Phase(argv[0])
			if phase != protocol.Start && phase != protocol.End {
				return usageError(c, fmt.Sprintf("phase %q: use start or end", argv[0]))
			}
			svc, project, err := a.projectService()
			if err != nil {
				return err
			}
			st, err := svc.Verified(project)
			if err != nil {
				return err
			}
			proto, err := svc.Protocol(project)
			if err != nil {
				return err
			}
			missing := svc.Gate(st, proto, phase)
			if len(missing) == 0 {
				return a.emit(map[string]any{"phase": phase, "passed": true}, "gate "+string(phase)+": passed")
			}
			var b strings.Builder
			cwd, _ := os.Getwd() // where the checks of --run and --sha must run
			for _, m := range missing {
				fmt.Fprintf(&b, "\n  %s %s: %s", m.ID, m.Step, svc.Runnable(project, m.Do, cwd))
			}
			e := errs.New(errs.GateNotPassed, "gate %s: %d MUST item(s) lack evidence:%s", phase, len(missing), b.String())
			e.Details = map[string]any{"phase": phase, "missing": missing}
			return e
		},
	})
	return c
}

func (a *app) blockedReasonCommand() *cobra.Command {
	var tool, command string
	c := &cobra.Command{
		Use:   "blocked-reason [--tool NAME] [--command LINE]",
		Short: "Say why the PreToolUse hook would block a tool now (default Edit), and what to do",
		Long: `Asks the hook's policy whether a tool call may run now, and why not. --command
gives a Bash command line to judge (reading command lines pass where writing
ones do not); without it, Bash means a command that writes or runs code.
Exits 0 when the tool is allowed, 1 when it is blocked.`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			input, _ := json.Marshal(map[string]string{"command": command})
			allowed, reason := a.hookHandler().Decide(tool, input, "")
			if allowed {
				return a.emit(map[string]any{"tool": tool, "blocked": false}, tool+" is allowed")
			}
			a.exit = 1 // blocked: scripts can test the exit status, as with gate validate
			return a.emit(map[string]any{"tool": tool, "blocked": true, "reason": reason}, tool+" is blocked: "+reason)
		},
	}
	c.Flags().StringVar(&tool, "tool", "Edit", "the Claude Code tool name")
	c.Flags().StringVar(&command, "command", "", "a Bash command line to judge (with --tool Bash)")
	return c
}

func (a *app) phaseCommand() *cobra.Command {
	c := &cobra.Command{Use: "phase advance", Short: "Move the session through its next gate"}
	c.AddCommand(&cobra.Command{
		Use:   "advance",
		Short: "INIT → WORKING through the start gate, WORKING → COMPLETE through the end gate",
		Long: `Advances the active session's phase (seed 001): INIT to WORKING when every MUST of
the start checklist has evidence, WORKING to COMPLETE when every MUST of the end
checklist has. When the gate does not pass, the advance stops with the missing
evidence named, and the unmet MUSTs are appended to session-violations-log.md.`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			svc, err := a.service()
			if err != nil {
				return err
			}
			out, err := svc.AdvancePhase(a.project)
			if err != nil {
				return err
			}
			return a.emit(out, "phase "+out.ID)
		},
	})
	return c
}
