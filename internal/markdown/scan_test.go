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

// The line scanner finds the sections goldmark finds, with the same
// offsets, in the block constructs a person writes in a note: setext
// headings, thematic breaks (which are not setext underlines after a blank
// line), fenced and indented code, HTML blocks of each kind, closing
// hashes, headings that are not headings (no space, seven hashes, escaped),
// block quotes and lists. The corpus tier checks the same over real notes.
func TestScanMatchesGoldmarkOnBlockConstructs(t *testing.T) {
	p := New()
	for _, src := range []string{
		"Title\n=====\n\ntext\n\nSub\n---\n\n## Real\n",
		"para\n\n---\n\n## After a break\n\n***\n___\n- - -\n## B\n",
		"text\n---\n## C\n",
		"```\n## not a heading\n```\n## After code\n",
		"~~~go\n# x\n~~~\n### Three\n",
		"    ## indented code\n\n## Heading\n",
		"<div>\n## inside html\n</div>\n\n## After html\n",
		"<!-- a comment\n## in the comment\n-->\n## After comment\n",
		"<script>\n## x\n</script>\n## After script\n",
		"<?php\n## x\n?>\n## After pi\n",
		"<!DOCTYPE html>\n## After decl\n",
		"<![CDATA[\n## x\n]]>\n## After cdata\n",
		"<custom-tag>\n## x\n\n## After custom\n",
		"## Closing hashes ##\n#   Spaced   #\n",
		"#no space\n####### seven\n\\## escaped\n## Real one\n",
		"> ## quoted heading\n\n## Outside\n",
		"1. one\n2. two\n\n## After list\n* star\n+ plus\n## End\n",
		"## Empty\n##\n## Last\n",
		"Setext after list\n- item\n===\n## X\n",
		"  ## two spaces\n   ### three spaces\n",
	} {
		want := filter(p.Parse([]byte(src)).Sections)
		got := filter(ScanSections([]byte(src)))
		if !same(got, want) {
			t.Errorf("%q:\n scan     %v\n goldmark %v", src, titles(got), titles(want))
		}
	}
}
