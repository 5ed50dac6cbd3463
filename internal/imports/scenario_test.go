package imports

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/sessionvault/sessionvault/internal/importer"
	"github.com/sessionvault/sessionvault/internal/session"
	"github.com/sessionvault/sessionvault/internal/session/sessiontest"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// TestScenarios runs the import scenarios in testdata/scenario: each script
// gets a fresh vault in $WORK/vault (project demo, made as `sessionvault
// init` makes it) and drives the imports service in process with `sv`,
// under a clock the script sets with `now`. What a script checks is what a
// user sees: the notes, the commits, the outputs and the errors.
//
// Commands (besides testscript's own):
//
//	now TIME                  set the clock (RFC 3339; default 2026-11-23T10:00:00Z)
//	replace FILE OLD NEW      a person's edit: replace every match of the regular expression OLD (\n unescaped in NEW)
//	sv import-agents DIR      import an .agents/sessions tree; prints the counts, each skip, and "no commit"
//	sv archived ID            an archived session: its status, checklist items and decisions
//	sv sessions               every session: id, status, objective
//	sv check                  the vault's notes read back ("no problems", else each problem)
//	sv start --objective TEXT start a session
func TestScenarios(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/scenario",
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			for k, v := range map[string]string{"HOME": env.WorkDir, "GIT_CONFIG_NOSYSTEM": "1",
				"GIT_CONFIG_GLOBAL": filepath.Join(env.WorkDir, ".gitconfig-none"),
				"GIT_AUTHOR_NAME":   "script", "GIT_AUTHOR_EMAIL": "script@example.invalid",
				"GIT_COMMITTER_NAME": "script", "GIT_COMMITTER_EMAIL": "script@example.invalid"} {
				env.Setenv(k, v)
			}
			now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
			env.Values[clockKey{}] = &now
			root := filepath.Join(env.WorkDir, "vault")
			return sessiontest.MakeVault(root, "demo", func(v *vault.Vault, project string) error {
				_, err := open(v, &now).InitProject(project)
				return err
			})
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"now":     cmdNow,
			"replace": sessiontest.Replace,
			"sv":      cmdSV,
		},
	})
}

type clockKey struct{}

func open(v *vault.Vault, now *time.Time) *session.Service {
	s := session.New(v)
	s.Now = func() time.Time { return *now }
	return s
}

func cmdNow(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: now TIME")
	}
	t, err := time.Parse(time.RFC3339, args[0])
	ts.Check(err)
	*ts.Value(clockKey{}).(*time.Time) = t
}

func cmdSV(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) == 0 {
		ts.Fatalf("usage: sv OP [ARGS]")
	}
	v, err := vault.Open(ts.MkAbs("vault"))
	ts.Check(err)
	s := New(open(v, ts.Value(clockKey{}).(*time.Time)))
	var out strings.Builder
	err = runOp(ts, s, args[0], args[1:], &out)
	ts.Stdout().Write([]byte(out.String()))
	switch {
	case err != nil && !neg:
		ts.Fatalf("sv %s: %v", args[0], err)
	case err == nil && neg:
		ts.Fatalf("sv %s: unexpected success", args[0])
	case err != nil:
		fmt.Fprintln(ts.Stderr(), err)
	}
}

func runOp(ts *testscript.TestScript, s *Service, op string, args []string, w *strings.Builder) error {
	arg := func(i int) string {
		if i >= len(args) {
			ts.Fatalf("sv %s: missing argument %d", op, i+1)
		}
		return args[i]
	}
	switch op {
	case "import-agents":
		logs, skipped, err := importer.Scan(ts.MkAbs(arg(0)), nil)
		if err != nil {
			return err
		}
		var calls int
		rep, res, err := s.ImportSessions("demo", logs, func(done, total int) { calls++ })
		if err != nil {
			return err
		}
		if calls != len(logs) {
			return fmt.Errorf("progress called %d times for %d logs", calls, len(logs))
		}
		rep.Skipped = append(skipped, rep.Skipped...)
		fmt.Fprintf(w, "agents: %d files, %d sessions imported, %d decisions, %d unchanged, %d skipped\n",
			len(logs)+len(skipped), rep.Sessions, rep.Decisions, rep.Unchanged, len(rep.Skipped))
		for _, sk := range rep.Skipped {
			fmt.Fprintf(w, "skipped %s: %s\n", sk.Path, sk.Reason)
		}
		if res.Commit == "" {
			fmt.Fprintln(w, "no commit")
		}
		return nil
	case "archived":
		st, err := s.Archived("demo", arg(0))
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "status %s\n", st.Status)
		for _, c := range append(append([]session.CheckItem(nil), st.StartChecklist...), st.EndChecklist...) {
			box := "[ ]"
			if c.Done {
				box = "[x]"
			}
			fmt.Fprintf(w, "check %s %s %s %s\n", c.ID, box, c.Level, c.Step)
		}
		for _, d := range st.Decisions {
			fmt.Fprintf(w, "decision %s %s | choice: %s\n", d.ID, d.Title, d.Choice)
		}
		return nil
	case "sessions":
		sts, err := s.Sessions("demo")
		for _, st := range sts {
			fmt.Fprintf(w, "%s %s %s\n", st.Session, st.Status, st.Objective)
		}
		return err
	case "check":
		rep, err := s.Check(func(int) {})
		if err != nil {
			return err
		}
		for _, p := range rep.Problems {
			fmt.Fprintln(w, p.String())
		}
		if len(rep.Problems) > 0 {
			return fmt.Errorf("%d problems", len(rep.Problems))
		}
		fmt.Fprintln(w, "no problems")
		return nil
	case "start":
		if len(args) != 2 || args[0] != "--objective" {
			ts.Fatalf("usage: sv start --objective TEXT")
		}
		out, err := s.Start(session.StartOptions{Project: "demo", Objective: args[1]})
		if err == nil {
			fmt.Fprintf(w, "started %s\n", out.ID)
		}
		return err
	}
	ts.Fatalf("sv: unknown operation %q", op)
	return nil
}
