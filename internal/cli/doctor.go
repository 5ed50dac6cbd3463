package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sessionvault/sessionvault/integrations/claudecode"
	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/history"
	"github.com/sessionvault/sessionvault/internal/session"
	"github.com/sessionvault/sessionvault/internal/shellquote"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// doctorCheck is one check of `doctor`: its name, whether it holds, what is
// wrong, and the command (or step) that fixes it.
type doctorCheck struct {
	Check   string `json:"check"`
	OK      bool   `json:"ok"`
	Warning bool   `json:"warning,omitempty"` // a problem that does not turn the gates off
	Problem string `json:"problem,omitempty"`
	Fix     string `json:"fix,omitempty"`
	// Note is what the fix does not cover, to do by hand (e.g. a setting of
	// a program started from the desktop).
	Note string `json:"note,omitempty"`
}

func (a *app) doctorCommand() *cobra.Command {
	var repo string
	c := &cobra.Command{
		Use:   "doctor [--repo DIR]",
		Short: "Check this machine's setup for a code repository, and print the fix for each problem",
		Long: `Checks, for the code repository DIR (default: the current folder): sessionvault
and sessionvault-hook on PATH, and sessionvault-daemon (which serve runs) of
the same version (a warning); the Claude Code hooks installed in
DIR/.claude/settings.json and runnable; the vault reachable from DIR (its link
on this machine); the signing key present and the current state verified; the
Serena link (when DIR has .serena); this clone's machine record; the merge
driver, when the vault has a git remote (registered to run sessionvault from
PATH, else the binary that registered it, else git's line merge; the
sessionvault on PATH able to run it, a warning when none is); git identity;
LINEAR_API_KEY when a session is linked to Linear. Each problem comes with the
command that fixes it. Exit 1 when a check fails (warnings do not count). DIR
must be a code repository: in a folder outside any git repository, or in the
home folder (whose .claude/settings.json is Claude Code's user-wide settings),
doctor says to run it in the code repository instead of proposing to install
hooks there.`,
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			checks := a.doctor(repo)
			var b strings.Builder
			failed := 0
			for _, ch := range checks {
				switch {
				case ch.OK:
					b.WriteString("ok    " + ch.Check + "\n")
				case ch.Warning:
					b.WriteString("warn  " + ch.Check + ": " + ch.Problem + "\n      fix: " + ch.Fix + "\n")
				default:
					failed++
					b.WriteString("FAIL  " + ch.Check + ": " + ch.Problem + "\n      fix: " + ch.Fix + "\n")
				}
				if !ch.OK && ch.Note != "" {
					b.WriteString("      note: " + ch.Note + "\n")
				}
			}
			if err := a.emit(map[string]any{"checks": checks, "failed": failed}, strings.TrimRight(b.String(), "\n")); err != nil {
				return err
			}
			if failed > 0 {
				return errs.New(errs.ConfigInvalid, "doctor: %d check(s) failed", failed)
			}
			return nil
		},
	}
	c.Flags().StringVar(&repo, "repo", ".", "the code repository")
	return c
}

