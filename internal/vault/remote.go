package vault

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/sessionvault/sessionvault/internal/config"
	"github.com/sessionvault/sessionvault/internal/errs"
)

// The vault on a git remote, shared by several machines. The transport, the
// merge and the push are the git CLI's: go-git has no three-way merge, does
// not run merge drivers, and its ssh and https transports ignore the person's
// git configuration (ssh config, credential helpers) that `git pull` by
// Obsidian Git uses. The engine adds what git does not know: the vault lock
// around the run (no operation commits while it merges), the merge driver
// that merges notes by entry (MergeNotes), and the bounded retry.

// MergeDriverName is the merge driver's name in .gitattributes and
// .git/config ([merge "sessionvault"]).
const MergeDriverName = "sessionvault"

// GitAttributes is the .gitattributes line `init` writes: every note merges
// with the driver. A clone without the driver set up merges as git does.
const GitAttributes = "*.md merge=" + MergeDriverName + "\n"

// SyncOptions says where `remote sync` syncs.
type SyncOptions struct {
	Remote string // the git remote's name, e.g. origin
	Branch string // the branch on the remote; "" = the current branch
	// Tries bounds fetch-merge-push rounds when the push is refused because
	// someone pushed meanwhile (default 5).
	Tries int
	// AfterMerge, when set, runs after each round's merge and before its
	// push, outside the vault lock (it may run operations that commit); what
	// it commits is pushed with the merge. An error stops the sync before
	// the push.
	AfterMerge func(res *SyncResult) error
	// SideRefs, when set, is a ref namespace (e.g. "refs/sessionvault/
	// heartbeat/") kept beside the branch: each round fetches the remote's
	// refs under it over the local ones (forced; before AfterMerge, which
	// may write this machine's own) and pushes PushRefs (refs under it) with
	// the branch, forced. Nothing under it is ever merged.
	SideRefs string
	PushRefs []string
	// Tags, when set, is a tag namespace (e.g. "checkpoint/") that travels
	// both ways: each round fetches the remote's tags under it and pushes
	// the local ones. Tags are never forced: one made on two clones under
	// the same name stays as each made it.
	Tags string
	// AgentPaths, when set, picks out of the pending edits those that are
	// the agent's own and not a person's: the command logs the hooks append
	// to and commit only now and then. They are committed first, as the
	// agent's edit made by the tool call named AgentTool (the commit
	// CommitAgentEdits makes); only what remains is the person's.
	AgentPaths func(rel string) bool
	// AgentTool names what made the agent's edits in their commit's
	// message ("… changed by the agent's AgentTool call").
	AgentTool string
}

// SyncResult is what one `remote sync` did.
type SyncResult struct {
	// AgentCommitted is the commit of the agent's pending edits
	// (SyncOptions.AgentPaths), if any; Committed that of a person's.
	AgentCommitted string   `json:"agent_committed,omitempty"`
	Committed      string   `json:"committed,omitempty"` // the commit of pending edits, if any
	Merged         string   `json:"merged,omitempty"`    // the merge commit (or the fast-forwarded HEAD), if the remote had news
	Pushed         bool     `json:"pushed"`              // the remote branch now holds HEAD
	Tries          int      `json:"tries"`               // fetch-merge-push rounds
	Changed        []string `json:"changed,omitempty"`   // vault paths the merge changed
	Conflicts      []string `json:"conflicts,omitempty"` // notes left with conflict markers in a person's section
	Kept           []string `json:"kept,omitempty"`      // other files whose conflicting change from the remote was not taken (ours kept)
}

// MergeDriverProgram is the program the merge driver runs first: sessionvault
// as git finds it on PATH when it merges (sessionvault.exe on Windows), so
// that a binary moved, or replaced by an upgrade, keeps merging.
const MergeDriverProgram = "sessionvault"

// MergeDriverCommand is the command line of a merge driver that runs program
// alone: `program merge-driver %O %A %B %P`. Where program is not found, git
// leaves every note the driver would have merged conflicted, with this
// machine's side only and no markers: `init` and `remote setup` register
// FallbackMergeDriverCommand instead.
func MergeDriverCommand(program string) string {
	return shellQuote(program) + mergeDriverArgs
}

const (
	mergeDriverArgs = " merge-driver %O %A %B %P"
	// driverFromPath runs sessionvault from PATH, when it is there.
	driverFromPath = "command -v " + MergeDriverProgram + " >/dev/null 2>&1 && exec " + MergeDriverProgram + mergeDriverArgs + "; "
	// driverLineMerge is git's own merge of lines, written over ours (%A)
	// as a driver's merge is: conflict markers where both sides changed
	// the same lines, nothing lost; exit status the number of conflicts.
	driverLineMerge = "exec git merge-file --marker-size=%L -L ours -L base -L theirs %A %O %B"
)

// FallbackMergeDriverCommand is the merge driver's command line that `init`
// and `remote setup` register: git runs it with sh (Git for Windows' own sh
// on Windows), which runs sessionvault from PATH; where PATH lacks it (a
// program started from the macOS Dock, such as Obsidian, gets launchd's
// PATH), the binary fallback (the absolute path of the sessionvault that
// registered it; "" for none) while it exists; else git's own line merge
// (git merge-file), so that nothing either side wrote is lost.
func FallbackMergeDriverCommand(fallback string) string {
	cmd := driverFromPath
	if fallback != "" {
		q := shellQuote(filepath.ToSlash(fallback)) // sh on Windows takes C:/dir/sessionvault.exe
		cmd += "[ -x " + q + " ] && exec " + q + mergeDriverArgs + "; "
	}
	return cmd + driverLineMerge
}

