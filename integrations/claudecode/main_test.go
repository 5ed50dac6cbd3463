package claudecode

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sessionvault/sessionvault/internal/vault"
)

func runMain(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(args, strings.NewReader(stdin), &out, &errb, openVault)
	return code, out.String(), errb.String()
}

// openVault wires the handler as internal/cli does for `sessionvault hook`.
func openVault(vaultDir, project, cwd string) Handler {
	dir, project, err := vault.Locate(vaultDir, project, cwd)
	if err != nil {
		return NewHandler(nil, project, Unlinked(err, cwd))
	}
	v, err := vault.Open(dir)
	return NewHandler(v, project, err)
}

// Without a readable vault the hook still answers: read-only tools pass,
// everything else is denied (fail closed); bad input is denied too.
func TestMainFailsClosedWithoutAVault(t *testing.T) {
	t.Setenv("SESSIONVAULT_VAULT", "")
	nowhere := t.TempDir()
	cases := []struct {
		name, stdin string
		args        []string
		code        int
		stderr      string
	}{
		{"read passes", `{"tool_name":"Read","tool_input":{}}`, []string{"--vault", nowhere, "pre-tool-use"}, 0, ""},
		{"grep passes", `{"tool_name":"Grep","tool_input":{}}`, []string{"--vault=" + nowhere, "hook", "pre-tool-use"}, 0, ""},
		{"edit denied", `{"tool_name":"Edit","tool_input":{}}`, []string{"--vault", nowhere, "pre-tool-use"}, 2, "is not a vault"},
		{"writing bash denied", `{"tool_name":"Bash","tool_input":{"command":"go test ./..."}}`, []string{"--vault", nowhere, "pre-tool-use"}, 2, "failing closed"},
		{"reading bash passes", `{"tool_name":"Bash","tool_input":{"command":"git status && ls"}}`, []string{"--vault", nowhere, "pre-tool-use"}, 0, ""},
		{"a person's command denied", `{"tool_name":"Bash","tool_input":{"command":"sessionvault mode set dis''abled"}}`, []string{"--vault", nowhere, "pre-tool-use"}, 2, "person's command"},
		{"no tool named", `{}`, []string{"--vault", nowhere, "pre-tool-use"}, 2, "names no tool"},
		{"garbage", `not json`, []string{"--vault", nowhere, "pre-tool-use"}, 2, "cannot be read"},
		{"stop never blocks without a vault", `{"stop_hook_active":false}`, []string{"--vault", nowhere, "stop"}, 0, ""},
		{"unknown event", `{}`, []string{"--vault", nowhere, "pre-tool"}, 2, "unknown hook"},
		{"missing flag value", `{}`, []string{"--vault"}, 2, "needs a value"},
	}
	for _, c := range cases {
		code, _, stderr := runMain(t, c.stdin, c.args...)
		if code != c.code || !strings.Contains(stderr, c.stderr) {
			t.Errorf("%s: exit %d, stderr %q; want %d and %q", c.name, code, stderr, c.code, c.stderr)
		}
	}
}
