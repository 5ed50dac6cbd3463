package session

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/markdown"
	"github.com/sessionvault/sessionvault/internal/protocol"
	"github.com/sessionvault/sessionvault/internal/session/sessiontest"
	"github.com/sessionvault/sessionvault/internal/testenv"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// TestMain lets more scenarios run at once than the default -parallel
// (GOMAXPROCS): they spend much of their time waiting — on git, and on the
// settle wait of a note that does not parse (two seconds) — not computing.
// An explicit -parallel is kept.
func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", "16")
	}
	os.Exit(testenv.Run(m))
}

// TestScenarios runs the domain-level scenarios in testdata/scenario: each
// script gets a fresh vault in $WORK/vault (project demo, made as `sessionvault
// init` makes it) and drives the Service in process with the `sv` command,
// under a clock the script sets with `now`. What a script checks is what a
// user sees: the notes, the outputs and the errors.
//
// Commands (besides testscript's own):
//
//	now TIME|+DURATION        set or advance the session clock (RFC 3339; default 2026-11-23T10:00:00Z)
//	mkvault DIR [PROJECT]     make another vault as init does (no project when PROJECT is omitted)
//	replace FILE OLD NEW      a person's edit: replace every match of the regular expression OLD
//	append FILE TEXT          a person's edit: append TEXT (\n and \t are unescaped)
//	sv [--vault DIR] [--project P] [--op-id ID] OP [ARGS] [--FLAG VALUE]...
//
// The operations and their flags are those of runOp and opFlags (update
// takes --at TIME, RFC 3339; decide --decided-by, --approved-by and
// --rejected-by, agent types).
//
// sv prints the result on stdout; on failure it prints "CODE NAME: message"
// on stderr (so `! sv ...` with `stderr` checks an expected error). $VAULT is
// the vault sv uses unless --vault is given.
func TestScenarios(t *testing.T) {
	t.Parallel()
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/scenario",
		WorkdirRoot:         memDir(t),
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("HOME", env.WorkDir)
			env.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			env.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(env.WorkDir, ".gitconfig-none"))
			env.Setenv("GIT_AUTHOR_NAME", "script")
			env.Setenv("GIT_AUTHOR_EMAIL", "script@example.invalid")
			env.Setenv("GIT_COMMITTER_NAME", "script")
			env.Setenv("GIT_COMMITTER_EMAIL", "script@example.invalid")
			sc := &scenario{now: defaultNow}
			env.Values[scenarioKey{}] = sc
			root := filepath.Join(env.WorkDir, "vault")
			env.Setenv("VAULT", root)
			return makeVault(root, "demo", sc.clock)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"now":     cmdNow,
			"mkvault": cmdMkvault,
			"replace": sessiontest.Replace,
			"append":  cmdAppend,
			"sv":      cmdSV,
		},
	})
}

// memDir returns a folder in memory (/dev/shm) for the scripts' work
// folders when the machine has one, else "" (the default temporary folder).
// Every operation syncs its notes and git objects to disk; in memory those
// syncs cost nothing, which keeps the scenarios fast on a slow disk.
func memDir(t *testing.T) string {
	dir, err := os.MkdirTemp("/dev/shm", "sessionvault-scenarios-")
	if err != nil {
		return ""
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

var defaultNow = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

type scenarioKey struct{}

// scenario is one script's state: its clock.
type scenario struct{ now time.Time }

func (sc *scenario) clock() time.Time { return sc.now }

func scenarioOf(ts *testscript.TestScript) *scenario {
	return ts.Value(scenarioKey{}).(*scenario)
}

// makeVault creates a vault in root the way `sessionvault init --project
// project` does (sessiontest.MakeVault), with the project's notes made by
// the session service under the clock now.
func makeVault(root, project string, now func() time.Time) error {
	return sessiontest.MakeVault(root, project, func(v *vault.Vault, project string) error {
		_, err := (&Service{V: v, MD: markdown.New(), Now: now}).InitProject(project)
		return err
	})
}

func cmdNow(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: now TIME|+DURATION")
	}
	sc := scenarioOf(ts)
	if d, ok := strings.CutPrefix(args[0], "+"); ok {
		dur, err := time.ParseDuration(d)
		ts.Check(err)
		sc.now = sc.now.Add(dur)
		return
	}
	t, err := time.Parse(time.RFC3339, args[0])
	ts.Check(err)
	sc.now = t
}

func cmdMkvault(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: mkvault DIR [PROJECT]")
	}
	project := ""
	if len(args) == 2 {
		project = args[1]
	}
	ts.Check(makeVault(ts.MkAbs(args[0]), project, scenarioOf(ts).clock))
}