// ParseFallbackMergeDriver reports whether cmd is a
// FallbackMergeDriverCommand, and returns its fallback binary (as the
// shell sees it: forward slashes), "" when it has none.
func ParseFallbackMergeDriver(cmd string) (fallback string, ok bool) {
	mid, ok := strings.CutPrefix(cmd, driverFromPath)
	if !ok {
		return "", false
	}
	if mid, ok = strings.CutSuffix(mid, driverLineMerge); !ok {
		return "", false
	}
	if mid == "" {
		return "", true
	}
	q, ok := strings.CutPrefix(mid, "[ -x ")
	if !ok {
		return "", false
	}
	q, _, ok = strings.Cut(q, " ] && exec ")
	if !ok {
		return "", false
	}
	fallback = q
	if strings.HasPrefix(q, "'") && strings.HasSuffix(q, "'") && len(q) >= 2 {
		fallback = strings.ReplaceAll(q[1:len(q)-1], `'\''`, "'")
	}
	if fallback == "" || FallbackMergeDriverCommand(fallback) != cmd {
		return "", false
	}
	return fallback, true
}

// SetupMergeDriver registers in .git/config the merge driver that runs
// program alone (MergeDriverCommand: a stand-in's path in tests).
func (v *Vault) SetupMergeDriver(program string) error {
	return v.setupMergeDriver(MergeDriverCommand(program))
}

// SetupFallbackMergeDriver registers in .git/config the merge driver that
// falls back (FallbackMergeDriverCommand(fallback)), replacing any driver
// registered before (an older setup's binary path, or sessionvault from
// PATH alone). Per machine, like every .git/config setting; `init` and
// `remote setup` run it.
func (v *Vault) SetupFallbackMergeDriver(fallback string) error {
	return v.setupMergeDriver(FallbackMergeDriverCommand(fallback))
}

func (v *Vault) setupMergeDriver(command string) error {
	for _, kv := range [][2]string{
		{"merge." + MergeDriverName + ".name", "sessionvault: notes merged by entry"},
		{"merge." + MergeDriverName + ".driver", command},
	} {
		if _, err := v.git("config", kv[0], kv[1]); err != nil {
			return err
		}
	}
	return nil
}

// MergeDriver returns the merge driver's command line registered in the
// vault's .git/config, "" when none is.
func (v *Vault) MergeDriver() string {
	out, err := v.git("config", "merge."+MergeDriverName+".driver")
	if err != nil {
		return ""
	}
	return out
}

// VaultBranch is a branch of a git remote that holds a vault: its commit
// has .sessionvault/config.yaml.
type VaultBranch struct {
	Remote string `json:"remote"` // the git remote's name, e.g. origin
	Branch string `json:"branch"` // the branch's name on the remote, e.g. vault
}

// String is the remote-tracking name, origin/vault.
func (b VaultBranch) String() string { return b.Remote + "/" + b.Branch }

// GitTopLevel returns the top folder of the git work tree holding dir.
func GitTopLevel(dir string) (string, error) {
	out, err := runGit(gitCmd(dir, "rev-parse", "--show-toplevel"), []string{"rev-parse", "--show-toplevel"})
	if err != nil {
		return "", err
	}
	return filepath.FromSlash(strings.TrimSpace(string(out))), nil
}

// CurrentBranch returns the branch checked out in the git work tree dir.
func CurrentBranch(dir string) (string, error) {
	out, err := runGit(gitCmd(dir, "symbolic-ref", "--short", "HEAD"), []string{"symbolic-ref", "--short", "HEAD"})
	return strings.TrimSpace(string(out)), err
}

// HoldsVault reports whether the work tree dir has a vault checked out:
// its .sessionvault/config.yaml.
func HoldsVault(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(config.File)))
	return err == nil && fi.Mode().IsRegular()
}

// sameDir reports whether a and b name the same folder (symbolic links
// followed).
func sameDir(a, b string) bool {
	ra, erra := filepath.EvalSymlinks(a)
	rb, errb := filepath.EvalSymlinks(b)
	if erra != nil || errb != nil {
		return filepath.Clean(a) == filepath.Clean(b)
	}
	return ra == rb
}

// RemoteVaultBranches lists the remote-tracking branches of the git
// repository dir (refs/remotes/REMOTE/BRANCH, as a clone fetched them)
// that hold a vault, by remote then branch, and every remote-tracking
// branch looked at.
func RemoteVaultBranches(dir string) (vaults, all []VaultBranch, err error) {
	remotes, err := runGit(gitCmd(dir, "remote"), []string{"remote"})
	if err != nil {
		return nil, nil, err
	}
	for _, remote := range strings.Fields(string(remotes)) {
		prefix := "refs/remotes/" + remote + "/"
		args := []string{"for-each-ref", "--format=%(refname)%00%(symref)", prefix}
		out, err := runGit(gitCmd(dir, args...), args)
		if err != nil {
			return nil, nil, err
		}
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			ref, symref, _ := strings.Cut(l, "\x00")
			if ref == "" || symref != "" {
				continue // origin/HEAD names one of the others
			}
			b := VaultBranch{Remote: remote, Branch: strings.TrimPrefix(ref, prefix)}
			all = append(all, b)
			probe := []string{"cat-file", "-e", ref + ":" + config.File}
			if _, err := runGit(gitCmd(dir, probe...), probe); err == nil {
				vaults = append(vaults, b)
			}
		}
	}
	return vaults, all, nil
}

