package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sessionvault/sessionvault/internal/notemerge"
	"github.com/sessionvault/sessionvault/internal/reconcile"

	"github.com/sessionvault/sessionvault/internal/tasks"

	"github.com/spf13/cobra"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/session"
	"github.com/sessionvault/sessionvault/internal/shellquote"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// remoteCommand is `remote setup` and `remote sync`: the vault shared
// through a git remote.
func (a *app) remoteCommand() *cobra.Command {
	c := &cobra.Command{Use: "remote", Short: "Share the vault through a git remote: set up a clone, sync"}
	var machine, vaultBranch string
	setup := &cobra.Command{
		Use:   "setup [--machine NAME] [--branch NAME]",
		Short: "Make a fresh clone of a vault ready on this machine",
		Long: `Sets up a clone of a vault made with git clone on this machine: registers the
merge driver that merges notes by entry in the clone's .git/config (a git pull
by hand or by Obsidian Git then merges as remote sync does), and names this
machine. The driver runs sessionvault as git finds it on PATH, so a binary
moved or upgraded keeps merging; where PATH lacks it (Obsidian started from
the macOS Dock does not read your shell's profile), the sessionvault that ran
remote setup, by its full path, while it is there; else git's own line merge
(git merge-file: conflict markers where both machines changed the same lines,
nothing lost). A driver registered before is replaced. Session and
entry ids made here end in -NAME (2026-11-23-session-01-laptop, u-12-laptop),
so that two machines never make the same id; the clone where the vault was
created keeps the plain ids. NAME defaults to the host's name with a random
tail. --machine NAME also records this machine again when its record
(.sessionvault/state/machine) is broken (E1697).

A fresh clone whose checked-out branch holds no vault (the remote's default
branch is a code repository's main, and the vault lives on another branch)
gets the remote's branch that holds .sessionvault/config.yaml checked out, as a
local branch tracking it; when several do, --branch NAME picks one. A checkout
with anything of its own (commits no remote has, edits, untracked files, or
files its .gitignore keeps out of git, such as .env) is never switched: the
vault's branch would leave them in the vault's folder, and remote sync would
push them. Setup refuses, changing nothing, and prints the commands that clone
the vault's branch into a folder of its own (git clone -b BRANCH URL DIR, then
sessionvault --vault DIR remote setup). Run it once per clone; running it
again changes nothing.`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			checkedOut, err := a.checkoutVaultBranch(vaultBranch)
			if err != nil {
				return err
			}
			v, err := a.openVault()
			if err != nil {
				return err
			}
			m, err := setupMachine(v, machine)
			if err != nil {
				return err
			}
			fallback, err := registerMergeDriver(v)
			if err != nil {
				return err
			}
			onPath, problem := mergeDriverProblem(fallback)
			out := map[string]any{"vault": v.Root, "machine": m.Name, "primary": m.Primary, "merge_driver": vault.FallbackMergeDriverCommand(fallback), "merge_driver_path": onPath, "merge_driver_fallback": fallback}
			var text strings.Builder
			if checkedOut != nil {
				out["branch"] = checkedOut
				fmt.Fprintf(&text, "checked out the vault's branch %s as %s\n", checkedOut, checkedOut.Branch)
			}
			fmt.Fprintf(&text, "vault %s: machine %s, merge driver registered (%s)", v.Root, m.Name, driverSummary(onPath, fallback))
			if problem != "" {
				fix, note := onPathFix()
				out["merge_driver_problem"] = problem
				out["merge_driver_fix"] = fix
				fmt.Fprintf(&text, "\nwarning: %s\nfix: %s", problem, fix)
				if note != "" {
					fmt.Fprintf(&text, "\nnote: %s", note)
				}
			}
			return a.emit(out, text.String())
		},
	}
	setup.Flags().StringVar(&machine, "machine", "", "this machine's name in ids (lowercase letters and digits, starting with a letter; default: the host's name with a random tail)")
	setup.Flags().StringVar(&vaultBranch, "branch", "", "the remote's branch that holds the vault, when the clone's checkout holds none and several branches do")
	var remote, branch string
	sync := &cobra.Command{
		Use:   "sync [--remote NAME] [--branch B]",
		Short: "One sync with the git remote: commit pending edits, fetch, merge, push",
		Long: `Commits what is pending (the command history the hooks recorded and did not
commit yet, as the agent's; edits made outside sessionvault, as the person's),
fetches the remote's branch, merges it (notes by entry: updates, decisions and
blockers of both sides kept once each in time order, properties per key, a
person's sections as git merges text, with conflict markers only where both
sides changed the same lines there), and pushes. A push refused because someone
pushed meanwhile starts another round, up to 5. A merge a killed sync left
half done is finished first. The remote and branch default to the config's
remote section (name origin, the current branch). Transport is the git CLI's:
ssh with your agent and ssh config, https with your credential helper, or with
a token in SESSIONVAULT_GIT_TOKEN.`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			svc, err := a.service()
			if err != nil {
				return err
			}
			res, err := remoteSync(svc, remote, branch)
			if err != nil {
				return err
			}
			return a.emit(res, syncText(res))
		},
	}
	sync.Flags().StringVar(&remote, "remote", "", "the git remote (default: the config's remote.name, else origin)")
	sync.Flags().StringVar(&branch, "branch", "", "the remote branch (default: the config's remote.branch, else the current branch)")
	c.AddCommand(setup, sync)
	return c
}

