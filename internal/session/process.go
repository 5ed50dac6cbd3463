package session

import (
	"context"
	"os/exec"
	"strings"
	"time"
)

// The processes the engine runs, all here: the checks of run and commit
// evidence, in the code repository.

// runTimeout bounds a run check (protocol evidence "run: COMMAND").
const runTimeout = 2 * time.Minute

// runCheck runs command with sh -c in dir, at most runTimeout, and returns
// how long it took and, when it fails, its trimmed output.
func runCheck(dir, command string) (took time.Duration, output string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
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
