package cli

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// fixture is a folder of internal/importer/testdata.
func fixture(name string) string {
	return filepath.Join("..", "importer", "testdata", filepath.FromSlash(name))
}

// copyTree copies a fixture folder to a temporary one, so a test can grow
// its files without touching the fixture.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	err := filepath.WalkDir(src, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if e.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// fileState is what an import must leave as it was: bytes, mode and mtime.
type fileState struct {
	Data  string
	Mode  fs.FileMode
	MTime time.Time
}

func snapshot(t *testing.T, root string) map[string]fileState {
	t.Helper()
	out := map[string]fileState{}
	filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := os.Lstat(p)
		st := fileState{Mode: fi.Mode(), MTime: fi.ModTime()}
		if !e.IsDir() {
			data, _ := os.ReadFile(p)
			st.Data = string(data)
		}
		rel, _ := filepath.Rel(root, p)
		out[rel] = st
		return nil
	})
	return out
}

func assertUntouched(t *testing.T, root string, before map[string]fileState) {
	t.Helper()
	if after := snapshot(t, root); !reflect.DeepEqual(after, before) {
		for k, v := range after {
			if before[k] != v {
				t.Errorf("the import changed the source: %s", k)
			}
		}
		t.Errorf("the import changed the source tree %s", root)
	}
}

