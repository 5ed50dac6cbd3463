package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessionvault/sessionvault/internal/session"
	"github.com/sessionvault/sessionvault/internal/vault"
)

// run calls the CLI in process and returns stdout, stderr and the exit code.
func run(t *testing.T, vault string, argv ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(append([]string{"--vault", vault}, argv...), strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

func mustRun(t *testing.T, vault string, argv ...string) string {
	t.Helper()
	out, errOut, code := run(t, vault, argv...)
	if code != 0 {
		t.Fatalf("sessionvault %v: exit %d\n%s%s", argv, code, out, errOut)
	}
	return out
}

func git(t *testing.T, dir string, argv ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, argv...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", argv, err, out)
	}
	return string(out)
}

func assertClean(t *testing.T, dir string) {
	t.Helper()
	if s := git(t, dir, "status", "--porcelain"); s != "" {
		t.Fatalf("git status not clean:\n%s", s)
	}
	git(t, dir, "fsck", "--strict")
}

func newVault(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "vault")
	mustRun(t, dir, "init", dir, "--project", "demo")
	return dir
}

// A person's new section and a property with a YAML comment survive the next
// update byte for byte, and are committed first as their own commit.
func TestHandEditsSurviveAndAreCommittedSeparately(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	mustRun(t, v, "start", "--objective", "Hand edits", "--branch", "b", "--commit", "c")
	mustRun(t, v, "update", "Before the hand edit")
	note := filepath.Join(v, "demo", "session-current-state.md")
	before, _ := os.ReadFile(note)
	prop := "reviewer: ana   # added by hand, keep the spacing\n"
	section := "\n## My notes\n\nThe *staging* key rotates on Fridays.   \r\nSecond line.\n"
	edited := strings.Replace(string(before), "\n---\n", "\n"+prop+"---\n", 1) + section
	if err := os.WriteFile(note, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, v, "update", "After the hand edit", "--progress", "20")
	after, _ := os.ReadFile(note)
	if !bytes.Contains(after, []byte("\n"+prop+"---\n")) {
		t.Errorf("property line with comment not kept:\n%s", after)
	}
	if !bytes.HasSuffix(after, []byte(section)) {
		t.Errorf("hand-written section not kept byte for byte; tail:\n%q", after[len(after)-len(section)-20:])
	}
	// Only the update's bytes changed relative to the hand-edited file.
	if got := strings.Count(string(after), "\n") - strings.Count(edited, "\n"); got != 1 {
		t.Errorf("update added %d lines, want 1", got)
	}
	log := git(t, v, "log", "-2", "--format=%an|%s")
	lines := strings.Split(strings.TrimSpace(log), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "sessionvault agent|update: ") || !strings.HasPrefix(lines[1], "vault editor|edit: ") {
		t.Errorf("want the person's edit commit then the update; got:\n%s", log)
	}
	assertClean(t, v)
}