func (a *app) doctor(repo string) []doctorCheck {
	var out []doctorCheck
	add := func(name string, ok bool, problem, fix string) {
		if ok {
			problem, fix = "", "" // a check that holds has nothing to say
		}
		out = append(out, doctorCheck{Check: name, OK: ok, Problem: problem, Fix: fix})
	}
	warn := func(name, problem, fix string) {
		out = append(out, doctorCheck{Check: name, Warning: true, Problem: problem, Fix: fix})
	}
	abs, _ := filepath.Abs(repo)

	_, svErr := exec.LookPath("sessionvault")
	_, hookErr := exec.LookPath("sessionvault-hook")
	add("sessionvault on PATH", svErr == nil, "not found on PATH: the hooks deny every tool call", "go install github.com/sessionvault/sessionvault/cmd/sessionvault@latest (or put bin/ on PATH)")
	if hookErr != nil {
		warn("sessionvault-hook on PATH", "not found: the hooks run the full binary (slower per tool call)", "go install github.com/sessionvault/sessionvault/cmd/sessionvault-hook@latest")
	} else {
		add("sessionvault-hook on PATH", true, "", "")
	}
	// The daemon only `serve` runs: a warning, not a failure.
	if bin, err := daemonBinary(); err != nil {
		warn("sessionvault-daemon installed", "not found beside sessionvault nor on PATH: `sessionvault serve` (the scheduled Linear and remote sync, /metrics) cannot run", daemonInstall())
	} else if have, want := daemonVersion(bin), buildVersion(); have != want {
		warn("sessionvault-daemon installed", bin+" is version "+have+", this sessionvault "+want, daemonInstall())
	} else {
		add("sessionvault-daemon installed", true, "", "")
	}

	// The vault, as the hooks find it from the repository.
	var v *vault.Vault
	vaultDir, _, err := vault.Locate(a.vaultDir, "", abs)
	if err != nil {
		vaultDir = "" // said below: no link and no vault above the repository
	}
	fixLink := "sessionvault --vault PATH-TO-VAULT hooks install --project-dir " + abs
	if why := notCodeRepo(abs); why != "" {
		// Hooks installed here would not be a code repository's: in the home
		// folder they are Claude Code's user-wide settings
		// (~/.claude/settings.json), applied to every project.
		fixLink = "run `sessionvault doctor` in the code repository (or pass --repo REPO), then install the hooks there: sessionvault --vault PATH-TO-VAULT hooks install --project-dir REPO"
		add("code repository", false, why, "cd to the code repository the agent works in and run `sessionvault doctor` there (or `sessionvault doctor --repo REPO`)")
	}
	if vaultDir == "" {
		add("vault reachable from the repository", false, "no link for "+abs+" on this machine and no vault above it", fixLink)
	} else if vv, err := vault.Open(vaultDir); err != nil {
		add("vault reachable from the repository", false, err.Error(), fixLink)
	} else {
		v = vv
		add("vault reachable from the repository", true, "", "")
	}

	missing, err := claudecode.Missing(abs)
	switch {
	case err != nil:
		add("Claude Code hooks installed", false, err.Error(), "fix the JSON, then "+fixLink)
	case len(missing) > 0:
		add("Claude Code hooks installed", false, "no sessionvault entry for "+strings.Join(missing, ", ")+" in .claude/settings.json", fixLink)
	default:
		add("Claude Code hooks installed", true, "", "")
		cmd := exec.Command("sh", "-c", claudecode.HookCommand("pre-tool-use"))
		cmd.Dir = abs
		cmd.Stdin = strings.NewReader(`{"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{},"cwd":` + quoteJSON(abs) + `}`)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			add("hooks runnable", false, "a Read call is denied: "+strings.TrimSpace(stderr.String()), "install sessionvault on PATH, then "+fixLink)
		} else {
			add("hooks runnable", true, "", "")
		}
	}

	if v == nil {
		return out
	}
	svc := session.New(v)
	if err := v.CheckMachine(); err != nil {
		add("machine record", false, err.Error(), svc.Command("", "remote setup --machine "+vault.NewSecondaryMachine("").Name))
	}
	if os.Getenv("SESSIONVAULT_SECRET") == "" {
		if _, err := os.Stat(filepath.Join(v.Root, ".sessionvault", "state", "key")); err != nil {
			add("signing key", false, "no .sessionvault/state/key on this machine (a new clone): the state cannot be verified", "a person runs: "+svc.Command("", "accept"))
		} else {
			add("signing key", true, "", "")
		}
	}
	if project, err := svc.Project(a.project); err != nil {
		add("current state", false, err.Error(), "see the message")
	} else if _, err := svc.Verified(project); err != nil {
		fix := "a person reviews `" + svc.ReviewCommand(project) + "` and runs: " + svc.Command(project, "accept")
		if !errors.Is(err, session.ErrTampered) {
			fix = "restore the note (`" + svc.GitCommand("checkout -- "+project+"/"+session.CurrentStateNote) + "`), then " + svc.Command(project, "accept")
		}
		add("current state verified", false, err.Error(), fix)
	} else {
		add("current state verified", true, "", "")
		if st, err := svc.Status(project); err == nil && st.Linear != "" && os.Getenv("LINEAR_API_KEY") == "" {
			warn("Linear key", "session "+st.Session+" is linked to "+st.Linear+" but LINEAR_API_KEY is not set: nothing is pushed", "export LINEAR_API_KEY=... (a personal API key from Linear's settings)")
		}
		if _, err := os.Lstat(filepath.Join(abs, ".serena")); err == nil {
			mem := filepath.Join(abs, ".serena", "memories")
			want, _ := filepath.EvalSymlinks(filepath.Join(v.Root, project))
			got, err := filepath.EvalSymlinks(mem)
			add("Serena link", err == nil && got == want, mem+" does not lead to "+filepath.Join(v.Root, project), svc.Command(project, "link serena --repo "+abs))
		}
	}
	if v != nil {
		// A clone with a remote merges notes by entry only with the driver
		// registered on this machine (a fresh clone has .gitattributes, not
		// the .git/config entry).
		if remotes, err := exec.Command("git", "-C", v.Root, "remote").Output(); err == nil && len(bytes.TrimSpace(remotes)) > 0 {
			drv := v.MergeDriver()
			fallback, current := vault.ParseFallbackMergeDriver(drv)
			onPath, problem := mergeDriverProblem(fallback)
			switch {
			case drv == "":
				warn("merge driver", "the vault has a git remote but no merge driver registered on this machine: a git pull (by hand or Obsidian Git) merges notes as plain git does, with conflicts in the engine's sections", svc.Command("", "remote setup"))
			case !current:
				warn("merge driver", "registered as `"+drv+"`, which git runs only where it finds that program (a program started from the desktop or the macOS Dock, such as Obsidian, does not get your shell's PATH); where it does not, git leaves each note both machines changed conflicted, with this machine's side only and the other's edits out of it. remote setup registers the driver that falls back to the binary's full path, then to git's line merge", svc.Command("", "remote setup"))
			case problem != "":
				fix, note := onPathFix()
				out = append(out, doctorCheck{Check: "merge driver", Warning: true, Problem: problem, Fix: fix, Note: note})
			case onPath != "" && fallback != "" && runsMergeDriver(filepath.FromSlash(fallback)) != nil:
				warn("merge driver", "its fallback "+fallback+", for a git pull run where PATH lacks sessionvault (Obsidian Git in Obsidian started from the desktop or the Dock), is gone or cannot merge: such a pull merges notes with git's line merge (conflict markers where both machines wrote)", svc.Command("", "remote setup"))
			default:
				add("merge driver", true, "", "")
			}
		}
		if r, err := history.Open(v.Root); err == nil {
			if n, split, err := r.IndexEntries(); err == nil && !split && n >= history.SplitIndexFrom && r.SplitIndexSetting() < 0 {
				warn("git index size", fmt.Sprintf("the vault's git index holds %d files and is rewritten whole by every commit", n),
					"git -C "+shellquote.Quote(v.Root)+" config core.splitIndex true")
			}
		}
	}
	for _, k := range []string{"user.name", "user.email"} {
		if o, err := exec.Command("git", "-C", abs, "config", k).Output(); err != nil || len(bytes.TrimSpace(o)) == 0 {
			warn("git "+k, "not set: commits in the code repository (commit evidence) need it", "git config --global "+k+" \"...\"")
		}
	}
	return out
}

