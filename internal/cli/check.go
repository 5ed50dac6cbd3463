package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sessionvault/sessionvault/internal/errs"
)

func (a *app) checkCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "check",
		Short: "Parse every note of the vault and report each problem with file and line",
		Long: `Reads every note of the vault: front matter that is not valid YAML, notes over
10 MB, and session entries the engine cannot read back are reported with their
file and line. Changes nothing. Exits 1 if there is any problem.`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			svc, err := a.service()
			if err != nil {
				return err
			}
			rep, err := svc.Check(func(n int) { fmt.Fprintf(a.stderr, "checked %d notes\n", n) })
			if err != nil {
				return err
			}
			if len(rep.Problems) > 0 {
				var b strings.Builder
				for _, p := range rep.Problems {
					b.WriteString("\n  " + p.String())
				}
				e := errs.New(errs.StateParseError, "%d problem(s) in %d notes:%s", len(rep.Problems), rep.Notes, b.String())
				e.Details = map[string]any{"notes": rep.Notes, "problems": rep.Problems}
				return e
			}
			return a.emit(rep, fmt.Sprintf("%d notes, no problems", rep.Notes))
		},
	}
}
