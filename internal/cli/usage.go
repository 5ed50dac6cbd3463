package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sessionvault/sessionvault/internal/errs"
)

func usageError(c *cobra.Command, msg string) error {
	return errs.New(errs.InvalidCommand, "%s (see `%s --help`)", msg, c.CommandPath())
}

// requireFlags refuses a run of c without each of the flags named: a usage
// error (errs.InvalidCommand, exit 2) naming the first one missing and what
// it is for, before anything is read or written. A flag given with an
// empty or bad value is not missing: the operation's own checks refuse it
// (as they do for the MCP tools, which have no flags).
func requireFlags(c *cobra.Command, names ...string) error {
	for _, n := range names {
		if c.Flags().Changed(n) {
			continue
		}
		msg := fmt.Sprintf("%s needs --%s", strings.TrimPrefix(c.CommandPath(), c.Root().Name()+" "), n)
		if f := c.Flags().Lookup(n); f != nil && f.Usage != "" {
			what, _, _ := strings.Cut(f.Usage, " (")
			msg += ": " + what
		}
		return usageError(c, msg)
	}
	return nil
}
