package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/sessionvault/sessionvault/internal/vault"
)

// setupState is what `remote setup` must leave as it was in a checkout it
// refuses: the branch and its commit, the local branches, every file git
// sees (ignored ones included), the merge driver's setting, and the
// remote's branches.
func setupState(t *testing.T, c *clone, bare string) string {
	t.Helper()
	driver, _ := exec.Command("git", "-C", c.dir, "config", "merge.sessionvault.driver").Output()
	return strings.Join([]string{
		c.git("symbolic-ref", "HEAD"),
		c.git("rev-parse", "HEAD"),
		c.git("for-each-ref", "--format=%(refname) %(objectname)", "refs/heads"),
		c.git("status", "--porcelain", "--ignored", "--untracked-files=all"),
		string(driver),
		c.git("ls-remote", bare),
	}, "\n")
}

// `remote setup` run in a code repository's checkout (the remote's main
// holds the code, its branch vault the vault) never switches it to the
// vault's branch while it holds anything of its own: a file its .gitignore
// keeps out of git (.env) would be left in the vault's folder, where the
// vault's .gitignore does not hide it, and the next remote sync would push
// it. Setup refuses, changing nothing, and names the commands that clone
// the vault's branch into a folder of its own, which work when pasted.
func TestRemoteSetupLeavesACodeCheckoutAlone(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("the commands are pasted into sh here")
	}
	a, bare := vaultOnBranch(t)
	for _, tc := range []struct {
		name, says string
		own        func(c *clone)
	}{
		{"ignored", "files git ignores (.env)", func(c *clone) {
			if err := os.WriteFile(filepath.Join(c.dir, ".env"), []byte("API_KEY=secret\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"untracked", "untracked files (notes.txt)", func(c *clone) {
			if err := os.WriteFile(filepath.Join(c.dir, "notes.txt"), []byte("mine\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"commit", "a commit on no remote branch", func(c *clone) {
			c.git("commit", "--quiet", "--allow-empty", "-m", "work in progress")
		}},
	} {
		c := gitClone(t, a, bare, "code-"+tc.name)
		tc.own(c)
		before := setupState(t, c, bare)

		// From inside the checkout, as a person would type it, and with --vault.
		cmd := exec.Command(c.bin, "remote", "setup")
		cmd.Dir = c.dir
		cmd.Env = append(append([]string(nil), c.env...), "SESSIONVAULT_CONFIG_DIR="+filepath.Join(filepath.Dir(a.dir), "config"))
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "not a fresh clone") || !strings.Contains(string(out), tc.says) || !strings.Contains(string(out), "nothing was changed") {
			t.Fatalf("%s: remote setup in the checkout: %v\n%s", tc.name, err, out)
		}
		if out, err := c.try("remote", "setup", "--branch", "vault"); err == nil || !strings.Contains(out, tc.says) {
			t.Fatalf("%s: remote setup --vault --branch vault: %v\n%s", tc.name, err, out)
		}
		if after := setupState(t, c, bare); after != before {
			t.Fatalf("%s: the refused setup changed the checkout or the remote:\nbefore:\n%s\nafter:\n%s", tc.name, before, after)
		}
		// Nor does remote sync push anything from it.
		if out, err := c.try("remote", "sync"); err == nil {
			t.Fatalf("%s: remote sync in the code checkout succeeded:\n%s", tc.name, out)
		}
		if after := setupState(t, c, bare); after != before {
			t.Fatalf("%s: remote sync changed the checkout or the remote:\nbefore:\n%s\nafter:\n%s", tc.name, before, after)
		}
		if tc.name != "ignored" {
			continue
		}

		// The commands it names, pasted: a clone of the vault's branch of
		// its own, set up; the secret stays in the code checkout.
		msg := string(out)
		var pasted []string
		for _, part := range strings.Split(msg, "`")[1:] {
			if strings.HasPrefix(part, "git clone -b ") || strings.HasPrefix(part, "sessionvault --vault ") {
				pasted = append(pasted, part)
			}
		}
		if len(pasted) != 2 || !strings.Contains(pasted[0], "git clone -b vault "+bare+" ") {
			t.Fatalf("the commands to paste in %q: %q", msg, pasted)
		}
		sh := exec.Command("sh", "-c", strings.Join(pasted, " && "))
		sh.Env = c.env
		if out, err := sh.CombinedOutput(); err != nil {
			t.Fatalf("sh -c %q: %v\n%s", strings.Join(pasted, " && "), err, out)
		}
		dir := filepath.Join(filepath.Dir(c.dir), filepath.Base(c.dir)+"-vault")
		if !vault.HoldsVault(dir) {
			t.Fatalf("%s holds no vault after %q", dir, pasted)
		}
		v := &clone{t: t, bin: c.bin, dir: dir, name: "vault clone", env: c.env}
		v.sv("update", "from the clone of its own")
		v.sv("remote", "sync")
		if _, err := os.Stat(filepath.Join(dir, ".env")); err == nil {
			t.Errorf("the new clone has a .env")
		}
		show := exec.Command("git", "--git-dir", bare, "show", "vault:.env")
		if out, err := show.CombinedOutput(); err == nil {
			t.Errorf("the remote's vault branch holds .env:\n%s", out)
		}
		if got, err := os.ReadFile(filepath.Join(c.dir, ".env")); err != nil || string(got) != "API_KEY=secret\n" {
			t.Errorf("the code checkout's .env: %q, %v", got, err)
		}
	}
}

// bareDirs is a PATH of the folders holding git and sh alone (skipping the
// test when either holds a sessionvault): what a program started from the
// macOS Dock gets.
func bareDirs(t *testing.T) string {
	t.Helper()
	var dirs []string
	for _, p := range []string{"git", "sh"} {
		found, err := exec.LookPath(p)
		if err != nil {
			t.Skip(err)
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(found), "sessionvault")); err == nil {
			t.Skipf("%s holds a sessionvault", filepath.Dir(found))
		}
		dirs = append(dirs, filepath.Dir(found))
	}
	return strings.Join(dirs, string(os.PathListSeparator))
}

// setUpBy runs `remote setup` in c with a copy of c's binary at a path of
// its own, as an install that is later moved away, and returns that path.
func setUpBy(t *testing.T, c *clone) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "my tools", "sessionvault")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	copyFile(t, c.bin, bin)
	cc := *c
	cc.bin = bin
	cc.sv("remote", "setup")
	return bin
}

