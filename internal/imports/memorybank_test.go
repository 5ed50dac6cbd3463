package imports

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sessionvault/sessionvault/internal/errs"
	"github.com/sessionvault/sessionvault/internal/importer"
	"github.com/sessionvault/sessionvault/internal/recovery"
	"github.com/sessionvault/sessionvault/internal/session/servicetest"
)

// writeTree writes files (slash paths) under a new folder and returns it.
func writeTree(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for rel, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// importBank imports the memory bank mb, checking that progress is called
// once per note.
func importBank(t testing.TB, s *Service, mb importer.MemoryBank, dryRun bool) (MemoryBankReport, string) {
	t.Helper()
	var calls []int
	rep, res, err := s.ImportMemoryBank("demo", mb, dryRun, func(done, total int) {
		if total != len(mb.Files) {
			t.Errorf("progress total %d, want %d", total, len(mb.Files))
		}
		calls = append(calls, done)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != len(mb.Files) || (len(calls) > 0 && calls[len(calls)-1] != len(mb.Files)) {
		t.Errorf("progress called with %v for %d notes", calls, len(mb.Files))
	}
	if rep.DryRun != dryRun || !slices.Equal(rep.Roots, mb.Roots) {
		t.Errorf("report %+v", rep)
	}
	return rep, res.Commit
}

// A Cline memory bank lands in the project's memory-bank/ folder byte for
// byte (CRLF, front matter, sub-folders), in one commit; what the scan left
// out is reported, and so is a name a vault path cannot hold. A dry run
// writes nothing; a second import changes nothing; a note the vault has
// with other bytes is kept. The resume prompt then shows the start of the
// active context and the progress.
func TestImportMemoryBank(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	s := testService(t, &now)
	files := map[string]string{
		"memory-bank/activeContext.md":   "---\nupdated: 2025-05-01\n---\r\n# Active context\r\n\r\nOffline sync of pantry items.\r\n",
		"memory-bank/progress.md":        "# Progress\n\n- [x] Schema\n- [ ] Conflict UI\n",
		"memory-bank/features/auth.md":   "# Auth\n\nTokens.\n",
		"memory-bank/my notes.md":        "# Mine\n",
		"memory-bank/diagram.png":        "\x89PNG",
		"memory-bank/.obsidian/app.json": "{}",
	}
	src := writeTree(t, files)
	mb, err := importer.ScanMemoryBank(src)
	if err != nil {
		t.Fatal(err)
	}
	if excerpt := recovery.New(s.Service).MemoryBankExcerpt("demo", 2); excerpt != "" {
		t.Errorf("an excerpt without a memory bank:\n%s", excerpt)
	}

	before := servicetest.Take(t, s.V.Root)
	rep, commit := importBank(t, s, mb, true)
	if rep.Imported != 3 || rep.Found != 6 || len(rep.Skipped) != 3 || commit != "" {
		t.Errorf("dry run: %+v", rep)
	}
	servicetest.AssertUnchanged(t, s.V.Root, before, "a dry run")

	commits := len(servicetest.Subjects(t, s.V.Root))
	rep, commit = importBank(t, s, mb, false)
	if rep.Imported != 3 || rep.Unchanged != 0 || rep.Found != 6 || commit == "" {
		t.Errorf("import: %+v", rep)
	}
	reasons := map[string]string{}
	for _, sk := range rep.Skipped {
		reasons[sk.Path] = sk.Reason
	}
	for path, want := range map[string]string{
		"memory-bank/my notes.md": "its name has characters a vault path cannot hold",
		"memory-bank/diagram.png": "not a .md file",
		"memory-bank/.obsidian/":  "a hidden folder",
	} {
		if !strings.Contains(reasons[path], want) {
			t.Errorf("skipped %s: %q, want %q", path, reasons[path], want)
		}
	}
	if got := servicetest.Subjects(t, s.V.Root); len(got) != commits+1 || got[0] != "import: 3 memory bank notes from memory-bank" {
		t.Errorf("commits: %q", got[:2])
	}
	for _, rel := range []string{"activeContext.md", "progress.md", "features/auth.md"} {
		if got := servicetest.ReadNote(t, s.V.Root, "demo/memory-bank/"+rel); got != files["memory-bank/"+rel] {
			t.Errorf("%s is not byte for byte:\n%q", rel, got)
		}
	}
	servicetest.AssertClean(t, s.V.Root)

	excerpt := recovery.New(s.Service).MemoryBankExcerpt("demo", 2)
	for _, want := range []string{"## Memory bank\n",
		"### Active context: the whole of " + filepath.Join(s.V.Root, "demo", "memory-bank", "activeContext.md") + "\n\n> # Active context\n>\n> Offline sync of pantry items.\n",
		"### Progress: the whole of " + filepath.Join(s.V.Root, "demo", "memory-bank", "progress.md") + "\n\n> # Progress\n>\n> - [x] Schema\n> - [ ] Conflict UI\n"} {
		if !strings.Contains(excerpt, want) {
			t.Errorf("the excerpt lacks %q:\n%s", want, excerpt)
		}
	}
	if strings.Contains(excerpt, "updated: 2025") {
		t.Errorf("the excerpt shows front matter:\n%s", excerpt)
	}

	before = servicetest.Take(t, s.V.Root)
	if rep, commit := importBank(t, s, mb, false); rep.Imported != 0 || rep.Unchanged != 3 || commit != "" {
		t.Errorf("second import: %+v", rep)
	}
	servicetest.AssertUnchanged(t, s.V.Root, before, "a second import")

	// The agent rewrote its progress: the vault's copy is kept.
	if err := os.WriteFile(filepath.Join(src, "memory-bank", "progress.md"), []byte("# Progress\n\nAll done.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mb, err = importer.ScanMemoryBank(filepath.Join(src, "memory-bank"))
	if err != nil {
		t.Fatal(err)
	}
	before = servicetest.Take(t, s.V.Root)
	rep, commit = importBank(t, s, mb, false)
	reasons = map[string]string{}
	for _, sk := range rep.Skipped {
		reasons[sk.Path] = sk.Reason
	}
	if rep.Unchanged != 2 || rep.Imported != 0 || commit != "" || !strings.Contains(reasons["progress.md"], "the vault already has a different demo/memory-bank/progress.md; kept the vault's copy") {
		t.Errorf("a changed note: %+v", rep)
	}
	servicetest.AssertUnchanged(t, s.V.Root, before, "a changed note")
}

// A repository with two memory banks (Cline's and Kilo Code's) imports
// both; a note both have under the same name comes from the first, the
// second reported; an unknown project is refused and nothing changes.
func TestImportMemoryBankTwoRoots(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	s := testService(t, &now)
	src := writeTree(t, map[string]string{
		"memory-bank/tasks.md":                   "# Cline's tasks\n",
		"memory-bank/projectbrief.md":            "# Brief\n",
		".kilocode/rules/memory-bank/tasks.md":   "# Kilo's tasks\n",
		".kilocode/rules/memory-bank/context.md": "# Kontext\n\nSMS.\n",
	})
	mb, err := importer.ScanMemoryBank(src)
	if err != nil {
		t.Fatal(err)
	}
	before := servicetest.Take(t, s.V.Root)
	_, _, err = s.ImportMemoryBank("nope", mb, false, nil)
	servicetest.WantCode(t, err, errs.ProjectNotFound, "an unknown project")
	servicetest.AssertUnchanged(t, s.V.Root, before, "an unknown project")

	rep, commit := importBank(t, s, mb, false)
	if rep.Imported != 3 || len(rep.Skipped) != 1 || rep.Skipped[0].Path != ".kilocode/rules/memory-bank/tasks.md" ||
		rep.Skipped[0].Reason != "same name as memory-bank/tasks.md, imported to demo/memory-bank/tasks.md just before; kept that one" || commit == "" {
		t.Errorf("report: %+v", rep)
	}
	if got := servicetest.Subjects(t, s.V.Root)[0]; got != "import: 3 memory bank notes from memory-bank, .kilocode/rules/memory-bank" {
		t.Errorf("commit %q", got)
	}
	if got := servicetest.ReadNote(t, s.V.Root, "demo/memory-bank/tasks.md"); got != "# Cline's tasks\n" {
		t.Errorf("tasks.md = %q", got)
	}
	// Kilo Code's context.md stands for the active context.
	if excerpt := recovery.New(s.Service).MemoryBankExcerpt("demo", 2); !strings.Contains(excerpt, "### Active context: the whole of "+filepath.Join(s.V.Root, "demo", "memory-bank", "context.md")+"\n\n> # Kontext\n>\n> SMS.\n") ||
		strings.Contains(excerpt, "### Progress") {
		t.Errorf("excerpt:\n%s", excerpt)
	}
	servicetest.AssertClean(t, s.V.Root)
}