// CheckoutVaultBranch readies the clone dir whose checkout holds no vault
// (the remote's HEAD names another branch: a code repository's main, or a
// branch without .sessionvault/config.yaml): it picks the remote branch
// holding the vault, the one named branch when branch is not "" (origin's
// when several remotes have it), else the only one, and checks it out as a
// local branch of the same name tracking it. None is an errs.VaultNotFound
// error; several without branch, or a branch that holds no vault, an
// errs.InvalidCommand one naming them and the --branch that picks one.
func CheckoutVaultBranch(dir, branch string) (VaultBranch, error) {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	notClone := func(why string) error {
		return errs.New(errs.VaultNotFound, "%s is not a vault (no %s) nor a git clone of one (%s); run `%s`, or clone the vault's repository with git clone", dir, config.File, why, initRemedy(dir))
	}
	// Only the top of a clone: a folder inside a code repository is not
	// one, and the branch of that repository is not the vault's to switch.
	top, err := GitTopLevel(dir)
	if err != nil {
		return VaultBranch{}, notClone("not a git repository")
	}
	if !sameDir(top, dir) {
		return VaultBranch{}, notClone("a folder inside the git repository " + top)
	}
	vaults, all, err := RemoteVaultBranches(dir)
	if err != nil {
		return VaultBranch{}, notClone(err.Error())
	}
	names := func(bs []VaultBranch) string {
		var s []string
		for _, b := range bs {
			s = append(s, b.String())
		}
		if len(s) == 0 {
			return "none"
		}
		return strings.Join(s, ", ")
	}
	setup := "sessionvault --vault " + shellQuote(dir) + " remote setup --branch "
	var pick []VaultBranch
	for _, b := range vaults {
		if branch == "" || b.Branch == branch {
			pick = append(pick, b)
		}
	}
	switch {
	case len(vaults) == 0:
		return VaultBranch{}, errs.New(errs.VaultNotFound, "%s is not a vault (no %s checked out) and no branch of its remotes holds one (branches looked at: %s); clone the vault's repository, or fetch its branches first (`git -C %s fetch --all`)", dir, config.File, names(all), shellQuote(dir))
	case len(pick) == 0:
		return VaultBranch{}, errs.New(errs.InvalidCommand, "no branch %s of the remotes holds a vault (%s); the ones that do: %s; run `%s%s`", branch, config.File, names(vaults), setup, shellQuote(vaults[0].Branch)).With("flag", "--branch")
	case branch == "" && len(pick) > 1:
		return VaultBranch{}, errs.New(errs.InvalidCommand, "%s holds no vault, and several branches of its remotes do (%s): name the one to set up, e.g. `%s%s`", dir, names(pick), setup, shellQuote(pick[0].Branch)).With("flag", "--branch")
	}
	b := pick[0]
	for _, p := range pick {
		if p.Remote == "origin" {
			b = p
		}
	}
	// Only a fresh clone is switched. A checkout with anything of its own
	// (a code repository someone works in) would carry it onto the vault's
	// branch: its edits and untracked files, and the files its .gitignore
	// keeps out of git (.env), which the vault's .gitignore does not, so
	// that the next remote sync would commit and push them.
	if own := notFreshClone(dir); own != "" {
		clone, setup := cloneVaultCommands(dir, b)
		return b, errs.New(errs.InvalidCommand, "%s holds no vault on the branch checked out, and is not a fresh clone: it has %s. Checking out the vault's branch %s there would leave them in the vault's folder, where the next remote sync would commit and push them; nothing was changed. Clone the vault's branch into a folder of its own instead: run `%s`, then `%s`", dir, own, b.String(), clone, setup)
	}
	args := []string{"checkout", "--quiet", "-b", b.Branch, "--track", "refs/remotes/" + b.String()}
	if _, err := runGit(gitCmd(dir, "rev-parse", "--verify", "--quiet", "refs/heads/"+b.Branch), nil); err == nil {
		args = []string{"checkout", "--quiet", b.Branch} // a local branch already: made by an earlier setup
	}
	if _, err := runGit(gitCmd(dir, args...), args); err != nil {
		return b, errs.Wrap(errs.GitWriteFailed, err, "checking out the vault's branch "+b.String()+" in "+dir)
	}
	if !HoldsVault(dir) {
		return b, errs.New(errs.VaultNotFound, "%s: the branch %s checked out holds no %s (the local branch %s is not the remote's)", dir, b.String(), config.File, b.Branch)
	}
	return b, nil
}

// notFreshClone says what the clone dir holds of its own, "" when nothing:
// commits on HEAD that no remote branch has, and what `git status` lists
// (changes not committed, untracked files, and files git ignores).
func notFreshClone(dir string) string {
	var own []string
	if _, err := runGit(gitCmd(dir, "rev-parse", "--verify", "--quiet", "HEAD"), nil); err == nil { // else no commit at all
		args := []string{"rev-list", "HEAD", "--not", "--remotes"}
		out, err := runGit(gitCmd(dir, args...), args)
		if err != nil {
			return "a HEAD that cannot be read (" + err.Error() + ")"
		}
		if n := len(strings.Fields(string(out))); n == 1 {
			own = append(own, "a commit on no remote branch")
		} else if n > 1 {
			own = append(own, fmt.Sprintf("%d commits on no remote branch", n))
		}
	}
	args := []string{"status", "--porcelain", "-z", "--ignored", "--untracked-files=normal"}
	out, err := runGit(gitCmd(dir, args...), args)
	if err != nil {
		return "a status git cannot read (" + err.Error() + ")"
	}
	var changed, untracked, ignored []string
	recs := strings.Split(string(out), "\x00")
	for i := 0; i < len(recs); i++ {
		r := recs[i]
		if len(r) < 4 {
			continue
		}
		code, path := r[:2], r[3:]
		switch code {
		case "!!":
			ignored = append(ignored, path)
		case "??":
			untracked = append(untracked, path)
		default:
			changed = append(changed, path)
			if code[0] == 'R' || code[0] == 'C' {
				i++ // the name it was renamed or copied from
			}
		}
	}
	some := func(what string, paths []string) {
		if len(paths) == 0 {
			return
		}
		if len(paths) > 3 {
			paths = append(paths[:3:3], "...")
		}
		own = append(own, what+" ("+strings.Join(paths, ", ")+")")
	}
	some("changes not committed", changed)
	some("untracked files", untracked)
	some("files git ignores", ignored)
	switch len(own) {
	case 0:
		return ""
	case 1:
		return own[0]
	}
	return strings.Join(own[:len(own)-1], ", ") + " and " + own[len(own)-1]
}

