package cli

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/sessionvault/sessionvault/internal/vault"
)

// pathWith returns the PATH entry of an environment whose first folder
// holds bin as sessionvault (sessionvault.exe on Windows): git finds the
// merge driver there, as it finds an installed sessionvault.
func pathWith(t *testing.T, bin string) string {
	t.Helper()
	if runtime.GOOS == "windows" && !strings.HasSuffix(bin, ".exe") {
		exe := bin + ".exe"
		if _, err := os.Stat(exe); err != nil {
			if err := os.Link(bin, exe); err != nil {
				copyFile(t, bin, exe)
			}
		}
	}
	return "PATH=" + filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH")
}

// copyFile copies the file from to the new file to, executable.
func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}

// withEnv returns a copy of c whose environment has kv (KEY=VALUE) set.
func (c *clone) withEnv(kv ...string) *clone {
	cc := *c
	cc.env = append(append([]string(nil), c.env...), kv...)
	return &cc
}

// The merge driver runs sessionvault as git finds it on PATH: a clone set
// up by a binary that was moved away afterwards (an upgrade, a new install
// folder) still merges a git pull by entry, and a driver an older setup
// registered with a binary's full path gets the form that falls back when
// `remote setup` runs again.
func TestMergeDriverFromPath(t *testing.T) {
	t.Parallel()
	clones := newRemoteVault(t, 2)
	a, b := clones[0], clones[1]
	if got, want := a.git("config", "merge.sessionvault.driver"), vault.FallbackMergeDriverCommand(a.bin); got != want {
		t.Errorf("init registered the driver as %q, want %q", got, want)
	}

	// b set up again by a binary in a folder that is then removed.
	old := filepath.Join(t.TempDir(), "old-install", "sessionvault")
	if err := os.MkdirAll(filepath.Dir(old), 0o755); err != nil {
		t.Fatal(err)
	}
	copyFile(t, b.bin, old)
	b.git("config", "merge.sessionvault.driver", vault.MergeDriverCommand(old))
	ob := *b
	ob.bin = old
	ob.sv("remote", "setup")
	if got, want := b.git("config", "merge.sessionvault.driver"), vault.FallbackMergeDriverCommand(old); got != want {
		t.Errorf("remote setup left the driver as %q, want %q", got, want)
	}
	if err := os.RemoveAll(filepath.Dir(old)); err != nil {
		t.Fatal(err)
	}

	b.sv("remote", "sync")
	a.sv("update", "from a")
	b.sv("update", "from b")
	a.git("push", "--quiet", "origin", "main")
	b.git("pull", "--no-rebase", "--no-edit", "--quiet", "origin", "main")
	state := b.read(statePath)
	for _, u := range []string{"from a ^", "from b ^"} {
		if n := strings.Count(state, u); n != 1 {
			t.Errorf("%q is in b's current state %d times after git pull", u, n)
		}
	}
	if strings.Contains(state, "<<<<<<<") {
		t.Errorf("conflict markers after git pull:\n%s", state)
	}
}

// doctorCheckOf runs doctor for the clone's vault and returns its check
// named name.
func doctorCheckOf(t *testing.T, c *clone, name string) doctorCheck {
	t.Helper()
	out, _ := c.try("doctor", "--json", "--repo", c.dir)
	var rep struct {
		Data struct {
			Checks []doctorCheck `json:"checks"`
		} `json:"data"`
	}
	if err := json.NewDecoder(strings.NewReader(out)).Decode(&rep); err != nil {
		t.Fatalf("doctor --json: %v\n%s", err, out)
	}
	for _, ch := range rep.Data.Checks {
		if ch.Check == name {
			return ch
		}
	}
	t.Fatalf("doctor has no %q check:\n%s", name, out)
	return doctorCheck{}
}

