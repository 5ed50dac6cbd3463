package cli

import (
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/sessionvault/sessionvault/integrations/serena"
	"github.com/sessionvault/sessionvault/internal/errs"
)

// linkCommand is `link serena`: the per-machine half of `init --serena`.
func (a *app) linkCommand() *cobra.Command {
	c := &cobra.Command{Use: "link serena", Short: "Link a code repository's Serena memories to the project folder (per machine)"}
	var repo string
	c.AddCommand(&cobra.Command{
		Use:   "serena [--repo DIR]",
		Short: "Make DIR/.serena/memories a link to the vault's project folder, and keep it out of DIR's commits",
		Long: `Serena's memory tools read and write DIR/.serena/memories; this makes it a
symlink to the project folder of the vault, so Serena reads the canonical notes.
The link names a path of this machine, so it is added to DIR/.git/info/exclude
and never committed: run this once on each machine (and after moving the
vault). A missing or dangling link is (re)made; a link to another folder that
exists, or a memories folder holding files, is refused with what to do.`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			svc, project, err := a.projectService()
			if err != nil {
				return err
			}
			target := filepath.Join(svc.V.Root, project)
			made, err := serena.Link(repo, target)
			if err != nil {
				return errs.Wrap(errs.InvalidCommand, err, "link serena")
			}
			mem := filepath.Join(repo, ".serena", "memories")
			text := mem + " -> " + target + " (already linked)"
			if made {
				text = mem + " -> " + target
			}
			return a.emit(map[string]any{"link": mem, "target": target, "created": made}, text)
		},
	})
	c.PersistentFlags().StringVar(&repo, "repo", ".", "the code repository")
	return c
}