// cloneVaultCommands returns the commands, to paste, that clone the vault's
// branch b of the clone dir's remote into a new folder beside dir and set
// it up there. The remote's URL is shown without the user and password an
// https URL may hold.
func cloneVaultCommands(dir string, b VaultBranch) (clone, setup string) {
	args := []string{"remote", "get-url", b.Remote}
	url := b.Remote
	if out, err := runGit(gitCmd(dir, args...), args); err == nil {
		url = withoutPassword(strings.TrimSpace(string(out)))
	}
	base := filepath.Base(dir) + "-" + strings.ReplaceAll(b.Branch, "/", "-")
	into := filepath.Join(filepath.Dir(dir), base)
	for n := 2; ; n++ {
		if _, err := os.Lstat(into); errors.Is(err, os.ErrNotExist) {
			break
		}
		into = filepath.Join(filepath.Dir(dir), fmt.Sprintf("%s-%d", base, n))
	}
	return "git clone -b " + shellQuote(b.Branch) + " " + shellQuote(url) + " " + shellQuote(into),
		"sessionvault --vault " + shellQuote(into) + " remote setup"
}

// withoutPassword is the URL u without its user information when it is an
// http(s) URL (a token may be there); any other as it is.
func withoutPassword(u string) string {
	for _, scheme := range []string{"https://", "http://"} {
		if len(u) < len(scheme) || !strings.EqualFold(u[:len(scheme)], scheme) {
			continue
		}
		host, path, slash := strings.Cut(u[len(scheme):], "/")
		if at := strings.LastIndex(host, "@"); at >= 0 {
			host = host[at+1:]
		}
		if slash {
			return u[:len(scheme)] + host + "/" + path
		}
		return u[:len(scheme)] + host
	}
	return u
}

// shellQuote quotes s for the shell git runs a merge driver with.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// git runs the git CLI in the vault and returns its trimmed output; an
// error holds git's own message.
func (v *Vault) git(args ...string) (string, error) {
	out, err := v.gitRaw(args...)
	return strings.TrimSpace(string(out)), err
}

// gitRaw is git with the output as git wrote it.
func (v *Vault) gitRaw(args ...string) ([]byte, error) {
	return runGit(gitCmd(v.Root, args...), args)
}

// gitCmd is the git CLI run in dir, never prompting. The variables that
// point git at a repository (GIT_DIR and the others `git rev-parse
// --local-env-vars` lists, set when sessionvault runs from a hook of
// another repository's git) are left out, so that git works on the
// repository at dir.
func gitCmd(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	env := os.Environ()
	cmd.Env = make([]string, 0, len(env)+2)
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !repoLocatingGitVar(name) {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "GIT_TERMINAL_PROMPT=0", "GIT_MERGE_AUTOEDIT=no")
	return cmd
}

// repoLocatingGitVar reports whether name is an environment variable that
// names a repository's parts for git (`git rev-parse --local-env-vars`,
// less the configuration ones, which are the caller's to give).
func repoLocatingGitVar(name string) bool {
	switch name {
	case "GIT_DIR", "GIT_WORK_TREE", "GIT_IMPLICIT_WORK_TREE", "GIT_COMMON_DIR",
		"GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
		"GIT_GRAFT_FILE", "GIT_SHALLOW_FILE", "GIT_PREFIX", "GIT_NO_REPLACE_OBJECTS",
		"GIT_REPLACE_REF_BASE", "GIT_INTERNAL_SUPER_PREFIX":
		return true
	}
	return false
}

// runGit runs cmd and returns its output; an error holds git's message.
func runGit(cmd *exec.Cmd, args []string) ([]byte, error) {
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = strings.TrimSpace(out.String())
		}
		return out.Bytes(), fmt.Errorf("git %s: %s: %w", strings.Join(args, " "), msg, err)
	}
	return out.Bytes(), nil
}

// MergeCommit is a merge in the vault's history: the merge commit, its
// first parent (ours: the branch merged into) and its second (theirs).
// Hashes are 40 hex digits.
type MergeCommit struct {
	Commit, Ours, Theirs string
}

// MergesSince lists the two-parent merges reachable from HEAD and not from
// since (a commit; "" or one HEAD no longer descends from: the newest 100),
// oldest first, and returns HEAD. A merge made by `remote sync`, by `git
// pull` or by Obsidian Git are all listed.
func (v *Vault) MergesSince(since string) ([]MergeCommit, string, error) {
	head, err := v.git("rev-parse", "HEAD")
	if err != nil {
		return nil, "", errs.Wrap(errs.GitWriteFailed, err, "reading HEAD")
	}
	args := []string{"rev-list", "--merges", "--parents", "--reverse", "HEAD"}
	if since != "" {
		if _, err := v.git("merge-base", "--is-ancestor", since, head); err == nil {
			args = append(args, "^"+since)
		} else {
			since = ""
		}
	}
	if since == "" {
		args = []string{"rev-list", "--merges", "--parents", "--max-count=100", "HEAD"}
	}
	out, err := v.git(args...)
	if err != nil {
		return nil, head, errs.Wrap(errs.GitWriteFailed, err, "listing merges")
	}
	var ms []MergeCommit
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) != 3 {
			continue // not a merge of two
		}
		ms = append(ms, MergeCommit{Commit: f[0], Ours: f[1], Theirs: f[2]})
	}
	if since == "" { // --reverse does not apply after --max-count's cut
		for i, j := 0, len(ms)-1; i < j; i, j = i+1, j-1 {
			ms[i], ms[j] = ms[j], ms[i]
		}
	}
	return ms, head, nil
}

// WriteSideRef points ref at a commit, outside every branch's history,
// whose tree holds files (name → content; names without slashes): a few
// git objects replaced on each write, never a commit on the branch. For
// state that travels with `remote sync` (SyncOptions.SideRefs), such as
// heartbeats.
func (v *Vault) WriteSideRef(ref string, files map[string][]byte) error {
	return v.locked(func() error { return v.writeSideRef(ref, files) })
}

