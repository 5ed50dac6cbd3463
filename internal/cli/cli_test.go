package cli

import (
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/sessionvault/sessionvault/integrations/claudecode/leanhook"
	"github.com/sessionvault/sessionvault/internal/testenv"
)

func TestMain(m *testing.M) {
	testscript.Main(cleanupM{m}, map[string]func(){
		"sessionvault":      func() { os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
		"sessionvault-hook": func() { os.Exit(leanhook.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// cleanupM runs the tests, then removes the binary the robustness tests built.
//
// Most tests here wait on git, fsync and the processes they start rather
// than on the CPU, so unless -test.parallel is given, up to parallelTests of
// them (scripts included) run at once; the default, GOMAXPROCS, is 2 on a
// small machine. Not more: the kill test's rounds have a time budget. On a
// whole run (no -test.run) the binary the robustness tests share is built in
// the background while the serial tests run.
type cleanupM struct{ m *testing.M }

const parallelTests = 8

func (c cleanupM) Run() int {
	flag.Parse()
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if !set["test.parallel"] {
		flag.Set("test.parallel", strconv.Itoa(parallelTests))
	}
	if !set["test.run"] && !set["test.list"] {
		go robustBinOnce.Do(buildRobustBin)
	}
	code := testenv.Run(c.m)
	robustBinOnce.Do(func() {}) // wait for a build still running
	if robustBin != "" {
		os.RemoveAll(filepath.Dir(robustBin))
	}
	return code
}

// TestScripts runs the end-to-end CLI scripts in testdata/script: whole
// lifecycles against a real vault on disk, checked with the real git CLI.
func TestScripts(t *testing.T) {
	t.Parallel()
	testscript.Run(t, testscript.Params{
		Dir:   "testdata/script",
		Setup: scriptEnv("sessionvault"),
		Cmds:  scriptCmds(),
	})
}

// TestScriptsLeanHook runs the scripts that answer hooks again with the lean
// sessionvault-hook binary (what `hooks install` wires) in place of
// `sessionvault hook`: it decides from the signed facts cache when it can and
// hands the rest to sessionvault, found on PATH; every answer must be the
// same.
func TestScriptsLeanHook(t *testing.T) {
	t.Parallel()
	var files []string
	for _, f := range []string{"hooks", "hooks_tool", "forged_ticks", "agent_edits", "hooks_lean", "command_history"} {
		files = append(files, filepath.Join("testdata", "script", f+".txtar"))
	}
	testscript.Run(t, testscript.Params{
		Files: files,
		Setup: scriptEnv("sessionvault-hook"),
	})
}

// scriptEnv sets up a script's environment: HOME in the work folder, a git
// identity, and $HOOKBIN, the binary that answers `$HOOKBIN hook EVENT`.
func scriptEnv(hookBin string) func(env *testscript.Env) error {
	return func(env *testscript.Env) error {
		env.Setenv("HOOKBIN", hookBin)
		env.Setenv("HOME", env.WorkDir)
		env.Setenv("GIT_CONFIG_NOSYSTEM", "1")
		env.Setenv("GIT_AUTHOR_NAME", "script")
		env.Setenv("GIT_AUTHOR_EMAIL", "script@example.invalid")
		env.Setenv("GIT_COMMITTER_NAME", "script")
		env.Setenv("GIT_COMMITTER_EMAIL", "script@example.invalid")
		return nil
	}
}