// remoteSyncResult is what `remote sync` reports: the git side and what the
// reconciliation after the merge settled.
type remoteSyncResult struct {
	vault.SyncResult
	Reconciled reconcile.ReconcileReport `json:"reconciled"`
	// Claims is what became of this machine's task claims: provisional
	// ones confirmed or refused, others renewed.
	Claims []tasks.ClaimOutcome `json:"claims,omitempty"`
}

// remoteSync runs one sync. After each merge, before the push, it signs as
// a person's accepted edit each project's current state the merge changed
// (the remote is the vault's own: its other machines; the state would
// otherwise wait for `accept`), then reconciles what spans notes
// (session.Service.Reconcile), so the push carries a settled vault.
func remoteSync(svc *session.Service, remote, branch string) (remoteSyncResult, error) {
	var out remoteSyncResult
	cfg := svc.V.Config.Remote
	if remote == "" {
		remote = cfg.Name
	}
	if branch == "" {
		branch = cfg.Branch
	}
	accepted := map[string]bool{}
	after := func(res *vault.SyncResult) error {
		for _, p := range res.Changed {
			project, name, ok := strings.Cut(p, "/")
			if !ok || name != session.CurrentStateNote || accepted[project] {
				continue
			}
			accepted[project] = true
			if _, _, err := svc.Accept(project); err != nil {
				return errs.Wrap(errs.RemoteSyncFailed, err, "signing the merged state of project "+project)
			}
		}
		claims, err := tasks.New(svc).ConfirmClaims()
		if err != nil {
			return errs.Wrap(errs.RemoteSyncFailed, err, "settling this machine's task claims")
		}
		out.Claims = append(out.Claims, claims...)
		if _, err := reconcile.New(svc).ShareHeartbeats(); err != nil {
			return errs.Wrap(errs.RemoteSyncFailed, err, "sharing heartbeats")
		}
		rep, err := reconcile.New(svc).Reconcile()
		if err != nil {
			return errs.Wrap(errs.RemoteSyncFailed, err, "reconciling the merged notes")
		}
		r := &out.Reconciled
		r.Merges += rep.Merges
		r.Abandoned = append(r.Abandoned, rep.Abandoned...)
		r.Joined = append(r.Joined, rep.Joined...)
		r.Moved += rep.Moved
		if rep.Commit != "" {
			r.Commit = rep.Commit
		}
		return nil
	}
	m, err := svc.V.Machine()
	if err != nil {
		return out, err
	}
	// The command logs' entries the hooks appended but have not committed
	// yet are the agent's, committed as CommitCommandLogs commits them;
	// only the rest of what is pending is a person's edit.
	res, err := svc.V.SyncRemote(vault.SyncOptions{Remote: remote, Branch: branch, AfterMerge: after,
		SideRefs: reconcile.HeartbeatRefs, PushRefs: []string{reconcile.HeartbeatRefs + m.Name}, Tags: tasks.CheckpointTags,
		AgentPaths: session.IsCommandLog, AgentTool: session.CommandHistoryTool})
	out.SyncResult = res
	if err == nil {
		// What the merge changed may have ended this machine's session (a
		// clash another machine won): the notice is left now where every
		// PreToolUse finds it.
		if projects, perr := svc.Projects(); perr == nil {
			for _, p := range projects {
				_ = svc.ClashNotice(p)
			}
		}
	}
	return out, err
}