func (v *Vault) writeSideRef(ref string, files map[string][]byte) error {
	var tree strings.Builder
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if n == "" || strings.ContainsAny(n, "/\x00\n\t") {
			return fmt.Errorf("side ref %s: bad file name %q", ref, n)
		}
		cmd := exec.Command("git", "hash-object", "-w", "--stdin")
		cmd.Dir = v.Root
		cmd.Stdin = bytes.NewReader(files[n])
		out, err := cmd.Output()
		if err != nil {
			return errs.Wrap(errs.GitWriteFailed, err, "writing "+ref)
		}
		fmt.Fprintf(&tree, "100644 blob %s\t%s\n", strings.TrimSpace(string(out)), n)
	}
	cmd := exec.Command("git", "mktree")
	cmd.Dir = v.Root
	cmd.Stdin = strings.NewReader(tree.String())
	out, err := cmd.Output()
	if err != nil {
		return errs.Wrap(errs.GitWriteFailed, err, "writing "+ref)
	}
	c, err := v.git(append(v.asAgent(), "commit-tree", strings.TrimSpace(string(out)), "-m", "sessionvault: "+ref)...)
	if err != nil {
		return errs.Wrap(errs.GitWriteFailed, err, "writing "+ref)
	}
	if _, err := v.git("update-ref", ref, c); err != nil {
		return errs.Wrap(errs.GitWriteFailed, err, "writing "+ref)
	}
	return nil
}

// ReadSideRefs returns the files of every ref under prefix (see
// WriteSideRef): ref name without the prefix → file name → content.
func (v *Vault) ReadSideRefs(prefix string) (map[string]map[string][]byte, error) {
	out, err := v.git("for-each-ref", "--format=%(refname)", prefix)
	if err != nil {
		return nil, errs.Wrap(errs.GitWriteFailed, err, "listing "+prefix)
	}
	refs := map[string]map[string][]byte{}
	for _, ref := range strings.Fields(out) {
		ls, err := v.git("ls-tree", "-z", "--name-only", ref)
		if err != nil {
			continue // not a commit: not ours
		}
		files := map[string][]byte{}
		for _, n := range strings.Split(ls, "\x00") {
			if n == "" {
				continue
			}
			if b, err := v.gitRaw("cat-file", "blob", ref+":"+n); err == nil {
				files[n] = b
			}
		}
		refs[strings.TrimPrefix(ref, prefix)] = files
	}
	return refs, nil
}

// DiffNames lists the vault paths that differ between commits a and b.
func (v *Vault) DiffNames(a, b string) ([]string, error) {
	out, err := v.git("diff", "-z", "--name-only", "--no-renames", a, b)
	if err != nil {
		return nil, errs.Wrap(errs.GitWriteFailed, err, "comparing "+shortHash(a)+" and "+shortHash(b))
	}
	var paths []string
	for _, p := range strings.Split(out, "\x00") {
		if p != "" {
			paths = append(paths, p)
		}
	}
	return paths, nil
}

// ReadAt returns the vault-relative file rel as commit (a hash) holds it;
// an error wrapping os.ErrNotExist when commit has no such file.
func (v *Vault) ReadAt(commit, rel string) ([]byte, error) {
	if err := CheckPath(rel); err != nil {
		return nil, err
	}
	if commit == "" {
		return nil, fmt.Errorf("reading %s: no commit: %w", rel, os.ErrNotExist)
	}
	if _, err := v.git("cat-file", "-e", commit+":"+rel); err != nil {
		return nil, fmt.Errorf("reading %s at %s: %w", rel, shortHash(commit), os.ErrNotExist)
	}
	b, err := v.gitRaw("cat-file", "blob", commit+":"+rel)
	if err != nil {
		return nil, errs.Wrap(errs.GitWriteFailed, err, "reading "+rel+" at "+shortHash(commit))
	}
	return b, nil
}

// authArgs are the git options that give an https remote the token in
// SESSIONVAULT_GIT_TOKEN (as GitHub and GitLab take it); none otherwise.
func (v *Vault) authArgs(remote string) []string {
	tok := os.Getenv("SESSIONVAULT_GIT_TOKEN")
	if tok == "" {
		return nil
	}
	url, err := v.git("remote", "get-url", remote)
	if err != nil || !strings.HasPrefix(url, "https://") {
		return nil
	}
	basic := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + tok))
	return []string{"-c", "http.extraHeader=Authorization: Basic " + basic}
}