func cmdAppend(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: append FILE TEXT")
	}
	f, err := os.OpenFile(ts.MkAbs(args[0]), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	ts.Check(err)
	_, err = f.WriteString(sessiontest.Unescape(args[1]))
	ts.Check(err)
	ts.Check(f.Close())
}

// svArgs are the arguments of one sv operation: positional arguments and
// flags (--name value, --name=value; boolean flags take no value).
type svArgs struct {
	pos   []string
	flags map[string][]string
}

var boolFlags = map[string]bool{"force": true, "run": true, "json": true, "fast": true}

// opFlags are the flags each operation takes (besides --vault, --project
// and --op-id): a misspelt flag fails the script instead of being ignored.
var opFlags = map[string][]string{
	"start":    {"objective", "epic", "linear", "branch", "commit", "continue", "force"},
	"update":   {"progress", "type", "tag", "at"},
	"decide":   {"title", "choice", "rationale", "alternative", "impact", "category", "decided-by", "approved-by", "rejected-by", "cite"},
	"block":    {"severity"},
	"resolve":  {"resolution"},
	"end":      {"summary", "next"},
	"recover":  {"session", "force"},
	"status":   {"json"},
	"verified": {"json", "fast"},
	"archived": {"json"},
	"evidence": {"file", "sha", "run", "dir"},
}

func parseArgs(args []string) (svArgs, error) {
	a := svArgs{flags: map[string][]string{}}
	for i := 0; i < len(args); i++ {
		name, ok := strings.CutPrefix(args[i], "--")
		if !ok {
			a.pos = append(a.pos, args[i])
			continue
		}
		if n, v, ok := strings.Cut(name, "="); ok {
			a.flags[n] = append(a.flags[n], v)
			continue
		}
		if boolFlags[name] {
			a.flags[name] = append(a.flags[name], "true")
			continue
		}
		if i+1 >= len(args) {
			return a, fmt.Errorf("flag --%s needs a value", name)
		}
		i++
		a.flags[name] = append(a.flags[name], args[i])
	}
	return a, nil
}

// check refuses a flag op does not take.
func (a *svArgs) check(op string) error {
	for n := range a.flags {
		switch n {
		case "vault", "project", "op-id":
			continue
		}
		if !slices.Contains(opFlags[op], n) {
			return fmt.Errorf("sv %s takes no flag --%s", op, n)
		}
	}
	return nil
}

func (a *svArgs) str(name string) string {
	if v := a.flags[name]; len(v) > 0 {
		return v[len(v)-1]
	}
	return ""
}

func (a *svArgs) list(name string) []string { return a.flags[name] }

func (a *svArgs) has(name string) bool {
	_, ok := a.flags[name]
	return ok
}

func (a *svArgs) arg(i int) string {
	if i < len(a.pos) {
		return a.pos[i]
	}
	return ""
}

func cmdSV(ts *testscript.TestScript, neg bool, args []string) {
	a, err := parseArgs(args)
	if err != nil || len(a.pos) == 0 {
		ts.Fatalf("usage: sv [--vault DIR] [--project P] [--op-id ID] OP [ARGS] [--FLAG VALUE]... (%v)", err)
	}
	op := a.pos[0]
	a.pos = a.pos[1:]
	ts.Check(a.check(op))
	root := ts.Getenv("VAULT")
	if d := a.str("vault"); d != "" {
		root = ts.MkAbs(d)
	}
	v, err := vault.Open(root)
	if err == nil {
		s := &Service{V: v, MD: markdown.New(), Now: scenarioOf(ts).clock, CodeDir: ts.MkAbs(".")}
		if id := a.str("op-id"); id != "" {
			s = s.WithOp(id)
		}
		err = runOp(ts, s, a.str("project"), op, &a)
	}
	if err != nil {
		fmt.Fprintln(ts.Stderr(), describeErr(err))
		if !neg {
			ts.Fatalf("sv %s: %v", op, describeErr(err))
		}
		return
	}
	if neg {
		ts.Fatalf("sv %s: unexpected success", op)
	}
}

func describeErr(err error) string {
	var e *errs.Error
	if errors.As(err, &e) {
		s := e.Code.ID + " " + e.Code.Name + ": " + e.Message
		keys := make([]string, 0, len(e.Details))
		for k := range e.Details {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if b, err := json.Marshal(e.Details[k]); err == nil {
				s += "\n  " + k + "=" + string(b)
			}
		}
		return s
	}
	return "error: " + err.Error()
}

