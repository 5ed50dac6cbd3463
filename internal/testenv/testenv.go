// Package testenv sets up the process a package's tests run in: their
// temporary folders — the vaults, clones and repositories the tests make
// with t.TempDir — go to memory (a fresh folder under /dev/shm) when the
// machine has it. The code under test runs the same way there, fsync
// included; tmpfs makes the flush free, which on ext4 is most of what the
// tests spend (a journal commit per durable write). `make stress` and `make
// bench` still run on disk. SESSIONVAULT_TEST_TMPDIR=DIR puts the folders in
// DIR instead (e.g. /tmp, to run the tests on disk).
//
// Imported by tests only.
package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// EnvTmpDir names the folder the tests' temporary folders go to, instead
// of memory.
const EnvTmpDir = "SESSIONVAULT_TEST_TMPDIR"

// memory is where temporary folders go when the machine keeps one in
// memory (Linux's tmpfs).
const memory = "/dev/shm"

// Run runs m's tests (m is the package's *testing.M, or what wraps it)
// with $TMPDIR set to a fresh folder in memory (or under
// $SESSIONVAULT_TEST_TMPDIR), which it removes afterwards, and returns
// m.Run's exit code. Where neither is usable, the tests run with the
// system's temporary folder, as without it.
func Run(m interface{ Run() int }) int {
	base := os.Getenv(EnvTmpDir)
	if base == "" {
		if fi, err := os.Stat(memory); err == nil && fi.IsDir() {
			base = memory
		}
	}
	if base == "" {
		return m.Run()
	}
	dir, err := os.MkdirTemp(base, "sessionvault-test-")
	if err != nil {
		return m.Run()
	}
	defer os.RemoveAll(dir)
	// Readable by all, as the system's temporary folder is: a test that
	// runs a command as another user (nobody) reaches its files.
	_ = os.Chmod(dir, 0o755)
	old, had := os.LookupEnv("TMPDIR")
	if err := os.Setenv("TMPDIR", dir); err != nil {
		return m.Run()
	}
	defer func() {
		if had {
			_ = os.Setenv("TMPDIR", old)
		} else {
			_ = os.Unsetenv("TMPDIR")
		}
	}()
	return m.Run()
}

// EnvFull, set to 1 (`make test` sets it), asks for the full run: the
// randomised tests at their full sizes (100,000 note merges, 40 rounds of
// two machines' syncs, ...) rather than the quick run's share.
const EnvFull = "SESSIONVAULT_TEST_FULL"

// Full reports whether this is the full run (EnvFull is set to 1).
func Full() bool { return os.Getenv(EnvFull) == "1" }

// Size is full in the full run, else quick: a randomised test's size.
func Size(quick, full int) int {
	if Full() {
		return full
	}
	return quick
}

// Home makes dir/home the home folder of a test that runs sessionvault or
// git as a person would, with nothing of the machine's: HOME and
// XDG_CONFIG_HOME point into it, git reads no system or global config, and
// commits are made as "test <test@example.invalid>". It returns the
// folder; the environment is put back when t ends.
func Home(t testing.TB, dir string) string {
	t.Helper()
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(home, ".gitconfig-none"))
	for _, k := range []string{"GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"} {
		t.Setenv(k, "test")
	}
	for _, k := range []string{"GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"} {
		t.Setenv(k, "test@example.invalid")
	}
	return home
}
