package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessionvault/sessionvault/internal/importer"

	"github.com/sessionvault/sessionvault/internal/testcorpus"
)

// corpus is the corpus tier's ai-agents folder (testcorpus).
func corpus(t *testing.T) string { return testcorpus.Dir(t, "ai-agents") }

func isDir(p string) bool { fi, err := os.Stat(p); return err == nil && fi.IsDir() }

func countFiles(t *testing.T, dir string, keep func(rel string) bool) int {
	n := 0
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			if keep == nil || keep(filepath.ToSlash(rel)) {
				n++
			}
		}
		return nil
	})
	return n
}

// Importing the real corpus: every Serena memory is byte-identical in the
// vault, the summaries' counts match the files, and a second import changes
// nothing.
func TestImportRealCorpus(t *testing.T) {
	t.Parallel()
	src := corpus(t)
	v := newVault(t)
	mem := filepath.Join(src, ".serena", "memories")
	var serena struct {
		Data struct {
			Report struct {
				Found, Imported, Unchanged int
				Skipped                    []struct{ Path, Reason string }
			} `json:"report"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, v, "import", "serena", mem, "--json")), &serena); err != nil {
		t.Fatal(err)
	}
	r := serena.Data.Report
	if files := countFiles(t, mem, nil); r.Found != files || r.Imported+r.Unchanged+len(r.Skipped) != files {
		t.Errorf("serena summary %+v does not add up to the %d files", r, files)
	}
	copied := 0
	filepath.WalkDir(mem, func(p string, e fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(mem, p)
		if err != nil || e.IsDir() || strings.HasPrefix(rel, ".") {
			return nil
		}
		want, _ := os.ReadFile(p)
		got, err := os.ReadFile(filepath.Join(v, "demo", rel))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("memory %s is not byte-identical in the vault (%v)", rel, err)
		}
		copied++
		return nil
	})
	if copied != r.Imported {
		t.Errorf("%d memories in the source, %d imported", copied, r.Imported)
	}
	for _, s := range r.Skipped {
		if !strings.HasPrefix(s.Path, ".obsidian/") || s.Reason == "" {
			t.Errorf("unexpected skip %+v", s)
		}
	}

	sessions := filepath.Join(src, ".agents", "sessions")
	var agents struct {
		Data struct {
			Files  int `json:"files"`
			Report struct {
				Sessions, Decisions, Unchanged int
				Skipped                        []struct{ Path, Reason string }
			} `json:"report"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, v, "import", "agents", sessions, "--json")), &agents); err != nil {
		t.Fatal(err)
	}
	a := agents.Data
	if files := countFiles(t, sessions, nil); a.Files != files || a.Report.Sessions+a.Report.Unchanged+len(a.Report.Skipped) != files {
		t.Errorf("agents summary %+v does not add up to the %d files", a, files)
	}
	if n := countFiles(t, filepath.Join(v, "demo", "sessions"), nil); n != a.Report.Sessions {
		t.Errorf("%d session records in the vault, summary says %d", n, a.Report.Sessions)
	}
	if n := countFiles(t, filepath.Join(v, "demo", "decisions"), nil); n != a.Report.Decisions || n == 0 {
		t.Errorf("%d decision notes in the vault, summary says %d", n, a.Report.Decisions)
	}
	assertClean(t, v)
	mustRun(t, v, "check")

	head := git(t, v, "rev-parse", "HEAD")
	out := mustRun(t, v, "import", "serena", mem)
	out += mustRun(t, v, "import", "agents", sessions)
	if !strings.Contains(out, fmt.Sprintf(" 0 imported, %d unchanged", r.Imported)) || !strings.Contains(out, " 0 sessions imported") {
		t.Errorf("second import was not a no-op:\n%s", out)
	}
	if git(t, v, "rev-parse", "HEAD") != head {
		t.Error("a second import made a commit")
	}
}

// An import that imports nothing counts the sources it found, not the lines
// it skipped in them, and counts the reasons by kind, most frequent first.
func TestNoneImportedCountsSources(t *testing.T) {
	skipped := []importer.Skipped{
		{Path: "p/a.jsonl:3", Reason: "line 3: not JSON"},
		{Path: "p/a.jsonl:9", Reason: "line 9: not JSON"},
		{Path: "p/a.jsonl", Reason: "a subagent's transcript"},
		{Path: "p/sessions-index.json", Reason: "not a .jsonl file"},
		{Path: "p/b.json", Reason: "not a .jsonl file"},
	}
	err := noneImported("Claude Code transcripts", "p", 0, skipped)
	if err == nil {
		t.Fatal("nothing imported, and no error")
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "none of the 3 Claude Code transcripts in p was imported:\n  2 skipped: not a .jsonl file (p/sessions-index.json, p/b.json)") {
		t.Errorf("the error says:\n%s", msg)
	}
	if noneImported("x", "p", 1, skipped) != nil || noneImported("x", "p", 0, nil) != nil {
		t.Error("an error although something was imported, or nothing was found")
	}
}