func syncText(res remoteSyncResult) string {
	var parts []string
	if res.AgentCommitted != "" {
		parts = append(parts, "committed the agent's command history "+res.AgentCommitted[:min(12, len(res.AgentCommitted))])
	}
	if res.Committed != "" {
		parts = append(parts, "committed pending edits "+res.Committed[:min(12, len(res.Committed))])
	}
	if res.Merged != "" {
		parts = append(parts, fmt.Sprintf("merged the remote's changes (%d files)", len(res.Changed)))
	} else {
		parts = append(parts, "nothing new on the remote")
	}
	if res.Pushed {
		parts = append(parts, "pushed")
	}
	text := "remote sync: " + strings.Join(parts, ", ")
	if res.Tries > 1 {
		text += fmt.Sprintf(" (%d rounds: the remote moved meanwhile)", res.Tries)
	}
	for _, p := range res.Conflicts {
		text += "\nconflict left for you in " + p + ": both sides changed the same lines of your section; edit the note to keep what you want (between <<<<<<< ours and >>>>>>> theirs)"
	}
	for _, p := range res.Reconciled.Abandoned {
		text += "\nsession " + p + " was started while another machine's session was active; the current state holds the other one, and this one is recorded (status abandoned) in its sessions/ folder"
	}
	for _, p := range res.Reconciled.Joined {
		text += "\nsession " + p + " had ended on another machine; what was recorded here after that was added to its record"
	}
	for _, c := range res.Claims {
		text += "\n" + tasks.ClaimText(c)
	}
	if res.Reconciled.Moved > 0 {
		text += fmt.Sprintf("\n%d updates another machine had moved to the update log were taken out of the current state", res.Reconciled.Moved)
	}
	for _, p := range res.Kept {
		text += "\nkept this machine's version of " + p + " (the remote changed it too; see `git log -p MERGE_HEAD` history with `git log --merges -1`)"
	}
	return text
}

// mergeDriverCommand is `merge-driver %O %A %B %P`: git's merge driver for
// notes (.gitattributes: *.md merge=sessionvault).
func (a *app) mergeDriverCommand() *cobra.Command {
	return &cobra.Command{
		Use:    "merge-driver BASE OURS THEIRS [PATH]",
		Short:  "git's merge driver for notes (run by git merge; see remote setup)",
		Hidden: true,
		Long: `Merges two versions of a note (OURS, THEIRS) descended from BASE, as git runs a
merge driver: the result is written over OURS; exit 0 when clean, 1 when a
person's section was left with conflict markers. When a side of the merge is
in a vault format newer than this binary writes, nothing is merged: exit 1,
the note left in conflict, and the error (E1696) names the format. Registered
by init and remote setup in .git/config; .gitattributes applies it to *.md.`,
		Args: args(cobra.RangeArgs(3, 4)),
		RunE: func(c *cobra.Command, argv []string) error {
			name := ""
			if len(argv) == 4 {
				name = filepath.ToSlash(argv[3])
			}
			if err := mergeDriverFormat(name); err != nil {
				return err // OURS left as it was: git keeps the conflict
			}
			read := func(p string) ([]byte, error) {
				b, err := os.ReadFile(p)
				if err != nil {
					return nil, errs.Wrap(errs.InvalidCommand, err, "merge-driver")
				}
				return b, nil
			}
			base, err := read(argv[0])
			if err != nil {
				return err
			}
			ours, err := read(argv[1])
			if err != nil {
				return err
			}
			theirs, err := read(argv[2])
			if err != nil {
				return err
			}
			path := ""
			if len(argv) == 4 {
				path = filepath.ToSlash(argv[3])
			}
			merged, conflicted := notemerge.MergeNotes(path, base, ours, theirs, reconcile.NoteOwnership())
			if err := os.WriteFile(argv[1], merged, 0o644); err != nil {
				return errs.Wrap(errs.GitWriteFailed, err, "merge-driver: writing the merge")
			}
			if conflicted {
				name := argv[1]
				if len(argv) == 4 {
					name = argv[3]
				}
				fmt.Fprintf(c.ErrOrStderr(), "sessionvault: %s: both sides changed the same lines of a person's section; conflict markers left there\n", name)
				a.exit = 1
				return nil
			}
			return nil
		},
	}
}

