package cli

import (
	"encoding/json"
	"net"
	"strings"
	"testing"

	"github.com/sessionvault/sessionvault/internal/errs"
)

// closedPort returns the address of a loopback port nothing listens on: a
// listener's, closed, so a connection to it is refused.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// The entry verbs' --json carries the state after the operation, as start's
// and end's do: the project, the version the commit made, the entry.
func TestEntryVerbsJSONCarryTheStateAfter(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	mustRun(t, v, "start", "--objective", "JSON state")
	for _, c := range []struct {
		argv    []string
		version float64
		check   func(st map[string]any) bool
	}{
		{[]string{"update", "Half way", "--progress", "40"}, 3, func(st map[string]any) bool {
			ups, _ := st["updates"].([]any)
			return st["progress"] == float64(40) && len(ups) == 1
		}},
		{[]string{"decide", "--title", "T", "--choice", "C", "--rationale", "R"}, 4, func(st map[string]any) bool {
			ds, _ := st["decisions"].([]any)
			return len(ds) == 1
		}},
		{[]string{"block", "CI is red"}, 5, func(st map[string]any) bool {
			bs, _ := st["blockers"].([]any)
			return len(bs) == 1
		}},
		{[]string{"resolve", "b-1"}, 6, func(st map[string]any) bool {
			bs, _ := st["blockers"].([]any)
			return len(bs) == 1 && bs[0].(map[string]any)["status"] == "resolved"
		}},
	} {
		out := mustRun(t, v, append([]string{"--json"}, c.argv...)...)
		var res struct {
			Data struct {
				State map[string]any `json:"state"`
			} `json:"data"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("%v: %v\n%s", c.argv, err, out)
		}
		st := res.Data.State
		if st["project"] != "demo" || st["objective"] != "JSON state" || st["status"] != "active" || st["version"] != c.version || !c.check(st) {
			t.Errorf("%s --json: the state is not the one after it:\n%s", c.argv[0], out)
		}
	}
}

// A required flag left out is a usage error (exit 2, INVALID_COMMAND) that
// names it, before anything is read or written; given but empty, it is the
// operation's own refusal (exit 1, UPDATE_VALIDATION_FAILED).
func TestMissingRequiredFlagsAreUsageErrors(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	head := func() string { return strings.TrimSpace(git(t, v, "rev-parse", "HEAD")) }
	missing := func(flag string, argv ...string) {
		t.Helper()
		before := head()
		out, errOut, code := run(t, v, argv...)
		if code != 2 || !strings.Contains(errOut, "needs --"+flag) || !strings.Contains(errOut, "["+errs.InvalidCommand.ID+" "+errs.InvalidCommand.Name+"]") {
			t.Errorf("%v: exit %d, want 2 naming --%s\n%s%s", argv, code, flag, out, errOut)
		}
		if head() != before {
			t.Errorf("%v made a commit", argv)
		}
	}
	missing("objective", "start")
	missing("objective", "start", "--linear", "ENG-1")
	if _, errOut, code := run(t, v, "start", "--objective", " "); code != 1 || !strings.Contains(errOut, "the objective must not be empty [E1612 UPDATE_VALIDATION_FAILED]") {
		t.Errorf("start --objective ' ': exit %d\n%s", code, errOut)
	}
	if out, _, code := run(t, v, "--json", "start"); code != 2 || !strings.Contains(out, `"code": "E1693"`) || !strings.Contains(out, "start needs --objective") {
		t.Errorf("--json start: exit %d\n%s", code, out)
	}

	mustRun(t, v, "start", "--objective", "Flags")
	before := head()
	if _, errOut, code := run(t, v, "decide", "use a split index"); code != 2 || !strings.Contains(errOut, `sessionvault decide takes no arguments, only flags: got "use a split index" (see `+"`sessionvault decide --help`)") || head() != before {
		t.Errorf("decide with an argument: exit %d\n%s", code, errOut)
	}
	missing("title", "decide", "--choice", "C", "--rationale", "R")
	missing("choice", "decide", "--title", "T", "--rationale", "R")
	missing("rationale", "decide", "--title", "T", "--choice", "C")
	if _, errOut, code := run(t, v, "decide", "--title", "T", "--choice", "C", "--rationale", ""); code != 1 || !strings.Contains(errOut, "the rationale must not be empty") {
		t.Errorf("decide --rationale '': exit %d\n%s", code, errOut)
	}
	missing("to", "agent", "handoff", "--reason", "x")
	missing("reason", "agent", "handoff", "--to", "qa")
	missing("confidence", "verdict", "qa", "approve", "--reasoning", "fine")
	missing("reasoning", "verdict", "qa", "approve", "--confidence", "0.8")
	missing("action", "conflicts", "resolve", "cf-1")
	if _, errOut, code := run(t, v, "rollback"); code != 2 || !strings.Contains(errOut, "rollback needs --checkpoint ID, or --version N with --task TASK") {
		t.Errorf("rollback: exit %d\n%s", code, errOut)
	}
	if _, errOut, code := run(t, v, "rollback", "--version", "2"); code != 2 || !strings.Contains(errOut, "--version N needs --task") {
		t.Errorf("rollback --version 2: exit %d\n%s", code, errOut)
	}
}

// A git remote that cannot be reached (a name that does not resolve, a
// refused connection) is NETWORK_UNAVAILABLE, not a failed sync; what was
// pending is committed here all the same.
func TestUnreachableRemoteIsNetworkUnavailable(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	mustRun(t, v, "start", "--objective", "Offline")
	git(t, v, "remote", "add", "origin", "http://nonexistent.invalid/vault.git")
	for _, url := range []string{"http://nonexistent.invalid/vault.git", "http://" + closedPort(t) + "/vault.git"} {
		git(t, v, "remote", "set-url", "origin", url)
		out, errOut, code := run(t, v, "remote", "sync")
		if code != 1 || !strings.Contains(errOut, "the remote cannot be reached") || !strings.Contains(errOut, "[E1657 NETWORK_UNAVAILABLE]") {
			t.Errorf("remote sync to %s: exit %d\n%s%s", url, code, out, errOut)
		}
		out, _, _ = run(t, v, "--json", "remote", "sync")
		if !strings.Contains(out, `"code": "E1657"`) {
			t.Errorf("remote sync --json to %s:\n%s", url, out)
		}
	}
	assertClean(t, v)
	// A remote that is not a repository is still a failed sync.
	git(t, v, "remote", "set-url", "origin", t.TempDir()+"/none.git")
	if _, errOut, code := run(t, v, "remote", "sync"); code != 1 || !strings.Contains(errOut, "[E1654 REMOTE_SYNC_FAILED]") {
		t.Errorf("remote sync to a missing repository: exit %d\n%s", code, errOut)
	}
}

// Linear that cannot be reached is NETWORK_UNAVAILABLE for `linear check`
// and `sync linear` (which stops: every session would fail the same way).
// Not parallel: LINEAR_API_URL is the process's environment.
func TestUnreachableLinearIsNetworkUnavailable(t *testing.T) {
	v, _ := linkedVault(t, 2)
	for _, url := range []string{"http://nonexistent.invalid/graphql", "http://" + closedPort(t) + "/graphql"} {
		t.Setenv("LINEAR_API_URL", url)
		for _, argv := range [][]string{{"linear", "check"}, {"sync", "linear"}} {
			out, errOut, code := run(t, v, argv...)
			if code != 1 || !strings.Contains(errOut, "Linear ("+url+") cannot be reached") || !strings.Contains(errOut, "[E1657 NETWORK_UNAVAILABLE]") {
				t.Errorf("%v with Linear at %s: exit %d\n%s%s", argv, url, code, out, errOut)
			}
		}
	}
	assertClean(t, v)
}
