package markdown

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessionvault/sessionvault/internal/testcorpus"
)

// corpusDir is the corpus tier's ai-agents folder (testcorpus).
func corpusDir(t *testing.T) string { return testcorpus.Dir(t, "ai-agents") }

// The fast scanner finds the same H1-H3 sections, with the same ranges, as
// goldmark on every real note (front matter left out, as the engine does).
func TestScanMatchesGoldmark(t *testing.T) {
	p := New()
	checked, differ := 0, 0
	filepath.WalkDir(corpusDir(t), func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(path, ".md") {
			return nil
		}
		src, _ := os.ReadFile(path)
		if strings.HasPrefix(string(src), "---\n") {
			if i := strings.Index(string(src[4:]), "\n---\n"); i >= 0 {
				src = src[4+i+5:]
			}
		}
		want := filter(p.Parse(src).Sections)
		got := filter(ScanSections(src))
		checked++
		if !same(got, want) {
			differ++
			if differ <= 5 {
				t.Errorf("%s: scan %v\n goldmark %v", path, titles(got), titles(want))
			}
		}
		return nil
	})
	t.Logf("%d notes checked, %d differ", checked, differ)
}

func filter(ss []Section) []Section {
	var out []Section
	for _, s := range ss {
		if s.Level <= 3 {
			out = append(out, s)
		}
	}
	return out
}

func same(a, b []Section) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Level != y.Level || x.Title != y.Title || x.Start != y.Start || x.BodyStart != y.BodyStart {
			return false
		}
	}
	return true
}

func titles(ss []Section) []string {
	var out []string
	for _, s := range ss {
		out = append(out, strings.Repeat("#", s.Level)+" "+s.Title)
	}
	return out
}

// A heading right after a list item or a quote, with no blank line, ends
// them (goldmark agrees); one indented into the item is the item's.
func TestScanHeadingAfterList(t *testing.T) {
	p := New()
	for _, src := range []string{
		"## Decisions\n\n- a ^d-1\n## Blockers\n- b\n\n## End\n",
		"## A\n\n10. item\n   ## in the item\n## B\n",
		"## A\n> quoted\n## B\n",
		"## A\n- item\n  ## in the item\n\n## B\n",
	} {
		want := titles(filter(p.Parse([]byte(src)).Sections))
		got := titles(filter(ScanSections([]byte(src))))
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%q: scan %v, goldmark %v", src, got, want)
		}
	}
}
