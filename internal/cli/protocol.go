package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/markdown"
	"github.com/sessionvault/sessionvault/internal/protocol"
)

func (a *app) protocolCommand() *cobra.Command {
	c := &cobra.Command{Use: "protocol lint [FILE]", Short: "Check a session protocol document"}
	c.AddCommand(&cobra.Command{
		Use:   "lint [FILE]",
		Short: "Prove every MUST can be met in order from start to end; report contradictions",
		Long: `Reads FILE (default: the project's protocol) and reports, with line numbers:
errors — a start MUST that can never be met while the start gate blocks editing
tools (a new commit, a tool the gate blocks, a section only ` + "`end`" + ` writes, a file
only an end step creates), a tool pattern that matches nothing; warnings —
duplicate items, requirement rows outside the start and end sections. Exits 1
when there is an error.`,
		Args: args(cobra.MaximumNArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			var proto *protocol.Protocol
			policy := protocol.DefaultPolicy()
			if len(argv) == 1 {
				src, err := os.ReadFile(argv[0])
				if err != nil {
					return errs.Wrap(errs.ProtocolInvalid, err, "reading the protocol")
				}
				proto = protocol.Parse(markdown.New(), argv[0], src)
				if v, err := a.openVault(); err == nil {
					policy = policyFrom(v)
				}
			} else {
				svc, project, err := a.projectService()
				if err != nil {
					return err
				}
				if proto, err = svc.Protocol(project); err != nil {
					return err
				}
				policy = policyFrom(svc.V)
			}
			findings := protocol.Lint(proto, policy)
			var b strings.Builder
			errors := 0
			for _, f := range findings {
				fmt.Fprintf(&b, "\n  %s:%s", proto.Path, f)
				if f.Severity == "error" {
					errors++
				}
			}
			summary := fmt.Sprintf("%s: %d start and %d end items, %d finding(s)", proto.Path, len(proto.Start), len(proto.End), len(findings))
			if errors > 0 {
				e := errs.New(errs.ProtocolInvalid, "%s, %d error(s):%s", summary, errors, b.String())
				e.Details = map[string]any{"findings": findings}
				return e
			}
			return a.emit(map[string]any{"path": proto.Path, "start": len(proto.Start), "end": len(proto.End), "findings": findings}, summary+b.String())
		},
	})
	return c
}