// SyncRemote runs one sync with the remote, under the vault lock: commit
// what is pending (the agent's own files, opts.AgentPaths, as the agent;
// the rest, edits made outside the engine, as the person), fetch,
// merge (the notes through MergeNotes), push; a push refused because the
// remote moved starts another round, up to opts.Tries. A merge left half
// done by a killed sync is finished or undone first.
//
// A vault in a format newer than this binary writes is refused before
// anything (errs.VaultFormatNewer, as by Transact); so is a remote whose
// fetched config declares one, after the fetch and before any merge or
// push: the local branch stays as it was and nothing is pushed.
func (v *Vault) SyncRemote(opts SyncOptions) (SyncResult, error) {
	var res SyncResult
	if opts.Tries <= 0 {
		opts.Tries = 5
	}
	if opts.Remote == "" {
		opts.Remote = "origin"
	}
	// An operation a crash interrupted is finished first (its roll-forward
	// runs in every transaction), so its notes are not committed as edits.
	if _, err := v.Transact(func(*Tx) (Change, error) { return Change{}, nil }); err != nil {
		return res, err
	}
	err := v.locked(func() error {
		if _, err := v.git("remote", "get-url", opts.Remote); err != nil {
			return errs.New(errs.ConfigInvalid, "the vault has no git remote %q; add one with `git -C %s remote add %s URL`", opts.Remote, shellQuote(v.Root), opts.Remote)
		}
		if opts.Branch == "" {
			b, err := v.git("symbolic-ref", "--short", "HEAD")
			if err != nil {
				branch := "main"
				if heads, err := v.git("for-each-ref", "--format=%(refname:short)", "refs/heads"); err == nil && heads != "" && !strings.Contains("\n"+heads+"\n", "\nmain\n") {
					branch, _, _ = strings.Cut(heads, "\n")
				}
				return errs.New(errs.RemoteSyncFailed, "the vault is not on a branch (detached HEAD); check one out with `git -C %s switch %s`", shellQuote(v.Root), shellQuote(branch))
			}
			opts.Branch = b
		}
		if err := v.finishKilledMerge(&res); err != nil {
			return err
		}
		ac, c, err := v.commitPending(opts.AgentPaths, opts.AgentTool)
		res.AgentCommitted, res.Committed = ac, c
		return err
	})
	if err != nil {
		return res, err
	}
	auth := v.authArgs(opts.Remote)
	fetchMerge := func() error {
		if _, err := v.git(append(auth, "fetch", "--quiet", opts.Remote, opts.Branch)...); err != nil {
			if unreachable(err) {
				return v.remoteUnreachable(err, opts.Remote, "fetching")
			}
			if !strings.Contains(err.Error(), "couldn't find remote ref") {
				return errs.Wrap(errs.RemoteSyncFailed, err, "fetching "+opts.Remote)
			}
			return nil // an empty remote: the first push makes the branch
		}
		// A remote a newer sessionvault upgraded: merging its notes, or
		// pushing ours over them, is what this binary must not do.
		if err := v.checkFetchedFormat(opts.Remote); err != nil {
			return err
		}
		if err := v.mergeFetched(&res); err != nil {
			return err
		}
		if opts.SideRefs != "" {
			if _, err := v.git(append(auth, "fetch", "--quiet", opts.Remote, "+"+opts.SideRefs+"*:"+opts.SideRefs+"*")...); err != nil {
				if unreachable(err) {
					return v.remoteUnreachable(err, opts.Remote, "fetching")
				}
				return errs.Wrap(errs.RemoteSyncFailed, err, "fetching "+opts.SideRefs+" from "+opts.Remote)
			}
		}
		if opts.Tags != "" {
			spec := "refs/tags/" + opts.Tags + "*:refs/tags/" + opts.Tags + "*"
			if _, err := v.git(append(auth, "fetch", "--quiet", "--no-tags", opts.Remote, spec)...); err != nil && !strings.Contains(err.Error(), "would clobber") {
				if unreachable(err) {
					return v.remoteUnreachable(err, opts.Remote, "fetching")
				}
				return errs.Wrap(errs.RemoteSyncFailed, err, "fetching the tags "+opts.Tags+"* from "+opts.Remote)
			}
		}
		return nil
	}
	push := func() error {
		args := append(auth, "push", "--quiet", opts.Remote, "HEAD:refs/heads/"+opts.Branch)
		for _, r := range opts.PushRefs {
			if _, err := v.git("rev-parse", "--verify", "--quiet", r); err == nil {
				args = append(args, "+"+r+":"+r)
			}
		}
		if opts.Tags != "" {
			args = append(args, "refs/tags/"+opts.Tags+"*:refs/tags/"+opts.Tags+"*")
		}
		_, err := v.git(args...)
		return err
	}
	for res.Tries = 1; ; res.Tries++ {
		var pushErr error
		if opts.AfterMerge == nil {
			// One locked stretch: nothing commits between merge and push.
			err = v.locked(func() error {
				if err := fetchMerge(); err != nil {
					return err
				}
				pushErr = push()
				return nil
			})
		} else if err = v.locked(fetchMerge); err == nil {
			if err = opts.AfterMerge(&res); err == nil {
				err = v.locked(func() error { pushErr = push(); return nil })
			}
		}
		if err != nil {
			return res, err
		}
		if pushErr == nil {
			res.Pushed = true
			return res, nil
		}
		if unreachable(pushErr) {
			return res, v.remoteUnreachable(pushErr, opts.Remote, "pushing to")
		}
		msg := pushErr.Error()
		rejected := strings.Contains(msg, "[rejected]") || strings.Contains(msg, "non-fast-forward") || strings.Contains(msg, "fetch first")
		if !rejected || res.Tries >= opts.Tries {
			return res, errs.Wrap(errs.RemoteSyncFailed, pushErr, "pushing to "+opts.Remote)
		}
	}
}

// unreachableSigns are what git (curl for http(s), ssh) writes when the
// remote cannot be reached at all: a host name that does not resolve, a
// connection refused or timed out, no route.
var unreachableSigns = []string{
	"could not resolve host", "could not resolve hostname", "temporary failure in name resolution",
	"name or service not known", "connection refused", "failed to connect", "connection timed out",
	"operation timed out", "network is unreachable", "no route to host", "unable to access",
}