// errUsage is a script's mistake, not an outcome under test.
type errUsage string

func (e errUsage) Error() string { return string(e) }

func runOp(ts *testscript.TestScript, s *Service, project, op string, a *svArgs) error {
	w := ts.Stdout()
	switch op {
	case "init":
		res, err := s.InitProject(a.arg(0))
		if err != nil {
			return err
		}
		printResult(w, res)
		return nil
	case "project":
		p, err := s.Project(project)
		if err != nil {
			return err
		}
		fmt.Fprintln(w, p)
		return nil
	case "start":
		out, err := s.Start(StartOptions{Project: project, Objective: a.str("objective"), Epic: a.str("epic"), Linear: a.str("linear"),
			Branch: a.str("branch"), Commit: a.str("commit"), Continue: a.str("continue"), Force: a.has("force")})
		return printOutcome(w, "started", out, err)
	case "update":
		o := UpdateOptions{Project: project, Message: a.arg(0), Type: a.str("type"), Tags: a.list("tag")}
		if p := a.str("progress"); p != "" {
			n, err := strconv.Atoi(p)
			if err != nil {
				return errUsage("--progress " + p)
			}
			o.Progress = &n
		}
		if at := a.str("at"); at != "" {
			t, err := time.Parse(time.RFC3339, at)
			if err != nil {
				return errUsage("--at " + at)
			}
			o.At = &t
		}
		out, err := s.Update(o)
		return printOutcome(w, "updated", out, err)
	case "decide":
		out, err := s.Decide(DecideOptions{Project: project, Title: a.str("title"), Choice: a.str("choice"), Rationale: a.str("rationale"),
			Alternatives: a.list("alternative"), Impact: a.str("impact"), Category: a.str("category"),
			DecidedBy: a.str("decided-by"), ApprovedBy: a.list("approved-by"), RejectedBy: a.list("rejected-by"), Cite: a.list("cite")})
		return printOutcome(w, "decided", out, err)
	case "block":
		out, err := s.Block(project, a.arg(0), a.str("severity"))
		return printOutcome(w, "blocked", out, err)
	case "resolve":
		out, err := s.Resolve(project, a.arg(0), a.str("resolution"))
		return printOutcome(w, "resolved", out, err)
	case "end":
		out, err := s.End(project, a.str("summary"), a.list("next"))
		if err == nil {
			fmt.Fprintf(w, "phase %s\n", out.Phase)
			for _, m := range out.Violations {
				fmt.Fprintf(w, "violation %s %s: %s\n", m.ID, m.Step, m.Do)
			}
		}
		return printOutcome(w, "ended", out, err)
	case "recover":
		out, err := s.Recover(project, a.str("session"), a.has("force"))
		return printOutcome(w, "recovered", out, err)
	case "heartbeat":
		st, err := s.Heartbeat(project)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "heartbeat %s %s\n", st.Session, fmtTime(st.LastSign))
		return nil
	case "touch":
		p, err := s.Project(project)
		if err != nil {
			return err
		}
		return s.HookHeartbeat(p)
	case "crash":
		p, err := s.Project(project)
		if err != nil {
			return err
		}
		id, err := s.MarkCrashed(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "marked %q\n", id)
		return nil
	case "status":
		st, err := s.Status(project)
		if err != nil {
			return err
		}
		return printState(w, st, a.has("json"))
	case "verified":
		p, err := s.Project(project)
		if err != nil {
			return err
		}
		var st State
		if a.has("fast") {
			st, err = s.VerifiedCached(p)
		} else {
			st, err = s.Verified(p)
		}
		if err != nil {
			return err
		}
		return printState(w, st, a.has("json"))
	case "archived":
		p, err := s.Project(project)
		if err != nil {
			return err
		}
		st, err := s.Archived(p, a.arg(0))
		if err != nil {
			return err
		}
		return printState(w, st, a.has("json"))
	case "sessions":
		sts, err := s.Sessions(project)
		if err != nil {
			return err
		}
		for _, st := range sts {
			fmt.Fprintf(w, "%s %s %s\n", st.Session, st.Status, st.Objective)
		}
		return nil
	case "evidence":
		dir := ts.MkAbs(".")
		if d := a.str("dir"); d != "" {
			dir = ts.MkAbs(d)
		}
		out, err := s.RecordEvidence(EvidenceOptions{Project: project, Item: a.arg(0), File: a.str("file"), SHA: a.str("sha"), Run: a.has("run"), Dir: dir})
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "recorded %s\n", out.ID)
		printResult(w, out.Result)
		return nil
	case "gate":
		p, err := s.Project(project)
		if err != nil {
			return err
		}
		st, err := s.Verified(p)
		if err != nil {
			return err
		}
		proto, err := s.Protocol(p)
		if err != nil {
			return err
		}
		phase := protocol.Phase(a.arg(0))
		missing := s.Gate(st, proto, phase)
		if len(missing) == 0 {
			fmt.Fprintf(w, "gate %s: passed\n", phase)
			return nil
		}
		var b strings.Builder
		for _, m := range missing {
			fmt.Fprintf(&b, "\n  %s %s: %s", m.ID, m.Step, s.Runnable(p, m.Do, ts.MkAbs(".")))
		}
		return errs.New(errs.GateNotPassed, "gate %s: %d MUST item(s) lack evidence:%s", phase, len(missing), b.String())
	case "guard":
		// The facts a PreToolUse decision reads (from the signed cache while
		// nothing they were read from changed).
		p, err := s.Project(project)
		if err != nil {
			return err
		}
		f, err := s.Guard(p)
		if err != nil {
			return err
		}
		if len(f.StartMissing) == 0 {
			fmt.Fprintln(w, "guard: the start gate passes")
		}
		for _, m := range f.StartMissing {
			fmt.Fprintf(w, "guard missing %s: %s\n", m.ID, m.Do)
		}
		return nil
	case "advance":
		out, err := s.AdvancePhase(project)
		if out.ID != "" {
			fmt.Fprintf(w, "phase %s\n", out.ID)
		}
		if err != nil {
			return err
		}
		printResult(w, out.Result)
		return nil
	case "mode":
		m, err := protocol.ParseMode(a.arg(0))
		if err != nil {
			return err
		}
		out, err := s.SetMode(project, m)
		return printOutcome(w, "mode", out, err)
	case "accept":
		res, signed, err := s.Accept(project)
		if err != nil {
			return err
		}
		printResult(w, res)
		if len(signed) == 0 {
			fmt.Fprintln(w, "signed: nothing changed")
		}
		for _, l := range signed {
			fmt.Fprintln(w, "signed: "+l)
		}
		return nil
	case "check":
		rep, err := s.Check(func(int) {})
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%d notes\n", rep.Notes)
		for _, p := range rep.Problems {
			fmt.Fprintln(w, p.String())
		}
		if len(rep.Problems) > 0 {
			return fmt.Errorf("%d problems", len(rep.Problems))
		}
		fmt.Fprintln(w, "no problems")
		return nil
	case "protocol":
		p, err := s.Project(project)
		if err != nil {
			return err
		}
		proto, err := s.Protocol(p)
		if err != nil {
			return err
		}
		fmt.Fprintln(w, "protocol "+proto.Path)
		for i, r := range proto.Start {
			fmt.Fprintf(w, "c-%d %s %s (%s)\n", i+1, r.Level, r.Step, checkRule(r.Check))
		}
		for i, r := range proto.End {
			fmt.Fprintf(w, "e-%d %s %s (%s)\n", i+1, r.Level, r.Step, checkRule(r.Check))
		}
		return nil
	case "tool":
		p, err := s.Project(project)
		if err != nil {
			return err
		}
		items, err := s.RecordToolCall(p, a.arg(0))
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "tool %s recorded for [%s]\n", a.arg(0), strings.Join(items, " "))
		return nil
	case "tool-before", "tool-after":
		p, err := s.Project(project)
		if err != nil {
			return err
		}
		if op == "tool-before" {
			return s.NoteToolCall(p, a.arg(0), "")
		}
		c, err := s.CommitToolEdits(p, a.arg(0), "")
		if err != nil {
			return err
		}
		if c == "" {
			fmt.Fprintln(w, "no agent edit")
		} else {
			fmt.Fprintln(w, "agent edit committed")
		}
		return nil
	case "sign-legacy":
		// The signature an earlier version wrote: one HMAC over the whole
		// current state, as text.
		p, err := s.Project(project)
		if err != nil {
			return err
		}
		d, err := s.currentDoc(p)
		if err != nil {
			return err
		}
		mac, err := s.mac(d)
		if err != nil {
			return err
		}
		return s.V.WriteState("signature-"+p, []byte(mac+"\n"))
	case "runnable":
		fmt.Fprintln(w, s.Runnable(project, a.arg(0), a.arg(1)))
		return nil
	}
	ts.Fatalf("sv: unknown operation %q", op)
	return nil
}

