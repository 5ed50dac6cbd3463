package importer

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func memoryRels(mb MemoryBank) []string {
	var out []string
	for _, f := range mb.Files {
		out = append(out, f.Rel)
	}
	return out
}

// A repository's memory bank is found in each documented layout, every
// .md note read byte for byte (sub-folders too), and what is not a note is
// reported with the reason.
func TestScanMemoryBankLayouts(t *testing.T) {
	cline := []string{"activeContext.md", "features/auth-flow.md", "productContext.md", "progress.md", "projectbrief.md", "systemPatterns.md", "tasks.md", "techContext.md"}
	for _, tc := range []struct {
		name, dir string
		roots     []string
		rels      []string
		skipped   []string
	}{
		{"cline repository", "testdata/memorybank/cline", []string{"memory-bank"}, cline, []string{"memory-bank/.DS_Store", "memory-bank/aisles.txt"}},
		{"cline folder itself", "testdata/memorybank/cline/memory-bank", []string{"."}, cline, []string{".DS_Store", "aisles.txt"}},
		{"kilo repository", "testdata/memorybank/kilo", []string{".kilocode/rules/memory-bank"},
			[]string{"architecture.md", "brief.md", "context.md", "product.md", "tasks.md", "tech.md"}, nil},
		{"kilo folder itself", "testdata/memorybank/kilo/.kilocode/rules/memory-bank", []string{"."},
			[]string{"architecture.md", "brief.md", "context.md", "product.md", "tasks.md", "tech.md"}, nil},
		{"roo repository", "testdata/memorybank/roo", []string{"memory-bank"},
			[]string{"activeContext.md", "decisionLog.md", "productContext.md", "progress.md", "projectBrief.md", "systemPatterns.md"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mb, err := ScanMemoryBank(tc.dir)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(mb.Roots, tc.roots) {
				t.Errorf("roots %v, want %v", mb.Roots, tc.roots)
			}
			if got := memoryRels(mb); !reflect.DeepEqual(got, tc.rels) {
				t.Errorf("notes %v, want %v", got, tc.rels)
			}
			var sk []string
			for _, s := range mb.Skipped {
				sk = append(sk, s.Path)
				if s.Reason == "" {
					t.Errorf("%s skipped without a reason", s.Path)
				}
			}
			if !reflect.DeepEqual(sk, tc.skipped) {
				t.Errorf("skipped %v, want %v", sk, tc.skipped)
			}
			for _, f := range mb.Files {
				want, _ := os.ReadFile(filepath.Join(tc.dir, filepath.FromSlash(f.Source)))
				if string(f.Data) != string(want) {
					t.Errorf("%s: read %q, the file holds %q", f.Source, f.Data, want)
				}
			}
		})
	}
}

// What cannot be a vault note is left out with a reason a person can act
// on; a folder without a memory bank is an error naming what was looked for.
func TestScanMemoryBankLeavesOutWhatIsNotANote(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "memory-bank")
	os.MkdirAll(filepath.Join(dir, ".obsidian"), 0o755)
	os.WriteFile(filepath.Join(dir, ".obsidian", "app.json"), []byte("{}"), 0o644)
	os.WriteFile(filepath.Join(dir, "progress.md"), []byte("# Progress\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "latin1.md"), []byte("# Caf\xe9\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "broken.md"), []byte("---\ntitle: [unclosed\n---\n# Broken\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "empty.md"), nil, 0o644)
	mb, err := ScanMemoryBank(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := memoryRels(mb); !reflect.DeepEqual(got, []string{"empty.md", "progress.md"}) {
		t.Errorf("notes %v", got)
	}
	want := map[string]string{".obsidian/": "hidden folder", "latin1.md": "not UTF-8", "broken.md": "not a note the vault can read"}
	for _, s := range mb.Skipped {
		if w, ok := want[s.Path]; !ok || !strings.Contains(s.Reason, w) {
			t.Errorf("skipped %s: %q", s.Path, s.Reason)
		}
		delete(want, s.Path)
	}
	if len(want) > 0 {
		t.Errorf("not skipped: %v", want)
	}

	_, err = ScanMemoryBank("testdata/aider")
	if !errors.Is(err, ErrNoMemoryBank) || !strings.Contains(err.Error(), ".kilocode/rules/memory-bank") {
		t.Errorf("a folder without a memory bank: %v", err)
	}
}
