package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/protocol"
)

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