// printResult says what an operation did to the vault's history.
func printResult(w io.Writer, r vault.Result) {
	if r.PersonCommit != "" {
		fmt.Fprintln(w, "person edits committed")
	}
	if r.Commit == "" {
		fmt.Fprintln(w, "no commit")
	}
}

func printOutcome(w io.Writer, verb string, out Outcome, err error) error {
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s %s\n", verb, out.ID)
	if out.Repeat {
		fmt.Fprintln(w, "repeat")
	}
	printResult(w, out.Result)
	return nil
}

func fmtTime(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// printState prints a state as a person reads it: one line per field and
// per entry (or the JSON of State with --json).
func printState(w io.Writer, st State, asJSON bool) error {
	if asJSON {
		b, err := json.MarshalIndent(st, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintln(w, string(b))
		return nil
	}
	fmt.Fprintf(w, "status %s\n", st.Status)
	if st.Session != "" {
		fmt.Fprintf(w, "session %s\n", st.Session)
	}
	if st.LastSession != "" {
		fmt.Fprintf(w, "last session %s\n", st.LastSession)
	}
	if st.Objective != "" {
		fmt.Fprintf(w, "objective %s\n", st.Objective)
	}
	fmt.Fprintf(w, "progress %d%% (from %d%%)\n", st.Progress, st.ProgressStart)
	for _, kv := range [][2]string{{"epic", st.Epic}, {"linear", st.Linear}, {"branch", st.Branch}, {"commit", st.Commit}, {"continues", st.Continues}, {"mode", st.Mode}, {"summary", st.Summary}} {
		if kv[1] != "" {
			fmt.Fprintf(w, "%s %s\n", kv[0], kv[1])
		}
	}
	fmt.Fprintf(w, "started %s updated %s ended %s\n", fmtTime(st.Started), fmtTime(st.Updated), fmtTime(st.Ended))
	if st.LastSign != nil {
		fmt.Fprintf(w, "last sign of life %s\n", fmtTime(st.LastSign))
	}
	fmt.Fprintf(w, "version %d\n", st.Version)
	for _, c := range append(append([]CheckItem(nil), st.StartChecklist...), st.EndChecklist...) {
		box := "[ ]"
		switch {
		case c.Stale != "":
			box = "[~]"
		case c.Unverified:
			box = "[?]"
		case c.Done:
			box = "[x]"
		}
		line := fmt.Sprintf("check %s %s %s %s", c.ID, box, c.Level, c.Step)
		if c.Evidence != "" {
			line += " | evidence: " + c.Evidence
		}
		if c.Stale != "" {
			line += " | stale: " + c.Stale
		}
		fmt.Fprintln(w, line)
	}
	for _, u := range st.Updates {
		p := ""
		if u.Progress != nil {
			p = fmt.Sprintf(" %d%%", *u.Progress)
		}
		tags := ""
		if len(u.Tags) > 0 {
			tags = " tags=" + strings.Join(u.Tags, ",")
		}
		fmt.Fprintf(w, "update %s %s %s%s %s%s (line %d)\n", u.ID, fmtTime(&u.Time), u.Type, p, u.Message, tags, u.Line)
	}
	for _, d := range st.Decisions {
		fmt.Fprintf(w, "decision %s %s | choice: %s | why: %s | alternatives: %s | impact: %s | category: %s | note: %s\n",
			d.ID, d.Title, d.Choice, d.Rationale, strings.Join(d.Alternatives, "; "), d.Impact, d.Category, d.Note)
		for _, c := range d.Cites {
			fmt.Fprintf(w, "cites %s %s\n", d.ID, c)
		}
		if d.Stale != "" {
			fmt.Fprintf(w, "stale %s %s\n", d.ID, d.Stale)
		}
	}
	for _, b := range st.Blockers {
		line := fmt.Sprintf("blocker %s %s %s %s", b.ID, b.Status, b.Severity, b.Text)
		if b.Status == "resolved" {
			line += " | resolved " + fmtTime(b.ResolvedAt) + " " + b.Resolution
		}
		fmt.Fprintln(w, line)
	}
	for _, n := range st.NextSteps {
		fmt.Fprintf(w, "next %s\n", n)
	}
	for _, p := range st.Problems {
		fmt.Fprintf(w, "problem %s\n", p)
	}
	return nil
}