// unreachable reports whether err, a git command's error holding git's
// message, says that the remote could not be reached over the network. An
// https remote that answered is not: "unable to access" with an HTTP 4xx
// (refused credentials, no such repository) or a certificate git does not
// trust is another failure.
func unreachable(err error) bool {
	msg := strings.ToLower(err.Error())
	if strings.Contains(msg, "returned error: 4") || strings.Contains(msg, "ssl certificate problem") {
		return false
	}
	for _, s := range unreachableSigns {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// remoteUnreachable is the error of a remote that cannot be reached while
// doing what (fetching, pushing to): errs.NetworkUnavailable; the edits
// committed here stay, and the next sync sends them.
func (v *Vault) remoteUnreachable(err error, remote, what string) error {
	return errs.Wrap(errs.NetworkUnavailable, err, what+" "+remote+": the remote cannot be reached; what is committed here stays, and the next `sessionvault remote sync` sends it; check the network connection and the remote's address (`git -C "+shellQuote(v.Root)+" remote get-url "+shellQuote(remote)+"`)")
}

// syncMarker is the state file a sync keeps while the git CLI works in the
// vault under the vault lock: found by the next holder of the lock, it says
// that a sync was killed there, and that the git locks made since are its.
const syncMarker = "sync-git"

// locked runs fn, which runs the git CLI, holding the vault lock (in-process
// and across processes), with the sync marker written around it.
func (v *Vault) locked(fn func() error) error {
	return v.withLock(func() error {
		if err := v.clearKilledSync(); err != nil {
			return err
		}
		if err := v.writeStateInPlace(syncMarker, []byte(time.Now().UTC().Format(time.RFC3339Nano)+"\n")); err != nil {
			return osError(err, ".sessionvault/state/"+syncMarker, "writing")
		}
		err := fn()
		v.clearState(syncMarker)
		return err
	})
}

// withLock runs fn holding the vault lock (in-process and across processes).
func (v *Vault) withLock(fn func() error) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	l, err := v.lock()
	if err != nil {
		return err
	}
	defer l.unlock()
	return fn()
}

// RecoverKilledSync finishes what a killed `remote sync` left (see
// clearKilledSync) when it left anything: its marker (empty once a sync
// finished) costs one stat to look for, so every command can call it before
// it reads notes.
func (v *Vault) RecoverKilledSync() error {
	p, err := v.StatePath(syncMarker)
	if err != nil {
		return nil
	}
	if fi, err := os.Stat(p); err != nil || fi.Size() == 0 {
		return nil // none, or emptied by the sync that finished
	}
	return v.withLock(v.clearKilledSync)
}

// clearKilledSync removes the git locks a killed sync's git left behind
// (those made since its marker),
// once they are a second old, as no git process keeps them that long; a
// lock made before the marker is someone else's and stays. Callers hold the
// vault lock, so the sync that wrote the marker is gone.
func (v *Vault) clearKilledSync() error {
	data, err := v.readStateInPlace(syncMarker)
	if errors.Is(err, os.ErrNotExist) || (err == nil && len(bytes.TrimSpace(data)) == 0) {
		return nil
	}
	if err != nil {
		return osError(err, ".sessionvault/state/"+syncMarker, "reading")
	}
	at, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(data)))
	if err != nil {
		v.clearState(syncMarker) // unreadable: nothing can be known from it
		return nil
	}
	// Every lock git takes here: index.lock, HEAD.lock, ORIG_HEAD.lock,
	// packed-refs.lock and the like at the top, and ref locks under refs/
	// (the branch, refs/remotes, refs/sessionvault). A sync never writes the
	// config, so config.lock is someone else's.
	gitDir := filepath.Join(v.Root, ".git")
	locks, _ := filepath.Glob(filepath.Join(gitDir, "*.lock"))
	_ = filepath.WalkDir(filepath.Join(gitDir, "refs"), func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() && strings.HasSuffix(p, ".lock") {
			locks = append(locks, p)
		}
		return nil
	})
	from := at.Add(-time.Second)
	var ours []string
	var youngest time.Time
	for _, p := range locks {
		if fi, err := os.Lstat(p); err == nil && filepath.Base(p) != "config.lock" && !fi.ModTime().Before(from) {
			ours = append(ours, p)
			if fi.ModTime().After(youngest) {
				youngest = fi.ModTime()
			}
		}
	}
	if wait := time.Until(youngest.Add(time.Second)); len(ours) > 0 && wait > 0 {
		time.Sleep(min(wait, time.Second))
	}
	to := time.Now().Add(-time.Second)
	for _, p := range ours {
		if fi, err := os.Lstat(p); err == nil && !fi.ModTime().After(to) {
			if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				return osError(err, p, "removing a git lock left by a killed sync")
			}
		}
	}
	if err := v.restoreEmptied(); err != nil {
		return err
	}
	v.clearState(syncMarker)
	return nil
}

// restoreEmptied puts back, from the index, the files a git killed while
// writing the work tree (a merge's checkout) left missing or empty: git
// removes or truncates a file before writing its new content, and writes
// the index only after the work tree, so the index holds the version the
// file had. Without this the next sync would commit the emptied notes as a
// person's edit.
func (v *Vault) restoreEmptied() error {
	changed, err := v.git("diff", "--name-only", "-z", "--no-renames")
	if err != nil {
		return errs.Wrap(errs.GitWriteFailed, err, "looking for files a killed sync left half written")
	}
	tmp, err := v.stateDir("tmp")
	if err != nil {
		return err
	}
	for _, rel := range strings.Split(changed, "\x00") {
		if rel == "" {
			continue
		}
		p := filepath.Join(v.Root, filepath.FromSlash(rel))
		if fi, err := os.Lstat(p); err == nil && (fi.Size() > 0 || !fi.Mode().IsRegular()) {
			continue
		}
		data, err := v.gitRaw("cat-file", "blob", ":"+rel)
		if err != nil || len(data) == 0 {
			continue // not in the index as a file, or empty there too
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return osError(err, rel, "restoring")
		}
		if err := AtomicWrite(tmp, p, data, 0); err != nil {
			return osError(err, rel, "restoring")
		}
	}
	return nil
}

