package cli

import (
	"github.com/spf13/cobra"

	"github.com/sessionvault/sessionvault/internal/session"
)

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
	rec.Flags().StringVar(&o.File, "file", "", "the `FILE` read, for file evidence: absolute, or relative to --dir (default the current folder), else to the project folder in the vault; it must be the protocol's file (same name, or ending in its path)")
	rec.Flags().StringVar(&o.SHA, "sha", "", "the commit (`SHA`), for commit evidence")
	rec.Flags().BoolVar(&o.Run, "run", false, "run the protocol's command, for run evidence")
	rec.Flags().StringVar(&o.Dir, "dir", "", "the code repository (`DIR`), where run commands run and commit evidence is looked up (default: the current folder)")
	c.AddCommand(rec)
	return c
}
