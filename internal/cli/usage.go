package cli

import (
	"github.com/spf13/cobra"

	"github.com/sessionvault/sessionvault/internal/errs"
)

func usageError(c *cobra.Command, msg string) error {
	return errs.New(errs.InvalidCommand, "%s (see `%s --help`)", msg, c.CommandPath())
}
