package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

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
}

func (a *app) doctorCommand() *cobra.Command {
	var repo string
	c := &cobra.Command{
		Use:   "doctor [--repo DIR]",
		Short: "Check this machine's setup for a code repository, and print the fix for each problem",
		Long: `Checks, for the code repository DIR (default: the current folder): sessionvault
and sessionvault-hook on PATH; the Claude Code hooks installed in
DIR/.claude/settings.json and runnable; the vault reachable from DIR (its link
on this machine); the signing key present and the current state verified; the
Serena link (when DIR has .serena); git identity; LINEAR_API_KEY when a session
is linked to Linear. Each problem comes with the command that fixes it. Exit 1
when a check fails (warnings do not count). DIR must be a code repository: in a
folder outside any git repository, or in the home folder (whose
.claude/settings.json is Claude Code's user-wide settings), doctor says to run
it in the code repository instead of proposing to install hooks there.`,
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
			drv, err := exec.Command("git", "-C", v.Root, "config", "merge."+vault.MergeDriverName+".driver").Output()
			bin, _, _ := strings.Cut(strings.Trim(strings.TrimSpace(string(drv)), "'"), "' merge-driver")
			bin, _, _ = strings.Cut(bin, " merge-driver")
			if _, serr := os.Stat(bin); err != nil || serr != nil {
				warn("merge driver", "the vault has a git remote but no runnable merge driver registered on this machine: a git pull (by hand or Obsidian Git) merges notes as plain git does, with conflicts in the engine's sections", svc.Command("", "remote setup"))
			} else {
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