// notCodeRepo says why dir is no place for a code repository's hooks: it
// is the home folder (its .claude/settings.json is Claude Code's user-wide
// settings), or it is not inside a git repository; "" when it is a code
// repository's folder.
func notCodeRepo(dir string) string {
	if home, err := os.UserHomeDir(); err == nil && samePath(dir, home) {
		return dir + " is the home folder: hooks installed there go into Claude Code's user-wide settings (~/.claude/settings.json) and apply to every project"
	}
	cmd := exec.Command("git", "-C", dir, "rev-parse", "--show-toplevel")
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0")
	if err := cmd.Run(); err != nil {
		return dir + " is not inside a git repository: doctor checks the code repository the agent works in"
	}
	return ""
}

// samePath reports whether a and b name the same folder (symbolic links
// followed).
func samePath(a, b string) bool {
	if ra, err := filepath.EvalSymlinks(a); err == nil {
		a = ra
	}
	if rb, err := filepath.EvalSymlinks(b); err == nil {
		b = rb
	}
	return filepath.Clean(a) == filepath.Clean(b)
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// mergeDriverProblem finds the sessionvault git runs first as the merge
// driver: its path on PATH (sessionvault.exe on Windows), and what is
// wrong ("" when nothing): a binary there that does not merge (a release
// older than the merge-driver command, or another program of that name),
// or none there, the driver then falling back to fallback (the binary
// registered with it, "" for none) or to git's line merge.
func mergeDriverProblem(fallback string) (path, problem string) {
	p, err := exec.LookPath(vault.MergeDriverProgram)
	if err == nil {
		if err := runsMergeDriver(p); err != nil {
			return p, "the sessionvault on PATH (" + p + ") cannot run the merge driver (" + err.Error() + "): an older release, or another program of that name; a git pull (by hand or Obsidian Git) runs it, and leaves each note both machines changed conflicted, with this machine's side only"
		}
		return p, ""
	}
	const where = "sessionvault is not on PATH, where git looks for the merge driver first"
	lineMerge := "git's line merge (conflict markers where both machines changed the same lines, the engine's sections included; nothing is lost, and remote sync merges notes by entry)"
	if fallback != "" {
		if runsMergeDriver(filepath.FromSlash(fallback)) == nil {
			return "", where + ": a git pull (by hand or Obsidian Git) falls back to " + fallback + ", the binary that registered the driver, and once that is moved or removed, to " + lineMerge
		}
		return "", where + ", and the driver's fallback " + fallback + " is gone or cannot merge: a git pull (by hand or Obsidian Git) falls back to " + lineMerge
	}
	return "", where + ": a git pull (by hand or Obsidian Git) falls back to " + lineMerge
}

// driverFallback is the full path of the sessionvault running now, the
// merge driver's fallback where PATH lacks sessionvault: the path PATH
// gives when that is the same file (a link an upgrade keeps in place), "" when
// the program running is not sessionvault (a test binary, say).
func driverFallback() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return ""
	}
	if p, err := exec.LookPath(vault.MergeDriverProgram); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			if pi, err := os.Stat(abs); err == nil && os.SameFile(fi, pi) {
				return abs
			}
		}
	}
	if strings.TrimSuffix(strings.ToLower(filepath.Base(exe)), ".exe") != vault.MergeDriverProgram {
		return ""
	}
	return exe
}

