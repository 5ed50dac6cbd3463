package vault

import (
	"fmt"
	"os/exec"
)

// PackLooseObjects runs `git gc --auto --quiet` in the vault when it holds
// more loose objects than git's gc.auto lets stand (see
// history.Repo.TooManyLooseObjects: one folder read, nothing started
// otherwise), and reports whether it started git. The engine writes its
// commits without git, so nothing else packs a vault no git command is run
// in: about 150 KB of loose objects per session, 20 times what git packs
// them into.
//
// With wait, it returns when the git command returns: when git is done,
// unless it detached itself to pack in the background (gc.autoDetach, on
// by default where git can detach; not on Windows). Without, it returns
// once git has started, and git runs on after this process ends. git gc
// --auto keeps to its own rules (gc.auto and the other gc settings, its
// lock gc.pid) and is safe beside the engine's commits, as any git command
// run in the vault. maintenance.auto false in .git/config, or no git on
// PATH, starts nothing. An error means git could not be started or, with
// wait, failed.
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
	if _, err := exec.LookPath("git"); err != nil {
		return false, nil // sessions work without the git CLI; nothing packs then
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
	go func() { _ = cmd.Wait() }() // reaped in a long-running process (mcp, serve); a detached git logs its errors in .git/gc.log
	return true, nil
}
