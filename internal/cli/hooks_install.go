package cli

import (
	"os/exec"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/sessionvault/sessionvault/integrations/claudecode"
	"github.com/sessionvault/sessionvault/internal/config"
	"github.com/sessionvault/sessionvault/internal/errs"
)

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
