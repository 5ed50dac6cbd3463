package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// Each top-level command is listed under the name its Use gives it, so that
// a run of it builds it.
func TestCommandGroupsNameTheirCommands(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, g := range commandGroups() {
		for _, c := range g.cmds {
			if got := c.make(&app{}).Name(); got != c.name {
				t.Errorf("the command listed as %q is named %q", c.name, got)
			}
			if seen[c.name] {
				t.Errorf("%q is listed twice", c.name)
			}
			seen[c.name] = true
		}
	}
}

// commandToRun names the command only when nothing before it needs the
// whole tree.
func TestCommandToRun(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"update", "msg"}, "update"},
		{[]string{"--vault", "v", "--project", "p", "--op-id", "x", "--json", "task", "new", "a"}, "task"},
		{[]string{"--vault=v", "--project=p", "--op-id=x", "status"}, "status"},
		{[]string{"--project", "update", "status"}, "status"},
		{[]string{"merge-driver", "a", "b", "c"}, "merge-driver"},
		{nil, ""},
		{[]string{"--help"}, ""},
		{[]string{"-h", "update"}, ""},
		{[]string{"--version"}, ""},
		{[]string{"--json=true", "update", "x"}, ""},
		{[]string{"--vault"}, ""},
		{[]string{"help", "update"}, ""},
		{[]string{"completion", "bash"}, ""},
		{[]string{"__complete", "up"}, ""},
		{[]string{"updat", "x"}, ""},
		{[]string{"claim", "x"}, ""},
	} {
		if got := commandToRun(tc.args); got != tc.want {
			t.Errorf("commandToRun(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
}

// A run that builds one command prints what the whole tree prints: every
// command's help, and the usage errors of a group run without its command
// or with an unknown one, or of an unknown flag.
func TestOneCommandTreeAnswersAsTheWholeTree(t *testing.T) {
	t.Parallel()
	var paths [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		paths = append(paths, path)
		for _, sub := range c.Commands() {
			walk(sub, append(append([]string(nil), path...), sub.Name()))
		}
	}
	for _, top := range (&app{}).rootCommand("").Commands() {
		walk(top, []string{top.Name()})
	}
	if len(paths) < 80 {
		t.Fatalf("only %d commands found", len(paths))
	}
	whole := func(args []string) (string, string, int) {
		var out, errb bytes.Buffer
		a := &app{stdout: &out, stderr: &errb, stdin: strings.NewReader("")}
		root := a.rootCommand("")
		root.SetArgs(args)
		root.SetIn(a.stdin)
		root.SetOut(&out)
		root.SetErr(&errb)
		err := root.Execute()
		code := a.exit
		if err != nil {
			code = a.fail(err)
		}
		return out.String(), errb.String(), code
	}
	ran := 0
	for _, p := range paths {
		if p[0] == "help" || p[0] == "completion" {
			continue // not a command of ours: the whole tree answers it
		}
		cases := [][]string{append(append([]string(nil), p...), "--help"), append(append([]string(nil), p...), "--no-such-flag")}
		if len(p) == 1 {
			cases = append(cases, p, append(append([]string(nil), p...), "no-such-command"))
		}
		for _, args := range cases {
			if len(args) == len(p) || args[len(args)-1] == "no-such-command" {
				// a group's usage error; a leaf would run: only groups
				if c, _, err := (&app{}).rootCommand("").Find(p); err != nil || !c.HasSubCommands() {
					continue
				}
			}
			args = append([]string{"--vault", t.TempDir()}, args...)
			if commandToRun(args) == "" {
				t.Fatalf("%q builds the whole tree", args)
			}
			wantOut, wantErr, wantCode := whole(args)
			var out, errb bytes.Buffer
			code := Main(args, strings.NewReader(""), &out, &errb)
			if out.String() != wantOut || errb.String() != wantErr || code != wantCode {
				t.Errorf("%q: one command's tree answers (exit %d)\n%s%s\nthe whole tree (exit %d)\n%s%s", args, code, out.String(), errb.String(), wantCode, wantOut, wantErr)
			}
			ran++
		}
	}
	if ran < 2*len(paths)-20 {
		t.Fatalf("only %d runs compared for %d commands", ran, len(paths))
	}
}