// driverSummary says what the merge driver runs: sessionvault from PATH
// (found at onPath now, "" when not), else fallback, else git's line merge.
func driverSummary(onPath, fallback string) string {
	s := "sessionvault from PATH (" + onPath + ")"
	if onPath == "" {
		s = "sessionvault from PATH (not there now)"
	}
	if fallback != "" {
		s += ", else " + fallback
	}
	return s + ", else git's line merge"
}

// runsMergeDriver runs bin's merge driver on a note whose two sides made
// one change each, as git would: an error unless it exits 0 having written
// the merge over ours.
func runsMergeDriver(bin string) error {
	dir, err := os.MkdirTemp("", "sessionvault-driver-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	files := [3]string{"base\n", "base\nours\n", "theirs\nbase\n"}
	var paths []string
	for i, content := range files {
		p := filepath.Join(dir, fmt.Sprintf("f%d.md", i))
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return err
		}
		paths = append(paths, p)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"merge-driver"}, append(paths, "note.md")...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			first, _, _ := strings.Cut(msg, "\n")
			return fmt.Errorf("%w: %s", err, first)
		}
		return err
	}
	if got, err := os.ReadFile(paths[1]); err != nil || !strings.Contains(string(got), "ours") || !strings.Contains(string(got), "theirs") {
		return errors.New("its merge-driver command did not merge")
	}
	return nil
}

