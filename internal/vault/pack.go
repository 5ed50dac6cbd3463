package vault

import (
	"fmt"
)

// PackLooseObjects runs `git gc --auto --quiet` in the vault when it holds
// more loose objects than git's gc.auto lets stand (see
// history.Repo.TooManyLooseObjects: one folder read, nothing started
// otherwise), and reports whether it started git. The engine writes its
// commits without git, so nothing else packs a vault no git command is run
// in: about 150 KB of loose objects per session, 20 times what git packs
// them into.
//
// With wait, it returns when git is done. Without, it returns once git has
// started, and git runs on after this process ends; it detaches itself
// where it can (gc.autoDetach, on by default). git gc --auto keeps to its
// own rules (gc.auto and the other gc settings, its lock gc.pid) and is
// safe beside the engine's commits, as any git command run in the vault.
// An error means git could not be started or, with wait, failed.
func (v *Vault) PackLooseObjects(wait bool) (started bool, err error) {
	v.mu.Lock()
	repo, err := v.repo()
	v.mu.Unlock()
	if err != nil {
		return false, err
	}
	if !repo.TooManyLooseObjects() {
		return false, nil
	}
	args := []string{"gc", "--auto", "--quiet"}
	if wait {
		_, err := v.gitRaw(args...)
		return true, err
	}
	cmd := gitCmd(v.Root, args...)
	if err := cmd.Start(); err != nil {
		return false, fmt.Errorf("git gc --auto: %w", err)
	}
	go func() { _ = cmd.Wait() }() // reaped in a long-running process (mcp, serve); git's own log keeps its errors
	return true, nil
}
