package cli

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sessionvault/sessionvault/integrations/serena"
	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/importer"
	"github.com/sessionvault/sessionvault/internal/imports"
	"github.com/sessionvault/sessionvault/internal/session"
	"github.com/sessionvault/sessionvault/internal/vault"
)

func (a *app) importCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "import serena|agents|memory-bank|claude-sessions|claude-code|aider|specstory|beads|ai-session DIR|FILE",
		Short: "Bring real data in: Serena memories, .agents session logs, memory banks, Claude Code session notes and transcripts, aider and SpecStory chats, beads issues, an .ai-session folder",
	}
	c.AddCommand(&cobra.Command{
		Use:   "serena DIR",
		Short: "Import a .serena/memories tree into the project folder, byte for byte",
		Long: `Copies every memory under DIR (a .serena/memories folder, or a repository holding
one; topic subfolders too) into the project folder under its own name, byte for
byte, in one commit, so Serena keeps reading them from the vault. Memories
already present with the same bytes are left as they are; a different file of
the same name is kept and the memory skipped. Idempotent.`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			svc, project, err := a.projectService()
			if err != nil {
				return err
			}
			rep, res, err := serena.Import(svc.V, project, argv[0], a.progress("memories"))
			if err != nil {
				return errs.Wrap(errs.ImportFailed, err, "importing Serena memories from "+argv[0])
			}
			text := fmt.Sprintf("serena memories from %s: %d found, %d imported, %d unchanged, %d skipped", argv[0], rep.Found, rep.Imported, rep.Unchanged, len(rep.Skipped))
			text += skippedText(len(rep.Skipped), func(i int) (string, string) { return rep.Skipped[i].Path, rep.Skipped[i].Reason })
			return a.emit(map[string]any{"report": rep, "git": res}, text)
		},
	})
	c.AddCommand(a.importAgentsCommand())
	c.AddCommand(a.importMemoryBankCommand())
	c.AddCommand(a.importClaudeSessionsCommand())
	c.AddCommand(a.importAiderCommand())
	c.AddCommand(a.importAISessionCommand())
	c.AddCommand(a.importBeadsCommand())
	c.AddCommand(a.importSpecStoryCommand())
	c.AddCommand(a.importClaudeCodeCommand())
	return c
}

// progress returns a callback printing "what: done/total" to stderr at most
// every 100 items and at the end.
func (a *app) progress(what string) func(done, total int) {
	return func(done, total int) {
		if done%100 == 0 || done == total {
			fmt.Fprintf(a.stderr, "%s: %d/%d\n", what, done, total)
		}
	}
}

func skippedText(n int, at func(int) (string, string)) string {
	if n == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nskipped:")
	for i := 0; i < n; i++ {
		p, r := at(i)
		b.WriteString("\n  " + p + ": " + r)
	}
	return b.String()
}

// noneImported is the error of an import that found sources and imported
// none of them — every one skipped: errs.ImportFailed (exit 1) naming what
// and where, with the reasons counted by kind, most frequent first ("90
// skipped: no start time …"), and the first files of each. nil when
// something was imported, updated or found unchanged, or nothing was found.
// what names the sources ("Claude Code session notes"), from where they
// were read.
func noneImported(what, from string, imported int, skipped []importer.Skipped) error {
	if imported > 0 || len(skipped) == 0 {
		return nil
	}
	type kind struct {
		reason string
		paths  []string
	}
	var kinds []*kind
	byReason := map[string]*kind{}
	for _, s := range skipped {
		k := byReason[s.Reason]
		if k == nil {
			k = &kind{reason: s.Reason}
			byReason[s.Reason] = k
			kinds = append(kinds, k)
		}
		k.paths = append(k.paths, s.Path)
	}
	sort.SliceStable(kinds, func(i, j int) bool { return len(kinds[i].paths) > len(kinds[j].paths) })
	// Sources, not lines: "a.jsonl:12" and "a.jsonl:40" are one file.
	sources := map[string]bool{}
	for _, s := range skipped {
		p := s.Path
		if i := strings.LastIndexByte(p, ':'); i > 0 {
			if _, err := strconv.Atoi(p[i+1:]); err == nil {
				p = p[:i]
			}
		}
		sources[p] = true
	}
	var b strings.Builder
	fmt.Fprintf(&b, "none of the %d %s in %s was imported:", len(sources), what, from)
	counts := map[string]int{}
	for _, k := range kinds {
		counts[k.reason] = len(k.paths)
		examples := k.paths
		if len(examples) > 3 {
			examples = append(examples[:3:3], "…")
		}
		fmt.Fprintf(&b, "\n  %d skipped: %s (%s)", len(k.paths), k.reason, strings.Join(examples, ", "))
	}
	return (&errs.Error{Code: errs.ImportFailed, Message: b.String()}).With("skipped", skipped).With("by_reason", counts)
}

// dryRunText lists, for a dry run, what the import would do with each
// source: the record it would write or rewrite, or that it is unchanged.
func dryRunText(records []imports.RecordOutcome) string {
	if len(records) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nwould do:")
	for _, r := range records {
		switch r.Action {
		case "import":
			fmt.Fprintf(&b, "\n  %s: would write %s", r.Source, r.Record)
		case "update":
			fmt.Fprintf(&b, "\n  %s: would rewrite %s (the source changed)", r.Source, r.Record)
		default:
			fmt.Fprintf(&b, "\n  %s: %s is unchanged", r.Source, r.Record)
		}
	}
	return b.String()
}

// wouldDo rewords an import's summary line for a dry run: what it would
// import and update, not what it did.
func wouldDo(summary string) string {
	summary = strings.Replace(summary, " imported,", " to import,", 1)
	return strings.Replace(summary, " updated,", " to update,", 1)
}

// serviceWithZone opens the vault's session service and its time_zone (the
// zone of times a source writes without one).
func (a *app) serviceWithZone() (*session.Service, *time.Location, error) {
	svc, err := a.service()
	if err != nil {
		return nil, nil, err
	}
	loc, err := svc.V.Config.Location()
	if err != nil {
		return nil, nil, errs.Wrap(errs.ConfigInvalid, err, "time_zone")
	}
	return svc, loc, nil
}

// importRecords writes the sessions read from another tool (what: "aider
// chats"; from: where they were read) as records (imports.ImportRecords),
// with the parser's skipped first in the report; it fails like noneImported
// when nothing was imported.
func (a *app) importRecords(svc *session.Service, what, from string, logs []importer.Session, skipped []importer.Skipped, dryRun bool) (imports.ImportReport, vault.Result, error) {
	rep, res, err := imports.New(svc).ImportRecords(a.project, logs, imports.ImportOptions{DryRun: dryRun, What: what}, a.progress("sessions written"))
	if err != nil {
		return rep, res, errs.Wrap(errs.ImportFailed, err, "importing "+what)
	}
	rep.Skipped = append(skipped, rep.Skipped...)
	return rep, res, noneImported(what, from, rep.Sessions+rep.Updated+rep.Unchanged, rep.Skipped)
}

// importText is an import's output: its summary line (reworded for a dry
// run), what a dry run would do per source, what was skipped and why.
func importText(summary string, rep imports.ImportReport, dryRun bool) string {
	if !dryRun {
		return summary + skippedText(len(rep.Skipped), func(i int) (string, string) { return rep.Skipped[i].Path, rep.Skipped[i].Reason })
	}
	return wouldDo(summary) + dryRunText(rep.Records) +
		skippedText(len(rep.Skipped), func(i int) (string, string) { return rep.Skipped[i].Path, rep.Skipped[i].Reason }) +
		"\ndry run: nothing was written"
}