// onPathFix is the fix, to paste into the user's shell ($SHELL), that puts
// the folder of the sessionvault running now first on PATH, in this shell
// and in the login shells started next (zsh: ~/.zprofile; bash:
// ~/.bash_profile when there is one, else ~/.profile; fish: fish_add_path;
// any other: ~/.profile), preceded by the install command of the README
// when the running binary is not named sessionvault. note is what the fix
// does not reach: programs started from the desktop or the macOS Dock,
// such as Obsidian, read no shell profile.
func onPathFix() (fix, note string) {
	dir := ""
	if exe, err := os.Executable(); err == nil {
		if r, err := filepath.EvalSymlinks(exe); err == nil {
			exe = r
		}
		if strings.TrimSuffix(strings.ToLower(filepath.Base(exe)), ".exe") == vault.MergeDriverProgram {
			dir = filepath.Dir(exe)
		}
	}
	install := "go install github.com/sessionvault/sessionvault/cmd/sessionvault@latest && "
	if dir != "" {
		install = ""
	}
	if runtime.GOOS == "windows" {
		if dir == "" {
			return "go install github.com/sessionvault/sessionvault/cmd/sessionvault@latest (its folder, shown by `go env GOPATH` plus \\bin, must be on PATH)", ""
		}
		// PowerShell: the user's Path, for the programs started next.
		return "in PowerShell: [Environment]::SetEnvironmentVariable('Path', '" + strings.ReplaceAll(dir, "'", "''") + ";' + [Environment]::GetEnvironmentVariable('Path', 'User'), 'User')",
			"programs already running, such as Obsidian, see the new Path once restarted"
	}
	folder := "the folder `go env GOPATH` names, plus /bin,"
	if dir != "" {
		folder = dir
	}
	// Obsidian Git's own setting (its documentation, "Integration with
	// other tools"): Advanced, "Additional PATH environment variables paths".
	note = "programs started from the desktop, such as Obsidian, do not read shell profiles: for Obsidian Git, add " + folder + " to its \"Additional PATH environment variables paths\" setting (Advanced), then restart Obsidian"
	if runtime.GOOS == "darwin" {
		note = "apps started from the Dock or Finder, such as Obsidian, do not read shell profiles (they get launchd's PATH): for Obsidian Git, add " + folder + " to its \"Additional PATH environment variables paths\" setting (Advanced), then restart Obsidian"
	}
	if filepath.Base(os.Getenv("SHELL")) == "fish" {
		d := "(go env GOPATH)/bin"
		if dir != "" {
			d = shellquote.Quote(dir)
		}
		return install + "fish_add_path " + d, note
	}
	line := `export PATH="$(go env GOPATH)/bin:$PATH"`
	if dir != "" {
		line = "export PATH=" + shellquote.Quote(dir) + `:"$PATH"`
	}
	return install + "echo " + shellquote.Quote(line) + " >> " + shellProfile() + " && " + line, note
}

// shellProfile is the file, as typed in a shell, that the login shells of
// the user's $SHELL read: ~/.zprofile for zsh, ~/.bash_profile for bash
// when there is one (bash then reads no ~/.profile), else ~/.profile.
func shellProfile() string {
	switch filepath.Base(os.Getenv("SHELL")) {
	case "zsh":
		return "~/.zprofile"
	case "bash":
		if home, err := os.UserHomeDir(); err == nil {
			if _, err := os.Stat(filepath.Join(home, ".bash_profile")); err == nil {
				return "~/.bash_profile"
			}
		}
	}
	return "~/.profile"
}