// commitPending commits every change in the work tree git sees (what `git
// add -A` would take: the vault's .gitignore keeps the per-machine state
// out): first, as the agent's edit made by the tool call agentTool, the
// paths agentPath picks (nil: none); then the rest as the person's. Returns
// the two commits, "" for one not made.
func (v *Vault) commitPending(agentPath func(rel string) bool, agentTool string) (agent, person string, err error) {
	st, err := v.gitRaw("status", "--porcelain", "-z", "--untracked-files=all", "--no-renames")
	if err != nil {
		return "", "", errs.Wrap(errs.GitWriteFailed, err, "looking for pending edits")
	}
	if strings.Trim(string(st), "\x00") == "" {
		return "", "", nil
	}
	// -z: "XY path" records, NUL-ended, as git wrote them (no rename
	// records: --no-renames).
	var paths, agentPaths []string
	for _, r := range strings.Split(string(st), "\x00") {
		if len(r) < 4 || r[2] != ' ' {
			continue
		}
		if p := r[3:]; agentPath != nil && agentPath(p) {
			agentPaths = append(agentPaths, p)
		} else {
			paths = append(paths, p)
		}
	}
	if len(agentPaths) > 0 {
		// Only these paths: what the person staged stays for their commit.
		if _, err := v.git(append([]string{"add", "-A", "--"}, agentPaths...)...); err != nil {
			return "", "", errs.Wrap(errs.GitWriteFailed, err, "committing the agent's pending edits")
		}
		who := v.Config.Agent.Name + " <" + v.Config.Agent.Email + ">"
		args := append(v.asAgent(), "commit", "--quiet", "--no-verify", "--author", who, "-m", agentMessage(agentPaths, agentTool), "--only", "--")
		if _, err := v.git(append(args, agentPaths...)...); err != nil {
			return "", "", errs.Wrap(errs.GitWriteFailed, err, "committing the agent's pending edits")
		}
		if agent, err = v.git("rev-parse", "HEAD"); err != nil {
			return "", "", errs.Wrap(errs.GitWriteFailed, err, "reading HEAD")
		}
		if st, err := v.gitRaw("status", "--porcelain", "-z", "--untracked-files=all"); err != nil {
			return agent, "", errs.Wrap(errs.GitWriteFailed, err, "looking for pending edits")
		} else if strings.Trim(string(st), "\x00") == "" {
			return agent, "", nil
		}
	}
	if _, err := v.git("add", "-A"); err != nil {
		return agent, "", errs.Wrap(errs.GitWriteFailed, err, "committing pending edits")
	}
	who := v.Config.Person.Name + " <" + v.Config.Person.Email + ">"
	if _, err := v.git("-c", "user.name="+v.Config.Person.Name, "-c", "user.email="+v.Config.Person.Email,
		"commit", "--quiet", "--no-verify", "--author", who, "-m", personMessage(paths)); err != nil {
		return agent, "", errs.Wrap(errs.GitWriteFailed, err, "committing pending edits")
	}
	person, err = v.git("rev-parse", "HEAD")
	return agent, person, err
}

// mergeFetched merges FETCH_HEAD into HEAD: a fast-forward when HEAD has
// nothing of its own, else a merge commit by the agent, the notes merged by
// the driver. Conflicts the driver left (markers in a person's section) are
// committed as they are, for the person to resolve; conflicts in other
// files keep ours.
func (v *Vault) mergeFetched(res *SyncResult) error {
	before, err := v.git("rev-parse", "HEAD")
	if err != nil {
		return errs.Wrap(errs.GitWriteFailed, err, "reading HEAD")
	}
	fetched, err := v.git("rev-parse", "FETCH_HEAD")
	if err != nil {
		return errs.Wrap(errs.GitWriteFailed, err, "reading what was fetched")
	}
	if anc, err := v.git("merge-base", before, fetched); err == nil && anc == fetched {
		return nil // nothing new
	}
	_, merr := v.git(append(v.asAgent(), "merge", "--quiet", "--no-edit", "--no-verify", "-m", "sync: merge "+shortHash(fetched)+" from the remote", fetched)...)
	if merr != nil {
		if err := v.concludeMerge(res); err != nil {
			return errs.Wrap(errs.RemoteSyncFailed, fmt.Errorf("%w (after %v)", err, merr), "merging what was fetched")
		}
	}
	after, err := v.git("rev-parse", "HEAD")
	if err != nil {
		return errs.Wrap(errs.GitWriteFailed, err, "reading HEAD")
	}
	if after != before {
		res.Merged = after
		if out, err := v.git("diff", "--name-only", before, after); err == nil && out != "" {
			res.Changed = append(res.Changed, strings.Split(out, "\n")...)
		}
	}
	return nil
}

// concludeMerge finishes a merge git stopped with conflicts: notes keep the
// driver's result (markers in a person's section only), other files ours;
// then the merge commit.
func (v *Vault) concludeMerge(res *SyncResult) error {
	if _, err := os.Stat(filepath.Join(v.Root, ".git", "MERGE_HEAD")); err != nil {
		return errors.New("no merge in progress")
	}
	out, err := v.git("diff", "--name-only", "--diff-filter=U")
	if err != nil {
		return err
	}
	for _, p := range strings.Split(out, "\n") {
		if p == "" {
			continue
		}
		if strings.HasSuffix(p, ".md") {
			if _, err := os.Stat(filepath.Join(v.Root, p)); err == nil {
				res.Conflicts = append(res.Conflicts, p)
				if _, err := v.git("add", "--", p); err != nil {
					return err
				}
				continue
			}
		}
		// Ours, or (deleted on our side) the deletion.
		if _, err := v.git("checkout", "--ours", "--", p); err != nil {
			if _, err := v.git("rm", "--quiet", "--cached", "--", p); err != nil {
				return err
			}
		} else if _, err := v.git("add", "--", p); err != nil {
			return err
		}
		res.Kept = append(res.Kept, p)
	}
	// The message is given: a merge killed before git wrote MERGE_MSG has none.
	mh, _ := os.ReadFile(filepath.Join(v.Root, ".git", "MERGE_HEAD"))
	_, err = v.git(append(v.asAgent(), "commit", "--quiet", "--no-verify", "-m", "sync: merge "+shortHash(strings.TrimSpace(string(mh)))+" from the remote")...)
	return err
}

// finishKilledMerge concludes a merge a killed sync left in progress (its
// MERGE_HEAD): committed as it stands when git resolved everything, else
// resolved as concludeMerge does.
func (v *Vault) finishKilledMerge(res *SyncResult) error {
	if _, err := os.Stat(filepath.Join(v.Root, ".git", "MERGE_HEAD")); err != nil {
		return nil
	}
	if err := v.concludeMerge(res); err != nil {
		return errs.Wrap(errs.RemoteSyncFailed, err, "finishing the merge a stopped sync left (see `git -C "+shellQuote(v.Root)+" status`)")
	}
	return nil
}

// asAgent is the git options that make the agent the committer of a merge.
func (v *Vault) asAgent() []string {
	return []string{"-c", "user.name=" + v.Config.Agent.Name, "-c", "user.email=" + v.Config.Agent.Email}
}

func shortHash(h string) string { return h[:min(12, len(h))] }
