package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(cleanupM{m}, map[string]func(){
		"sessionvault": func() { os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// cleanupM runs the tests, then removes the binary the robustness tests built.
type cleanupM struct{ m *testing.M }

func (c cleanupM) Run() int {
	code := c.m.Run()
	if robustBin != "" {
		os.RemoveAll(filepath.Dir(robustBin))
	}
	return code
}

// TestScripts runs the end-to-end CLI scripts in testdata/script: whole
// lifecycles against a real vault on disk, checked with the real git CLI.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("HOME", env.WorkDir)
			env.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			env.Setenv("GIT_AUTHOR_NAME", "script")
			env.Setenv("GIT_AUTHOR_EMAIL", "script@example.invalid")
			env.Setenv("GIT_COMMITTER_NAME", "script")
			env.Setenv("GIT_COMMITTER_EMAIL", "script@example.invalid")
			return nil
		},
	})
}
