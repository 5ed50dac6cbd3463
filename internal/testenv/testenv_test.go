package testenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunPutsTempDirsInTheFolderNamed checks that the tests' temporary
// folders go under the folder SESSIONVAULT_TEST_TMPDIR names, in a folder
// of their own that is removed afterwards, and that TMPDIR comes back.
func TestRunPutsTempDirsInTheFolderNamed(t *testing.T) {
	base := t.TempDir()
	t.Setenv(EnvTmpDir, base)
	t.Setenv("TMPDIR", "/somewhere/else")
	var seen string
	code := Run(fakeM(func() int {
		seen = os.TempDir()
		return 7
	}))
	if code != 7 {
		t.Fatalf("Run returned %d, want m.Run's 7", code)
	}
	if filepath.Dir(seen) != base || !strings.HasPrefix(filepath.Base(seen), "sessionvault-test-") {
		t.Fatalf("the tests' temporary folder was %s, want a folder of its own in %s", seen, base)
	}
	if _, err := os.Stat(seen); !os.IsNotExist(err) {
		t.Fatalf("%s is left behind: %v", seen, err)
	}
	if os.Getenv("TMPDIR") != "/somewhere/else" {
		t.Fatalf("TMPDIR = %q after Run, want it back", os.Getenv("TMPDIR"))
	}
}

// fakeM is a testing.M whose Run is f (testing.M's Run cannot be faked, so
// Run takes the interface testing.M satisfies).
type fakeM func() int

func (f fakeM) Run() int { return f() }

// TestSizeFollowsTheFullRun checks that a randomised test gets its full
// size only when SESSIONVAULT_TEST_FULL=1, as `make test` sets it.
func TestSizeFollowsTheFullRun(t *testing.T) {
	for env, want := range map[string]int{"": 10, "0": 10, "1": 40} {
		t.Setenv(EnvFull, env)
		if got := Size(10, 40); got != want {
			t.Errorf("%s=%q: Size(10, 40) = %d, want %d", EnvFull, env, got, want)
		}
	}
}
