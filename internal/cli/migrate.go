package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sessionvault/sessionvault/internal/config"
	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/shellquote"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// migrateResult is what `migrate` did (or, with --dry-run, would do).
type migrateResult struct {
	// From and To are the vault's format before and after (equal: nothing
	// to do).
	From int `json:"from"`
	To   int `json:"to"`
	// Migrated is true when the upgrade was committed.
	Migrated bool `json:"migrated"`
	DryRun   bool `json:"dry_run,omitempty"`
	// Changes are the edits to .sessionvault/config.yaml, one line each.
	Changes []string `json:"changes,omitempty"`
	// News says what each format gained changes for the team.
	News []string `json:"news,omitempty"`
	// Commit is the upgrade's commit; PersonCommit the commit of edits made
	// outside sessionvault to the config, committed first as the person's.
	Commit       string `json:"commit,omitempty"`
	PersonCommit string `json:"person_commit,omitempty"`
	// Undo is the command that takes the upgrade back (a new commit).
	Undo string `json:"undo,omitempty"`
}

func (a *app) migrateCommand() *cobra.Command {
	var dryRun bool
	c := &cobra.Command{
		Use:   "migrate [--dry-run]",
		Short: "Upgrade the vault to the format this sessionvault writes, in one commit",
		Long: `Upgrades the vault's format (the version line of .sessionvault/config.yaml) to
the one this sessionvault writes, ` + strconv.Itoa(config.FormatVersion) + `, in one commit made like any other
operation's. The line is edited in place: comments and other settings are kept
byte for byte. Format 2 takes task claims through the vault's git remote
(refs/sessionvault/claims/<task>); the upgrade adds the claim_lease setting,
with its comment, when the config has none.

A vault is never upgraded silently: an older one keeps working in its format.
A sessionvault that writes only older formats refuses to write an upgraded vault
(E1696 VAULT_FORMAT_NEWER; reading still works), so upgrade sessionvault on every
machine of the team first, then run migrate on one of them and push the commit
with ` + "`sessionvault remote sync`" + `.

--dry-run prints what would change and writes nothing. On a vault already in
this format it says so, commits nothing and exits 0; on a vault in a newer
format it fails with E1696.

To undo the upgrade, revert its commit (a new commit; migrate prints the
command with its commit filled in; ` + "`sessionvault rollback`" + ` restores a project's
notes, not the vault's settings). In the vault's folder:

  git revert --no-edit "$(git log -1 --format=%H --grep='^migrate: ')"`,
		Example: `  sessionvault migrate --dry-run
  sessionvault migrate && sessionvault remote sync`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			v, err := a.openVault()
			if err != nil {
				return err
			}
			return a.migrate(v, dryRun)
		},
	}
	c.Flags().BoolVar(&dryRun, "dry-run", false, "print what would change, writing nothing")
	return c
}

// migrate upgrades v's config to config.FormatVersion in one Transact
// (dryRun: computes it only) and prints the result.
func (a *app) migrate(v *vault.Vault, dryRun bool) error {
	if err := v.CheckWritable(); err != nil {
		return err
	}
	out := migrateResult{From: v.Config.Version, To: config.FormatVersion, DryRun: dryRun}
	if out.From == out.To {
		// Said without touching the config: a Transact would commit a
		// person's pending edit to it.
		return a.emit(out, migrateText(out, v.Root))
	}
	if dryRun {
		data, err := v.ReadFile(config.File)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		up, err := config.Upgrade(data)
		if err != nil {
			return upgradeError(err)
		}
		out.From, out.Changes, out.News = up.From, up.Changes, formatNews(up.From)
		return a.emit(out, migrateText(out, v.Root))
	}
	res, err := v.Transact(func(tx *vault.Tx) (vault.Change, error) {
		data, err := tx.Read(config.File)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return vault.Change{}, err
		}
		up, err := config.Upgrade(data)
		if err != nil {
			return vault.Change{}, upgradeError(err)
		}
		out.From, out.Changes, out.News = up.From, up.Changes, formatNews(up.From)
		if up.From == config.FormatVersion {
			return vault.Change{}, nil
		}
		if err := tx.Write(config.File, up.Data); err != nil {
			return vault.Change{}, err
		}
		return vault.Change{Operation: "migrate", Summary: fmt.Sprintf("vault format %d to %d", up.From, config.FormatVersion),
			Trailers: map[string]string{"Format-From": strconv.Itoa(up.From), "Format-To": strconv.Itoa(config.FormatVersion)}}, nil
	})
	if err != nil {
		return err
	}
	out.PersonCommit = res.PersonCommit
	if res.Commit != "" {
		out.Migrated, out.Commit = true, res.Commit
		out.Undo = "git -C " + shellquote.Quote(v.Root) + " revert --no-edit " + res.Commit
	}
	return a.emit(out, migrateText(out, v.Root))
}

// upgradeError gives a config that cannot be upgraded its code: a newer
// format is errs.VaultFormatNewer, anything else the config's.
func upgradeError(err error) error {
	if errs.CodeOf(vault.FormatError(err)) == errs.VaultFormatNewer {
		return vault.FormatError(err)
	}
	return errs.Wrap(errs.ConfigInvalid, err, "upgrading "+config.File)
}

// formatNews lists what each format after from gains.
func formatNews(from int) []string {
	var news []string
	for v := from + 1; v <= config.FormatVersion; v++ {
		if n := config.FormatNews(v); n != "" {
			news = append(news, fmt.Sprintf("format %d: %s", v, n))
		}
	}
	return news
}

// migrateText is migrate's text output.
func migrateText(out migrateResult, root string) string {
	if out.From == out.To {
		return fmt.Sprintf("the vault is already in format %d, the format this sessionvault writes: nothing to do", out.To)
	}
	var b strings.Builder
	if out.DryRun {
		fmt.Fprintf(&b, "would upgrade the vault from format %d to format %d in one commit (nothing written):\n", out.From, out.To)
	} else {
		fmt.Fprintf(&b, "upgraded the vault from format %d to format %d (commit %s):\n", out.From, out.To, out.Commit[:min(12, len(out.Commit))])
	}
	for _, c := range out.Changes {
		b.WriteString("  " + config.File + ": " + c + "\n")
	}
	for _, n := range out.News {
		b.WriteString("  " + n + "\n")
	}
	if out.DryRun {
		b.WriteString("sessionvault binaries that write only older formats refuse to write the upgraded vault: upgrade every machine's sessionvault first")
		return b.String()
	}
	b.WriteString("share it with the team: sessionvault --vault " + shellquote.Quote(root) + " remote sync\n")
	b.WriteString("undo it: " + out.Undo)
	return b.String()
}
