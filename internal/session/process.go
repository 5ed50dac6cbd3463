package session

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// The processes the engine runs, all here: the checks of run and commit
// evidence, in the code repository.

// runTimeout bounds a run check (protocol evidence "run: COMMAND").
const runTimeout = 2 * time.Minute

// observeRunTimeout bounds a run check the engine makes by itself (at a
// session's start, at a gate): a longer one is left to `evidence record --run`.
const observeRunTimeout = 10 * time.Second

// runCheck runs command with sh -c in dir, at most runTimeout, and returns
// how long it took and, when it fails, its trimmed output.
func runCheck(dir, command string) (took time.Duration, output string, err error) {
	return runCheckFor(dir, command, runTimeout)
}

// runCheckFor is runCheck bounded by timeout.
func runCheckFor(dir, command string, timeout time.Duration) (took time.Duration, output string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", command)
	cmd.Dir = dir
	start := time.Now()
	out, err := cmd.CombinedOutput()
	return time.Since(start), strings.TrimSpace(string(out)), err
}

// resolveCommit returns the full id of commit sha in the git repository at
// dir (git rev-parse --verify), or an error when there is no such commit.
func resolveCommit(dir, sha string) (string, error) {
	out, err := exec.Command("git", "-C", dir, "rev-parse", "--verify", "--quiet", sha+"^{commit}").Output()
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// git runs git in the repository at dir (no optional locks: a check never
// takes the index lock from the person's git) and returns its trimmed
// output.
func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0")
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), err
}

// gitToplevel returns the top folder of the git work tree holding dir, or ""
// when dir is in none (or git is missing).
func gitToplevel(dir string) string {
	if dir == "" {
		return ""
	}
	top, err := git(dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return ""
	}
	return filepath.FromSlash(top)
}

// onBranch reports whether commit sha is reachable from HEAD of the
// repository at dir (git merge-base --is-ancestor); an error when git cannot
// tell (no such commit counts as not reachable).
func onBranch(dir, sha string) (bool, error) {
	if _, err := resolveCommit(dir, sha); err != nil {
		return false, nil
	}
	_, err := git(dir, "merge-base", "--is-ancestor", sha, "HEAD")
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 1 {
		return false, nil
	}
	return err == nil, err
}

// headFiles are the files of the repository at dir whose change moves HEAD
// or its branch: HEAD itself, the branch's loose ref and packed-refs.
func headFiles(dir string) []string {
	out, err := git(dir, "rev-parse", "--absolute-git-dir", "--git-common-dir", "--symbolic-full-name", "HEAD")
	if err != nil {
		return nil
	}
	f := strings.Split(out, "\n")
	if len(f) < 2 {
		return nil
	}
	gitDir, common := filepath.FromSlash(f[0]), filepath.FromSlash(f[1])
	if !filepath.IsAbs(common) {
		common = filepath.Join(dir, common)
	}
	files := []string{filepath.Join(gitDir, "HEAD"), filepath.Join(common, "packed-refs")}
	if len(f) > 2 && strings.HasPrefix(f[2], "refs/") {
		files = append(files, filepath.Join(common, filepath.FromSlash(f[2])))
	}
	return files
}
