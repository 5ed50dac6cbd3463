package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sessionvault/sessionvault/internal/note"
)

// logEntry is one line of `sessionvault log`.
type logEntry struct {
	Commit    string `json:"commit"`
	Time      string `json:"time"`
	Operation string `json:"operation"`
	Session   string `json:"session,omitempty"`
	Author    string `json:"author"`
	Subject   string `json:"subject"`
}

func (a *app) logCommand() *cobra.Command {
	var limit int
	c := &cobra.Command{
		Use:   "log [--limit N]",
		Short: "Show the vault's history: time, operation, session, author",
		Args:  args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			v, err := a.openVault()
			if err != nil {
				return err
			}
			commits, err := v.Log(limit)
			if err != nil {
				return err
			}
			entries := make([]logEntry, 0, len(commits))
			var b strings.Builder
			for _, ci := range commits {
				e := logEntry{Commit: ci.Hash, Time: note.FormatTime(ci.Author.When), Operation: ci.Trailers["Operation"],
					Session: ci.Trailers["Session"], Author: ci.Author.Name, Subject: ci.Subject}
				if e.Operation == "" {
					e.Operation = "(git)"
				}
				entries = append(entries, e)
				fmt.Fprintf(&b, "%s  %s  %-13s %-24s %-20s %s\n", e.Commit[:8], e.Time, e.Operation, dash(e.Session), e.Author, e.Subject)
			}
			return a.emit(entries, strings.TrimRight(b.String(), "\n"))
		},
	}
	c.Flags().IntVar(&limit, "limit", 20, "how many commits to show (0: all)")
	return c
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