// setTimeZone writes the vault's time_zone (the zone of times written
// without one).
func setTimeZone(t *testing.T, v, zone string) {
	t.Helper()
	p := filepath.Join(v, ".sessionvault", "config.yaml")
	data, _ := os.ReadFile(p)
	if err := os.WriteFile(p, append(data, "\ntime_zone: "+zone+"\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, v, "commit", "-qam", "time zone")
}

type importReport struct {
	Roots                                         []string
	Found, Imported, Unchanged, Sessions, Updated int
	DryRun                                        bool `json:"dry_run"`
	Skipped                                       []struct{ Path, Reason string }
}

func runImport(t *testing.T, v string, argv ...string) importReport {
	t.Helper()
	var r struct {
		Data struct {
			Report importReport `json:"report"`
		} `json:"data"`
	}
	out := mustRun(t, v, append(append([]string{"import"}, argv...), "--json")...)
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return r.Data.Report
}

func skippedFor(r importReport, path string) string {
	for _, s := range r.Skipped {
		if s.Path == path {
			return s.Reason
		}
	}
	return ""
}

// hookPrompt is the SessionStart hook's resume prompt.
func hookPrompt(t *testing.T, v string) string {
	t.Helper()
	var out, errb strings.Builder
	Main([]string{"--vault", v, "hook", "session-start"}, strings.NewReader(`{"hook_event_name":"SessionStart","source":"startup"}`), &out, &errb)
	var r struct {
		Out struct {
			Context string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal([]byte(out.String()), &r); err != nil {
		t.Fatalf("%v: %s %s", err, out.String(), errb.String())
	}
	return r.Out.Context
}

// A Cline memory bank lands in <project>/memory-bank/ byte for byte, the
// source untouched; a second import changes nothing; a note the vault
// already has with other bytes is kept and the source's skipped; a Kilo Code
// memory bank from its .kilocode/rules layout joins it.
func TestImportMemoryBank(t *testing.T) {
	t.Parallel()
	src := copyTree(t, fixture("memorybank/cline"))
	before := snapshot(t, src)
	v := newVault(t)
	r := runImport(t, v, "memory-bank", src)
	if r.Found != 10 || r.Imported != 8 || r.Unchanged != 0 || len(r.Skipped) != 2 || !reflect.DeepEqual(r.Roots, []string{"memory-bank"}) {
		t.Errorf("first import: %+v", r)
	}
	copied := 0
	filepath.WalkDir(filepath.Join(src, "memory-bank"), func(p string, e fs.DirEntry, walkErr error) error {
		if walkErr != nil || e.IsDir() || !strings.HasSuffix(p, ".md") {
			return nil
		}
		rel, _ := filepath.Rel(filepath.Join(src, "memory-bank"), p)
		want, _ := os.ReadFile(p)
		got, err := os.ReadFile(filepath.Join(v, "demo", "memory-bank", rel))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is not byte-identical in the vault (%v)", rel, err)
		}
		copied++
		return nil
	})
	if copied != 8 {
		t.Errorf("%d notes in the fixture", copied)
	}
	assertUntouched(t, src, before)
	assertClean(t, v)
	if out := mustRun(t, v, "check"); !strings.Contains(out, "no problems") {
		t.Errorf("check after the import: %s", out)
	}

	head := git(t, v, "rev-parse", "HEAD")
	if r := runImport(t, v, "memory-bank", src); r.Imported != 0 || r.Unchanged != 8 {
		t.Errorf("second import: %+v", r)
	}
	if git(t, v, "rev-parse", "HEAD") != head {
		t.Error("a second import made a commit")
	}

	// The agent updated its progress; the vault's copy is kept.
	os.WriteFile(filepath.Join(src, "memory-bank", "progress.md"), []byte("# Progress\n\nEverything works.\n"), 0o644)
	r = runImport(t, v, "memory-bank", filepath.Join(src, "memory-bank"))
	if why := skippedFor(r, "progress.md"); !strings.Contains(why, "already has a different demo/memory-bank/progress.md; kept the vault's copy") || r.Unchanged != 7 {
		t.Errorf("a changed note: %q %+v", why, r)
	}
	if got, _ := os.ReadFile(filepath.Join(v, "demo", "memory-bank", "progress.md")); string(got) != before[filepath.Join("memory-bank", "progress.md")].Data {
		t.Error("the vault's progress.md was overwritten")
	}

	kilo := copyTree(t, fixture("memorybank/kilo"))
	kb := snapshot(t, kilo)
	head = git(t, v, "rev-parse", "HEAD")
	if r := runImport(t, v, "memory-bank", kilo, "--dry-run"); !r.DryRun || r.Imported != 5 || len(r.Skipped) != 1 {
		t.Errorf("dry run: %+v", r)
	}
	if git(t, v, "rev-parse", "HEAD") != head || isFile(filepath.Join(v, "demo", "memory-bank", "context.md")) {
		t.Error("a dry run wrote")
	}
	r = runImport(t, v, "memory-bank", kilo)
	if r.Imported != 5 || !reflect.DeepEqual(r.Roots, []string{".kilocode/rules/memory-bank"}) ||
		!strings.Contains(skippedFor(r, ".kilocode/rules/memory-bank/tasks.md"), "kept the vault's copy") {
		t.Errorf("kilo: %+v", r)
	}
	want, _ := os.ReadFile(filepath.Join(kilo, ".kilocode", "rules", "memory-bank", "context.md"))
	if got, _ := os.ReadFile(filepath.Join(v, "demo", "memory-bank", "context.md")); !bytes.Equal(got, want) {
		t.Error("kilo's context.md is not byte-identical")
	}
	assertUntouched(t, kilo, kb)
	assertClean(t, v)

	if _, errOut, code := run(t, v, "import", "memory-bank", fixture("aider")); code != 1 || !strings.Contains(errOut, "E1655 IMPORT_SOURCE_NOT_FOUND") {
		t.Errorf("no memory bank: exit %d %s", code, errOut)
	}
}

func isFile(p string) bool { fi, err := os.Stat(p); return err == nil && fi.Mode().IsRegular() }

// The resume prompt shows the start of the active context and progress
// notes, bounded, with their paths; the recovery prompt too; none without
// a memory bank.
func TestResumePromptShowsTheMemoryBank(t *testing.T) {
	t.Parallel()
	v := newVault(t)
	if p := hookPrompt(t, v); strings.Contains(p, "Memory bank") {
		t.Errorf("a prompt without a memory bank mentions one:\n%s", p)
	}
	mustRun(t, v, "import", "memory-bank", fixture("memorybank/cline"))
	p := hookPrompt(t, v)
	active := filepath.Join(v, "demo", "memory-bank", "activeContext.md")
	for _, want := range []string{"\n## Memory bank\n", "### Active context: the first 20 lines of " + active,
		"> Offline sync of pantry items between two phones of one household.", "> ## Active decisions\n>\n> …",
		"### Progress: the first 20 lines of " + filepath.Join(v, "demo", "memory-bank", "progress.md"), "> - [ ] Conflict resolution UI"} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q:\n%s", want, p)
		}
	}
	if strings.Contains(p, "plain HTTPS polling") {
		t.Error("the prompt shows more than the first 20 lines of the active context")
	}

	mustRun(t, v, "start", "--objective", "Sync")
	if p := hookPrompt(t, v); !strings.Contains(p, "# sessionvault: session ") || !strings.Contains(p, "> Offline sync of pantry items") {
		t.Errorf("active session's prompt:\n%s", p)
	}
	var out, errb strings.Builder
	Main([]string{"--vault", v, "hook", "pre-compact"}, strings.NewReader(`{"hook_event_name":"PreCompact","trigger":"auto"}`), &out, &errb)
	var rec struct {
		Data struct {
			Sessions []struct {
				Prompt string `json:"resume_prompt"`
			} `json:"sessions"`
		} `json:"data"`
	}
	json.Unmarshal([]byte(mustRun(t, v, "recovery", "check", "--json")), &rec)
	if len(rec.Data.Sessions) != 1 || !strings.Contains(rec.Data.Sessions[0].Prompt, "### Memory bank") ||
		!strings.Contains(rec.Data.Sessions[0].Prompt, "#### Active context: the first 20 lines of "+active) {
		t.Errorf("recovery prompt: %+v", rec)
	}

	// Kilo Code's context.md stands for the active context; a huge note
	// shows only its start.
	v2 := newVault(t)
	big := filepath.Join(t.TempDir(), "memory-bank")
	os.MkdirAll(big, 0o755)
	os.WriteFile(filepath.Join(big, "context.md"), []byte("# Kontext\n\nSMS-Anbindung.\n"), 0o644)
	var b strings.Builder
	b.WriteString("---\nupdated: 2025-05-01\n---\n" + strings.Repeat("x", 5000) + "\n")
	for i := 0; i < 5000; i++ {
		fmt.Fprintf(&b, "- item %d\n", i)
	}
	os.WriteFile(filepath.Join(big, "progress.md"), []byte(b.String()), 0o644)
	mustRun(t, v2, "import", "memory-bank", big)
	p = hookPrompt(t, v2)
	i := strings.Index(p, "## Memory bank")
	if i < 0 || !strings.Contains(p, "### Active context: the whole of "+filepath.Join(v2, "demo", "memory-bank", "context.md")+"\n\n> # Kontext\n>\n> SMS-Anbindung.\n") {
		t.Fatalf("kilo context:\n%s", p)
	}
	if mb := p[i:]; len(mb) > 2000 || strings.Contains(mb, "updated: 2025") || strings.Contains(mb, "item 1") || !strings.Contains(mb, "> xxx") {
		t.Errorf("the excerpt of a huge note is %d bytes:\n%s", len(mb), mb)
	}
}

// keptText returns the text an imported record keeps under "## Original
// text", and its source_sha256 property.
func keptText(t *testing.T, record string) (text []byte, sum string) {
	t.Helper()
	data, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	if i := strings.Index(s, "\nsource_sha256: "); i >= 0 {
		sum = strings.TrimSpace(strings.SplitN(s[i+len("\nsource_sha256: "):], "\n", 2)[0])
	}
	i := strings.Index(s, "\n## Original text\n")
	if i < 0 {
		t.Fatalf("%s has no Original text section", record)
	}
	rest := s[i:]
	open := strings.Index(rest, "\n```")
	line := strings.SplitN(rest[open+1:], "\n", 2)
	fence := strings.TrimSuffix(line[0], "markdown")
	end := strings.LastIndex(line[1], "\n"+fence+"\n")
	if end < 0 {
		t.Fatalf("%s: no closing fence", record)
	}
	return []byte(line[1][:end+1]), sum
}

func sha(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// Every Claude Code session note becomes one archived session keeping the
// note's text (CRLF, Japanese, a few hundred KB included), the source left
// as it was; a second import changes nothing; a note that grew updates its
// record unless a person edited the record.
func TestImportClaudeSessions(t *testing.T) {
	t.Parallel()
	src := copyTree(t, fixture("claude/repo"))
	sessions := filepath.Join(src, ".claude", "sessions")
	ja, _ := os.ReadFile(filepath.Join(sessions, "2025-03-10-2210-データ移行.md"))
	os.WriteFile(filepath.Join(sessions, "2025-03-12-0700-crlf.md"), bytes.ReplaceAll(bytes.Replace(ja, []byte("22:10"), []byte("07:00"), 1), []byte("\n"), []byte("\r\n")), 0o644)
	var big strings.Builder
	big.WriteString("# Development Session - 2025-06-01 07:00 - long-haul\n\n## Goals\n- Port billing to the new ledger\n\n## Progress\n\n")
	for i := 0; i < 500; i++ {
		fmt.Fprintf(&big, "### Update - 2025-06-01 %02d:%02d\n\n**Summary**: step %d\n\n```diff\n%s```\n\n", 7+i/60, i%60, i, strings.Repeat("+ ledger line with ``` inside\n", 20))
	}
	os.WriteFile(filepath.Join(sessions, "2025-06-01-0700-long-haul.md"), []byte(big.String()), 0o644)
	before := snapshot(t, src)

	v := newVault(t)
	setTimeZone(t, v, "UTC")
	r := runImport(t, v, "claude-sessions", src)
	if r.Sessions != 7 || len(r.Skipped) != 4 || r.Unchanged != 0 {
		t.Fatalf("first import: %+v", r)
	}
	for name, id := range map[string]string{
		"2025-01-16-1347-campaign-editor.md": "2025-01-16-1347-campaign-editor", "2025-03-10-2210-データ移行.md": "2025-03-10-2210",
		"2025-03-12-0700-crlf.md": "2025-03-12-0700-crlf", "2025-06-01-0700-long-haul.md": "2025-06-01-0700-long-haul",
		"2025-02-03-0915-auth-refactor.md": "2025-02-03-0915-auth-refactor", "2025-04-01-0800.md": "2025-04-01-0800",
		"archive/2024-12-20-1600-year-end-cleanup.md": "2024-12-20-1600-year-end-cleanup",
	} {
		orig, _ := os.ReadFile(filepath.Join(sessions, filepath.FromSlash(name)))
		text, sum := keptText(t, filepath.Join(v, "demo", "sessions", id+".md"))
		if sum != sha(orig) || !bytes.Equal(text, bytes.ReplaceAll(orig, []byte("\r\n"), []byte("\n"))) {
			t.Errorf("%s: the record does not keep the note's text (sha %s, want %s)", name, sum, sha(orig))
		}
	}
	rec, _ := os.ReadFile(filepath.Join(v, "demo", "sessions", "2025-01-16-1347-campaign-editor.md"))
	for _, want := range []string{"\nstarted: 2025-01-16T13:47:00Z\n", "\nended: 2025-01-16T16:02:00Z\n", "\nsource_status: ended\n",
		"\n- 2025-01-16T14:15:00Z · note · Editor route and layout in place ^u-1\n", "\n- Auto-save (needs a draft table first)\n",
		"objective: 'campaign-editor: Dedicated editor page for e-mail campaigns;"} {
		if !bytes.Contains(rec, []byte(want)) {
			t.Errorf("record lacks %q", want)
		}
	}
	hist, _ := os.ReadFile(filepath.Join(v, "demo", "session-history.md"))
	if n := bytes.Count(hist, []byte("### [[demo/sessions/")); n != 7 {
		t.Errorf("%d sessions in the history", n)
	}
	assertUntouched(t, src, before)
	assertClean(t, v)
	if out := mustRun(t, v, "check"); !strings.Contains(out, "no problems") {
		t.Errorf("check: %s", out)
	}

	head := git(t, v, "rev-parse", "HEAD")
	if r := runImport(t, v, "claude-sessions", sessions); r.Sessions != 0 || r.Unchanged != 7 || r.Updated != 0 {
		t.Errorf("second import: %+v", r)
	}
	if git(t, v, "rev-parse", "HEAD") != head {
		t.Error("a second import made a commit")
	}

	// /session-update, then /session-end, on the active session.
	active := filepath.Join(sessions, "2025-02-03-0915-auth-refactor.md")
	f, _ := os.OpenFile(active, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("### Update - 2025-02-03 10:02 AM\n\n**Summary**: token signing with Ed25519 behind a flag\n\n## Session Summary\n\n**Duration**: 1h 30m\n\n### Key Accomplishments\n- Signed tokens behind the `auth.tokens` flag\n")
	f.Close()
	if r := runImport(t, v, "claude-sessions", src, "--dry-run"); !r.DryRun || r.Updated != 1 || git(t, v, "rev-parse", "HEAD") != head {
		t.Errorf("dry run: %+v", r)
	}
	if r := runImport(t, v, "claude-sessions", src); r.Updated != 1 || r.Unchanged != 6 || r.Sessions != 0 {
		t.Errorf("after the session grew: %+v", r)
	}
	rec, _ = os.ReadFile(filepath.Join(v, "demo", "sessions", "2025-02-03-0915-auth-refactor.md"))
	hist, _ = os.ReadFile(filepath.Join(v, "demo", "session-history.md"))
	if !bytes.Contains(rec, []byte("\n- 2025-02-03T10:02:00Z · note · token signing with Ed25519 behind a flag ^u-1\n")) ||
		!bytes.Contains(rec, []byte("\nended: 2025-02-03T10:45:00Z\n")) || !bytes.Contains(hist, []byte("- **Summary:** Signed tokens behind the auth.tokens flag\n")) {
		t.Errorf("the grown session's record:\n%s\nhistory:\n%s", rec, hist)
	}

	// A person adds a section to the record: the same source is unchanged;
	// a source that changed again leaves the record alone, with the reason.
	f, _ = os.OpenFile(filepath.Join(v, "demo", "sessions", "2025-02-03-0915-auth-refactor.md"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("\n## My notes\n\nAsk Sam about key rotation.\n")
	f.Close()
	if r := runImport(t, v, "claude-sessions", src); r.Unchanged != 7 || len(r.Skipped) != 4 {
		t.Errorf("after a person's edit: %+v", r)
	}
	os.WriteFile(active, append(mustRead(t, active), "\n### Tips\n- rotate keys monthly\n"...), 0o644)
	r = runImport(t, v, "claude-sessions", src)
	if why := skippedFor(r, ".claude/sessions/2025-02-03-0915-auth-refactor.md"); !strings.Contains(why, "was edited in the vault since: kept the vault's copy") {
		t.Errorf("edited record, changed source: %q", why)
	}
	if !bytes.Contains(mustRead(t, filepath.Join(v, "demo", "sessions", "2025-02-03-0915-auth-refactor.md")), []byte("Ask Sam about key rotation.")) {
		t.Error("the person's section was lost")
	}
	assertClean(t, v)

	if _, errOut, code := run(t, v, "import", "claude-sessions", fixture("memorybank")); code != 1 || !strings.Contains(errOut, "E1655 IMPORT_SOURCE_NOT_FOUND") {
		t.Errorf("no sessions folder: exit %d %s", code, errOut)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// One archived session per aider chat; a second import adds nothing; chats
// aider appended later are imported alone; a chat that went on updates its
// record; CRLF histories read the same.
func TestImportAider(t *testing.T) {
	t.Parallel()
	dir := copyTree(t, fixture("aider"))
	hist := filepath.Join(dir, ".aider.chat.history.md")
	before := snapshot(t, dir)
	v := newVault(t)
	setTimeZone(t, v, "Europe/Berlin")
	r := runImport(t, v, "aider", hist)
	if r.Sessions != 4 || len(r.Skipped) != 0 {
		t.Fatalf("first import: %+v", r)
	}
	rec := mustRead(t, filepath.Join(v, "demo", "sessions", "2024-05-30-aider-102213.md"))
	for _, want := range []string{"\nstarted: 2024-05-30T08:22:13Z\n", "\n- 2024-05-30T08:22:13Z · note · /add src/cart.py ^u-1\n",
		"\n- Commit 3e9f0a1 fix: apply only the larger of coupon and member discount\n", "\nsource: .aider.chat.history.md\n", "\nsource_format: aider-chat\n"} {
		if !bytes.Contains(rec, []byte(want)) {
			t.Errorf("record lacks %q:\n%s", want, rec)
		}
	}
	data := mustRead(t, hist)
	for _, id := range []string{"2024-05-30-aider-102213", "2024-06-02-aider-180541", "2024-06-02-aider-180541-2", "2024-06-11-aider-090002"} {
		text, sum := keptText(t, filepath.Join(v, "demo", "sessions", id+".md"))
		if !bytes.Contains(data, text) || sha(text) != sum {
			t.Errorf("%s does not keep its chat's text", id)
		}
	}
	assertUntouched(t, dir, before)
	assertClean(t, v)

	head := git(t, v, "rev-parse", "HEAD")
	if r := runImport(t, v, "aider", dir); r.Sessions != 0 || r.Unchanged != 4 {
		t.Errorf("second import (the folder): %+v", r)
	}
	if git(t, v, "rev-parse", "HEAD") != head {
		t.Error("a second import made a commit")
	}

	// aider ran again: a new chat; then that chat went on.
	os.WriteFile(hist, append(data, "\n# aider chat started at 2024-07-01 12:00:00\n\n> Aider v0.40.0  \n\n#### /add README.md  \n\n"...), 0o644)
	if r := runImport(t, v, "aider", hist); r.Sessions != 1 || r.Unchanged != 4 {
		t.Errorf("after a new chat: %+v", r)
	}
	os.WriteFile(hist, append(mustRead(t, hist), "#### describe the install steps in French  \n\nD'accord : voici les étapes.\n\n"...), 0o644)
	if r := runImport(t, v, "aider", hist); r.Updated != 1 || r.Unchanged != 4 || r.Sessions != 0 {
		t.Errorf("after the chat went on: %+v", r)
	}
	rec = mustRead(t, filepath.Join(v, "demo", "sessions", "2024-07-01-aider-120000.md"))
	if !bytes.Contains(rec, []byte("· note · describe the install steps in French ^u-2\n")) || !bytes.Contains(rec, []byte("objective: describe the install steps in French\n")) {
		t.Errorf("the chat that went on:\n%s", rec)
	}
	assertClean(t, v)

	// The same history written on Windows.
	v2 := newVault(t)
	crlf := filepath.Join(t.TempDir(), ".aider.chat.history.md")
	os.WriteFile(crlf, bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n")), 0o644)
	if r := runImport(t, v2, "aider", crlf); r.Sessions != 4 {
		t.Errorf("CRLF: %+v", r)
	}
	text, sum := keptText(t, filepath.Join(v2, "demo", "sessions", "2024-06-11-aider-090002.md"))
	if orig := bytes.ReplaceAll(text, []byte("\n"), []byte("\r\n")); sha(orig) != sum || !bytes.Contains(mustRead(t, crlf), orig) {
		t.Error("CRLF: the record does not keep the chat's bytes")
	}
	if out := mustRun(t, v2, "check"); !strings.Contains(out, "no problems") {
		t.Errorf("check: %s", out)
	}

	if _, errOut, code := run(t, v, "import", "aider", filepath.Join(fixture("memorybank/cline/memory-bank"), "progress.md")); code != 1 || !strings.Contains(errOut, "E1656 IMPORT_FORMAT_UNKNOWN") {
		t.Errorf("not a history: exit %d %s", code, errOut)
	}
	if _, errOut, code := run(t, v, "import", "aider", filepath.Join(dir, "nope.md")); code != 1 || !strings.Contains(errOut, "E1655 IMPORT_SOURCE_NOT_FOUND") {
		t.Errorf("no file: exit %d %s", code, errOut)
	}
}