// A tick made in the note on an item whose evidence the engine verifies
// (c-5: the history read, a SHOULD) shows as unverified and not done, until
// `evidence record` verifies it; the gate does not count a forged MUST tick
// (c-1) either. Neither trips the hooks.
func TestTickedChecklistItemReadBack(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	mustRun(t, v, "start", "--objective", "Ticks")
	note := filepath.Join(v, "demo", "session-current-state.md")
	data, _ := os.ReadFile(note)
	ticked := strings.Replace(string(data), "- [ ] **MUST**", "- [x] **MUST**", 1)
	ticked = strings.Replace(ticked, "- [ ] **SHOULD** Read the latest entry", "- [x] **SHOULD** Read the latest entry", 1)
	if ticked == string(data) {
		t.Fatal("no checklist item to tick")
	}
	os.WriteFile(note, []byte(ticked), 0o644)
	if out, errOut, code := run(t, v, "gate", "validate", "start"); code == 0 || !strings.Contains(out+errOut, "c-1") {
		t.Errorf("gate validate start passed on a tick without evidence:\n%s%s", out, errOut)
	}
	type item struct {
		ID         string `json:"id"`
		Done       bool   `json:"done"`
		Unverified bool   `json:"unverified"`
	}
	var res struct {
		Data struct {
			StartChecklist []item `json:"start_checklist"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, v, "status", "--json")), &res); err != nil {
		t.Fatal(err)
	}
	cl := res.Data.StartChecklist
	if len(cl) < 5 || cl[4].ID != "c-5" || cl[4].Done || !cl[4].Unverified {
		t.Fatalf("start checklist = %+v, want c-5 unverified and not done", cl)
	}
	mustRun(t, v, "evidence", "record", "c-5", "--file", "session-history.md")
	res.Data.StartChecklist = nil
	if err := json.Unmarshal([]byte(mustRun(t, v, "status", "--json")), &res); err != nil {
		t.Fatal(err)
	}
	if cl := res.Data.StartChecklist; !cl[4].Done || cl[4].Unverified {
		t.Errorf("after evidence record: c-5 = %+v", cl[4])
	}
}

// Bad input gives a clear error, a non-zero exit and no change to the vault.
func TestBadInputChangesNothing(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	head := git(t, v, "rev-parse", "HEAD")
	cases := []struct {
		name string
		argv []string
		want string
	}{
		{"no active session", []string{"update", "hello"}, "E1602 NO_ACTIVE_SESSION"},
		{"progress out of range", []string{"update", "x", "--progress", "101"}, "--progress 101"},
		{"100 KB message", []string{"update", strings.Repeat("x", 100*1024)}, "at most 500"},
		{"unknown flag", []string{"update", "x", "--bogus"}, "unknown flag"},
	}
	for _, c := range cases {
		_, errOut, code := run(t, v, c.argv...)
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want non-zero and %q", c.name, code, errOut, c.want)
		}
	}
	if got := git(t, v, "rev-parse", "HEAD"); got != head {
		t.Error("a failed command before any session made a commit")
	}
	mustRun(t, v, "start", "--objective", "Errors")
	head = git(t, v, "rev-parse", "HEAD")
	for _, c := range []struct {
		name string
		argv []string
		want string
	}{
		{"unknown blocker", []string{"resolve", "b-7"}, "E1605 BLOCKER_NOT_FOUND"},
		{"malformed blocker id", []string{"resolve", "../../x"}, "not a blocker id"},
		{"100 KB message", []string{"update", strings.Repeat("y", 100*1024)}, "at most 500"},
		{"bad project name", []string{"--project", "../etc", "update", "x"}, "PATH_OUTSIDE_VAULT"},
	} {
		_, errOut, code := run(t, v, c.argv...)
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want non-zero and %q", c.name, code, errOut, c.want)
		}
	}
	if got := git(t, v, "rev-parse", "HEAD"); got != head {
		t.Error("a failed command made a commit")
	}
	assertClean(t, v)

	// A canonical note with broken YAML: the error names the note and line,
	// and the note is left untouched (and not committed).
	note := filepath.Join(v, "demo", "session-current-state.md")
	data, _ := os.ReadFile(note)
	broken := strings.Replace(string(data), "objective: Errors", "objective: [Errors", 1)
	os.WriteFile(note, []byte(broken), 0o644)
	_, errOut, code := run(t, v, "update", "x")
	if code == 0 || !strings.Contains(errOut, "demo/session-current-state.md:") || !strings.Contains(errOut, "STATE_PARSE_ERROR") {
		t.Errorf("broken YAML: exit %d, stderr %q", code, errOut)
	}
	if now, _ := os.ReadFile(note); string(now) != broken {
		t.Error("the broken note was changed")
	}
	if got := git(t, v, "rev-parse", "HEAD"); got != head {
		t.Error("a failed command made a commit")
	}
	out, _, code := run(t, v, "check")
	_ = out
	if code != 1 {
		t.Errorf("check on a broken vault exited %d, want 1", code)
	}
	os.WriteFile(note, data, 0o644)

	// --vault that is not a vault.
	notVault := t.TempDir()
	_, errOut, code = run(t, notVault, "status")
	if code == 0 || !strings.Contains(errOut, "is not a vault") {
		t.Errorf("not a vault: exit %d, stderr %q", code, errOut)
	}
	if ents, _ := os.ReadDir(notVault); len(ents) != 0 {
		t.Error("a failed command wrote into a folder that is not a vault")
	}
	// --json error shape.
	out, _, _ = run(t, v, "resolve", "b-9", "--json")
	var e struct {
		Success bool                                 `json:"success"`
		Error   struct{ Code, Name, Message string } `json:"error"`
	}
	if err := json.Unmarshal([]byte(out), &e); err != nil || e.Success || e.Error.Code != "E1605" || e.Error.Name != "BLOCKER_NOT_FOUND" {
		t.Errorf("--json error = %s", out)
	}
}

// What failed after an operation's commit (vault.Result.Warnings) is
// printed as a warning on stderr, and the operation's answer as usual.
func TestWarningsArePrinted(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	a := &app{stdout: &out, stderr: &errb}
	o := session.Outcome{ID: "u-1", Result: vault.Result{Commit: "abc", Warnings: []string{"committed abc: the signature was not written"}}}
	if err := a.emit(o, o.ID); err != nil {
		t.Fatal(err)
	}
	if out.String() != "u-1\n" || errb.String() != "sessionvault: warning: committed abc: the signature was not written\n" {
		t.Errorf("stdout %q, stderr %q", out.String(), errb.String())
	}
}
