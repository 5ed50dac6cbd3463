package session

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessionvault/sessionvault/internal/markdown"
	"github.com/sessionvault/sessionvault/internal/note"
	"github.com/sessionvault/sessionvault/internal/testcorpus"
)

// corpusDir is the corpus tier's ai-agents folder (testcorpus).
func corpusDir(t testing.TB) string { return testcorpus.Dir(t, "ai-agents") }

func repoRoot(t testing.TB) string {
	wd, _ := os.Getwd()
	return filepath.Clean(filepath.Join(wd, "..", ".."))
}

// markdownFiles lists every .md file under dir, hidden folders included.
func markdownFiles(t *testing.T, dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() && strings.HasSuffix(p, ".md") {
			out = append(out, p)
		}
		return nil
	})
	if len(out) == 0 {
		t.Fatalf("no .md files under %s", dir)
	}
	return out
}

// For every real note: parse then write unchanged gives identical bytes; a new
// property adds exactly its line; re-setting an existing scalar property to
// its value changes nothing; replacing one section's body changes only that
// range.
func TestRoundTripOnEveryNote(t *testing.T) {
	files := append(markdownFiles(t, corpusDir(t)), markdownFiles(t, filepath.Join(repoRoot(t), "vault-example"))...)
	md := markdown.New()
	var parsed, broken, withFM, sectionEdits int
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		n, err := note.Parse(f, src)
		if err != nil {
			var pe *note.ParseError
			if !errors.As(err, &pe) || pe.Path != f {
				t.Errorf("%s: error does not name the file: %v", f, err)
			}
			broken++
			continue
		}
		parsed++
		if !bytes.Equal(n.Bytes(), src) {
			t.Fatalf("%s: parse/write changed the bytes", f)
		}
		if n.HasFrontMatter() {
			withFM++
			for _, k := range n.Keys() {
				if v, ok := n.Get(k); ok {
					same, err := n.Set(k, v)
					if err != nil {
						t.Fatalf("%s: set %s: %v", f, k, err)
					}
					if !bytes.Equal(same.Bytes(), src) && note.Scalar(v) == v {
						t.Errorf("%s: setting %s to its own value changed bytes", f, k)
					}
				}
			}
			added, err := n.Set("sv_roundtrip", "x")
			if err != nil {
				t.Fatalf("%s: add property: %v", f, err)
			}
			if d := len(added.Bytes()) - len(src); d != len("sv_roundtrip: x\n") && d != len("sv_roundtrip: x\r\n") && d != len("\nsv_roundtrip: x\n") {
				t.Errorf("%s: adding a property changed %d bytes", f, d)
			}
			if !bytes.HasSuffix(added.Bytes(), n.Body()) {
				t.Errorf("%s: adding a property changed the body", f)
			}
		}
		d, err := openDoc(md, f, src)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range d.MD.Sections {
			if s.Level != 2 {
				continue
			}
			d.SetSection(s.Title, []string{"REPLACED"})
			out, err := d.Bytes()
			if err != nil {
				t.Fatalf("%s: section edit: %v", f, err)
			}
			off := n.BodyOffset()
			if !bytes.Equal(out[:off+s.BodyStart], src[:off+s.BodyStart]) || !bytes.HasSuffix(out, src[off+s.End:]) {
				t.Errorf("%s: editing section %q changed bytes outside it", f, s.Title)
			}
			sectionEdits++
			break
		}
	}
	t.Logf("%d notes: %d parsed (%d with front matter, %d section edits), %d reported as broken", len(files), parsed, withFM, sectionEdits, broken)
	if parsed < len(files)*9/10 {
		t.Errorf("only %d of %d notes parsed", parsed, len(files))
	}
}