// doctor checks that git can run the merge driver: registered in the form
// that falls back (sessionvault from PATH, else the binary that registered
// it, else git's line merge), and sessionvault on PATH with the
// merge-driver command. Each problem comes with a fix that works when
// pasted into the user's shell ($SHELL).
func TestDoctorChecksTheMergeDriverOnPath(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("the fixes are pasted into sh here")
	}
	a := newRemoteVault(t, 1)[0]
	if ch := doctorCheckOf(t, a, "merge driver"); !ch.OK {
		t.Fatalf("doctor after init, sessionvault on PATH: %+v", ch)
	}

	// A driver registered with a binary's full path: remote setup fixes it.
	a.git("config", "merge.sessionvault.driver", vault.MergeDriverCommand(a.bin))
	ch := doctorCheckOf(t, a, "merge driver")
	if ch.OK || !strings.Contains(ch.Problem, a.bin) || !strings.HasSuffix(ch.Fix, "remote setup") {
		t.Fatalf("doctor with the full path registered: %+v", ch)
	}
	// So is sessionvault from PATH alone, which fails where PATH lacks it.
	a.git("config", "merge.sessionvault.driver", vault.MergeDriverCommand("sessionvault"))
	if ch := doctorCheckOf(t, a, "merge driver"); ch.OK || !strings.Contains(ch.Problem, "conflicted") || !strings.HasSuffix(ch.Fix, "remote setup") {
		t.Fatalf("doctor with sessionvault from PATH alone registered: %+v", ch)
	}
	cmd := exec.Command(a.bin, strings.Fields(ch.Fix)[1:]...)
	cmd.Env = a.env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", ch.Fix, err, out)
	}
	if ch := doctorCheckOf(t, a, "merge driver"); !ch.OK {
		t.Fatalf("doctor after %q: %+v", ch.Fix, ch)
	}

	// No sessionvault on PATH: git and sh only.
	bare := "PATH=" + bareDirs(t)
	off := a.withEnv(bare, "HOME="+t.TempDir(), "SHELL=/bin/sh")
	ch = doctorCheckOf(t, off, "merge driver")
	if ch.OK || !ch.Warning || !strings.Contains(ch.Problem, "not on PATH") || !strings.Contains(ch.Problem, "falls back to "+a.bin) {
		t.Fatalf("doctor without sessionvault on PATH: %+v", ch)
	}
	if !strings.Contains(ch.Note, "Obsidian Git") || !strings.Contains(ch.Note, "Additional PATH environment variables paths") || !strings.Contains(ch.Note, filepath.Dir(a.bin)) {
		t.Errorf("doctor's note for programs started from the desktop: %q", ch.Note)
	}
	// The fix, pasted into the user's shell, puts this sessionvault on PATH
	// there and in the login shells started next, through the profile that
	// shell reads.
	for _, tc := range []struct {
		shell, profile string
		bashProfile    bool // ~/.bash_profile there before
	}{
		{"/bin/sh", "~/.profile", false},
		{"/usr/bin/zsh", "~/.zprofile", false},
		{"/bin/bash", "~/.profile", false},
		{"/bin/bash", "~/.bash_profile", true},
	} {
		home := t.TempDir()
		if tc.bashProfile {
			if err := os.WriteFile(filepath.Join(home, ".bash_profile"), []byte("# mine\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		off := a.withEnv(bare, "HOME="+home, "SHELL="+tc.shell)
		ch := doctorCheckOf(t, off, "merge driver")
		if !strings.Contains(ch.Fix, " >> "+tc.profile+" && ") {
			t.Errorf("SHELL=%s: fix %q does not add to %s", tc.shell, ch.Fix, tc.profile)
		}
		for _, script := range []string{ch.Fix + " && command -v sessionvault", ". " + tc.profile + " && command -v sessionvault"} {
			sh := exec.Command("sh", "-c", script)
			sh.Env = off.env
			out, err := sh.CombinedOutput()
			if err != nil || strings.TrimSpace(string(out)) != a.bin {
				t.Errorf("SHELL=%s: sh -c %q: %v\n%s", tc.shell, script, err, out)
			}
		}
	}
	// fish reads no profile of sh's: fish_add_path, which fish keeps.
	ch = doctorCheckOf(t, a.withEnv(bare, "HOME="+t.TempDir(), "SHELL=/usr/local/bin/fish"), "merge driver")
	if want := "fish_add_path " + filepath.Dir(a.bin); ch.Fix != want {
		t.Errorf("SHELL=fish: fix %q, want %q", ch.Fix, want)
	}

	// The driver's fallback gone while sessionvault is on PATH: a pull in a
	// program whose PATH lacks it would get git's line merge.
	gone := filepath.Join(t.TempDir(), "gone", "sessionvault")
	a.git("config", "merge.sessionvault.driver", vault.FallbackMergeDriverCommand(gone))
	if ch := doctorCheckOf(t, a, "merge driver"); ch.OK || !strings.Contains(ch.Problem, gone) || !strings.HasSuffix(ch.Fix, "remote setup") {
		t.Errorf("doctor with the fallback gone: %+v", ch)
	}
	ch = doctorCheckOf(t, a.withEnv(bare, "HOME="+t.TempDir(), "SHELL=/bin/sh"), "merge driver")
	if ch.OK || !strings.Contains(ch.Problem, "not on PATH") || !strings.Contains(ch.Problem, gone+" is gone") || !strings.Contains(ch.Problem, "line merge") {
		t.Errorf("doctor with neither sessionvault on PATH nor the fallback: %+v", ch)
	}
	a.sv("remote", "setup")

	// A sessionvault on PATH without the merge-driver command.
	stub := filepath.Join(t.TempDir(), "sessionvault")
	if err := os.WriteFile(stub, []byte("#!/bin/sh\necho \"unknown command \\\"$1\\\"\" >&2\nexit 2\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	old := a.withEnv(bare+string(os.PathListSeparator)+filepath.Dir(stub), "HOME="+t.TempDir(), "SHELL=/bin/sh")
	ch = doctorCheckOf(t, old, "merge driver")
	if ch.OK || !strings.Contains(ch.Problem, stub) || !strings.Contains(ch.Problem, "cannot run the merge driver") {
		t.Fatalf("doctor with a sessionvault that has no merge driver on PATH: %+v", ch)
	}
	sh := exec.Command("sh", "-c", ch.Fix+" && command -v sessionvault")
	sh.Env = old.env
	if out, err := sh.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != a.bin {
		t.Errorf("sh -c %q: %v\n%s", ch.Fix, err, out)
	}
}

// vaultOnBranch makes a bare remote whose HEAD is main, a code repository's
// branch without a vault (main.go, and a .gitignore naming .env), and whose
// branch vault (and each of more) holds
// the vault made on clone a; it returns a and the remote's path.
func vaultOnBranch(t *testing.T, more ...string) (*clone, string) {
	t.Helper()
	bin := robustBinary(t)
	root := t.TempDir()
	env := append(gitEnv(root), pathWith(t, bin))
	bare := filepath.Join(root, "remote.git")
	run := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run(root, "init", "--quiet", "--bare", "--initial-branch=main", bare)
	code := filepath.Join(root, "code")
	run(root, "init", "--quiet", "--initial-branch=main", code)
	for name, content := range map[string]string{"main.go": "package main\n", ".gitignore": ".env\n"} {
		if err := os.WriteFile(filepath.Join(code, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run(code, "add", "main.go", ".gitignore")
	run(code, "commit", "--quiet", "-m", "code")
	run(code, "push", "--quiet", bare, "main")
	a := &clone{t: t, bin: bin, dir: filepath.Join(root, "a"), name: "a", env: env}
	a.sv("init", a.dir, "--project", "demo")
	a.git("remote", "add", "origin", bare)
	a.sv("start", "--objective", "on a branch of its own")
	for _, b := range append([]string{"vault"}, more...) {
		a.git("push", "--quiet", "origin", "HEAD:refs/heads/"+b)
	}
	return a, bare
}

// gitClone clones the remote into root/name as `git clone` does (the
// remote's HEAD checked out) and returns the clone.
func gitClone(t *testing.T, a *clone, bare, name string) *clone {
	t.Helper()
	c := &clone{t: t, bin: a.bin, dir: filepath.Join(filepath.Dir(a.dir), name), name: name, env: a.env}
	cmd := exec.Command("git", "clone", "--quiet", bare, c.dir)
	cmd.Env = a.env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	return c
}

// A remote whose HEAD names another branch than the vault's (main holds a
// code repository, the vault lives on branch vault): `remote setup` in a
// `git clone` of it checks out the vault's branch, tracking the remote's,
// and sets the clone up; status then shows the vault, and remote sync
// syncs that branch.
func TestRemoteSetupFindsTheVaultBranch(t *testing.T) {
	t.Parallel()
	a, bare := vaultOnBranch(t)
	c := gitClone(t, a, bare, "b")
	if _, err := os.Stat(filepath.Join(c.dir, "main.go")); err != nil {
		t.Fatalf("the clone has not checked out the remote's main: %v", err)
	}
	out := c.sv("remote", "setup", "--machine", "mb")
	if !strings.Contains(out, "checked out the vault's branch origin/vault as vault") {
		t.Errorf("remote setup does not say which branch it checked out:\n%s", out)
	}
	if got := c.git("rev-parse", "--abbrev-ref", "HEAD@{upstream}"); got != "origin/vault" {
		t.Errorf("the clone's branch tracks %q, want origin/vault", got)
	}
	if got, want := c.git("config", "merge.sessionvault.driver"), vault.FallbackMergeDriverCommand(c.bin); got != want {
		t.Errorf("merge driver %q, want %q", got, want)
	}
	if out := c.sv("status"); !strings.Contains(out, "on a branch of its own") {
		t.Errorf("status in the clone does not show the vault's session:\n%s", out)
	}
	c.sv("update", "from b")
	c.sv("remote", "sync")
	if got, want := a.git("ls-remote", "origin", "refs/heads/vault"), c.git("rev-parse", "HEAD"); !strings.HasPrefix(got, want) {
		t.Errorf("remote sync pushed %q to the remote's vault branch, want %s", got, want)
	}
	if got := a.git("ls-remote", "origin", "refs/heads/main"); strings.Contains(got, c.git("rev-parse", "HEAD")) {
		t.Errorf("remote sync pushed the vault onto main")
	}
	// Again: nothing to check out.
	if out := c.sv("remote", "setup"); strings.Contains(out, "checked out") {
		t.Errorf("remote setup run again:\n%s", out)
	}

	// From inside the clone, without --vault.
	d := gitClone(t, a, bare, "d")
	cmd := exec.Command(d.bin, "remote", "setup")
	cmd.Dir = d.dir
	cmd.Env = append(append([]string(nil), d.env...), "SESSIONVAULT_CONFIG_DIR="+filepath.Join(filepath.Dir(a.dir), "config"))
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "origin/vault") {
		t.Errorf("remote setup in the clone's folder: %v\n%s", err, out)
	}
	if !vault.HoldsVault(d.dir) {
		t.Errorf("remote setup in the clone's folder did not check out the vault")
	}
}

// The remote's HEAD names a branch it does not have: the clone checks out
// nothing, and `remote setup` checks out the vault's branch.
func TestRemoteSetupWithADanglingRemoteHead(t *testing.T) {
	t.Parallel()
	a, bare := vaultOnBranch(t)
	a.git("--git-dir", bare, "symbolic-ref", "HEAD", "refs/heads/gone")
	c := gitClone(t, a, bare, "b")
	c.sv("remote", "setup")
	if out := c.sv("status"); !strings.Contains(out, "on a branch of its own") {
		t.Errorf("status in the clone:\n%s", out)
	}
}

// Several branches hold a vault: `remote setup` names them and asks for
// --branch, changing nothing; with --branch it checks that one out. A
// branch that holds no vault is refused, naming those that do; a clone
// with changes not committed is not switched.
func TestRemoteSetupAsksForTheBranch(t *testing.T) {
	t.Parallel()
	a, bare := vaultOnBranch(t, "vault2")
	c := gitClone(t, a, bare, "b")
	out, err := c.try("remote", "setup")
	if err == nil || !strings.Contains(out, "E1693") || !strings.Contains(out, "origin/vault, origin/vault2") || !strings.Contains(out, "remote setup --branch vault`") {
		t.Fatalf("remote setup with two vault branches: %v\n%s", err, out)
	}
	if got := c.git("rev-parse", "--abbrev-ref", "HEAD"); got != "main" {
		t.Fatalf("the refused setup left branch %s checked out", got)
	}
	if out, err := c.try("remote", "setup", "--branch", "main"); err == nil || !strings.Contains(out, "no branch main of the remotes holds a vault") {
		t.Errorf("remote setup --branch main: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(c.dir, "main.go"), []byte("package main // edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := c.try("remote", "setup", "--branch", "vault2"); err == nil || !strings.Contains(out, "not committed") {
		t.Errorf("remote setup with an edit pending: %v\n%s", err, out)
	}
	c.git("checkout", "--quiet", "--", "main.go")
	c.sv("remote", "setup", "--branch", "vault2")
	if got := c.git("rev-parse", "--abbrev-ref", "HEAD@{upstream}"); got != "origin/vault2" {
		t.Errorf("the clone's branch tracks %q, want origin/vault2", got)
	}
	if out, err := c.try("remote", "setup", "--branch", "vault"); err == nil || !strings.Contains(out, "holds the vault on branch vault2 already") {
		t.Errorf("remote setup --branch vault on vault2: %v\n%s", err, out)
	}
	c.sv("status")
}