// registerMergeDriver registers the vault's merge driver in .git/config
// (replacing any registered before): sessionvault as git finds it on PATH
// when it merges, else the sessionvault running now while it exists, else
// git's line merge (vault.FallbackMergeDriverCommand). It returns the
// fallback binary registered, "" when none is. A program not named
// sessionvault keeps the fallback registered before, while it exists.
func registerMergeDriver(v *vault.Vault) (string, error) {
	fallback := driverFallback()
	if old, ok := vault.ParseFallbackMergeDriver(v.MergeDriver()); fallback == "" && ok && old != "" {
		if fi, err := os.Stat(filepath.FromSlash(old)); err == nil && !fi.IsDir() {
			fallback = filepath.FromSlash(old)
		}
	}
	if err := v.SetupFallbackMergeDriver(fallback); err != nil {
		return "", errs.Wrap(errs.GitWriteFailed, err, "registering the merge driver")
	}
	return fallback, nil
}

// setupMachine returns this clone's machine for `remote setup`: named
// name when name is given (a secondary's; the primary keeps its plain ids),
// and recorded again as the secondary name when its record is broken
// (errs.MachineRecordInvalid, whose message names this command).
func setupMachine(v *vault.Vault, name string) (vault.Machine, error) {
	m, err := v.Machine()
	if err != nil {
		if errs.CodeOf(err) != errs.MachineRecordInvalid || name == "" {
			return m, err
		}
		m = vault.NewSecondaryMachine(name)
		return m, v.SetMachine(m)
	}
	if name == "" || name == m.Name && !m.Primary {
		return m, nil
	}
	if m.Primary {
		return m, errs.New(errs.InvalidCommand, "this is the clone where the vault was created (machine %s): its ids keep the plain shape; --machine names other clones", m.Name).With("flag", "--machine")
	}
	m = vault.NewSecondaryMachine(name)
	return m, v.SetMachine(m)
}

// checkoutVaultBranch readies, for `remote setup`, a clone whose checkout
// holds no vault (the remote's HEAD names another branch): it checks out
// the remote's branch that holds the vault (branch, when given) and points
// the command at the clone. The clone is the folder --vault or
// $SESSIONVAULT_VAULT names, else the git work tree around the working
// folder when no vault is found from it. It returns the branch checked out,
// nil when the checkout already held the vault.
func (a *app) checkoutVaultBranch(branch string) (*vault.VaultBranch, error) {
	dir, _, err := vault.Locate(a.vaultDir, a.project, "")
	if err != nil {
		if errs.CodeOf(err) != errs.VaultNotFound {
			return nil, err
		}
		wd, werr := os.Getwd()
		if werr != nil {
			return nil, err
		}
		top, gerr := vault.GitTopLevel(wd)
		if gerr != nil {
			return nil, err // not in a clone: the error as it was
		}
		dir = top
		a.vaultDir = top
	}
	if vault.HoldsVault(dir) {
		if branch != "" {
			if cur, err := vault.CurrentBranch(dir); err == nil && cur != branch {
				return nil, errs.New(errs.InvalidCommand, "%s holds the vault on branch %s already; --branch picks the branch only in a clone whose checkout holds no vault (to change branches: `git -C %s switch %s`)", dir, cur, shellquote.Quote(dir), shellquote.Quote(branch)).With("flag", "--branch")
			}
		}
		return nil, nil
	}
	b, err := vault.CheckoutVaultBranch(dir, branch)
	if err != nil {
		if vault.IsVault(dir) && branch == "" && errs.CodeOf(err) == errs.VaultNotFound {
			return nil, nil // a vault without a config file, on no other branch: as it is
		}
		return nil, err
	}
	return &b, nil
}