// writeNote commits content as rel in c, as a person's edit made outside
// sessionvault (Obsidian).
func writeNote(t *testing.T, c *clone, rel, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(c.dir, filepath.FromSlash(rel)), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	c.git("add", rel)
	c.git("commit", "--quiet", "-m", "edit "+rel)
}

// The merge driver `remote setup` registers merges a git pull run by a
// program whose PATH lacks sessionvault (Obsidian Git in Obsidian started
// from the macOS Dock): with the binary that ran remote setup while it is
// there (notes merged by entry), else with git's line merge, so that
// nothing either machine wrote is lost, and never by leaving a note
// conflicted with one side only. With sessionvault on PATH, that one runs.
func TestMergeDriverFallsBack(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("PATH is narrowed to git's and sh's folders here")
	}
	bare := "PATH=" + bareDirs(t)
	clones := newRemoteVault(t, 2)
	a, b := clones[0], clones[1]
	pull := func(c *clone) (string, error) {
		cmd := exec.Command("git", "-C", c.dir, "pull", "--no-rebase", "--no-edit", "--quiet", "origin", "main")
		cmd.Env = append(append([]string(nil), c.env...), bare)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	// The binary that set b up is still there: it merges, by entry.
	setUpBy(t, b)
	a.sv("update", "from a")
	b.sv("update", "from b")
	a.git("push", "--quiet", "origin", "main")
	if out, err := pull(b); err != nil {
		t.Fatalf("git pull without sessionvault on PATH, its binary there: %v\n%s", err, out)
	}
	state := b.read(statePath)
	for _, u := range []string{"from a ^", "from b ^"} {
		if n := strings.Count(state, u); n != 1 {
			t.Errorf("%q is in b's current state %d times after git pull", u, n)
		}
	}
	if strings.Contains(state, "<<<<<<<") {
		t.Errorf("conflict markers after git pull with the fallback binary:\n%s", state)
	}
	b.sv("remote", "sync")
	a.sv("remote", "sync")

	// Neither on PATH nor where it was: git's line merge. Two edits of
	// separate lines merge whole; two of the same line are both kept,
	// between conflict markers.
	gone := setUpBy(t, b)
	if err := os.RemoveAll(filepath.Dir(gone)); err != nil {
		t.Fatal(err)
	}
	lines := "one\ntwo\nthree\nfour\nfive\nsix\nseven\n"
	writeNote(t, a, "demo/plan.md", lines)
	writeNote(t, a, "demo/ideas.md", lines)
	a.git("push", "--quiet", "origin", "main")
	if out, err := pull(b); err != nil {
		t.Fatalf("git pull of a new note: %v\n%s", err, out)
	}
	writeNote(t, a, "demo/plan.md", strings.Replace(lines, "two", "two, by a", 1))
	writeNote(t, b, "demo/plan.md", strings.Replace(lines, "six", "six, by b", 1))
	a.git("push", "--quiet", "origin", "main")
	if out, err := pull(b); err != nil {
		t.Fatalf("git pull without sessionvault anywhere: %v\n%s", err, out)
	}
	if got, want := b.read("demo/plan.md"), "one\ntwo, by a\nthree\nfour\nfive\nsix, by b\nseven\n"; got != want {
		t.Errorf("plan.md after the line merge = %q, want %q", got, want)
	}
	writeNote(t, a, "demo/ideas.md", strings.Replace(lines, "four", "four, by a", 1))
	writeNote(t, b, "demo/ideas.md", strings.Replace(lines, "four", "four, by b", 1))
	a.git("push", "--quiet", "origin", "main")
	if out, err := pull(b); err == nil {
		t.Fatalf("git pull of one line changed on both sides merged cleanly:\n%s", out)
	}
	got := b.read("demo/ideas.md")
	for _, want := range []string{"<<<<<<< ours\nfour, by b\n", "=======\nfour, by a\n>>>>>>> theirs\n", "one\n", "seven\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("ideas.md after the line merge's conflict lacks %q:\n%s", want, got)
		}
	}
	b.git("merge", "--abort")
	writeNote(t, b, "demo/ideas.md", strings.Replace(lines, "four", "four, by a", 1)) // settled by hand

	// sessionvault on PATH runs, the fallback there or not.
	ran := filepath.Join(t.TempDir(), "ran")
	wrapper := filepath.Join(t.TempDir(), "sessionvault")
	script := "#!/bin/sh\necho \"$@\" >> '" + ran + "'\nexec '" + b.bin + "' \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	a.sv("update", "again from a")
	b.sv("update", "again from b")
	a.git("push", "--quiet", "origin", "main")
	cmd := exec.Command("git", "-C", b.dir, "pull", "--no-rebase", "--no-edit", "--quiet", "origin", "main")
	cmd.Env = append(append([]string(nil), b.env...), bare+string(os.PathListSeparator)+filepath.Dir(wrapper))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git pull with sessionvault on PATH: %v\n%s", err, out)
	}
	if log, err := os.ReadFile(ran); err != nil || !strings.Contains(string(log), "merge-driver ") || !strings.Contains(string(log), statePath) {
		t.Errorf("the sessionvault on PATH did not run the merge: %q, %v", log, err)
	}
	state = b.read(statePath)
	for _, u := range []string{"again from a ^", "again from b ^"} {
		if n := strings.Count(state, u); n != 1 {
			t.Errorf("%q is in b's current state %d times after git pull", u, n)
		}
	}
}
